"""The native closing (motor-curve actuators, mujoco.rollout batches) against the Python closing law.

For every built-in hand on the built-in box, cylinder and bottle and the YCB master chef can,
the same --candidates candidates (the same seed, so the same pre-grasps) are evaluated by both
paths on the same --samples pose samples, without early discard so that every sample is
compared. Per (hand, object): mean |ΔA|, |ΔB|, |ΔC| over candidates of the per-candidate means,
the share of candidates whose nominal outcome (B > 0) and whose decision (mean B >= 0.5: the
grasp holds in most samples) are equal, and the time of each path (same run, one process).

Run from the repository root:
    .venv/bin/python -m benchmarks.validate_native [--candidates 20] [--samples 20]
     [--hands parallel,three_finger,underactuated] [--objects box,cylinder,bottle,master_chef_can]
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from offline_sim.database import HandSource, ObjectSource, SimEvaluatorFactory
from offline_sim.hands import BUILTIN_HANDS
from offline_sim.quality import MonteCarloSettings

ROOT = Path(__file__).resolve().parents[1]
YCB = ROOT.parent / "shared" / "data" / "ycb"


def source(name: str, cache: Path) -> ObjectSource:
    """A built-in object by name, or a YCB scan (folder name under ../shared/data/ycb)."""
    mesh = YCB / name / "visual.obj"
    if mesh.is_file():
        return ObjectSource(name, str(mesh), cache_dir=str(cache))
    return ObjectSource(name)


def compare(src: ObjectSource, hand: str, n: int, samples: int) -> dict | None:
    """Both paths on the same candidates and samples; the agreement figures, None if no candidate."""
    mc = MonteCarloSettings(n_samples=samples, early_discard=False, seed=0)
    ev_py = SimEvaluatorFactory(src, HandSource(hand), n, 0, mc)()
    ev_nat = SimEvaluatorFactory(src, HandSource(hand), n, 0, mc, closing="native")()
    if len(ev_py) == 0:
        return None
    assert np.array_equal(ev_py.candidates.T_object_hand, ev_nat.candidates.T_object_hand)
    rows, t_py, t_nat = [], 0.0, 0.0
    for k in range(len(ev_py)):
        t0 = time.perf_counter()
        p = ev_py(k)
        t1 = time.perf_counter()
        q = ev_nat(k)
        t2 = time.perf_counter()
        t_py, t_nat = t_py + t1 - t0, t_nat + t2 - t1
        rows.append((p.a_mean or 0.0, q.a_mean or 0.0, p.b_mean, q.b_mean, p.c_mean, q.c_mean,
                     p.nominal_ok == q.nominal_ok, (p.b_mean >= 0.5) == (q.b_mean >= 0.5)))
    r = np.array(rows, np.float64)
    return {"n": len(rows), "dA": np.abs(r[:, 0] - r[:, 1]).mean(), "dB": np.abs(r[:, 2] - r[:, 3]).mean(),
            "dC": np.abs(r[:, 4] - r[:, 5]).mean(), "maxB": np.abs(r[:, 2] - r[:, 3]).max(),
            "B_py": r[:, 2].mean(), "B_nat": r[:, 3].mean(),
            "nominal": r[:, 6].mean(), "decision": r[:, 7].mean(), "t_py": t_py, "t_nat": t_nat}


def hand_row(hand: str, rows: list[dict]) -> str:
    """The table row of one hand over all its objects: figures weighted by candidates."""
    n = np.array([r["n"] for r in rows], np.float64)

    def mean(key: str) -> float:
        return float(np.sum(n * [r[key] for r in rows]) / n.sum())

    return (f"| **{hand}, all** | | {int(n.sum())} | {mean('B_py'):.2f} / {mean('B_nat'):.2f} "
            f"| {mean('dA'):.4f} | **{mean('dB'):.3f}** | {max(r['maxB'] for r in rows):.2f} "
            f"| **{mean('dC'):.3f}** | {mean('nominal'):.0%} | **{mean('decision'):.0%}** "
            f"| {sum(r['t_py'] for r in rows):.1f} / {sum(r['t_nat'] for r in rows):.1f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--hands", default=",".join(BUILTIN_HANDS))
    ap.add_argument("--objects", default="box,cylinder,bottle,master_chef_can")
    ap.add_argument("--cache", type=Path, default=ROOT / ".graspline-cache")
    args = ap.parse_args()
    import mujoco

    print(f"validate_native: mujoco {mujoco.__version__}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}; {args.candidates} candidates x (nominal + "
          f"{args.samples} samples), no early discard")
    print("| hand | object | candidates | mean B python / native | mean abs dA | mean abs dB | max abs dB "
          "| mean abs dC | nominal equal | decision equal | time python / native |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for hand in args.hands.split(","):
        per_hand = []
        for name in args.objects.split(","):
            r = compare(source(name, args.cache), hand, args.candidates, args.samples)
            if r is None:
                print(f"| {hand} | {name} | 0 | | | | | | | | |")
                continue
            per_hand.append(r)
            print(f"| {hand} | {name} | {r['n']} | {r['B_py']:.2f} / {r['B_nat']:.2f} | {r['dA']:.4f} "
                  f"| {r['dB']:.3f} | {r['maxB']:.2f} | {r['dC']:.3f} | {r['nominal']:.0%} "
                  f"| {r['decision']:.0%} | {r['t_py']:.1f} / {r['t_nat']:.1f} s |", flush=True)
        if per_hand:
            print(hand_row(hand, per_hand), flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
