"""The ablation per jaw: each term of graspline's score against Tan's measure alone, paired on
the same graded trials of several bench_cell runs (one run per jaw and pad friction).

bench_cell prints one run's ablation rows; this brings several runs together. Each row
rescores a run's graded trials from their logged features (bench_cell.ABLATIONS: one depth
term added to Tan's score at a time, or R_r taken out), so a row and Tan's differ only in the
term. The effect of a term is the AUC difference to Tan's on the same trials; its 95 %
interval resamples whole object kinds (one bootstrap draw scores both rows on the same
resample), so the interval is the paired one, narrower than the two AUCs' own intervals.
A second table takes each term out of graspline's full score instead, paired against the
full score: what the term adds where the others are already there.

Run from the repository root, one NAME=DIR per run (DIR as bench_cell --out wrote it; several
comma-separated folders, other seeds of one jaw, are pooled into one column, each run's object
kinds resampled apart):

    .venv/bin/python -m benchmarks.ablation_by_jaw "2F-85 μ1=OUT5/f85_1.0,OUT6/f85_1.0" \\
        "short pad μ0.5=OUT5/short_0.5"
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks.bench_cell import ABLATIONS, DEPTH_NEUTRAL, auc, depth_factor, kind_of, swing_factor

# (row name, score from a trial's logged features), the first row the one others pair against
Rows = tuple[tuple[str, Callable[[dict], float]], ...]

NEUTRAL = DEPTH_NEUTRAL  # the depth terms of a candidate that collided or missed


def graspline_without(feature: str) -> Callable[[dict], float]:
    """graspline's score (Tan's eq. 16 times the depth factors) with one depth factor, the
    logged feature named, taken as if it did not act."""
    return lambda f: f["tan_score"] * depth_factor({**f, feature: NEUTRAL[feature]})


# each term taken out of graspline's full score; the first row is the full score
LEAVE_ONE_OUT: Rows = (
    *((name, f) for name, f in ABLATIONS if name in ("graspline (every term)", "graspline - R_r")),
    ("graspline - finger bodies", graspline_without("body_collision")),
    ("graspline - contact height", graspline_without("score_contact")),
    ("graspline - torque about the grasp axis", graspline_without("score_torque")),
    ("graspline - contact tilt", graspline_without("score_tilt")),
    ("graspline - palm graze", graspline_without("score_palm")),
    ("graspline - swing about the grasp axis", graspline_without("score_swing")),
)


@dataclass(frozen=True)
class GradedTrials:
    """One run's graded validate trials: success, object kind, features by name."""

    name: str
    success: np.ndarray
    kinds: np.ndarray
    features: list[dict]


def load_run(name: str, folder: Path) -> GradedTrials:
    """The graded trials of one bench_cell run's validate.jsonl; SystemExit naming the file
    when it is missing or holds no graded trial with Tan's score logged."""
    path = folder / "validate.jsonl"
    if not path.is_file():
        raise SystemExit(f"run {name!r}: no validate.jsonl in {folder} (bench_cell --out DIR)")
    rows = []
    for k, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{k}: not a JSON line ({exc.msg})") from None
    graded = [r for r in rows if r.get("success") is not None
              and "tan_score" in (r.get("features") or {})]
    if not graded:
        raise SystemExit(f"run {name!r}: {path} has no graded trial with tan_score logged")
    return GradedTrials(name, np.array([bool(r["success"]) for r in graded]),
                        np.array([kind_of(r["label"]) for r in graded]),
                        [{**NEUTRAL, **r["features"], "score_swing": swing_factor(r["features"])}
                         for r in graded])


def pooled_runs(name: str, folders: str) -> GradedTrials:
    """The graded trials of the runs in folders (comma-separated) as one, each kind of each
    run its own cluster ("RUN_INDEX:KIND"; the bootstrap resamples a kind of a run)."""
    runs = [load_run(name, Path(f)) for f in folders.split(",") if f]
    if not runs:
        raise SystemExit(f"run {name!r}: no folder given (NAME=DIR[,DIR...])")
    if len(runs) == 1:
        return runs[0]
    return GradedTrials(name, np.concatenate([r.success for r in runs]),
                        np.concatenate([[f"{k}:{kind}" for kind in r.kinds]
                                        for k, r in enumerate(runs)]),
                        [f for r in runs for f in r.features])


def run_from_spec(spec: str, tool: str) -> GradedTrials:
    """The pooled graded trials a 'NAME=DIR[,DIR...]' argument names; SystemExit naming the
    form when it is not one."""
    name, sep, folders = spec.partition("=")
    if not sep or not name or not folders:
        raise SystemExit(f"{tool}: {spec!r} is not NAME=DIR[,DIR...] (bench_cell --out "
                         f"folders)")
    return pooled_runs(name, folders)


def paired_effect(base: np.ndarray, row: np.ndarray, ok: np.ndarray, kinds: np.ndarray,
                  n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """(AUC(row) - AUC(base), 2.5 %, 97.5 %), resampling whole object kinds, both rows
    scored on each resample."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(kinds == k) for k in np.unique(kinds)]
    diffs = []
    for _ in range(n_boot):
        pick = np.concatenate([groups[i] for i in rng.integers(len(groups), size=len(groups))])
        d = auc(row[pick], ok[pick]) - auc(base[pick], ok[pick])
        if np.isfinite(d):
            diffs.append(d)
    lo, hi = (np.percentile(diffs, [2.5, 97.5]) if diffs else (np.nan, np.nan))
    return auc(row, ok) - auc(base, ok), float(lo), float(hi)


def ablation_rows(run: GradedTrials,
                  rows: Rows = ABLATIONS) -> dict[str, tuple[float, float, float, float]]:
    """Per row: (AUC, effect against the first row, its paired 95 % interval)."""
    scored = {name: np.array([f(x) for x in run.features]) for name, f in rows}
    tan = scored[rows[0][0]]
    out = {}
    for name, s in scored.items():
        eff, lo, hi = paired_effect(tan, s, run.success, run.kinds)
        out[name] = (auc(s, run.success), eff, lo, hi)
    return out


def verdict(effects: list[tuple[float, float, float]]) -> str:
    """How a term fares over the runs: how many it gains or loses on, and on how many of
    those the paired interval excludes 0 (beyond the noise)."""
    eps = 5e-4  # below this the term changed no ranking that the AUC sees
    if all(abs(e) < eps for e, _, _ in effects):
        return "no effect on any run"
    gains, losses = sum(e >= eps for e, _, _ in effects), sum(e <= -eps for e, _, _ in effects)
    sure_gains = sum(lo > 0 for _, lo, _ in effects)
    sure_losses = sum(hi < 0 for _, _, hi in effects)
    return (f"gains on {gains}, loses on {losses} of {len(effects)}; beyond the noise: "
            f"{sure_gains} gains, {sure_losses} losses")


def print_table(runs: list[GradedTrials], rows: Rows, what: str) -> None:
    """One markdown table: a line per row, a column per run, each row's verdict over the runs;
    effects are against the first row, named by what."""
    table = {r.name: ablation_rows(r, rows) for r in runs}
    print("| term | " + " | ".join(f"{r.name} ({len(r.success)} graded)" for r in runs)
          + " | over the runs |")
    print("|---|" + "---|" * (len(runs) + 1))
    for name, _ in rows:
        cells, effects = [], []
        for r in runs:
            a, eff, lo, hi = table[r.name][name]
            effects.append((eff, lo, hi))
            cells.append(f"{a:.3f}" if name == rows[0][0]
                         else f"{a:.3f} ({eff:+.3f} [{lo:+.3f}, {hi:+.3f}])")
        last = "the baseline" if name == rows[0][0] else verdict(effects)
        print(f"| {name} | " + " | ".join(cells) + f" | {last} |")
    print(f"\nEach cell: AUC on the run's graded trials (effect against {what} on the same "
          "trials [paired 95 % interval, object kinds resampled]).")


def main(argv: list[str] | None = None) -> None:
    """Print the ablation of every run, one column per run, and each term's verdict: each term
    added to Tan's measure alone, then each term taken out of graspline's full score."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", metavar="NAME=DIR[,DIR...]")
    args = ap.parse_args(argv)
    runs = [run_from_spec(spec, "ablation_by_jaw") for spec in args.runs]
    print_table(runs, ABLATIONS, "Tan's measure alone")
    print()
    print_table(runs, LEAVE_ONE_OUT, "graspline's full score")


if __name__ == "__main__":
    main()
