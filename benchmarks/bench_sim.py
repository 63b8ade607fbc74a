"""Dynamic grasp simulations per second, per hand and object, in one process.

Each row compiles one GraspWorld (not timed: once per object and hand), takes collision-free
candidates from pregrasp_candidates and simulates every one with the default SimSettings (3 ms
step, closing up to 0.6 s, 0.4 s lift, 0.2 s hold, no shake), after two untimed warm-up runs.
The prism row is a convex 32-sided prism written as an OBJ (one mesh geom); the bottle rows are
the built-in bottle as three convex parts (a decomposed object: one geom per part, the way
load_object's CoACD parts enter the world). The YCB rows are scanned meshes (../shared/data/ycb)
decomposed by CoACD through load_object (cached in --cache; the first run decomposes them,
about a minute each), resting in their most probable pose; they are skipped, with the reason
printed, when the data folder is absent.

Every simulation is timed on its own: a row gives simulations per wall second over the row,
and the median and p99 of the per-simulation times. Baseline, measured in the same run on the
same trials: MuJoCo alone (place_hand at each candidate, the closing servos set straight to
their closed limit, then mj_step for as many steps as that trial ran; no controller, lift,
trajectory sampling or measures), so the ratio is the share of the time the physics takes.
Kim et al. ran 100,000 simulations in about four days (0.29 /s, their paper; cited in the
footer, not measured here). The issue's floor is 14 /s for the three-finger hand on a
decomposed mesh object on a 2-core machine, judged on the slowest of the scanned YCB objects.

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_sim [--n 40] [--cache DIR] [--ycb DIR]
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from offline_sim.database import pregrasp_candidates
from offline_sim.dynamics import SimSettings, build_grasp_world, place_hand, simulate_grasp
from offline_sim.hands import parallel_jaw, three_finger, underactuated
from offline_sim.objects import GraspObject, ObjectSpec, builtin_object, load_object

KIM_PER_S = 100_000 / (4 * 24 * 3600)  # cited from the paper, printed in the footer only
FLOOR_THREE_FINGER_PER_S = 14.0
REPO = Path(__file__).resolve().parents[1]
# scanned objects of increasing complexity: 2, 3 and 5 convex parts with the default CoACD settings
YCB_OBJECTS = ("mustard_bottle", "master_chef_can", "power_drill")
# a rate from fewer simulations than this (an object the hand finds few candidates on, such as
# the drill lying flat, 6 cm tall and 19 cm across) is printed but does not judge the floor
MIN_SIMS_FOR_FLOOR = 10


def prism_obj(path: Path, radius_m: float, height_m: float, sides: int = 32) -> None:
    """Write a closed convex prism (a faceted cylinder, centred, +z up) as an OBJ in metres."""
    a = np.linspace(0.0, 2.0 * math.pi, sides, endpoint=False)
    ring = np.stack([radius_m * np.cos(a), radius_m * np.sin(a)], axis=1)
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for z in (-height_m / 2, height_m / 2) for x, y in ring]
    for i in range(sides):
        j = (i + 1) % sides
        lines.append(f"f {i + 1} {j + 1} {sides + j + 1} {sides + i + 1}")
    lines.append("f " + " ".join(str(i + 1) for i in reversed(range(sides))))
    lines.append("f " + " ".join(str(sides + i + 1) for i in range(sides)))
    path.write_text("\n".join(lines) + "\n")


@dataclass
class RowFigures:
    """One hand on one object. wall_s, physics_s : (n,) seconds per simulation, of the full
    simulation and of MuJoCo alone on the same trial; cpu_s : process CPU seconds of all."""

    wall_s: np.ndarray
    physics_s: np.ndarray
    cpu_s: float
    sim_s: float
    mean_b: float

    @property
    def n(self) -> int:
        """Simulations run."""
        return self.wall_s.size

    @property
    def per_s(self) -> float:
        """Simulations per wall second over the row."""
        return self.n / self.wall_s.sum() if self.n else math.nan


def physics_only_s(world, T: np.ndarray, preshape: np.ndarray, settings: SimSettings,
                   sim_time_s: float) -> float:
    """Wall seconds MuJoCo alone takes for one trial: the same start state, the closing servos
    set to their closed limit at once, sim_time_s of mj_step and nothing else."""
    import mujoco

    place_hand(world, T, preshape, settings)
    d = world.data
    d.ctrl[world.act_ids] = np.where(world.act_sign > 0, world.act_hi, world.act_lo)
    steps = max(1, round(sim_time_s / settings.timestep_s))
    t0 = time.perf_counter()
    mujoco.mj_step(world.model, d, steps)
    return time.perf_counter() - t0


def rate(hand, obj, n: int, settings: SimSettings) -> RowFigures:
    """Simulate up to n collision-free candidates of hand on obj, each timed, then time MuJoCo
    alone on the same trials."""
    R = obj.stable_poses[0][:3, :3] if isinstance(obj, GraspObject) else None
    world = build_grasp_world(obj, hand, R_table_object=R)
    cands = pregrasp_candidates(world, n, seed=0)
    if len(cands) == 0:
        return RowFigures(np.zeros(0), np.zeros(0), 0.0, math.nan, math.nan)
    for T, p in zip(cands.T_object_hand[:2], cands.preshape[:2]):
        simulate_grasp(world, T, settings=settings, preshape=p)
    wall, outs = [], []
    c0 = time.process_time()
    for T, p in zip(cands.T_object_hand, cands.preshape):
        t0 = time.perf_counter()
        outs.append(simulate_grasp(world, T, settings=settings, preshape=p))
        wall.append(time.perf_counter() - t0)
    cpu = time.process_time() - c0
    physics = [physics_only_s(world, T, p, settings, o.sim_time_s)
               for T, p, o in zip(cands.T_object_hand, cands.preshape, outs)]
    return RowFigures(np.array(wall), np.array(physics), cpu,
                      float(np.mean([o.sim_time_s for o in outs])),
                      float(np.mean([o.measure_b for o in outs])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=40, help="candidates per hand and object")
    ap.add_argument("--timestep", type=float, default=SimSettings().timestep_s, help="seconds")
    ap.add_argument("--cache", type=Path, default=REPO / ".graspline-cache",
                    help="CoACD decomposition cache for the YCB meshes")
    ap.add_argument("--ycb", type=Path, default=REPO.parent / "shared" / "data" / "ycb",
                    help="folder of YCB meshes (NAME/visual.obj)")
    args = ap.parse_args()
    settings = SimSettings(timestep_s=args.timestep)
    tmp = Path(tempfile.mkdtemp())
    prism_obj(tmp / "prism.obj", 0.03, 0.12)
    box = ObjectSpec("box", "box", (0.05, 0.05, 0.08))
    cyl = ObjectSpec("cylinder", "cylinder", (0.03, 0.12))
    mesh = ObjectSpec("prism", "mesh", mesh_path=str(tmp / "prism.obj"))
    bottle = builtin_object("bottle")
    rows = [("parallel_jaw", parallel_jaw(), box), ("parallel_jaw", parallel_jaw(), cyl),
            ("parallel_jaw", parallel_jaw(), bottle),
            ("three_finger", three_finger(), box), ("three_finger", three_finger(), cyl),
            ("three_finger", three_finger(), mesh), ("three_finger", three_finger(), bottle),
            ("underactuated", underactuated(), box), ("underactuated", underactuated(), cyl),
            ("underactuated", underactuated(), bottle)]
    ycb_note = ""
    missing = [n for n in YCB_OBJECTS if not (args.ycb / n / "visual.obj").is_file()]
    if missing:
        ycb_note = f"YCB rows skipped: no {', '.join(missing)} under {args.ycb}"
    else:
        for n in YCB_OBJECTS:
            obj = load_object(args.ycb / n / "visual.obj", cache_dir=args.cache)
            rows += [("parallel_jaw", parallel_jaw(), obj), ("three_finger", three_finger(), obj),
                     ("underactuated", underactuated(), obj)]
    import mujoco

    print(f"bench_sim: {args.n} candidates per row, single process, timestep "
          f"{args.timestep * 1e3:g} ms, mujoco {mujoco.__version__}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    # per CPU second: what one unshared core gives; the machine is often shared, so the wall
    # figure (what this run got) can be lower by the load
    print("median, p99: wall ms per simulation; baseline: MuJoCo alone on the same trials, "
          "sims/s and its share of the full time")
    print(f"{'hand on object':<46} {'sims/s':>7} {'per CPU s':>9} {'median':>7} {'p99':>7}  "
          f"{'baseline':>8} {'share':>5}  {'sims':>4} {'sim s':>5} {'mean B':>6}")
    if ycb_note:
        print(ycb_note)
    three_finger_scanned: list[tuple[float, float, str]] = []  # (wall, per CPU s, object)
    three_finger_bottle = math.nan
    few: list[str] = []  # scanned objects left out of the floor for want of candidates
    for hand_name, hand, obj in rows:
        r = rate(hand, obj, args.n, settings)
        per_s, k = r.per_s, r.n
        per_cpu_s = k / r.cpu_s if k else math.nan
        name = f"{obj.name} ({len(obj.parts)} parts)" if isinstance(obj, GraspObject) else obj.name
        scanned = isinstance(obj, GraspObject) and obj.source_sha256 is not None
        if hand_name == "three_finger" and scanned and k >= MIN_SIMS_FOR_FLOOR:
            three_finger_scanned.append((per_s, per_cpu_s, f"YCB {name}"))
        elif hand_name == "three_finger" and scanned:
            few.append(f"{name}: {k} sims")
        elif hand_name == "three_finger" and isinstance(obj, GraspObject):
            three_finger_bottle = per_s
        if k:
            phys = k / r.physics_s.sum()
            label = f"{hand_name} on {'YCB ' if scanned else ''}{name}"
            print(f"{label:<46} {per_s:7.1f} {per_cpu_s:9.1f} {1e3 * np.median(r.wall_s):7.1f} "
                  f"{1e3 * np.percentile(r.wall_s, 99):7.1f}  {phys:8.1f} "
                  f"{r.physics_s.sum() / r.wall_s.sum():5.2f}  {k:4d} {r.sim_s:5.2f} {r.mean_b:6.2f}")
        else:
            print(f"{hand_name} on {'YCB ' if scanned else ''}{name}  no collision-free candidate")
    load = os.getloadavg()[0]
    if three_finger_scanned:
        # the slowest scanned object decides: the floor holds for every one of them
        wall, cpu, name = min(three_finger_scanned)
        verdict = "meets" if wall >= FLOOR_THREE_FINGER_PER_S else "BELOW"
        print(f"floor three_finger on a scanned, decomposed object (wall): "
              f"{FLOOR_THREE_FINGER_PER_S:.0f}/s -> {verdict} ({wall:.1f}/s wall, {cpu:.1f}/s per CPU s on the slowest, the {name}; "
              f"load average now {load:.2f})"
              + (f"; left out, under {MIN_SIMS_FOR_FLOOR} sims: {', '.join(few)}" if few else ""))
    else:
        print(f"floor three_finger on a scanned, decomposed object: not judged "
              f"({ycb_note or 'too few candidates: ' + ', '.join(few)}); "
              f"{three_finger_bottle:.1f}/s on the procedural 3-part bottle; load average now "
              f"{load:.2f}")
    print(f"paper figure (not measured here): Kim et al. 2013 ran 100,000 simulations in about four "
          f"days, {KIM_PER_S:.2f}/s")


if __name__ == "__main__":
    main()
