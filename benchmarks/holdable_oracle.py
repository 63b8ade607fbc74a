"""Could any grasp of the jaw have held the objects a best-grasp pass missed? A physics truth.

bench_cell and pool_runs count an object as one the jaw can hold from its geometry alone (its
narrowest true width within the pads' length of its top fits the stroke). An object the
loop's top grasp held is holdable, by that grasp; for the others (the top grasp dropped it,
or the loop offered no grasp on it) this asks the simulator. It lays the pass's tables again
from the run's seed (the cell's random draws lay them and nothing else; each table's object
names are checked against the run's truth), takes each such object where it settled, parks
the objects that do not touch it (a table is left to the objects the loop could not pick),
and executes a grid of grasps straight down: the fingertips at ``--depths`` depths under its
top, from 2 mm to the deepest where the part above them still fits the stroke less 2 mm and
the fingers reach, each closing across that part's narrowest direction, at its middle and a
quarter of its length either side. An object whose part fits the stroke only within those 2
mm (a box 78.7 or 80.0 mm across in the Franka hand's 80 mm stroke) is tried where it fits
the stroke at all, the same grid: the placement is the simulator's own, exact, so the grid
asks whether the fingers can pass it and hold it when nothing errs. An object with no such
grasp (wider than the stroke within the fingers' reach) is not judged and stays counted. Each grasp runs as the loop's does (hold_physics.execute: approach, close at
the gripper's speed and force, lift 10 cm, hold 0.5 s) from the same state, the table as
laid with those neighbours parked (MuJoCo's state restored between grasps). An object no
grasp of the grid held is one this jaw cannot hold there, as far as the grid can tell: a
grid is a search, not a proof, so the figure it changes is reported beside the geometric one,
never instead.

Writes RUN/best_oracle.json (``--pass best_tan2024``: bench_cell --compare's pass, to
best_tan2024_oracle.json; per object: table, index, name, what the pass did, grasps held
of tried, and each grasp's depth and outcome), which ``pool_runs`` reads when present. Run
from the repository root with the run's own cell, friction, seed and YCB folder:

    .venv/bin/python -m benchmarks.holdable_oracle OUT \\
        --cell benchmarks/jaws/short_pad.yaml --pad-friction 0.5 --seed 100 \\
        --ycb ../shared/data/ycb
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.hold_physics import execute

DEPTH_MIN_M = 0.002     # the shallowest fingertip depth tried under the object's top
FINGER_CLEAR_M = 0.002  # the section at the deepest depth tried is the stroke less this
TOUCH_M = 0.01          # a neighbour's footprint this close to the object's stays (it may prop it)
ORACLE_SUFFIX = "_oracle.json"  # PASS_oracle.json beside PASS.jsonl


def oracle_file(run: Path, best_pass: str = "best") -> Path:
    """Where holdable_oracle writes its verdicts on a run's best-grasp pass ("best", or
    "best_tan2024", bench_cell --compare's)."""
    return run / f"{best_pass}{ORACLE_SUFFIX}"


@dataclass
class Verdict:
    """One object the pass did not hold on its top grasp: where, what the pass did
    ("dropped" or "offered none"), and the grid's grasps (depth mm, along mm, outcome)."""

    table: int
    index: int
    name: str
    passed: str
    held: int = 0
    tried: int = 0
    grasps: list[tuple[float, float, str]] = field(default_factory=list)


def _rows(path: Path) -> list[dict]:
    """The JSON lines of a bench_cell trial log."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def first_grasps(recs: list[dict], truth: dict) -> tuple[dict[tuple[int, int], bool],
                                                         set[tuple[int, int]]]:
    """({(table, index): held} of the first grasp tried on each object holdable by width,
    {(table, index)} of every object tried) of a best pass's trials (its jsonl rows) and its
    truth (bench_cell.dump_truth's JSON): a retry tries the next grasp down, not the top."""
    first: dict[tuple[int, int], bool] = {}
    seen = set()
    for r, hit in zip(recs, truth["grasped"]):
        if hit is None or r["success"] is None:
            continue
        t, k = hit
        seen.add((t, k))
        if truth["tables"][str(t)][k]["holdable"] and (t, k) not in first:
            first[(t, k)] = bool(r["success"])
    return first, seen


def disputed(run: Path, best_pass: str = "best") -> list[tuple[int, int, str]]:
    """(table, index, what the pass did) of the objects a best pass counts as holdable by
    width but did not hold on its top grasp: dropped, or offered no grasp on a table the
    loop left saying so (pool_runs' count)."""
    from benchmarks.bench_cell import offered_none

    recs = _rows(run / f"{best_pass}.jsonl")
    truth = json.loads((run / f"{best_pass}_truth.json").read_text())
    first, seen = first_grasps(recs, truth)
    holdable = {(int(t), k) for t, objs in truth["tables"].items()
                for k, o in enumerate(objs) if o["holdable"]}
    declined = {r["table"] for r in recs if r["outcome"] == "no_grasp"}
    out = [(t, k, "dropped") for (t, k), ok in first.items() if not ok]
    out += [(t, k, "offered none") for t, k in offered_none(holdable, seen, declined)]
    return sorted(out)


def grid(obj, T: np.ndarray, stroke_m: float, insert_m: float, n_depths: int,
         tcp_to_tip_m: float) -> list[tuple[float, float, np.ndarray]]:
    """(depth m, along m, T_base_tcp) of the grasps tried on an object at pose T (world =
    the cell's base): at n_depths fingertip depths under its top down to insert_m (the
    fingers' length), each closing across the narrowest direction of the part above it
    where that part fits the stroke less FINGER_CLEAR_M (where none does, where it fits the
    stroke at all), at the middle of that part and a quarter of its length either side.
    Empty where nothing fits the stroke."""
    from benchmarks.bench_width import feret_min, true_section

    top = float((obj.visual[0] @ T[:3, :3].T + T[:3, 3])[:, 2].max())
    sections = []
    for d in np.linspace(DEPTH_MIN_M, insert_m, 4 * n_depths):
        part = true_section(obj, T, insertion_m=float(d))[:, :2]
        width, u = feret_min(part)
        sections.append((float(d), part, np.asarray(u, float) / np.linalg.norm(u), width))
    fits = []
    for clear in (FINGER_CLEAR_M, 0.0):
        fits = [(d, part, u) for d, part, u, width in sections if width <= stroke_m - clear]
        if fits:
            break
    if not fits:
        return []
    pick = np.unique(np.linspace(0, len(fits) - 1, n_depths).round().astype(int))
    z = np.array([0.0, 0.0, -1.0])
    out = []
    for i in pick:
        d, part, u = fits[i]
        v = np.array([-u[1], u[0]])
        cu = 0.5 * ((part @ u).max() + (part @ u).min())
        lo, hi = (part @ v).min(), (part @ v).max()
        x = np.array([u[0], u[1], 0.0])
        for f in (0.5, 0.25, 0.75):
            along = lo + f * (hi - lo)
            G = np.eye(4)
            G[:3, 0], G[:3, 1], G[:3, 2] = x, np.cross(z, x), z
            G[:2, 3] = cu * u + along * v
            G[2, 3] = top - d + tcp_to_tip_m
            out.append((d, float(along - 0.5 * (lo + hi)), G))
    return out


def _park_apart(cell, k: int) -> None:
    """Park the table's objects whose footprints lie more than TOUCH_M from object k's."""
    from benchmarks.bench_cell import _footprint, _hull_distance

    w = cell.world
    mine = _footprint(w.objects[k], w.T_world_object(k))
    for j in range(len(w.objects)):
        if j == k:
            continue
        theirs = _footprint(w.objects[j], w.T_world_object(j))
        if min(_hull_distance(p, mine) for p in theirs) > TOUCH_M:
            cell.park(j)


def judge(cell, config, t: int, k: int, passed: str, n_depths: int) -> Verdict:
    """Try the grid on object k of the cell's current table (table t), restoring the laid
    state between grasps."""
    import mujoco

    w = cell.world
    g = config.gripper
    obj = w.objects[k]
    m, d = w.model, w.data
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    laid = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, laid, spec)
    _park_apart(cell, k)
    alone = np.empty_like(laid)
    mujoco.mj_getState(m, d, alone, spec)
    T = w.T_world_object(k)
    v = Verdict(t, k, obj.name, passed)
    for depth, along, G in grid(obj, T, g.open_width_m, g.finger_length_m, n_depths,
                                 g.tcp_to_tip_m):
        mujoco.mj_setState(m, d, alone, spec)
        mujoco.mj_forward(m, d)
        _, held, facts = execute(cell, G, config, k)
        out = "stop" if "error" in facts else "held" if held else "dropped"
        v.grasps.append((round(depth * 1e3, 1), round(along * 1e3, 1), out))
        v.held += held
        v.tried += 1
    mujoco.mj_setState(m, d, laid, spec)  # the table as laid, for its next object
    mujoco.mj_forward(m, d)
    return v


def main(argv: list[str] | None = None) -> int:
    """Judge every disputed object of a run's best pass; print one line each and a total."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path, help="a bench_cell --out folder with a best pass")
    p.add_argument("--cell", required=True, help="the run's --cell")
    p.add_argument("--pad-friction", type=float, default=None, help="the run's --pad-friction")
    p.add_argument("--seed", type=int, required=True, help="the run's --seed")
    p.add_argument("--ycb", default=None, help="the run's --ycb")
    p.add_argument("--depths", type=int, default=5, help="fingertip depths per object")
    p.add_argument("--pass", dest="best_pass", default="best",
                   help="the best-grasp pass to judge: best, or best_tan2024 (--compare's)")
    args = p.parse_args(argv)
    from tqdm import tqdm

    from benchmarks.bench_cell import cell_config
    from offline_sim.cell import SimCell
    from onboard import CellFileError, sim_cell_settings

    for name in (f"{args.best_pass}.jsonl", f"{args.best_pass}_truth.json"):
        if not (args.run / name).is_file():
            print(f"holdable_oracle: {args.run / name} does not exist (a bench_cell run with "
                  f"--best)", file=sys.stderr)
            return 2
    truth = json.loads((args.run / f"{args.best_pass}_truth.json").read_text())
    todo = disputed(args.run, args.best_pass)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        # the best pass runs on the run's seed + 1 (bench_cell.main)
        try:
            config = cell_config(args.seed + 1, Path(tmp), args.ycb, args.cell,
                                 args.pad_friction)
        except CellFileError as exc:
            raise SystemExit(f"holdable_oracle: {exc}") from None
        cell = SimCell(sim_cell_settings(config), seed=config.sim.seed)  # as the loop's
        verdicts: list[Verdict] = []
        try:
            bar = tqdm(todo, desc="objects", unit="object", file=sys.stderr)
            for t, k, passed in bar:
                while cell.tables < t:
                    cell.new_table()
                names = [o.name for o in cell.world.objects]
                want = [o["name"] for o in truth["tables"][str(t)]]
                if names != want:
                    print(f"holdable_oracle: table {t} laid again holds {names}, the run's "
                          f"{want}: not the run's seed, cell or YCB folder", file=sys.stderr)
                    return 2
                verdicts.append(judge(cell, config, t, k, passed, args.depths))
                v = verdicts[-1]
                bar.write(f"table {t} object {k} {v.name} ({passed}): {v.held} of {v.tried} "
                          f"grasps held " + " ".join(f"{a:.0f}/{b:+.0f}:{c[0]}"
                                                     for a, b, c in v.grasps))
        finally:
            cell.close()
    out = oracle_file(args.run, args.best_pass)
    out.write_text(json.dumps([asdict(v) for v in verdicts], indent=1))
    some = sum(v.held > 0 for v in verdicts)
    blank = sum(v.tried == 0 for v in verdicts)
    tried = sum(v.tried for v in verdicts)
    print(f"# {args.run.name}: {len(verdicts)} objects not held on the top grasp, {some} of them "
          f"held by some grasp of the grid, {blank} not judged (no grasp in the grid) "
          f"({tried} grasps, {time.monotonic() - t0:.0f} s); written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
