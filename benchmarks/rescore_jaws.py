"""Paired rescoring of logged jaw runs: Tan alone, the score as run, and the score with the
torque term's torsional friction read from the pad/side overlap (contact height x pad width).

Each graded trial of a bench_cell run (its validate.jsonl) carries the features the score was
made of, so every column is judged on the same grasps and outcomes. The torque term's
inputs (the lever, the mass guess, the contact height) are logged as the ratio τ_g / τ_max
and the contact height, so the new term is the old ratio times τ_max(old) / τ_max(new):
both are μ F times a mean pressure radius, (2/3) 6 mm for the old disc, the overlap
rectangle's mean distance from its centre for the new one.

Run from the repository root (the jaw's pad width in mm after each folder):

    .venv/bin/python -m benchmarks.rescore_jaws /work/jawruns/f85_0.5:22 /work/jawruns/short_0.5:13

The runs' seed is in-sample for anything chosen from them.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from benchmarks.ablation_by_jaw import NEUTRAL, paired_effect
from benchmarks.bench_cell import auc, clustered_bootstrap, depth_factor, kind_of
from scoring import mean_patch_radius_m

OLD_RADIUS_M = (2.0 / 3.0) * 0.006  # the disc's mean pressure radius the runs were scored with


def new_torque_score(f: dict, pad_width_m: float) -> float:
    """The torque factor with the overlap's torsional friction (1 where no ratio is logged)."""
    ratio, h = f.get("torque_ratio"), f.get("contact_height_m")
    if ratio is None or h is None or not (math.isfinite(ratio) and math.isfinite(h)):
        return f.get("score_torque", 1.0)
    r = float(mean_patch_radius_m(np.array([h]), pad_width_m)[0])
    if not (r > 0):
        return f.get("score_torque", 1.0)
    return float(np.clip(1.0 - ratio * OLD_RADIUS_M / r, 0.0, 1.0))


def rows(path: Path) -> list[dict]:
    """The graded trials of a run (validate.jsonl) with Tan's score logged."""
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["success"] is not None and r["score"] is not None and "tan_score" in r["features"]:
            out.append(r)
    return out


def run_spec(spec: str, tool: str, value: str) -> tuple[str, float]:
    """(folder, number) of a 'RUN_FOLDER:NUMBER' argument; exits naming the form if not one."""
    folder, _, number = spec.rpartition(":")
    try:
        parsed = float(number)
    except ValueError:
        parsed = None
    if not folder or parsed is None:
        raise SystemExit(f"{tool}: {spec!r} is not RUN_FOLDER:{value}")
    return folder, parsed


def graded_run(folder: str) -> tuple[list[dict], np.ndarray, np.ndarray, list[dict]]:
    """(records, success, object kinds, features with the neutral depth terms filled in) of a
    run's graded trials."""
    recs = rows(Path(folder) / "validate.jsonl")
    ok = np.array([bool(r["success"]) for r in recs])
    kinds = np.array([kind_of(r["label"]) for r in recs])
    return recs, ok, kinds, [{**NEUTRAL, **r["features"]} for r in recs]


def rescored(folder: str, changed) -> tuple[list[dict], np.ndarray, np.ndarray, np.ndarray,
                                           np.ndarray, list[tuple[float, float, float]]]:
    """(records, success, Tan's scores, the scores as run, the rescored ones, and the paired
    effects of the rescored against the run's and against Tan's) of a run's graded trials;
    changed(features) gives the depth terms' features with the experiment's change."""
    recs, ok, kinds, feats = graded_run(folder)
    tan = np.array([f["tan_score"] for f in feats])
    old = np.array([f["tan_score"] * depth_factor(f) for f in feats])
    new = np.array([f["tan_score"] * depth_factor(changed(f)) for f in feats])
    return recs, ok, tan, old, new, [paired_effect(a, new, ok, kinds) for a in (old, tan)]


def paired_cells(ok: np.ndarray, kinds: np.ndarray, scores: tuple[np.ndarray, ...],
                 diffs: list[tuple[float, float, float]]) -> str:
    """The AUC cells of each score, then the paired differences, joined as table cells."""
    return " | ".join([cell(s, ok, kinds) for s in scores]
                      + [f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in diffs])


def cell(s: np.ndarray, ok: np.ndarray, kinds: np.ndarray) -> str:
    """'AUC [lo, hi]' with the interval clustered by object kind."""
    lo, hi = clustered_bootstrap(s, ok, kinds)
    return f"{auc(s, ok):.3f} [{lo:.3f}, {hi:.3f}]"


def main(argv: list[str] | None = None) -> int:
    """Print per run: AUC of Tan alone, the old score, the new score, the paired differences
    of the new score and of the score without its torque term from the old, heavy_box's AUCs,
    and the success at score >= 0.8 of the old and the new."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="RUN_FOLDER:PAD_WIDTH_MM (validate.jsonl inside)")
    args = p.parse_args(argv)
    print("| run | graded | Tan alone | score as run | score, torque from the overlap | "
          "new - as run [paired] | no torque term - as run [paired] | "
          "heavy_box: Tan / as run / new | top level (>= 0.8) held: as run / new |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in args.runs:
        folder, width_mm = run_spec(spec, "rescore_jaws", "PAD_WIDTH_MM")
        w = width_mm * 1e-3
        recs, ok, kinds, feats = graded_run(folder)
        tan = np.array([f["tan_score"] for f in feats])
        old = np.array([f["tan_score"] * depth_factor(f) for f in feats])
        logged = np.array([r["score"] for r in recs])
        if np.max(np.abs(old - logged)) > 1e-3:
            print(f"(warning: {folder}: the features rebuild the logged score only to "
                  f"{np.max(np.abs(old - logged)):.3g})")
        new = np.array([f["tan_score"] * depth_factor({**f, "score_torque": new_torque_score(f, w)})
                        for f in feats])
        bare = np.array([f["tan_score"] * depth_factor({**f, "score_torque": 1.0}) for f in feats])
        diffs = [paired_effect(old, x, ok, kinds) for x in (new, bare)]
        hb = kinds == "heavy_box"
        top = [f"{ok[s >= 0.8].mean():.1%} of {(s >= 0.8).sum()}" for s in (old, new)]
        print(f"| {Path(folder).name} | {len(recs)} | {cell(tan, ok, kinds)} | "
              f"{cell(old, ok, kinds)} | {cell(new, ok, kinds)} | "
              + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in diffs) + " | "
              f"{auc(tan[hb], ok[hb]):.3f} / {auc(old[hb], ok[hb]):.3f} / "
              f"{auc(new[hb], ok[hb]):.3f} | {top[0]} / {top[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
