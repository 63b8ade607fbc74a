"""The torque term's shape, paired on logged jaw runs: the factor 1 - τ_g / τ_max as it is
against the probability that the true ratio stays under 1 when the mass guess is uncertain.

The torque term weighs an unknown object at its seen volume times one density
(scoring.density_kg_m3), and real household objects span about a decade of densities (a
cracker box 0.2 t/m³, a can 1 t/m³), so τ_g is a guess. Read as a probability, the grasp holds
while the true ratio q_true = q x (ρ_true / ρ) stays under 1; with ln(ρ_true / ρ) normal with
spread σ, P(hold) = Φ(-ln(q) / σ), which keeps ratios well under 1 near 1 instead of marking
them down linearly. This rescores each run's graded trials from their logged features (the
torque ratio is logged), so both shapes are judged on the same grasps and outcomes, together
with the term taken out, the mass guess scaled down or up (the linear form at k q) and the
mass guess capped (the linear form on min(M, cap), from the logged mass).

Run from the repository root, one NAME=DIR[,DIR...] per row (DIR as bench_cell --out wrote
it; several folders, other seeds of one jaw, are pooled: ablation_by_jaw.run_from_spec):

    .venv/bin/python -m benchmarks.torque_shape "short pad μ0.5=OUT5/short_0.5,OUT6/short_0.5" \\
        "2F-85 μ1=OUT7/f85_1.0"

docs/figures.md, "The torque term's shape", has the table on seeds 5-7 of six jaws.
"""
from __future__ import annotations

import argparse
import math
from typing import Callable

import numpy as np
from scipy.stats import norm

from benchmarks.ablation_by_jaw import paired_effect, run_from_spec
from benchmarks.bench_cell import auc, depth_factor

Shape = Callable[[float, float], float]   # (torque ratio q, logged mass kg) -> factor


def linear(k: float = 1.0) -> Shape:
    """The factor as scored, 1 - k q clipped to [0, 1] (k < 1: a lighter mass guess)."""
    return lambda q, m: min(max(1.0 - k * q, 0.0), 1.0)


def lognormal(sigma: float) -> Shape:
    """P(q x ρ_true / ρ < 1) with ln(ρ_true / ρ) ~ N(0, σ²); 1 at q = 0."""
    return lambda q, m: 1.0 if q <= 0.0 else float(norm.sf(math.log(q) / sigma))


def capped(cap_kg: float) -> Shape:
    """The linear factor with the logged mass taken at most cap_kg (q scales with the mass;
    a run logged with the guess already capped there is unchanged)."""
    return lambda q, m: min(max(1.0 - q * (min(m, cap_kg) / m if m > cap_kg else 1.0), 0.0), 1.0)


SHAPES: list[tuple[str, Shape | None]] = [
    ("no torque term", None),
    ("1 - q/2 (half the mass)", linear(0.5)),
    ("P(hold), σ = 0.5", lognormal(0.5)),
    ("P(hold), σ = 0.7", lognormal(0.7)),
    ("P(hold), σ = 1.0", lognormal(1.0)),
    ("1 - 2q (steeper: a lying banana held off its middle)", linear(2.0)),
    ("1 - 3q", linear(3.0)),
    ("mass guess at most 0.4 kg", capped(0.4)),
    ("mass guess at most 0.6 kg", capped(0.6)),
    ("mass guess at most 0.8 kg", capped(0.8)),
]


def rescored(features: list[dict], shape: Shape | None) -> np.ndarray:
    """Each trial's score with its torque factor from shape (None: 1), from the logged ratio;
    trials without a ratio keep their logged factor."""
    out = []
    for f in features:
        q, m = f.get("torque_ratio"), f.get("mass_kg")
        if shape is None:
            st = 1.0
        elif q is None or not math.isfinite(q) or m is None or not math.isfinite(m):
            st = f["score_torque"]
        else:
            st = shape(float(q), float(m))
        out.append(f["tan_score"] * depth_factor({**f, "score_torque": st}))
    return np.array(out)


def main(argv: list[str] | None = None) -> int:
    """Print per run: AUC as scored, then each shape's paired AUC difference [95 %] from it,
    over all graded trials and over the scanned (YCB) objects' AUC."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", metavar="NAME=DIR[,DIR...]")
    args = ap.parse_args(argv)
    print("| run | graded | as scored (scanned) | "
          + " | ".join(f"{name}: paired diff. (scanned AUC)" for name, _ in SHAPES) + " |")
    print("|---|---|---|" + "---|" * len(SHAPES))
    for spec in args.runs:
        run = run_from_spec(spec, "torque_shape")
        ok, kinds = run.success, run.kinds
        scanned = np.array([k.rpartition(":")[2].startswith("ycb_") for k in kinds])
        base = rescored(run.features, linear())
        cells = []
        for _, shape in SHAPES:
            s = rescored(run.features, shape)
            d, lo, hi = paired_effect(base, s, ok, kinds)
            cells.append(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}] ({auc(s[scanned], ok[scanned]):.3f})")
        print(f"| {run.name} | {len(ok)} | {auc(base, ok):.3f} ({auc(base[scanned], ok[scanned]):.3f}) | "
              + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
