"""Grasp evaluation under pose uncertainty: Kim et al.'s workload and Weisz & Allen's P(fc) time.

Kim's workload is 1,000 candidates x 100 pose samples with early discard (the paragraph on
computation time in their results). This runs --candidates of them (>= 100) through the
product's own path, build_database with --workers local processes writing a temporary
database, then extrapolates linearly to 1,000 (the candidates are independent and evaluated
in a seeded order, so the time scales with their number). Baseline, same run: the same work without early discard, from the measured
time per simulation (every candidate's nominal trial plus all 100 samples). Kim et al. report
100,000 simulations (1,000 x 100, no discard) in about four days, and early discard saving up
to 80 % of them (their watering can).

P(fc) is timed on Weisz & Allen's full grid (±10 mm, ±20°, 1 mm / 1°: 18,081 poses) for
--pfc-grasps candidates per hand, in one process; they report under two hours per grasp in
the worst case (GraspIt!, Xeon 2.67 GHz). P(fc) is computed as the build does it (force
closure settled by a subset of the contacts where it can be); the same-run baseline computes
the exact ε at every pose, timed on 500 sampled poses and scaled to the grid.

Object: the YCB master chef can, scanned and decomposed by CoACD (cached in --cache), or the
built-in bottle when ../shared/data/ycb is absent (said in the output). The can because every
candidate the three-finger hand gets on it is collision-free at the start; on the lying mustard
bottle more than half of the side approaches hit the table.

Each figure is one run of the whole workload (a database build, a full P(fc) grid), so there
is no per-run distribution to take a median of; the same-run baselines are the work without
early discard and the exact ε at every pose. Kim's and Weisz & Allen's times are cited from
their papers and marked so.

Run: .venv/bin/python benchmarks/bench_uncertainty.py [--candidates 100] [--workers 2]
     [--pfc-grasps 1] [--skip-kim] [--skip-pfc]
"""
from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from offline_sim import (BuildTarget, HandSource, KinematicCloser, MonteCarloSettings,
                         ObjectSource, SimEvaluatorFactory, build_database, grid_transforms,
                         pfc_grid)

ROOT = Path(__file__).resolve().parents[1]
YCB = ROOT.parent / "shared" / "data" / "ycb"
KIM_SIMS, KIM_SECONDS = 100_000, 4 * 24 * 3600.0
WEISZ_SECONDS = 2 * 3600.0


def object_source(cache: Path) -> ObjectSource:
    """The master chef can scan if the YCB folder is there, else the built-in bottle."""
    mesh = YCB / "master_chef_can" / "visual.obj"
    if mesh.is_file():
        return ObjectSource("master_chef_can", str(mesh), cache_dir=str(cache))
    print(f"note: {YCB} not found; using the built-in bottle (3 convex parts)")
    return ObjectSource("bottle")


def kim_workload(src: ObjectSource, hand: str, n: int, workers: int) -> None:
    """Time n candidates x 100 samples with early discard through build_database."""
    mc = MonteCarloSettings(n_samples=100, early_discard=True, seed=0)
    factory = SimEvaluatorFactory(src, HandSource(hand), n, 0, mc)
    t0 = time.perf_counter()
    evaluator = factory()  # what each worker does first: load, compile, draw the candidates
    setup = time.perf_counter() - t0
    k = len(evaluator)
    obj = evaluator.object
    if k == 0:
        print(f"\nKim's workload: the {hand} hand has no collision-free candidate on {src.name}")
        return
    target = BuildTarget(src.name, hand, "1", HandSource(hand).params(), k, factory,
                         {"mass_kg": obj.mass_kg, "radius_m": obj.radius_m})
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        s = build_database([target], Path(tmp) / "kim.db", workers=workers, samples_planned=100,
                           progress=True, command="bench_uncertainty")
        wall = time.perf_counter() - t0
    sims = s.evaluated + s.trials_run  # every candidate's nominal trial, then its samples
    no_discard = s.evaluated * (1 + 100)
    per_sim = wall / sims
    scale = 1000 / max(k, 1)
    print(f"\nKim's workload, {hand} hand on {src.name} ({len(obj.parts)} convex parts), "
          f"{workers} worker process(es), {k} candidates measured")
    print(f"{'figure':<52} {'value':>12}  {'unit':<8} baseline")
    rows = [
        ("simulations run (nominal + samples)", f"{sims:,}", "sims", f"{no_discard:,} without early discard"),
        ("candidates discarded early", f"{s.discarded_early}", "of " + str(k), ""),
        ("Monte Carlo trials saved by early discard", f"{1 - s.trials_run / s.trials_planned:.1%}", "",
         "paper (cited): Kim up to 80 % (watering can)"),
        ("wall time, measured", f"{wall:,.0f}", "s", f"includes worker start-up ({setup:.1f} s each)"),
        ("simulations per second (wall)", f"{sims / wall:.1f}", "sims/s",
         f"paper (cited, not measured): Kim {KIM_SIMS / KIM_SECONDS:.2f}"),
        ("1,000 candidates, extrapolated x%.0f" % scale, f"{wall * scale / 60:,.1f}", "min", ""),
        ("1,000 candidates without early discard, extrapolated", f"{no_discard * scale * per_sim / 3600:,.1f}",
         "h", "paper (cited): Kim about 4 days (100,000 sims, mug)"),
    ]
    for name, value, unit, base in rows:
        print(f"{name:<52} {value:>12}  {unit:<8} {base}")


def pfc_time(src: ObjectSource, hand: str, n_grasps: int, step_mm: float, step_deg: float,
             n_exact: int = 500) -> None:
    """Time P(fc) on the grid (default the full 18,081 poses) for n_grasps candidates, as the
    build computes it; baseline in the same run: exact ε at every pose, timed on a seeded
    sample of n_exact poses and scaled to the grid."""
    factory = SimEvaluatorFactory(src, HandSource(hand), max(n_grasps, 1), 0,
                                  MonteCarloSettings(n_samples=1))
    ev = factory()
    if len(ev) == 0:
        print(f"\nP(fc): the {hand} hand has no collision-free candidate on {src.name}")
        return
    closer = KinematicCloser(ev.world)
    grid = pfc_grid(xy_step_m=step_mm * 1e-3, theta_step_rad=np.radians(step_deg))
    sample = np.random.default_rng(0).choice(len(grid), min(n_exact, len(grid)), replace=False)
    print(f"\nP(fc), {hand} hand on {src.name}, grid of {len(grid):,} poses ({step_mm:g} mm, {step_deg:g}°), "
          f"one process")
    print(f"{'grasp':>5} {'P(fc)':>6} {'nominal ε':>9} {'per grasp':>10} {'per pose':>9} {'steps':>6}  "
          f"{'exact ε everywhere':>18}  baseline (Weisz & Allen)")
    for k in range(min(n_grasps, len(ev))):
        T, pre = ev.candidates.T_object_hand[k], ev.candidates.preshape[k]
        r = closer.pfc(T, pre, grid=grid, torque_scale_m=ev.object.radius_m)
        t0 = time.perf_counter()
        for Td in grid_transforms(grid[sample], r.centre_world):
            closer.epsilon(closer.close(T, Td, pre), 0.8, ev.object.radius_m)
        exact = (time.perf_counter() - t0) / len(sample) * len(grid)
        print(f"{k:>5} {r.pfc:>6.3f} {r.nominal_epsilon:>9.4f} {r.wall_s / 60:>8.1f} m "
              f"{r.wall_s / len(grid) * 1e3:>6.2f} ms {r.mean_steps:>6.1f}  "
              f"{exact / 60:>8.1f} m (x{exact / r.wall_s:.1f})  "
              f"paper (cited): < {WEISZ_SECONDS / 60:.0f} min worst case -> {WEISZ_SECONDS / r.wall_s:.0f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", type=int, default=100, help="candidates of Kim's workload (>= 100)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hand", default="three_finger")
    ap.add_argument("--pfc-grasps", type=int, default=1, help="candidates timed on the full grid, per hand")
    ap.add_argument("--pfc-hands", default="three_finger,underactuated")
    ap.add_argument("--pfc-steps", default="1,1", help="grid steps 'mm,deg' (Weisz & Allen: 1,1)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".graspline-cache")
    ap.add_argument("--skip-kim", action="store_true")
    ap.add_argument("--skip-pfc", action="store_true")
    args = ap.parse_args()
    if args.candidates < 100 and not args.skip_kim:
        print(f"note: {args.candidates} candidates is below the issue's 100 for an extrapolation")
    import mujoco

    print(f"bench_uncertainty: mujoco {mujoco.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    src = object_source(args.cache)
    if not args.skip_kim:
        kim_workload(src, args.hand, args.candidates, args.workers)
    if not args.skip_pfc:
        for hand in args.pfc_hands.split(","):
            step_mm, step_deg = (float(v) for v in args.pfc_steps.split(","))
            pfc_time(src, hand, args.pfc_grasps, step_mm, step_deg)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
