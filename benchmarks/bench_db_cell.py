"""Database grasps on the simulated cell with a multi-finger hand: how often each way of
choosing a grasp holds the object, with the object's true pose (the reference), the pose
vision.recognise estimates, and that pose perturbed by a fixed error (5 mm, 5 degrees about
a random axis by default).

Strategies, all on the same recognised object of the same table:
  filtered      the loop's choice: the top grasp kept by the filter (cone, workspace, height
                map collision), ranked by the database's quality
  db_top        the database's top grasp by quality, unfiltered
  epsilon_top   the top grasp by the mean epsilon quality (a_mean) alone, unfiltered
  pfc_top       the top grasp by P(force closure), unfiltered (a database built with --pfc)
  random        a database grasp drawn at random
  filtered_epsilon, filtered_pfc   the grasps the filter kept, ranked by epsilon (a_mean) or by
                P(fc) instead of the quality: Weisz & Allen's comparison among grasps the
                scene allows

Each (table, strategy) runs on a fresh SimCell with the table's seed (same objects, same
poses), the grasp executed with SimCell.execute_grasp (open, preshape, approach, close, lift,
hold, judge by the hand and the world's truth). A strategy with no grasp (the filter kept
none, or no P(fc) in the database) counts as a failure and is shown apart.

    python -m benchmarks.bench_db_cell --tables 10             # the demo database (cached)
    python -m benchmarks.bench_db_cell --db grasps.sqlite      # e.g. built with --pfc coarse
    python -m benchmarks.bench_db_cell --db grasps.sqlite --targets box,cylinder \
        --strategies pfc_top,epsilon_top,filtered_pfc,filtered_epsilon
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np

STRATEGIES = ("filtered", "db_top", "epsilon_top", "pfc_top", "random", "filtered_epsilon",
              "filtered_pfc")


def _perturbed(T: np.ndarray, error_m: float, error_deg: float,
               rng: np.random.Generator) -> np.ndarray:
    """T moved error_m along a random direction and turned error_deg about a random axis
    through its origin (base frame)."""
    from geometry import rotvec_to_matrix

    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    shift = rng.normal(size=3)
    shift /= np.linalg.norm(shift)
    out = T.copy()
    out[:3, :3] = rotvec_to_matrix(axis * math.radians(error_deg)) @ T[:3, :3]
    out[:3, 3] += error_m * shift
    return out


def _best_kept(result, values: np.ndarray) -> int | None:
    """The kept placed grasp with the highest value (None: none kept or no finite value)."""
    kept = np.asarray(result.order, np.int64)
    v = values[kept] if len(kept) else values[:0]
    if not np.isfinite(v).any():
        return None
    return int(kept[np.nanargmax(v)])


def _rows(table, placed, result, rng: np.random.Generator) -> dict[str, int | None]:
    """The grasp row each strategy picks (None: it has none): placed rows for the filtered
    strategies, table rows (the identity placement, first in placed) for the others."""
    pfc = np.asarray(table.pfc, np.float64)
    rows = np.asarray(placed.table_row)
    return {
        "filtered": int(result.order[0]) if len(result.order) else None,
        "db_top": int(np.argmax(table.quality)),
        "epsilon_top": int(np.argmax(table.a_mean)),
        "pfc_top": int(np.nanargmax(pfc)) if np.isfinite(pfc).any() else None,
        "random": int(rng.integers(len(table))),
        "filtered_epsilon": _best_kept(result, np.asarray(table.a_mean, np.float64)[rows]),
        "filtered_pfc": _best_kept(result, pfc[rows]),
    }


def run(db_path: str, hand: str, tables: int, seed: int, error_m: float,
        error_deg: float, strategies: tuple[str, ...] = STRATEGIES,
        targets: tuple[str, ...] | None = None) -> dict:
    """{condition: {strategy: [held, no_grasp, tried]}} and the count of tables skipped."""
    from offline_sim.cell import SimCell, SimCellSettings
    from onboard import sim_cell_file
    from onboard.loop import NO_TRUTH, DatabaseSource, SimulatedTruth, SourceSetup
    from scoring import GraspDatabase
    from tqdm import tqdm
    from vision import TabletopSegmenter, models_from_database, prepare_models, recognise

    config = sim_cell_file(hand=hand, database=db_path)
    with GraspDatabase(db_path) as db:
        library = prepare_models(models_from_database(db))
    segmenter = TabletopSegmenter()
    rng = np.random.default_rng(seed)
    source = DatabaseSource(SourceSetup(config, None, None, rng, segmenter, NO_TRUTH),
                            recogniser=lambda frame, mask: None)
    conditions = ("true", "estimated", f"+{error_m * 1e3:g} mm / {error_deg:g} deg")
    counts = {c: {s: [0, 0, 0] for s in strategies} for c in conditions}
    skipped: dict[str, int] = {}
    empty: list[str] = []      # tables where the filter kept no grasp, and why
    settings = SimCellSettings(hand=hand)
    for t in tqdm(range(tables), desc="tables", file=sys.stderr):
        table_seed = seed * 1000 + t
        with SimCell(settings, seed=table_seed) as sim:
            frame = sim.camera.read(2.0)
            masks = segmenter.segment(frame)
            truth = SimulatedTruth(sim)
            target = None
            for m in masks:   # the first object vision names correctly (truth checks it)
                k = truth.object_index(frame, m)
                if k is None or sim.object_name(k) not in source.objects() or (
                        targets is not None and sim.object_name(k) not in targets):
                    continue
                rec = recognise(frame, m, library, support=segmenter.last_plane)
                if rec.name == sim.object_name(k):
                    target = (m, k, rec)
                    break
                skipped["misrecognised"] = skipped.get("misrecognised", 0) + 1
            if target is None:
                skipped["no recognised object"] = skipped.get("no recognised object", 0) + 1
                continue
            mask, k, rec = target
            T_true = sim.world.T_world_object(k)
            poses = {conditions[0]: T_true, conditions[1]: rec.T_base_object,
                     conditions[2]: _perturbed(rec.T_base_object, error_m, error_deg, rng)}
            plans = {}
            for cond, T in poses.items():
                r = dataclasses.replace(rec, T_base_object=T)
                placed, result = source.place_and_filter(frame, mask, r, None)
                plans[cond] = (placed, _rows(source.table(rec.name), placed, result, rng))
                if not len(result.order):
                    empty.append(f"table {t} ({cond}): {rec.name}: {result.summary()}")
        table = source.table(rec.name)
        for cond, (placed, rows) in plans.items():
            for strategy, row in rows.items():
                if strategy not in counts[cond]:
                    continue
                c = counts[cond][strategy]
                c[2] += 1
                if row is None:
                    c[1] += 1
                    continue
                # a filtered row may come from an equivalent pose: its table row is table_row
                q = None if table.preshape is None else table.preshape[placed.table_row[row]]
                q = np.zeros(0) if q is None or not np.all(np.isfinite(q)) else q
                with SimCell(settings, seed=table_seed) as sim:   # the same table, untouched
                    assert np.allclose(sim.world.T_world_object(k), T_true)
                    out = sim.execute_grasp(placed.T_base_hand[row], q, object_index=k)
                c[0] += bool(out.success)
    return {"counts": counts, "skipped": skipped, "tables": tables, "empty": empty}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", default=None, help="grasp database (default: the demo's, cached)")
    p.add_argument("--hand", default="three_finger")
    p.add_argument("--tables", type=int, default=10, help="tables (one object each)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--error-mm", type=float, default=5.0)
    p.add_argument("--error-deg", type=float, default=5.0)
    p.add_argument("--cache", type=Path, default=None, help="the demo database's cache folder")
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help=f"comma-separated, of {', '.join(STRATEGIES)} (default: all)")
    p.add_argument("--targets", default=None,
                   help="comma-separated object names: only these are taken as a table's object "
                        "(e.g. those a partly built --pfc database has P(fc) for)")
    a = p.parse_args(argv)
    targets = None if a.targets is None else tuple(x.strip() for x in a.targets.split(","))
    strategies = tuple(x.strip() for x in a.strategies.split(",") if x.strip())
    if not strategies or set(strategies) - set(STRATEGIES):
        p.error(f"--strategies must name some of {', '.join(STRATEGIES)}, got {a.strategies!r}")
    db = a.db
    if db is None:
        import os

        from offline_sim.database import ensure_demo_database

        # the demo's default cache folder (graspline demo --cache)
        cache = a.cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
            / "graspline"
        db = str(ensure_demo_database(a.hand, cache))
    out = run(db, a.hand, a.tables, a.seed, a.error_mm * 1e-3, a.error_deg, strategies,
              targets)
    print(f"database {db}, hand {a.hand}, {out['tables']} tables, seed {a.seed}; "
          f"skipped: {out['skipped'] or 'none'}")
    print("| pose | strategy | held / tried | rate | no grasp |")
    print("|---|---|---|---|---|")
    for cond, by in out["counts"].items():
        for s, (held, none, tried) in by.items():
            rate = f"{held / tried:.0%}" if tried else "-"
            print(f"| {cond} | {s} | {held} / {tried} | {rate} | {none} |")
    if out["empty"]:
        print("\nwhere the filter kept no grasp:")
        print("\n".join(out["empty"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
