"""The pads' contacts with one object while the jaw closes, at several insertion depths
(issue 23's lying banana and upright mustard bottle).

A table with one YCB object (``--object``, the folder's name; ``--stand-tall`` stands it in
its tallest stable pose: a bottle upright); the loop plans its top grasp, then the same grasp
is executed with the fingertips lowered or raised (the pinch below, at or above the object's
widest section; --shift also moves it off the object's middle). Per grasp it records each
pad's contacts with the object at the end of the closing (point, normal, normal force), the
object's largest rotation while the jaw closes, the lift, and the score the loop gives that
grasp; it prints a table and draws the section with the pads and contacts (docs/scoring.md,
"The lying banana" and "The upright mustard bottle").

--along runs the loop's grasp instead moved along the pads' width (along a lying banana), at
each distance given, and prints the lever (the object's mass centre from the closing line) and
the rise; --pad-torsion gives the pads MuJoCo's torsional friction (condim 4, the coefficient
in metres: a compliant pad's contact patch), which the cell's pads (condim 3) do not have
(docs/scoring.md, "The lying banana held off its middle").

Run from the repository root (one process; about a minute per jaw and three tables):

    .venv/bin/python -m benchmarks.pad_contacts --cell benchmarks/jaws/short_pad.yaml \\
        --ycb ../shared/data/ycb --seed 0 --tables 3 [--pad-friction 0.5] [--shift 0.012] \\
        [--object mustard_bottle --stand-tall] --figure docs/banana_short_pad.png
    .venv/bin/python -m benchmarks.pad_contacts --cell benchmarks/jaws/short_pad.yaml \\
        --ycb ../shared/data/ycb --tables 2 --along 0,20,-20,40,-40,60,-60,80,-80 \\
        [--pad-torsion 0.0025]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

OFFSETS_M = (-0.010, -0.005, 0.0, 0.005, 0.010, 0.015)  # fingertips raised (+) or lowered (-)


@dataclass
class Contact:
    """One pad-object contact: point (world, m), normal (world, pointing into the object),
    normal force (N), which pad ("L" or "R") and which object (the simulator's instance,
    1 for the first)."""

    pad: str
    point: np.ndarray
    normal: np.ndarray
    force_n: float
    instance: int = 1


@dataclass
class GraspRun:
    """One executed grasp: offset of the fingertips (m), their height above the table (m),
    the height of the object's widest section and of its top in the closing plane (m),
    contacts at the end of closing, the object's largest rotation during closing (rad), its
    rise after the lift (m); the TCP pose, the section and the pads (section_points,
    _pad_boxes) at the end of closing; and the loop's score, seen tilt (degrees) and tilt
    factor for that grasp."""

    offset_m: float
    tip_z_m: float
    widest_z_m: float
    top_z_m: float
    contacts: list[Contact] = field(default_factory=list)
    max_rotation_rad: float = 0.0
    rise_m: float = 0.0
    T_tcp: np.ndarray | None = None
    section_end: np.ndarray | None = None
    pads_end: list[tuple[float, float, float, float]] = field(default_factory=list)
    score: float = math.nan
    tilt_deg: float = math.nan
    score_tilt: float = math.nan


def one_object_cell(cell_file: str, ycb: str, seed: int, friction: float | None,
                    name: str = "banana", stand_tall: bool = False):
    """A PickingCell on the cell file whose tables hold one YCB object only (the folder
    ycb/name), in its tallest stable pose with stand_tall."""
    import msgspec

    from benchmarks.bench_cell import cell_config
    from onboard import CellFileError, PickingCell, config_hash

    folder = Path(ycb).resolve() / name
    if not folder.is_dir():
        raise SystemExit(f"pad_contacts: no YCB object {name!r}: {folder} is not a folder")
    tmp = Path(tempfile.mkdtemp(prefix="pad_contacts_"))
    (tmp / name).symlink_to(folder)
    try:
        config = cell_config(seed, tmp / "log", str(tmp), cell_file, friction)
    except CellFileError as exc:
        raise SystemExit(f"pad_contacts: {exc}") from None
    config = msgspec.structs.replace(config, sim=msgspec.structs.replace(
        config.sim, objects_per_table=[1, 1]))
    cell = PickingCell(config, config_hash(config), mode="best")
    sim = cell.devices.truth
    sim.use_settings(replace(sim.settings, builtin=(), random_primitives=False,
                             stand_tall=stand_tall))
    return cell, sim


def pad_contacts(sim) -> list[Contact]:
    """The pads' contacts with the objects now."""
    import mujoco

    w = sim.world
    m, d = w.model, w.data
    left, right = set(map(int, w.pad_left)), set(map(int, w.pad_right))
    f6 = np.zeros(6)
    out = []
    for i in range(d.ncon):
        c = d.contact[i]
        g1, g2 = int(c.geom1), int(c.geom2)
        for pad_g, obj_g, sign in ((g1, g2, 1.0), (g2, g1, -1.0)):
            if (pad_g in left or pad_g in right) and w.geom_instance[obj_g] > 0:
                mujoco.mj_contactForce(m, d, i, f6)
                n = sign * np.array(c.frame[:3])  # from the pad into the object
                out.append(Contact("L" if pad_g in left else "R", np.array(c.pos), n,
                                   float(f6[0]), int(w.geom_instance[obj_g])))
    return out


def section_points(sim, T_tcp: np.ndarray) -> np.ndarray:
    """(n, 2) the object's section in the closing plane (the TCP's x-z plane through it) now:
    (along the closing line from the TCP, height above the table), metres."""
    import trimesh

    w = sim.world
    T = w.T_world_object(0)
    verts, faces = w.objects[0].visual
    mesh = trimesh.Trimesh(verts @ T[:3, :3].T + T[:3, 3], faces, process=False)
    sec = mesh.section(plane_origin=T_tcp[:3, 3], plane_normal=T_tcp[:3, 1])
    if sec is None:
        return np.zeros((0, 2))
    pts = np.concatenate([np.asarray(d) for d in sec.discrete])
    return np.column_stack([(pts - T_tcp[:3, 3]) @ T_tcp[:3, 0], pts[:, 2]])


def _section_heights(sec: np.ndarray) -> tuple[float, float]:
    """(widest z, top z) of a section (section_points), metres: the height of its widest
    1 mm slice, and its highest point."""
    z = sec[:, 1]
    best, at = -1.0, math.nan
    for a in np.arange(z.min(), z.max(), 0.001):
        sl = sec[(z >= a) & (z < a + 0.001), 0]
        if sl.size and np.ptp(sl) > best:
            best, at = float(np.ptp(sl)), float(a + 0.0005)
    return at, float(z.max())


def execute(cell, sim, T_plan: np.ndarray, offset_m: float, tcp_to_tip_m: float,
            shift_m: float = 0.0) -> GraspRun:
    """The planned grasp with the TCP raised by offset_m and moved shift_m along the closing
    line (off the object's middle: one pad meets it first): approach, close (recording the
    contacts and the object's rotation each control period), lift; the world restored after."""
    import mujoco

    from geometry import rotation_angle

    w = sim.world
    state_spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    saved = np.empty(mujoco.mj_stateSize(w.model, state_spec))
    mujoco.mj_getState(w.model, w.data, saved, state_spec)
    cfg = cell.loop.config
    T = T_plan.copy()
    T[2, 3] += offset_m
    T[:3, 3] += shift_m * T[:3, 0]
    widest, top = _section_heights(section_points(sim, T))
    run = GraspRun(offset_m, T[2, 3] - tcp_to_tip_m, widest, top, T_tcp=T)
    R0 = w.T_world_object(0)[:3, :3]
    grip, arm = cell.devices.gripper, cell.devices.arm
    grip.open(0.15, timeout_s=cfg.gripper.timeout_s)
    moved = arm.approach(T, cfg.arm.pregrasp_m, speed_mps=cfg.arm.speed_mps,
                         approach_speed_mps=cfg.arm.approach_speed_mps)
    if moved.reached:
        step = sim.step

        def watched(n: int = 1) -> None:  # the object's rotation through the closing
            step(n)
            run.max_rotation_rad = max(run.max_rotation_rad, rotation_angle(
                R0.T @ w.T_world_object(0)[:3, :3]))

        sim.step = watched
        try:
            grip.grasp(0.0, cfg.gripper.speed_mps, cfg.gripper.force_n,
                       timeout_s=cfg.gripper.timeout_s)
        finally:
            del sim.step
        run.contacts = pad_contacts(sim)
        run.section_end = section_points(sim, T)
        run.pads_end = _pad_boxes(sim, T)
        z0 = w.T_world_object(0)[2, 3]
        arm.lift(cfg.arm.lift_m, speed_mps=cfg.arm.approach_speed_mps * 2)
        sim.step(int(cfg.arm.hold_s / w.model.opt.timestep))
        run.rise_m = float(w.T_world_object(0)[2, 3] - z0)
    else:
        run.rise_m = math.nan
    mujoco.mj_setState(w.model, w.data, saved, state_spec)
    mujoco.mj_forward(w.model, w.data)
    return run


def score_at(cell, plan, T_tcp: np.ndarray, tcp_to_tip_m: float) -> tuple[float, float, float]:
    """(score, contact tilt in degrees, tilt factor) the loop's scoring gives the grasp T_tcp
    on the plan's frame, with the silhouette cut at T_tcp's fingertip plane."""
    import msgspec

    tip_z = T_tcp[2, 3] - tcp_to_tip_m
    plan_tip_z = plan.sil.T_base_plane[2, 3]  # the plan's fingertip plane (approach straight down)
    insertion = plan.sil.insertion_depth_m + (plan_tip_z - tip_z)
    if insertion <= 0:
        return math.nan, math.nan, math.nan
    config = cell.loop.config
    cell.loop.config = msgspec.structs.replace(config, scoring=msgspec.structs.replace(
        config.scoring, insertion_depth_m=insertion, deep_insertion_m=0.0))
    try:
        score, f = cell.loop.score_pose(plan.frame, T_tcp)
    finally:
        cell.loop.config = config
    return score, math.degrees(f.get("contact_tilt_rad", math.nan)), f.get("score_tilt", math.nan)


def _pad_boxes(sim, T_tcp: np.ndarray) -> list[tuple[float, float, float, float]]:
    """The pads now as (centre along the closing line from the TCP, centre height, half
    extent along the closing line, half height), metres."""
    w = sim.world
    out = []
    for g in list(w.pad_left) + list(w.pad_right):
        R = w.data.geom_xmat[g].reshape(3, 3)
        size = w.model.geom_size[g]
        c = w.data.geom_xpos[g]
        hx = float(np.abs(R.T @ T_tcp[:3, 0]) @ size)
        hz = float(np.abs(R.T @ np.array([0.0, 0.0, 1.0])) @ size)
        out.append((float((c - T_tcp[:3, 3]) @ T_tcp[:3, 0]), float(c[2]), hx, hz))
    return out


def lean_deg(c: Contact) -> float:
    """How far a contact normal leans out of the horizontal, degrees (+: pushing the object
    down, the pad above the widest point)."""
    return math.degrees(math.asin(float(np.clip(-c.normal[2], -1, 1))))


def held_word(rise_m: float) -> str:
    """How a row reads a rise (m): held when the object rose over half the 10 cm lift, as the
    cell judges it; "-" when the approach stopped before the closing."""
    return "held" if rise_m > 0.05 else ("-" if math.isnan(rise_m) else "FAILED")


def summary(r: GraspRun) -> str:
    """One table row."""
    pads = []
    for p in "LR":
        cs = [c for c in r.contacts if c.pad == p and c.force_n > 0.05]
        if cs:
            f = sum(c.force_n for c in cs)
            lean = sum(c.force_n * lean_deg(c) for c in cs) / f
            z = sum(c.force_n * c.point[2] for c in cs) / f
            pads.append(f"{p}: {len(cs)} c, {f:.0f} N, lean {lean:+.0f}°, z {z * 1e3:.0f} mm")
        else:
            pads.append(f"{p}: none")
    return (f"| {r.offset_m * 1e3:+.0f} | {r.tip_z_m * 1e3:.1f} | {r.widest_z_m * 1e3:.1f} | "
            f"{r.top_z_m * 1e3:.1f} | {'; '.join(pads)} | {math.degrees(r.max_rotation_rad):.0f}° "
            f"| {r.rise_m * 1e3:.0f} mm {held_word(r.rise_m)} | {r.score:.2f} | {r.tilt_deg:.0f}° "
            f"| {r.score_tilt:.2f} |")


def draw(runs: list[GraspRun], path: Path, title: str, tcp_to_tip_m: float) -> None:
    """The object's section in the closing plane at the end of the closing, with the pads,
    the contacts and their normals (scaled by force), one panel per grasp."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(3.2 * len(runs), 3.7), squeeze=False)
    for ax, r in zip(axes[0], runs):
        T = r.T_tcp
        x, o = T[:3, 0], T[:3, 3]
        ax.plot(r.section_end[:, 0] * 1e3, r.section_end[:, 1] * 1e3, ".", ms=1,
                color="goldenrod")
        for u, z, hx, hz in r.pads_end:
            ax.add_patch(plt.Rectangle(((u - hx) * 1e3, (z - hz) * 1e3), 2 * hx * 1e3,
                                       2 * hz * 1e3, color="grey", alpha=0.5))
        for c in r.contacts:
            if c.force_n <= 0.05:
                continue
            p = c.point - o
            u = p @ x * 1e3
            ax.plot(u, c.point[2] * 1e3, "ro", ms=3)
            k = 0.4 * c.force_n  # mm of arrow per newton
            ax.arrow(u, c.point[2] * 1e3, (c.normal @ x) * k, c.normal[2] * k, color="red",
                     width=0.2, head_width=1.2, length_includes_head=True)
        ax.axhline(r.widest_z_m * 1e3, ls="--", lw=0.8, color="k")
        ax.axhline(0, lw=1.5, color="k")
        held = "held" if r.rise_m > 0.05 else "not lifted"
        cs = [c for c in r.contacts if c.force_n > 0.05]
        lean = sum(c.force_n * lean_deg(c) for c in cs) / max(sum(c.force_n for c in cs), 1e-9)
        ax.set_title(f"tips {r.tip_z_m * 1e3:.0f} mm, widest {r.widest_z_m * 1e3:.0f} mm: "
                     f"lean {lean:.0f}°, {held}\nscore {r.score:.2f}, tilt seen "
                     f"{r.tilt_deg:.0f}°", fontsize=8)
        ax.set_aspect("equal")
        ax.set_xlim(-35, 35)
        top = max(62.0, r.top_z_m * 1e3 + 5)
        ax.set_ylim(max(-3.0, r.tip_z_m * 1e3 - 45), top)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("along the closing line, mm", fontsize=7)
    axes[0][0].set_ylabel("height above the table, mm", fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def planned_tables(cell, sim, tables: int):
    """(table index, the loop's plan) for each of `tables` tables laid anew whose plan has a
    grasp; a line saying why for the others."""
    for t in range(tables):
        if t:
            sim.new_table()
        plan = cell.loop.plan()
        if not hasattr(plan.choice, "T_base_tcp"):
            print(f"table {t}: no grasp ({plan.choice})")
            continue
        yield t, plan


def set_pad_torsion(sim, torsion_m: float) -> None:
    """Give the pads MuJoCo's torsional friction: condim 4 and torsion_m (metres) as the
    coefficient (the torque one contact resists per newton it presses with)."""
    w = sim.world
    for g in [int(i) for i in (*w.pad_left, *w.pad_right)]:
        w.model.geom_condim[g] = 4
        w.model.geom_friction[g, 1] = torsion_m


def along_row(cell, sim, T_plan: np.ndarray, along_m: float, tcp_to_tip_m: float) -> str:
    """One table row: the planned grasp moved along_m along the pads' width (the TCP's y),
    executed; the lever (m: the object's mass centre from the closing line) and the rise."""
    T = T_plan.copy()
    T[:3, 3] += along_m * T_plan[:3, 1]
    com = sim.world.T_world_object(0)[:3, 3]   # the object's frame sits at its mass centre
    lever = float(np.linalg.norm(np.cross(com - T[:3, 3], T[:3, 0])))
    r = execute(cell, sim, T, 0.0, tcp_to_tip_m)
    n = len([c for c in r.contacts if c.force_n > 0.05])
    return (f"| {along_m * 1e3:+.0f} | {lever * 1e3:.0f} | {n} | "
            f"{math.degrees(r.max_rotation_rad):.0f}° | "
            f"{r.rise_m * 1e3:.0f} mm {held_word(r.rise_m)} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cell", required=True, help="the jaw's cell file (benchmarks/jaws/*.yaml)")
    p.add_argument("--ycb", default="../shared/data/ycb")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--object", default="banana", help="the YCB object's folder name")
    p.add_argument("--stand-tall", action="store_true",
                   help="stand the object in its tallest stable pose (a bottle upright)")
    p.add_argument("--tables", type=int, default=2, help="the object laid anew (poses differ)")
    p.add_argument("--pad-friction", type=float, default=None)
    p.add_argument("--figure", type=Path, default=None)
    p.add_argument("--shift", type=float, default=0.0, help="also each grasp moved this far "
                   "(m) along the closing line, one pad meeting the object first")
    p.add_argument("--along", default=None, metavar="MM,MM,...",
                   help="instead of the heights: the grasp moved this far (mm) along the pads' "
                   "width, one row each")
    p.add_argument("--pad-torsion", type=float, default=None, metavar="M",
                   help="the pads' torsional friction (m; condim 4), none by default as the cell")
    args = p.parse_args(argv)
    try:
        alongs = None if args.along is None else [float(v) * 1e-3 for v in args.along.split(",")]
    except ValueError:
        raise SystemExit(f"pad_contacts: --along must be millimetres separated by commas, got "
                         f"{args.along!r}") from None
    cell, sim = one_object_cell(args.cell, args.ycb, args.seed, args.pad_friction, args.object,
                                args.stand_tall)
    if args.pad_torsion is not None:
        set_pad_torsion(sim, args.pad_torsion)
    g = cell.loop.config.gripper
    tcp_to_tip = g.tcp_to_tip_m if g.tcp_to_tip_m is not None else 0.5 * g.pad_length_m
    if alongs is not None:
        print(f"# {args.object} on {args.cell}, pad friction {sim.settings.pad_friction:g}, "
              f"pad torsion {args.pad_torsion or 0:g} m\n\n| moved along mm | lever mm | "
              f"contacts | turned while closing | rise |\n|---|---|---|---|---|")
        for t, plan in planned_tables(cell, sim, args.tables):
            print(f"| table {t}: score {plan.choice.score:.2f} | | | | |")
            for a in alongs:
                print(along_row(cell, sim, np.asarray(plan.choice.T_base_tcp), a, tcp_to_tip),
                      flush=True)
        cell.close()
        return 0
    print(f"# {args.object} on {args.cell}, pad friction {sim.settings.pad_friction:g}\n")
    print("| raise mm | tips z mm | widest z mm | top z mm | contacts at the end of closing "
          "| object turned | rise | score | tilt seen | tilt factor |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    figs = []
    for t, plan in planned_tables(cell, sim, args.tables):
        print(f"| table {t}: score {getattr(plan.choice, 'score', math.nan):.2f} | | | | | | |")
        for off in OFFSETS_M:
            r = execute(cell, sim, np.asarray(plan.choice.T_base_tcp), off, tcp_to_tip)
            r.score, r.tilt_deg, r.score_tilt = score_at(cell, plan, r.T_tcp, tcp_to_tip)
            print(summary(r), flush=True)
            if args.shift:
                r2 = execute(cell, sim, np.asarray(plan.choice.T_base_tcp), off, tcp_to_tip,
                             args.shift)
                print(summary(r2).replace("|", f"| shifted {args.shift * 1e3:.0f} mm:", 1),
                      flush=True)
            if r.section_end is not None and len(r.section_end):
                figs.append(r)
    if args.figure and figs:
        # the loop's grasp on the first table, and the same grasp raised 5 and 10 mm
        pick = [r for r in figs[:len(OFFSETS_M)] if r.offset_m in (0.0, 0.005, 0.010)]
        draw(pick, args.figure, f"{args.object}, {Path(args.cell).stem}, pad friction "
             f"{sim.settings.pad_friction:g}: section at the end of the closing, "
             f"contact normals (0.4 mm/N)", tcp_to_tip)
        print(f"\nfigure: {args.figure}")
    cell.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
