"""P(fc) per grasp on Weisz & Allen's full grid: the current path against the previous one, same run.

For each hand, candidate 0 (or --grasps of them) on the YCB master chef can (the built-in
bottle where ../shared/data/ycb is absent) is evaluated on the grid (default the full
18,081 poses, 1 mm / 1°; --poses N times N consecutive poses from the grid's middle and
scales to the grid, said in the output) twice, alternating:

- current: KinematicCloser.pfc as the database build runs it (lattice approach warm-started
  from earlier poses' gaps, Numba step kernels, hull certificates);
- previous: the same function of the code at --baseline (a git revision, default the commit
  before this path, ad0a00e), run in a child process from `git archive` of that revision,
  on the same object, hand, candidate and poses.

Per pose: the wall time between consecutive progress callbacks, median and p99; per grasp:
wall and CPU seconds of the whole grid; the machine's 1-minute load average before and after
each run (a shared machine: compare the two paths of the same run, not across runs). Each side first
runs three poses untimed (the current path loads its Numba kernels from the cache). The
decisions of the current path are checked against the exact ones (a cold closing of each
pose and ferrari_canny) on --exact sampled poses, and compared with the previous path's
(whose closing steps differently, so its contacts differ within the stopping tolerance).

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_pfc [--hands three_finger,underactuated]
     [--poses N] [--grasps 1] [--exact 500] [--baseline ad0a00e] [--skip-baseline]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
YCB = ROOT.parent / "shared" / "data" / "ycb"

# what both sides run: the same candidate and poses, timed per pose by the progress callback
CHILD = r"""
import json, os, sys, time
import numpy as np
try:
    from offline_sim.database import HandSource, ObjectSource, SimEvaluatorFactory
    from offline_sim.kinematic import KinematicCloser
    from offline_sim.quality import MonteCarloSettings, pfc_grid
except ImportError:  # a baseline revision from before offline_sim's subpackages
    from offline_sim import (HandSource, KinematicCloser, MonteCarloSettings, ObjectSource,
                             SimEvaluatorFactory, pfc_grid)
a = json.loads(sys.argv[1])
src = (ObjectSource("master_chef_can", a["mesh"], cache_dir=a["cache"]) if a["mesh"]
       else ObjectSource("bottle"))
ev = SimEvaluatorFactory(src, HandSource(a["hand"]), a["grasps"], 0, MonteCarloSettings(n_samples=1))()
closer = KinematicCloser(ev.world)
grid = pfc_grid()
timed = grid if a["poses"] is None else grid[len(grid) // 2 - a["poses"] // 2:][:a["poses"]]
out = []
for k in range(min(a["grasps"], len(ev))):
    T, pre = ev.candidates.T_object_hand[k], ev.candidates.preshape[k]
    closer.pfc(T, pre, grid=grid[:3], torque_scale_m=ev.object.radius_m)  # loads the JIT cache
    stamps = []
    load0 = os.getloadavg()[0]
    c0 = time.process_time()
    r = closer.pfc(T, pre, grid=timed, torque_scale_m=ev.object.radius_m,
                   progress=lambda i, n: stamps.append(time.perf_counter()))
    cpu = time.process_time() - c0
    t0 = time.perf_counter() - r.wall_s
    per_pose = np.diff(np.concatenate([[t0], stamps]))
    out.append(dict(pfc=r.pfc, wall=r.wall_s, cpu=cpu, closing=r.closing_s, steps=r.mean_steps,
                    certified=r.certified, load=[load0, os.getloadavg()[0]],
                    per_pose=per_pose.tolist(), closed=r.closed.astype(int).tolist(),
                    centre=r.centre_world.tolist()))
print("RESULT " + json.dumps(out))
"""


def run_side(pythonpath: str, args: dict) -> list[dict]:
    """Run CHILD with the code on pythonpath; its per-grasp results."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], env=env, cwd=pythonpath,
                       capture_output=True, text=True)
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode != 0 or not line:
        raise RuntimeError(f"P(fc) run under {pythonpath} failed:\n{p.stderr[-3000:]}")
    return json.loads(line[-1][len("RESULT "):])


def baseline_tree(rev: str, into: Path) -> Path:
    """The packages offline_sim needs, as they were at git revision rev."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev,
                           "offline_sim", "scoring", "drivers"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def exact_decisions(hand: str, args: dict, k: int, centre: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """Force closure at the sampled grid poses by a cold closing and ferrari_canny."""
    from offline_sim.database import HandSource, ObjectSource, SimEvaluatorFactory
    from offline_sim.kinematic import KinematicCloser
    from offline_sim.quality import MonteCarloSettings, ferrari_canny, grid_transforms, pfc_grid

    src = (ObjectSource("master_chef_can", args["mesh"], cache_dir=args["cache"]) if args["mesh"]
           else ObjectSource("bottle"))
    ev = SimEvaluatorFactory(src, HandSource(hand), args["grasps"], 0, MonteCarloSettings(n_samples=1))()
    closer = KinematicCloser(ev.world)
    T, pre = ev.candidates.T_object_hand[k], ev.candidates.preshape[k]
    out = []
    for Td in grid_transforms(pfc_grid()[sample], centre):
        g = closer.close(T, Td, pre)
        out.append(len(g.positions) > 0 and ferrari_canny(g.positions, g.normals, mu=0.8,
                                                          torque_scale_m=ev.object.radius_m) > 0.001)
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", default="three_finger,underactuated")
    ap.add_argument("--poses", type=int, default=None, help="time this many consecutive poses and scale")
    ap.add_argument("--grasps", type=int, default=1)
    ap.add_argument("--exact", type=int, default=500, help="sampled poses checked against the exact ε")
    ap.add_argument("--baseline", default="ad0a00e", help="git revision of the previous path")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--cache", type=Path, default=ROOT / ".graspline-cache")
    a = ap.parse_args()
    import mujoco

    mesh = YCB / "master_chef_can" / "visual.obj"
    n_grid = 18_081
    n_timed = n_grid if a.poses is None else a.poses
    scale = n_grid / n_timed
    print(f"bench_pfc: mujoco {mujoco.__version__}, {os.cpu_count()} cores, object "
          f"{'master_chef_can' if mesh.is_file() else 'bottle (no YCB folder)'}, {n_timed:,} of "
          f"{n_grid:,} grid poses timed" + ("" if scale == 1 else f", scaled x{scale:.2f}")
          + f"; baseline: {'none' if a.skip_baseline else a.baseline}")
    with tempfile.TemporaryDirectory() as tmp:
        base = None if a.skip_baseline else str(baseline_tree(a.baseline, Path(tmp)))
        for hand in a.hands.split(","):
            args = dict(hand=hand, grasps=a.grasps, poses=a.poses, cache=str(a.cache),
                        mesh=str(mesh) if mesh.is_file() else None)
            before = run_side(base, args) if base else None
            now = run_side(str(ROOT), args)
            print(f"\n{hand} hand")
            print(f"{'grasp':>5} {'path':>8} {'P(fc)':>6} {'per grasp':>10} {'CPU':>8} {'median/pose':>11} "
                  f"{'p99/pose':>9} {'closing':>8} {'queries':>7} {'no hull':>7} {'load':>10}")
            for k, r in enumerate(now):
                rows = [("current", r)] + ([("previous", before[k])] if before else [])
                for name, x in rows:
                    pp = np.array(x["per_pose"]) * 1e3
                    print(f"{k:>5} {name:>8} {x['pfc']:>6.3f} {x['wall'] * scale:>8.1f} s "
                          f"{x['cpu'] * scale:>6.1f} s {np.median(pp):>8.2f} ms "
                          f"{np.percentile(pp, 99):>6.2f} ms "
                          f"{x['closing'] / n_timed * 1e3:>5.2f} ms {x['steps']:>7.1f} "
                          f"{x['certified'] / n_timed:>6.0%} {x['load'][0]:>4.1f}-{x['load'][1]:<4.1f}")
                if before:
                    b = before[k]
                    print(f"      current / previous: wall x{b['wall'] / r['wall']:.2f} faster, CPU "
                          f"x{b['cpu'] / r['cpu']:.2f}, median per pose x"
                          f"{np.median(b['per_pose']) / np.median(r['per_pose']):.2f}; decisions that "
                          f"differ from the previous path's: "
                          f"{int(np.sum(np.array(b['closed']) != np.array(r['closed'])))} of {n_timed:,}")
                if a.exact:
                    first = 0 if a.poses is None else n_grid // 2 - a.poses // 2
                    timed_idx = np.arange(first, first + n_timed)
                    rng = np.random.default_rng(0)
                    pick = np.sort(rng.choice(n_timed, min(a.exact, n_timed), replace=False))
                    t0 = time.perf_counter()
                    exact = exact_decisions(hand, args, k, np.array(r["centre"]), timed_idx[pick])
                    same = np.array_equal(np.array(r["closed"])[pick].astype(bool), exact)
                    print(f"      decisions equal to the exact ones (cold closing + ferrari_canny) on "
                          f"{len(pick)} sampled poses: {same} ({time.perf_counter() - t0:.0f} s to check)")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
