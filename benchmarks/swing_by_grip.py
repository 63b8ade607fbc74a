"""The swing term with its lever limit read from the jaw's grip: paired against the term as it is.

The swing factor is 1 - d / 0.15 m (DepthParams.swing_lever_m), d the grasp's lever about the
mass centre, whatever the jaw (docs/scoring.md, "The swing about the grasp axis"). A firmer
grip (pad friction times force) might hold a rounded object further off its middle: this
re-scores each run's graded trials from their logged features with the limit scaled by the
grip against a reference grip of REFERENCE_GRIP_N (the rubber 2F-85's and short pads' 1.0 x
40 N), linearly and by its square root, and pairs each against graspline's score as logged
(benchmarks.ablation_by_jaw.paired_effect: whole object kinds resampled).

Run from the repository root, one NAME:GRIP=DIR[,DIR...] per jaw (GRIP: pad friction times
the cell file's force_n, newtons; several folders, other seeds of that jaw, pooled):

    .venv/bin/python -m benchmarks.swing_by_grip "franka μ1:70=OUT1,OUT2" "2F-85 μ0.5:20=OUT3"
"""
from __future__ import annotations

import argparse
import math
from typing import Callable

import numpy as np

from benchmarks.ablation_by_jaw import paired_effect, run_from_spec
from benchmarks.bench_cell import auc, depth_factor
from scoring import DepthParams

REFERENCE_GRIP_N = 40.0  # pad friction x force of the jaws the limit was chosen on (1.0 x 40 N)
SCALINGS: dict[str, Callable[[float], float]] = {
    "limit x grip / 40 N": lambda g: g / REFERENCE_GRIP_N,
    "limit x sqrt(grip / 40 N)": lambda g: math.sqrt(g / REFERENCE_GRIP_N),
}


def score_with_limit(f: dict, limit_m: float) -> float:
    """graspline's score of a trial's logged features with the swing factor read from its
    lever at limit_m (metres; 1 where the lever is unknown)."""
    lever = f.get("lever_m", math.nan)
    swing = 1.0 if not math.isfinite(lever) else min(max(1.0 - lever / limit_m, 0.0), 1.0)
    return f["tan_score"] * depth_factor({**f, "score_swing": swing})


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="NAME:GRIP=DIR[,DIR...]")
    args = ap.parse_args(argv)
    base_limit = DepthParams().swing_lever_m
    print("| jaw (grip) | graded | AUC, the swing term as it is | "
          + " | ".join(f"{k}: AUC, paired effect [95 %]" for k in SCALINGS) + " |")
    print("|---|---|---|" + "---|" * len(SCALINGS))
    for spec in args.runs:
        head, sep, folders = spec.partition("=")
        name, colon, grip = head.rpartition(":")
        try:
            grip_n = float(grip)
        except ValueError:
            grip_n = math.nan
        if not sep or not colon or not math.isfinite(grip_n) or grip_n <= 0:
            raise SystemExit(f"swing_by_grip: {spec!r} is not NAME:GRIP=DIR[,DIR...] (GRIP: "
                             f"pad friction x force, newtons, > 0)")
        run = run_from_spec(f"{name}={folders}", "swing_by_grip")
        base = np.array([score_with_limit(f, base_limit) for f in run.features])
        cells = []
        for scale in SCALINGS.values():
            row = np.array([score_with_limit(f, base_limit * scale(grip_n))
                            for f in run.features])
            d, lo, hi = paired_effect(base, row, run.success, run.kinds)
            cells.append(f"{auc(row, run.success):.4f}, {d:+.4f} [{lo:+.4f}, {hi:+.4f}]")
        print(f"| {name} ({grip_n:g} N) | {len(base)} | {auc(base, run.success):.4f} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
