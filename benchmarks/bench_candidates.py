"""Pre-grasp candidate draws: the open hand's collision question, per hand and object.

pregrasp_candidates places the open hand tens to hundreds of times per candidate it keeps and
asks whether it penetrates the object or the table (the three-finger hand on the built-in
objects: about 350 placements per candidate). Each row draws --n candidates of one hand on one
built-in object (its most probable resting pose) and records every pose the search asks about.
Then, on those same poses, in the same run:
- figure: hand_collides (MuJoCo's position stage only, quaternions of rotations met before
  reused), microseconds per placement, median and p99;
- baseline: what the search asked before, place_hand (the full start of a trial: pose checks,
  position, velocity and actuation stages, servo targets) then start_collisions.
The rows check that both give the same answer on every pose; the footer gives the ratio of the
medians over all rows and the whole draw's wall time.

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_candidates [--n 20]
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from offline_sim import dynamics
from offline_sim.database import _candidates
from offline_sim.database import pregrasp_candidates
from offline_sim.dynamics import build_grasp_world, hand_collides, place_hand, start_collisions
from offline_sim.hands import builtin_hand
from offline_sim.objects import builtin_object

HANDS = ("parallel", "three_finger", "underactuated")
OBJECTS = ("box", "cylinder", "mug", "banana", "bottle")


def asked_poses(world, n: int) -> tuple[list, float]:
    """(poses the draw of n candidates asked about as (T, preshape, tolerance), wall s of it)."""
    asked = []

    def recording(w, T, preshape, tolerance_m=1e-4):
        asked.append((T, preshape, tolerance_m))
        return hand_collides(w, T, preshape, tolerance_m)

    _candidates.hand_collides = recording
    try:
        t0 = time.perf_counter()
        pregrasp_candidates(world, n, seed=0)
        return asked, time.perf_counter() - t0
    finally:
        _candidates.hand_collides = dynamics.hand_collides


def per_call_us(fn, world, asked: list) -> tuple[np.ndarray, list[bool]]:
    """(microseconds of each call, its answers) of fn(world, T, preshape, tolerance) over asked."""
    times, answers = np.empty(len(asked)), []
    for i, (T, p, tol) in enumerate(asked):
        t0 = time.perf_counter()
        answers.append(bool(fn(world, T, p, tol)))
        times[i] = (time.perf_counter() - t0) * 1e6
    return times, answers


def placed_then_listed(world, T, preshape, tolerance_m) -> bool:
    """The baseline: a trial's full start, then the named list of penetrating contacts."""
    place_hand(world, T, preshape)
    return bool(start_collisions(world, tolerance_m))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="candidates per hand and object")
    args = ap.parse_args()
    import mujoco

    print(f"bench_candidates: {args.n} candidates per row, seed 0, mujoco {mujoco.__version__}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("figure: hand_collides; baseline: place_hand + start_collisions, on the same poses "
          "(µs per placement)")
    print(f"{'hand on object':<28} {'poses':>6} {'median':>7} {'p99':>7}  {'base med':>8} "
          f"{'base p99':>8} {'ratio':>6} {'same':>5} {'draw s':>6}")
    figure_all, base_all, draw_s = [], [], 0.0
    for hand_name in HANDS:
        hand = builtin_hand(hand_name)
        for obj_name in OBJECTS:
            obj = builtin_object(obj_name)
            world = build_grasp_world(obj, hand, R_table_object=obj.stable_poses[0][:3, :3])
            asked, wall = asked_poses(world, args.n)
            draw_s += wall
            fig, a = per_call_us(hand_collides, world, asked)
            base, b = per_call_us(placed_then_listed, world, asked)
            figure_all.append(fig)
            base_all.append(base)
            print(f"{hand_name + ' on ' + obj_name:<28} {len(asked):>6} {np.median(fig):>7.1f} "
                  f"{np.percentile(fig, 99):>7.1f}  {np.median(base):>8.1f} "
                  f"{np.percentile(base, 99):>8.1f} {np.median(base) / np.median(fig):>6.2f} "
                  f"{'yes' if a == b else 'NO':>5} {wall:>6.2f}")
    fig, base = np.concatenate(figure_all), np.concatenate(base_all)
    print(f"{'all rows':<28} {len(fig):>6} {np.median(fig):>7.1f} {np.percentile(fig, 99):>7.1f}  "
          f"{np.median(base):>8.1f} {np.percentile(base, 99):>8.1f} "
          f"{np.median(base) / np.median(fig):>6.2f}")
    print(f"the draws took {draw_s:.1f} s of wall time with hand_collides; at the baseline's "
          f"per-placement cost they would take about "
          f"{draw_s + (base.sum() - fig.sum()) / 1e6:.1f} s")


if __name__ == "__main__":
    main()
