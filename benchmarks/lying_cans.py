"""Can any grasp of a jaw hold a lying can? The physics behind the objects the loop offers no grasp.

bench_cell counts an object as one the jaw can hold from its geometry alone: its narrowest
true width, from above, within the pads' length of its top, fits the stroke. A can lying on
its side wider than the stroke passes that test by its chord high on the section, where its
wall leans away from the pads; the loop offers no grasp there (the wedge rule,
docs/scoring.md). Whether the jaw could have held it is a question for the physics, asked
here: one lying can on a table of the simulated cell (a ``wide_can`` primitive or a YCB
master chef can), and every grasp the jaw can make across its section, straight down: the
fingertips at depths under the can's top from 2 mm to where the chord reaches the stroke
less 2 mm (the fingers land on the can any deeper), at the can's middle and a quarter of its
length either side, each executed as the loop does (hold_physics.execute: approach, close
at the gripper's speed and force, lift 10 cm, hold 0.5 s) on the table laid again. Per can:
its radius, length and mass, the wall's lean from the vertical at each depth (what the pads
press on), and which grasps held. A can that lies short enough to be held across its flat
ends (its length within the stroke) is reported and not tried: the loop grasps those.

Run from the repository root:

    .venv/bin/python -m benchmarks.lying_cans --cell benchmarks/jaws/short_pad.yaml \\
        --pad-friction 1.0 --cans 4 [--ycb ../shared/data/ycb]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.hold_physics import CACHE, execute, summary
from benchmarks.holdable_oracle import DEPTH_MIN_M, FINGER_CLEAR_M  # the oracle's grid's

LYING_COS = 0.3          # |cos| of the can's axis to the vertical under this: lying


@dataclass
class Can:
    """One lying can as it settled (world frame, metres): its axis (horizontal unit
    vector), its centre, its radius and length, its top's height and its mass (kg)."""

    seed: int
    name: str
    axis: np.ndarray
    centre: np.ndarray
    radius_m: float
    length_m: float
    top_m: float
    mass_kg: float


def chord_m(radius_m: float, depth_m: float) -> float:
    """The horizontal chord of a circle of radius_m at depth_m under its top, metres."""
    h = radius_m - depth_m
    return 2.0 * math.sqrt(max(radius_m * radius_m - h * h, 0.0))


def lean_deg(radius_m: float, depth_m: float) -> float:
    """The wall's lean from the vertical at depth_m under the top of a lying circle, degrees
    (0 at the widest point, 90 at the top)."""
    return math.degrees(math.asin(min(max((radius_m - depth_m) / radius_m, -1.0), 1.0)))


def max_depth_m(radius_m: float, stroke_m: float) -> float:
    """The deepest fingertip depth under the top whose chord fits the stroke less
    FINGER_CLEAR_M, metres (the fingers land on the can any deeper)."""
    half = 0.5 * (stroke_m - FINGER_CLEAR_M)
    if half >= radius_m:
        return radius_m
    return radius_m - math.sqrt(radius_m * radius_m - half * half)


def lying_can(cell, seed: int) -> Can | None:
    """The cell's one object as a Can if it settled lying on the table, else None."""
    w = cell.world
    obj = w.objects[0]
    T = w.T_world_object(0)
    verts = obj.visual[0] @ T[:3, :3].T + T[:3, 3]
    local = obj.visual[0]
    # the can's axis is its local axis with the odd extent out (a cylinder's two equal
    # extents are its diameter)
    ext = np.ptp(local, axis=0)
    i = int(np.argmin([abs(ext[j] - ext[k]) for j, k in ((1, 2), (0, 2), (0, 1))]))
    axis = T[:3, i].copy()
    if abs(axis[2]) > LYING_COS or not cell.settled_on_table[0]:
        return None
    axis[2] = 0.0
    axis /= np.linalg.norm(axis)
    radius = 0.25 * float(sum(ext[j] for j in range(3) if j != i))
    centre = w.data.xipos[w.object_body[0]].copy()
    return Can(seed=seed, name=obj.name, axis=axis, centre=centre, radius_m=radius,
               length_m=float(ext[i]), top_m=float(verts[:, 2].max()), mass_kg=obj.mass_kg)


def grasp_pose(can: Can, along_m: float, depth_m: float, tcp_to_tip_m: float) -> np.ndarray:
    """T_base_tcp (the cell's base is its world): straight down, closing across the can's
    axis, along_m from its centre along the axis, the fingertips depth_m under its top."""
    x = np.array([-can.axis[1], can.axis[0], 0.0])
    z = np.array([0.0, 0.0, -1.0])
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2] = x, np.cross(z, x), z
    T[:3, 3] = can.centre + along_m * can.axis
    T[2, 3] = can.top_m - depth_m + tcp_to_tip_m
    return T


def _detail(s: dict) -> str:
    """The middle grasp's pads in the close and the lift: contacts and normal force per pad."""
    out = ""
    for phase in ("close", "lift"):
        q = s.get(phase)
        if q:
            out += (f"; {phase} {q['n'][0]:.0f}/{q['n'][1]:.0f} contacts {q['f'][0]:.0f}/"
                    f"{q['f'][1]:.0f} N")
    return out


def settings_for(config, mu: float, kind: str, ycb_dir: str | None):
    """SimCellSettings of one object of ``kind`` per table with the cell file's jaw."""
    from onboard import sim_cell_settings

    return dataclasses.replace(
        sim_cell_settings(config), objects_per_table=(1, 1), builtin=(),
        random_primitives=(kind,) if kind != "master_chef_can" else (), ycb_dir=ycb_dir,
        pad_friction=mu, depth_noise=False)


def main(argv: list[str] | None = None) -> int:
    """Print one block per lying can: its size, and held or dropped per grasp tried."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cell", required=True)
    p.add_argument("--pad-friction", type=float, default=None)
    p.add_argument("--cans", type=int, default=4, help="lying cans to try")
    p.add_argument("--seed", type=int, default=0, help="the first table's seed")
    p.add_argument("--depths", type=int, default=4, help="fingertip depths per can")
    p.add_argument("--ycb", default=None, help="the YCB folder: its master chef can, else wide_can")
    args = p.parse_args(argv)
    from offline_sim.cell import SimCell
    from onboard import load_cell_file

    config, _ = load_cell_file(args.cell)
    g = config.gripper
    mu = args.pad_friction if args.pad_friction is not None else config.sim.pad_friction
    tmp = None
    if args.ycb is not None:
        src = Path(args.ycb) / "master_chef_can"
        if not (src / "visual.obj").is_file():
            print(f"--ycb {args.ycb}: no master_chef_can/visual.obj there", file=sys.stderr)
            return 2
        tmp = tempfile.TemporaryDirectory()
        (Path(tmp.name) / "master_chef_can").symlink_to(src.resolve())
    kind = "master_chef_can" if tmp else "wide_can"
    settings = settings_for(config, mu, kind, tmp.name if tmp else None)
    stroke = g.open_width_m
    print(f"# {args.cell}: stroke {stroke*1e3:.0f} mm, pads {g.pad_length_m*1e3:.0f} mm long, "
          f"{g.force_n:.0f} N, pad friction {mu} (cone {math.degrees(math.atan(mu)):.0f} deg); "
          f"{kind}")
    found, seed, t0 = 0, args.seed, time.monotonic()
    totals = [0, 0]
    while found < args.cans and seed < args.seed + 400:
        cell = SimCell(settings, seed=seed, cache_dir=CACHE)
        try:
            can = lying_can(cell, seed)
        finally:
            cell.close()
        seed += 1
        if can is None:
            continue
        found += 1
        print(f"can {found} (seed {can.seed}): {can.name} radius {can.radius_m*1e3:.1f} mm, length "
              f"{can.length_m*1e3:.0f} mm, {can.mass_kg:.3f} kg", flush=True)
        if can.length_m <= stroke - FINGER_CLEAR_M:
            print("  short enough to hold across its ends: not tried")
            continue
        deepest = min(max_depth_m(can.radius_m, stroke), g.pad_length_m)
        depths = np.linspace(DEPTH_MIN_M, deepest, args.depths)
        for d in depths:
            row, detail = [], ""
            for along in (0.0, -0.25 * can.length_m, 0.25 * can.length_m):
                cell = SimCell(settings, seed=can.seed, cache_dir=CACHE)
                try:
                    T = grasp_pose(can, along, float(d), g.tcp_to_tip_m)
                    tr, held, facts = execute(cell, T, config, 0)
                    if not row and "error" not in facts:
                        detail = _detail(summary(tr, cell.world.model.opt.timestep))
                finally:
                    cell.close()
                row.append("stop" if "error" in facts else "HELD" if held else "drop")
                totals[0] += held
                totals[1] += 1
            print(f"  depth {d*1e3:4.1f} mm chord {chord_m(can.radius_m, d)*1e3:5.1f} mm wall lean "
                  f"{lean_deg(can.radius_m, d):4.1f} deg: middle {row[0]}, quarters {row[1]} "
                  f"{row[2]}{detail}", flush=True)
    print(f"# {totals[0]} of {totals[1]} grasps held on {found} lying cans "
          f"({time.monotonic() - t0:.0f} s)")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
