"""Paired rescoring of logged jaw runs with an unknown object's mass taken at another density.

An experiment, not the shipped setting. An object the cell file's ``scoring.masses_kg`` does
not name weighs its seen volume times ``scoring.density_kg_m3`` (500 kg/m³), and the torque
term reads that mass: τ_g / τ_max grows with it. Each graded trial of a bench_cell run logs
its torque ratio and every term of its score, so the score with the mass scaled by a factor
(the density times it) is judged on the same grasps and outcomes as the score the run had
and as Tan's measure alone: per run the three AUCs with their intervals (object kinds
resampled), the paired differences, and the scanned objects' AUC before and after.

Run from the repository root, each run folder with the factor on the density:

    .venv/bin/python -m benchmarks.rescore_density /work/jawruns5/f85_0.5:0.5 \\
        /work/jawruns5/short_0.5:0.5
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc, group_of, kind_of
from benchmarks.rescore_jaws import paired_cells, rescored, run_spec


def torque_score(f: dict, factor: float) -> float:
    """The torque term with the mass scaled by factor (the logged one without a ratio)."""
    ratio = f.get("torque_ratio")
    if ratio is None or not np.isfinite(ratio):
        return f["score_torque"]
    return float(np.clip(1.0 - factor * ratio, 0.0, 1.0))


def main(argv: list[str] | None = None) -> int:
    """Print one row per run: AUCs, paired differences, the scanned objects' AUCs."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="RUN_FOLDER:FACTOR (validate.jsonl inside)")
    args = p.parse_args(argv)
    print("| run | graded | Tan alone | score as run | mass x factor | new - as run [paired] | "
          "new - Tan [paired] | scanned: as run / new (trials) |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.runs:
        folder, factor = run_spec(spec, "rescore_density", "FACTOR")
        recs, ok, tan, old, new, diffs = rescored(
            folder, lambda f: {**f, "score_torque": torque_score(f, factor)})
        kinds = np.array([kind_of(r["label"]) for r in recs])
        scan = np.array([group_of(r["label"]) == "scanned (YCB)" for r in recs])
        run = f"{Path(folder).parent.name}/{Path(folder).name} x{factor:g}"
        print(f"| {run} | {len(recs)} | {paired_cells(ok, kinds, (tan, old, new), diffs)} | "
              f"{auc(old[scan], ok[scan]):.3f} / {auc(new[scan], ok[scan]):.3f} "
              f"({scan.sum()}) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
