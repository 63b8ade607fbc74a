"""One trial of a bench_cell pass again, with the pads' contacts on its object.

bench_cell's passes are deterministic (seeded tables, physics and search): the same cell
file, pad friction, seed and pass lay the same tables and pick the same grasps. This runs
the pass again up to trial N and, for that trial, prints each pad's contacts with the
objects at the end of the closing (point, how far the contact normal leans out of the
horizontal, normal force) and where the object is after the lift, with the trial's outcome:
why a high-scored grasp failed (docs/scoring.md, "The upright mustard bottle"). Where the
approach ends in a protective stop, it prints every part of the hand pressing on an object at
the stop instead (pads, finger bodies, palm): what a finger or the palm landed on
(docs/scoring.md, "Fingers landing on the far side" and "Finger bodies").

Run from the repository root (a minute or less: the trials before N are picked again):

    .venv/bin/python -m benchmarks.trial_contacts --cell benchmarks/jaws/2f85.yaml \\
        --pad-friction 0.5 --seed 6 --trial 14 --ycb ../shared/data/ycb
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.pad_contacts import Contact, lean_deg, pad_contacts


def contact_rows(contacts: list[Contact], names: list[str]) -> list[str]:
    """One line per contact pressing (over 0.05 N): pad, object, point (mm), lean, force."""
    return [f"  pad {c.pad} on {names[c.instance - 1]}: at "
            f"({', '.join(f'{v * 1e3:.0f}' for v in c.point)}) mm, normal leaning "
            f"{lean_deg(c):+.0f}° (+: pushing it down), {c.force_n:.1f} N"
            for c in contacts if c.force_n > 0.05]


def hand_part_rows(sim, names: list[str]) -> list[str]:
    """One line per contact (over 0.5 N) of any hand geom with an object now: the hand's part
    (the simulator's geom name), the object, the point (mm) and the normal force (N)."""
    import mujoco

    from offline_sim.dynamics import HAND_PREFIX

    w = sim.world
    m, d = w.model, w.data
    f6 = np.zeros(6)
    rows = []
    for i in range(d.ncon):
        c = d.contact[i]
        for hand_g, obj_g in ((int(c.geom1), int(c.geom2)), (int(c.geom2), int(c.geom1))):
            part = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, hand_g) or ""
            if part.startswith(HAND_PREFIX) and w.geom_instance[obj_g] > 0:
                mujoco.mj_contactForce(m, d, i, f6)
                if f6[0] > 0.5:
                    rows.append(f"  {part[len(HAND_PREFIX):]} on "
                                f"{names[w.geom_instance[obj_g] - 1]}: at "
                                f"({', '.join(f'{v * 1e3:.0f}' for v in c.pos)}) mm, "
                                f"{f6[0]:.1f} N")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cell", default=None, help="the jaw's cell file (default the built-in cell)")
    p.add_argument("--pad-friction", type=float, default=None)
    p.add_argument("--seed", type=int, required=True, help="bench_cell's --seed")
    p.add_argument("--trial", type=int, required=True,
                   help="the trial's number in the pass, from 1")
    p.add_argument("--validate", action="store_true",
                   help="the validate pass (default: the best-grasp pass, seeded seed + 1)")
    p.add_argument("--ycb", default=None)
    p.add_argument("--image", default="640x480", help="camera size, WxH, as the run had it")
    args = p.parse_args(argv)
    if args.trial < 1:
        raise SystemExit(f"trial_contacts: --trial counts from 1, got {args.trial}")
    import msgspec

    from benchmarks.bench_cell import cell_config
    from onboard import CameraConfig, CellFileError, PickingCell, config_hash

    try:
        w_px, h_px = (int(v) for v in args.image.lower().split("x"))
    except ValueError:
        raise SystemExit(f"trial_contacts: --image must be WxH in pixels (640x480), "
                         f"got {args.image!r}") from None
    mode, seed = ("validate", args.seed) if args.validate else ("best", args.seed + 1)
    try:
        config = cell_config(seed, Path(tempfile.mkdtemp(prefix="trial_contacts_")), args.ycb,
                             args.cell, args.pad_friction)
    except CellFileError as exc:
        raise SystemExit(f"trial_contacts: {exc}") from None
    config = msgspec.structs.replace(config, camera=CameraConfig(width_px=w_px, height_px=h_px))
    with PickingCell(config, config_hash(config), mode=mode) as cell:
        sim = cell.devices.truth
        for k in range(args.trial - 1):
            print(f"\rtrial {k + 1} of {args.trial - 1} before it", end="", file=sys.stderr)
            cell.pick_record()
        print(file=sys.stderr)
        grip, arm = cell.devices.gripper, cell.devices.arm
        close, lift, approach = grip.grasp, arm.lift, arm.approach

        def names() -> list[str]:  # the world of the table the trial picks from (a new
            # table is a new world)
            return [getattr(o, "name", f"object {k + 1}")
                    for k, o in enumerate(sim.world.objects)]

        def closed(*a, **kw):
            out = close(*a, **kw)
            print(f"at the end of the closing (the jaw {out.width_m * 1e3:.1f} mm open):")
            print("\n".join(contact_rows(pad_contacts(sim), names())) or "  no contact")
            return out

        def lifted(*a, **kw):
            out = lift(*a, **kw)
            print("after the lift:")
            print("\n".join(contact_rows(pad_contacts(sim), names())) or "  no contact")
            return out

        def approached(*a, **kw):  # a protective stop on the way down: what the hand hit
            out = approach(*a, **kw)
            if not out.reached:
                print(f"the approach stopped ({out.message}); the hand's contacts then:")
                print("\n".join(hand_part_rows(sim, names())) or "  no contact")
            return out

        grip.grasp, arm.lift, arm.approach = closed, lifted, approached
        try:
            rec = cell.pick_record()
        finally:
            grip.grasp, arm.lift, arm.approach = close, lift, approach
        tcp = "none" if rec.T_base_tcp is None else \
            ", ".join(f"{v * 1e3:.0f}" for v in np.asarray(rec.T_base_tcp)[:3, 3])
        print(f"trial {args.trial}: {rec.object_label or 'no object'}, {rec.outcome}, score "
              f"{rec.score if rec.score is not None else 'none'}, TCP at ({tcp}) mm"
              f"{', ' + rec.error if rec.error else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
