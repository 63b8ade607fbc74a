"""Several bench_cell runs of one cell (other seeds) pooled into one row of figures.

Each run is a bench_cell --out folder. The validate passes (validate.jsonl) are concatenated:
the AUC of the loop's score and of Tan's measure alone on the same trials, each with a 95 %
interval that resamples whole object kinds of each run (bench_cell's clustered bootstrap),
and the scanned (YCB) objects' AUC by each. The best-grasp passes (best.jsonl with
best_truth.json) add up: the top grasp held over the objects the jaw can hold, again with the
holdable objects the loop offered no grasp counted as missed, and the objects wider than the
stroke that were never tried. Runs without a best-grasp pass (bench_cell --best
0) count in the validate columns only; the row says how many runs its top grasps come from.
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


def top_grasps(runs: list[Path]) -> str:
    """The best-grasp passes' top grasp held (the first grasp on each object the jaw can
    hold, as bench_cell's objects_summary counts it), the same with the holdable objects
    offered no grasp counted as missed (bench_cell.offered_none), and the wide objects never
    tried."""
    held = tried = wide = refused = none = 0
    for run in runs:
        recs = _rows(run / "best.jsonl")
        truth_path = run / "best_truth.json"
        if not truth_path.is_file():
            raise SystemExit(f"pool_runs: {truth_path} does not exist (a bench_cell run with "
                             f"--best)")
        truth = json.loads(truth_path.read_text())
        first: dict[tuple[int, int], bool] = {}
        seen = set()
        for r, hit in zip(recs, truth["grasped"]):
            if hit is None or r["success"] is None:
                continue
            t, k = hit
            seen.add((t, k))
            if truth["tables"][str(t)][k]["holdable"] and (t, k) not in first:
                first[(t, k)] = bool(r["success"])
        held += sum(first.values())
        tried += len(first)
        wides = {(int(t), k) for t, objs in truth["tables"].items()
                 for k, o in enumerate(objs) if o.get("on_table", True) and not o["holdable"]}
        holdable = {(int(t), k) for t, objs in truth["tables"].items()
                    for k, o in enumerate(objs) if o["holdable"]}
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
    print(f"| {validate_auc(args.runs)} | {top} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
