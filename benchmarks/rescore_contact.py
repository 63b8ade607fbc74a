"""Paired rescoring of logged jaw runs with another ramp of the contact term.

Each graded trial of a bench_cell run (its validate.jsonl) logs the contact height the pads
met and every term of the score, so the score with another contact ramp is judged on the
same grasps and outcomes as the score the run had and as Tan's measure alone (docs/scoring.md,
"Contact height"). Two ramps:

- ``--by friction``: scaled by the pads' friction, full at 12 mm for taped pads, μ 0.5, and
  at 7.5 mm for rubber ones, μ 1.0 (contact_ramp_m); the score has shipped it since
  2026-11-27 (scoring.contact_full_m, which also stops it at the pad's length), so this
  rescores runs made with the 3-12 mm ramp before; each run folder with the friction it ran
  at;
- ``--by pad-length`` (an experiment, not shipped either): full at 12 mm on pads of 35 mm
  or more and at 12/35 of a shorter pad's length (6.9 mm on 20 mm pads: pad_length_full_m);
  each run folder with its pads' length in mm.

Per run: the three AUCs with their intervals (object kinds resampled), the paired
differences, the new score's AUC per group of objects and its success per level.

Run from the repository root:

    .venv/bin/python -m benchmarks.rescore_contact /work/jawruns4/f85_1.0:1.0 \\
        /work/jawruns4/short_0.5:0.5
    .venv/bin/python -m benchmarks.rescore_contact --by pad-length OUT5/short_1.0:20
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import LEVEL_EDGES, auc, group_of, kind_of
from benchmarks.rescore_jaws import paired_cells, rescored, run_spec
from scoring import DepthParams

FRICTION_REF = 0.5  # the friction the 3-12 mm ramp is kept for (contact_friction_ref)
PAD_LENGTH_REF_M = 0.035  # the pads' length the shipped ramp was chosen on (the 2F-85's)


def contact_ramp_m(friction: float, params: DepthParams = DepthParams()) -> float:
    """The overlap (metres) over which the experiment's contact term ramps from 0 to 1 for
    pads of this friction: (full_contact_m - min_contact_m) x FRICTION_REF / μ."""
    return (params.full_contact_m - params.min_contact_m) * FRICTION_REF / friction


def contact_score(f: dict, friction: float, params: DepthParams = DepthParams()) -> float:
    """The contact term with the friction-scaled ramp (the logged one where no height is)."""
    return _ramp(f, contact_ramp_m(friction, params), params)


def pad_length_full_m(pad_length_m: float, params: DepthParams = DepthParams()) -> float:
    """The overlap (metres) the experiment's contact term is full at for pads this long:
    full_contact_m, or on shorter pads the same fraction of their length as 12 mm is of 35."""
    full = min(params.full_contact_m, params.full_contact_m * pad_length_m / PAD_LENGTH_REF_M)
    return max(full, params.min_contact_m + 0.001)


def pad_length_contact_score(f: dict, pad_length_m: float,
                             params: DepthParams = DepthParams()) -> float:
    """The contact term with the pad-length ramp (the logged one where no height is)."""
    return _ramp(f, pad_length_full_m(pad_length_m, params) - params.min_contact_m, params)


def _ramp(f: dict, span_m: float, params: DepthParams) -> float:
    """min_contact_m to min_contact_m + span_m (m) mapped onto 0-1 at the logged height."""
    h = f.get("contact_height_m")
    if h is None or not np.isfinite(h):
        return f["score_contact"]
    return float(np.clip((h - params.min_contact_m) / span_m, 0, 1))


def main(argv: list[str] | None = None) -> int:
    """Print one row per run (AUCs, paired differences) and one per run of the new score's
    AUC per group and success per level."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+",
                   help="RUN_FOLDER:PAD_FRICTION, or with --by pad-length RUN_FOLDER:PAD_MM "
                        "(validate.jsonl inside)")
    p.add_argument("--by", choices=("friction", "pad-length"), default="friction",
                   help="what the ramp is scaled by (default: friction)")
    args = p.parse_args(argv)
    by_length = args.by == "pad-length"
    detail = []
    print(f"| run | graded | Tan alone | score as run | contact ramp by {args.by} | "
          "new - as run [paired] | new - Tan [paired] |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.runs:
        folder, value = run_spec(spec, "rescore_contact",
                                 "PAD_MM" if by_length else "PAD_FRICTION")
        if by_length:
            def changed(f, pad_m=value * 1e-3):
                return {**f, "score_contact": pad_length_contact_score(f, pad_m)}
        else:
            def changed(f, mu=value):
                return {**f, "score_contact": contact_score(f, mu)}
        recs, ok, tan, old, new, diffs = rescored(folder, changed)
        kinds = np.array([kind_of(r["label"]) for r in recs])
        name = Path(folder).name
        print(f"| {name} | {len(recs)} | {paired_cells(ok, kinds, (tan, old, new), diffs)} |",
              flush=True)
        groups = np.array([group_of(r["label"]) for r in recs])
        by_group = " / ".join(
            f"{g}: {auc(new[groups == g], ok[groups == g]):.3f} vs Tan "
            f"{auc(tan[groups == g], ok[groups == g]):.3f} ({(groups == g).sum()})"
            for g in ("boxes", "cylinders", "other built-in shapes", "scanned (YCB)"))
        lvl = np.searchsorted(LEVEL_EDGES, new, side="right") - 1
        levels = " / ".join(f"{ok[lvl == k].mean():.0%} of {(lvl == k).sum()}"
                            if (lvl == k).any() else "-" for k in range(5))
        detail.append(f"- {name}: {by_group}; success per level 0-.2 / .2-.4 / .4-.6 / .6-.8 "
                      f"/ .8-1: {levels}")
    print()
    print("\n".join(detail))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
