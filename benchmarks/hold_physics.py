"""What happens in the pads when a parallel jaw lifts a dense box held off its centre (issue 23).

The cell's trial logs store the score and the outcome, not the contacts. This lays one
heavy_box (2000-4000 kg/m³, the cell's primitive) on a table of the simulated cell, with the
jaw of a cell file, and executes a grasp the way the loop does (open, approach at the loop's
speeds, close at the gripper's speed and force, lift 10 cm, hold 0.5 s), the grasp placed at
a chosen lever (the mass centre's distance from the grasp axis, across the closing
direction) and contact height (how far the pads overlap the box's side). Every simulation
step it records the pad/object contacts (count and normal force per pad), the object's
rotation about the grasp axis relative to the hand, and its slip along the approach.

Run from the repository root:

    .venv/bin/python -m benchmarks.hold_physics --cell benchmarks/jaws/2f85.yaml \\
        --pad-friction 0.5 --seed 0 --levers 0,10,20,40 --heights 17

``--truth RUN`` instead lays the tables of a bench_cell run again from its seed and prints the
true mass of the object of ``--kind`` each graded trial was on, against what held:

    .venv/bin/python -m benchmarks.hold_physics --cell benchmarks/jaws/2f85.yaml \
        --pad-friction 0.5 --seed 2 --ycb ../shared/data/ycb --truth /work/jawruns/f85_0.5
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

PHASES = ("approach", "close", "lift", "hold")
CACHE = ".graspline-cache"  # the YCB decompositions, as bench_cell's runs keep them
LIFT_PEAK_M_S2 = 55.8  # the hand's peak acceleration in the simulated cell's lift (measured here)


@dataclass
class Trace:
    """Per simulation step of one grasp: phase, contacts per pad, normal force per pad (N),
    the object's rotation about the closing axis relative to the hand (deg) and its drop
    along the approach relative to the hand (mm), both from the start of the lift."""

    phase: list[str] = field(default_factory=list)
    n_left: list[int] = field(default_factory=list)
    n_right: list[int] = field(default_factory=list)
    f_left: list[float] = field(default_factory=list)
    f_right: list[float] = field(default_factory=list)
    rot_deg: list[float] = field(default_factory=list)
    drop_mm: list[float] = field(default_factory=list)
    # the contact points' mean distance from their centre in the pad plane, mm (the lever arm
    # of the torsional friction MuJoCo's point contacts give)
    torsion_arm_mm: list[float] = field(default_factory=list)
    hand_z_m: list[float] = field(default_factory=list)  # the TCP's height, metres


def _box_frame(obj, T_world_object: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(closing axis, lever axis) horizontal unit vectors of a resting box, its width along
    the closing axis and its top height, metres (world frame)."""
    R = T_world_object[:3, :3]
    verts = obj.visual[0] @ R.T + T_world_object[:3, 3]
    up = int(np.argmax(np.abs(R[2, :])))
    horiz = [i for i in range(3) if i != up]
    ext = [float(np.ptp(verts @ R[:, i])) for i in horiz]
    close_i, lever_i = (horiz[0], horiz[1]) if ext[0] <= ext[1] else (horiz[1], horiz[0])
    x = R[:, close_i].copy()
    x[2] = 0.0
    x /= np.linalg.norm(x)
    y = np.array([-x[1], x[0], 0.0])
    return x, y, min(ext), float(verts[:, 2].max())


def box_grasp(cell, lever_m: float, height_m: float, tcp_to_tip_m: float) -> tuple[np.ndarray, float]:
    """(T_base_tcp, the box's width along the closing axis): a grasp straight down across the
    narrower horizontal side of the box that is object 0, lever_m from its mass centre along
    the grasp axis, the fingertips height_m below its top."""
    w = cell.world
    x, _, width, top = _box_frame(w.objects[0], w.T_world_object(0))
    T = np.eye(4)
    z = np.array([0.0, 0.0, -1.0])
    T[:3, 0], T[:3, 1], T[:3, 2] = x, np.cross(z, x), z
    T[:3, 3] = w.data.xipos[w.object_body[0]] + lever_m * T[:3, 1]
    T[2, 3] = top - height_m + tcp_to_tip_m
    return T, width


def run_grasp(cell, lever_m: float, height_m: float, config) -> tuple[Trace, bool, dict]:
    """Execute one grasp on the box that is object 0 of the cell's table (box_grasp);
    (trace, held, facts)."""
    T, width = box_grasp(cell, lever_m, height_m, config.gripper.tcp_to_tip_m)
    tr, held, facts = execute(cell, T, config, 0)
    return tr, held, {**facts, "width_mm": width * 1e3}


def execute(cell, T: np.ndarray, config, k: int) -> tuple[Trace, bool, dict]:
    """Execute the grasp T_base_tcp on object k of the cell's table as the loop does,
    recording every step; (trace, held, facts)."""
    import mujoco

    w = cell.world
    obj = w.objects[k]
    g = config.gripper
    tr = Trace()
    phase = ["approach"]
    m, d = w.model, w.data
    force6 = np.zeros(6)
    inst = w.geom_instance
    left, right = set(w.pad_left.tolist()), set(w.pad_right.tolist())
    step0 = cell.step

    def T_tcp_obj() -> np.ndarray:
        return np.linalg.inv(w.T_world_tcp()) @ w.T_world_object(k)

    ref: list[np.ndarray] = []

    def step(n: int = 1) -> None:
        for _ in range(n):
            step0(1)
            nl = nr = 0
            fl = fr = 0.0
            pts = []
            for i in range(d.ncon):
                c = d.contact[i]
                g1, g2 = int(c.geom1), int(c.geom2)
                pad = g1 if g1 in left or g1 in right else g2 if g2 in left or g2 in right else -1
                other = g2 if pad == g1 else g1
                if pad < 0 or inst[other] != k + 1:
                    continue
                mujoco.mj_contactForce(m, d, i, force6)
                if pad in left:
                    nl, fl = nl + 1, fl + force6[0]
                else:
                    nr, fr = nr + 1, fr + force6[0]
                pts.append(c.pos.copy())
            tr.phase.append(phase[0])
            tr.n_left.append(nl)
            tr.n_right.append(nr)
            tr.f_left.append(fl)
            tr.f_right.append(fr)
            Tto = T_tcp_obj()
            if not ref and phase[0] == "lift":
                ref.append(Tto)
            base = ref[0] if ref else Tto
            # the object's rotation about the closing axis (the TCP's x) in the pads
            tr.rot_deg.append(math.degrees(_rotvec(Tto[:3, :3] @ base[:3, :3].T)[0]))
            tr.drop_mm.append(1e3 * (Tto[2, 3] - base[2, 3]))
            Ttcp = w.T_world_tcp()
            tr.hand_z_m.append(float(Ttcp[2, 3]))
            if pts:
                p = (np.array(pts) - Ttcp[:3, 3]) @ Ttcp[:3, :3]
                tr.torsion_arm_mm.append(1e3 * float(np.mean(np.hypot(p[:, 1] - p[:, 1].mean(),
                                                                      p[:, 2] - p[:, 2].mean()))))
            else:
                tr.torsion_arm_mm.append(math.nan)

    cell.step = step  # instrument this cell's clock (an experiment, not the product)
    arm, grip, a = cell.arm, cell.gripper, config.arm
    try:
        grip.activate()
        grip.open(min(1.5 * g.speed_mps, grip.spec.speed.high))
        moved = arm.approach(T, a.pregrasp_m, speed_mps=a.speed_mps,
                             approach_speed_mps=a.approach_speed_mps)
        if not moved.reached:
            return tr, False, {"error": moved.message, "mass_kg": obj.mass_kg}
        phase[0] = "close"
        grip.grasp(0.0, g.speed_mps, g.force_n)
        z0 = w.T_world_object(k)[2, 3]
        phase[0] = "lift"
        arm.lift(a.lift_m, speed_mps=a.approach_speed_mps * 2)
        phase[0] = "hold"
        step(int(round(a.hold_s / m.opt.timestep)))
        held = bool(w.T_world_object(k)[2, 3] > z0 + 0.5 * a.lift_m)
    finally:
        cell.step = step0
    return tr, held, {"mass_kg": obj.mass_kg, "weight_n": obj.mass_kg * 9.81}


def _rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector (radians) of a rotation matrix."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_rotvec()


def summary(tr: Trace, dt: float) -> dict:
    """Per phase: mean contacts and median normal force per pad, the contact points' median
    spread (mm), the rotation and drop at its end, and the hand's peak upward acceleration
    (m/s², from its height step by step)."""
    ph = np.array(tr.phase)
    acc = np.zeros(len(ph))
    acc[1:-1] = np.diff(np.array(tr.hand_z_m), 2) / dt ** 2
    out = {}
    for p in PHASES:
        k = ph == p
        if not k.any():
            continue
        spread = np.array(tr.torsion_arm_mm)[k]
        out[p] = dict(n=(float(np.mean(np.array(tr.n_left)[k])), float(np.mean(np.array(tr.n_right)[k]))),
                      f=(float(np.median(np.array(tr.f_left)[k])), float(np.median(np.array(tr.f_right)[k]))),
                      spread=float(np.nanmedian(spread)) if np.isfinite(spread).any() else math.nan,
                      rot=float(np.array(tr.rot_deg)[k][-1]), drop=float(np.array(tr.drop_mm)[k][-1]),
                      acc=float(acc[k].max()))
    return out


def true_masses(run: Path, settings, seed: int, kind: str) -> list[tuple[dict, float]]:
    """(logged trial, the true mass of the object of ``kind`` on its table, kg) for the graded
    trials of that kind in a bench_cell run (RUN/validate.jsonl): the tables are laid again
    from the run's seed (the cell's random draws lay them and nothing else), so each table's
    objects are the run's, as laid. Tables with two objects of the kind are left out."""
    from offline_sim.cell import SimCell

    rows = [json.loads(line) for line in (run / "validate.jsonl").read_text().splitlines()]
    graded = [r for r in rows if r["success"] is not None and r["score"] is not None
              and r["label"].split("@")[0] == kind]
    need = {r["table"] for r in graded}
    masses: dict[int, list[float]] = {}
    cell = SimCell(settings, seed=seed, cache_dir=CACHE)
    try:
        while cell.tables <= max(need, default=0):
            if cell.tables in need:
                masses[cell.tables] = [o.mass_kg for o in cell.world.objects if o.name == kind]
            cell.new_table()
    finally:
        cell.close()
    return [(r, masses[r["table"]][0]) for r in graded if len(masses[r["table"]]) == 1]


def print_true_masses(run: Path, settings, seed: int, kind: str, limit_kg: float) -> None:
    """Held / tried per score level for objects under and over limit_kg, and the top level's
    trials one per line."""
    out = true_masses(run, settings, seed, kind)
    print(f"{run.name}: {len(out)} graded {kind} trials, true masses from the tables laid again")
    for lo in (0.0, 0.6, 0.8):
        sel = [(bool(r["success"]), m) for r, m in out if r["score"] >= lo]
        light = [ok for ok, m in sel if m <= limit_kg]
        heavy = [ok for ok, m in sel if m > limit_kg]
        print(f"  score >= {lo}: true mass <= {limit_kg:.2f} kg held {sum(light)} of {len(light)}; "
              f"heavier held {sum(heavy)} of {len(heavy)}")
    for r, m in sorted(out, key=lambda t: -t[0]["score"]):
        if r["score"] >= 0.8:
            f = r["features"]
            print(f"  score {r['score']:.2f} {'held' if r['success'] else 'FAIL'} true mass {m:.2f} kg "
                  f"(the score's guess {f.get('mass_kg', math.nan):.2f}) lever "
                  f"{f.get('lever_m', math.nan) * 1e3:.0f} mm {r['error'][:50]}")


def main(argv: list[str] | None = None) -> int:
    """Print one line per grasp: lever, height, mass, held, contacts and forces per phase."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cell", required=True)
    p.add_argument("--pad-friction", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--boxes", type=int, default=3, help="boxes (tables) per lever and height")
    p.add_argument("--levers", default="0,10,20,40", help="mm, comma-separated")
    p.add_argument("--heights", default="17", help="mm of pad overlap, comma-separated")
    p.add_argument("--kind", default="heavy_box")
    p.add_argument("--truth", type=Path, metavar="RUN", default=None,
                   help="instead: the true masses of RUN's graded trials of --kind (a bench_cell "
                        "--out folder run with --cell and --seed as given here; --ycb as it had)")
    p.add_argument("--ycb", default=None, help="the YCB folder the --truth run had")
    args = p.parse_args(argv)
    from offline_sim.cell import SimCell, SimCellSettings
    from onboard import load_cell_file

    config, _ = load_cell_file(args.cell)
    g = config.gripper
    mu = args.pad_friction if args.pad_friction is not None else config.sim.pad_friction
    settings = SimCellSettings(objects_per_table=(1, 1), builtin=(), random_primitives=(args.kind,),
                               finger_width_m=g.finger_width_m, open_width_m=g.open_width_m,
                               finger_length_m=g.finger_length_m, pad_length_m=g.pad_length_m,
                               pad_thickness_m=g.pad_thickness_m,
                               finger_thickness_m=g.finger_thickness_m - g.pad_thickness_m,
                               tcp_to_tip_m=g.tcp_to_tip_m, pad_friction=mu, depth_noise=False)
    if args.truth is not None:
        full = dataclasses.replace(settings, objects_per_table=tuple(config.sim.objects_per_table),
                                   builtin=SimCellSettings.builtin,
                                   random_primitives=SimCellSettings.random_primitives,
                                   ycb_dir=args.ycb, depth_noise=config.sim.depth_noise)
        # the pads hold m (g + a) <= 2 μ F through the simulated lift's 55.8 m/s² steps
        print_true_masses(args.truth, full, args.seed, args.kind,
                          2.0 * mu * g.force_n / (9.81 + LIFT_PEAK_M_S2))
        return 0
    levers = [float(v) * 1e-3 for v in args.levers.split(",")]
    heights = [float(v) * 1e-3 for v in args.heights.split(",")]
    print(f"# {args.cell} mu {mu} force {g.force_n} N per pad, pad {g.finger_width_m*1e3:.0f} x "
          f"{g.pad_length_m*1e3:.0f} mm; {args.kind}")
    print("box mass_kg weight_N width_mm lever_mm h_mm held | close: n_l n_r F_l F_r | "
          "lift: n_l n_r F_l F_r spread_mm rot_deg drop_mm peak_accel_m_s2 | "
          "hold: rot_deg drop_mm")
    for b in range(args.boxes):
        for lev in levers:
            for h in heights:
                cell = SimCell(settings, seed=args.seed + b, cache_dir=CACHE)
                try:
                    tr, held, facts = run_grasp(cell, lev, h, config)
                    s = summary(tr, cell.world.model.opt.timestep)
                finally:
                    cell.close()
                if "error" in facts:
                    print(f"{b} lever {lev*1e3:.0f} h {h*1e3:.0f}: {facts['error']}")
                    continue
                c, li, ho = s.get("close", {}), s.get("lift", {}), s.get("hold", {})
                fmt = lambda q: (f"{q['n'][0]:.1f} {q['n'][1]:.1f} {q['f'][0]:.1f} {q['f'][1]:.1f}"  # noqa: E731
                                 if q else "-")
                print(f"{b} {facts['mass_kg']:.3f} {facts['weight_n']:.1f} {facts['width_mm']:.0f} "
                      f"{lev*1e3:.0f} {h*1e3:.0f} {'HELD' if held else 'DROP'} | {fmt(c)} | "
                      f"{fmt(li)} {li.get('spread', math.nan):.1f} {li.get('rot', math.nan):.1f} "
                      f"{li.get('drop', math.nan):.1f} {li.get('acc', math.nan):.1f} | "
                      f"{ho.get('rot', math.nan):.1f} "
                      f"{ho.get('drop', math.nan):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
