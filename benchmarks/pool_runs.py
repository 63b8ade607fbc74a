"""Several bench_cell runs of one cell (other seeds) pooled into one row of figures.

Each run is a bench_cell --out folder. The validate passes (validate.jsonl) are concatenated:
the AUC of the loop's score and of Tan's measure alone on the same trials, each with a 95 %
interval that resamples whole object kinds of each run (bench_cell's clustered bootstrap),
and the scanned (YCB) objects' AUC by each. The best-grasp passes (best.jsonl with
best_truth.json) add up: the top grasp held over the objects the jaw can hold, again with the
holdable objects the loop offered no grasp counted as missed, and the objects wider than the
stroke that were never tried. Runs without a best-grasp pass (bench_cell --best
0) count in the validate columns only; the row says how many runs its top grasps come from.
Runs judged by holdable_oracle (RUN/best_oracle.json) add a table: the same top grasps over
the objects some grasp of the jaw held in the simulator (an object the pass did not hold that
no grasp of the oracle's grid held is left out). Runs with bench_cell --compare tan2024 add a
table: the top grasps of the loop's best pass and of Tan's measure alone's, on the same
tables (and over what the simulator holds, where holdable_oracle judged both passes).
docs/figures.md, "Several jaws, the final code: the stroke against the seen width, seeds 5 to
7 again":

    .venv/bin/python -m benchmarks.pool_runs OUT5/short_1.0 OUT6/short_1.0 OUT7/short_1.0
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc, clustered_bootstrap, kind_of, offered_none
from benchmarks.holdable_oracle import first_grasps, oracle_file


def _rows(path: Path) -> list[dict]:
    """The records of a bench_cell jsonl file, with a clear error where there is none."""
    if not path.is_file():
        raise SystemExit(f"pool_runs: {path} does not exist: give bench_cell --out folders")
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise SystemExit(f"pool_runs: {path} is not bench_cell's jsonl: {exc}") from None


def validate_auc(runs: list[Path]) -> str:
    """The pooled validate passes' row: graded, AUC loop [95 %], Tan's [95 %], scanned
    loop / Tan (trials)."""
    score, tan, held, cluster, scanned = [], [], [], [], []
    for k, run in enumerate(runs):
        for r in _rows(run / "validate.jsonl"):
            if r["success"] is None or r["score"] is None:
                continue
            score.append(r["score"])
            tan.append(r["features"].get("tan_score", 0.0))
            held.append(bool(r["success"]))
            cluster.append(f"{k}:{kind_of(r['label'])}")
            scanned.append(r["label"].startswith("ycb_"))
    s, t, y, c, ycb = map(np.asarray, (score, tan, held, cluster, scanned))
    lo, hi = clustered_bootstrap(s, y, c)
    t_lo, t_hi = clustered_bootstrap(t, y, c)
    return (f"{len(s)} | {auc(s, y):.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{auc(t, y):.3f} [{t_lo:.3f}, {t_hi:.3f}] | "
            f"{auc(s[ycb], y[ycb]):.3f} / {auc(t[ycb], y[ycb]):.3f} ({ycb.sum()})")


COMPARED = "best_tan2024"  # bench_cell --compare tan2024's best-grasp pass


def _truth(run: Path, best_pass: str) -> dict:
    """A best-grasp pass's best_truth.json (bench_cell.dump_truth), with a clear error."""
    path = run / f"{best_pass}_truth.json"
    if not path.is_file():
        raise SystemExit(f"pool_runs: {path} does not exist (a bench_cell run with --best)")
    return json.loads(path.read_text())


def tables_reached(run: Path, passes: tuple[str, ...]) -> set[int]:
    """The table numbers every one of a run's passes reached (the same seed lays the same
    tables; a pass that spends its trials on wide objects reaches fewer)."""
    reached = [set(map(int, _truth(run, p)["tables"])) for p in passes]
    return set.intersection(*reached)


def beyond_the_jaw(run: Path, best_pass: str = "best") -> set[tuple[int, int]]:
    """(table, index) of the objects of a run's best pass that no grasp of holdable_oracle's
    grid held, of those it tried (RUN/best_oracle.json), with a clear error where the run has
    none."""
    path = oracle_file(run, best_pass)
    if not path.is_file():
        raise SystemExit(f"pool_runs: {path} does not exist (python -m "
                         f"benchmarks.holdable_oracle {run} --pass {best_pass} ...)")
    return {(v["table"], v["index"]) for v in json.loads(path.read_text())
            if v["tried"] and not v["held"]}


def held_by(run: Path, best_pass: str) -> set[tuple[int, int]]:
    """(table, index) of the objects some grasp of a run's best-grasp pass held."""
    recs = _rows(run / f"{best_pass}.jsonl")
    return {tuple(hit) for r, hit in zip(recs, _truth(run, best_pass)["grasped"])
            if hit is not None and r["success"]}


def top_grasps(runs: list[Path], best_pass: str = "best",
               only_tables: list[set[int]] | None = None, physics: bool = False,
               beyond: list[set[tuple[int, int]]] | None = None) -> str:
    """The best-grasp passes' top grasp held (the first grasp on each object the jaw can
    hold, as bench_cell's objects_summary counts it), the same with the holdable objects
    offered no grasp counted as missed (bench_cell.offered_none), and the wide objects never
    tried. best_pass: which pass ("best", or "best_tan2024", bench_cell --compare's);
    only_tables: per run, the tables counted (all the pass reached when None). physics: leave
    out the objects the pass did not hold on any try that no grasp of holdable_oracle's grid
    held either;
    beyond: per run, the objects to leave out so instead (both passes' verdicts)."""
    held = tried = wide = refused = none = 0
    for n, run in enumerate(runs):
        recs = _rows(run / f"{best_pass}.jsonl")
        truth = _truth(run, best_pass)
        if only_tables is not None:
            keep = only_tables[n]
            truth["tables"] = {t: o for t, o in truth["tables"].items() if int(t) in keep}
            pairs = [(r, hit) for r, hit in zip(recs, truth["grasped"])
                     if r["table"] in keep]
            recs = [r for r, _ in pairs]
            truth["grasped"] = [hit for _, hit in pairs]
        first, seen = first_grasps(recs, truth)
        out = set()
        if physics or beyond is not None:
            # an object the pass itself held on a later try is one the jaw can hold, whatever
            # the oracle's grid found (seed 110's lying bottle: none of its grasps held it)
            out = beyond[n] if beyond is not None else \
                beyond_the_jaw(run, best_pass) - held_by(run, best_pass)
            first = {h: ok for h, ok in first.items() if h not in out}
        held += sum(first.values())
        tried += len(first)
        wides = {(int(t), k) for t, objs in truth["tables"].items()
                 for k, o in enumerate(objs) if o.get("on_table", True) and not o["holdable"]}
        holdable = {(int(t), k) for t, objs in truth["tables"].items()
                    for k, o in enumerate(objs) if o["holdable"]}
        holdable -= out
        declined = {r["table"] for r in recs if r["outcome"] == "no_grasp"}
        none += len(offered_none(holdable, seen, declined))
        wide += len(wides)
        refused += len(wides - seen)
    return (f"{held} of {tried} ({held / max(tried, 1):.1%}) | {held} of {tried + none} "
            f"({held / max(tried + none, 1):.1%}) | {refused} of {wide}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="bench_cell --out folders of one cell")
    args = p.parse_args(argv)
    print("| graded | AUC, the loop's score [95 %] | Tan's measure alone | scanned: loop / Tan "
          "(trials) | "
          "top grasp held | with those offered no grasp | wider than the stroke refused |")
    print("|---|---|---|---|---|---|---|")
    best = [run for run in args.runs if (run / "best.jsonl").is_file()]
    if not best:
        top = "no best-grasp pass | no best-grasp pass | no best-grasp pass"
    else:
        top = top_grasps(best)
        if len(best) < len(args.runs):
            top = top.replace(" | ", f" (of {len(best)} of the {len(args.runs)} runs) | ")
    graded = [run for run in args.runs if (run / "validate.jsonl").is_file()]
    auc_cols = (validate_auc(graded) if graded else
                " | ".join(["no validate pass"] * 4))
    print(f"| {auc_cols} | {top} |")
    judged = [run for run in best if oracle_file(run).is_file()]
    if judged:
        print(f"\n| best-grasp passes of the {len(judged)} run(s) judged by holdable_oracle | "
              f"top grasp held | with those offered no grasp | wider than the stroke refused |"
              f"\n|---|---|---|---|")
        print(f"| the holdable objects by width (as above) | {top_grasps(judged)} |")
        print(f"| those some grasp of the jaw held in the simulator | "
              f"{top_grasps(judged, physics=True)} |")
    compared = [run for run in best if (run / f"{COMPARED}.jsonl").is_file()]
    if compared:
        print(f"\n| best-grasp passes of the {len(compared)} run(s) with Tan's beside "
              f"(bench_cell --compare tan2024) | top grasp held | with those offered no grasp "
              f"| wider than the stroke refused |\n|---|---|---|---|")
        both = [tables_reached(run, ("best", COMPARED)) for run in compared]
        n = sum(map(len, both))
        print(f"| the loop's score | {top_grasps(compared)} |")
        print(f"| Tan's measure alone | {top_grasps(compared, COMPARED)} |")
        print(f"| the loop's score, the {n} tables both reached | "
              f"{top_grasps(compared, only_tables=both)} |")
        print(f"| Tan's measure alone, the same tables | "
              f"{top_grasps(compared, COMPARED, only_tables=both)} |")
        if all(oracle_file(r).is_file() and oracle_file(r, COMPARED).is_file() for r in compared):
            # an object either pass held is holdable; else no grasp of either grid held it
            out = [(beyond_the_jaw(r) | beyond_the_jaw(r, COMPARED)) - held_by(r, "best")
                   - held_by(r, COMPARED) for r in compared]
            print(f"| the loop's score, the same tables, holdable as the simulator says | "
                  f"{top_grasps(compared, only_tables=both, beyond=out)} |")
            print(f"| Tan's measure alone, the same tables, holdable as the simulator says | "
                  f"{top_grasps(compared, COMPARED, only_tables=both, beyond=out)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
