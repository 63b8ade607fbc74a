"""The stroke checked against the section within the pads' reach: tried, not kept.

The loop refuses an object wider than the stroke every way as seen (vision.seen_width, at the
first search's fingertip plane). Where the first search stops shorter than the pads (20 mm
on jaws with 35 mm pads), a section that fits over one that does not passes: a can 94 mm
across lying on the table is 77 mm wide 20 mm under its top and 91 mm wide 35 mm under it,
and on seed 40 an 85 mm jaw tried four such cans at 0.20-0.27 and lifted none. The rule
tried reads the width at the pads' length past the top (the support permitting) instead.
It was not kept: deeper, the section takes in more of an object that is not convex (a
curved banana's whole arc, a power drill's body beside its handle), whose narrowest width
then exceeds the stroke where the part the pads close on does not, and it refused held
grasps (docs/scoring.md, "Tried: the stroke against the pads' reach").

This replays bench_cell's stored frames (each pass's graded trials, as replay_cell): for
each grasp's target it reads the seen width at the first search's fingertip plane and at
the pads' length, and counts the grasps the rule would refuse (seen within the stroke at
the first plane, wider at the pads' length) with their outcomes, and each run's AUC with
those draws left out:

    .venv/bin/python -m benchmarks.refusal_section OUT/validate OUT/best \\
        --cell benchmarks/jaws/2f85.yaml --pad-friction 0.5
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc
from benchmarks.replay_cell import (add_run_cell_arguments, graded_logs, replay_config,
                                     stored_frame)


@dataclass(frozen=True)
class Reading:
    """One graded grasp's target: its label, outcome and score, and its narrowest seen width
    at the first search's fingertip plane and at the pads' length past its top (metres)."""

    run: str
    trial_id: int
    label: str
    held: bool
    score: float
    first_m: float
    pads_m: float


def readings(search, segmenter, frame, T_base_tcp: np.ndarray) -> tuple[float, float]:
    """(first, pads): the seen width (metres) of the grasp's target at the first search's
    fingertip plane and at the pads' length past its top."""
    from onboard.loop import nearest_mask
    from vision import seen_width

    masks = segmenter.segment(frame)
    if not masks:
        raise ValueError("no object segmented on the stored frame")
    tip = T_base_tcp[:3, 3] + search.config.gripper.tcp_to_tip_m * T_base_tcp[:3, 2]
    i = nearest_mask(frame, masks, tip)
    projected = search.projected(frame, masks, i)
    first = projected.at(search.insertions()[0])
    pads = projected.at(search.config.gripper.pad_length_m)
    return (seen_width(frame, masks[i], first).width_m,
            seen_width(frame, masks[i], pads).width_m)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", type=Path, help="bench_cell's OUT/validate, OUT/best folders")
    add_run_cell_arguments(p)
    args = p.parse_args(argv)
    from tqdm import tqdm

    from onboard import PickingCell, config_hash
    from onboard.loop import ImageSearch

    config = replay_config("refusal_section", args.cell, args.pad_friction, args.image)
    rows: list[Reading] = []
    with PickingCell(config, config_hash(config)) as cell:
        template = cell.devices.camera.read()
        search = next(s for s in cell.loop.planner.sources if isinstance(s, ImageSearch))
        stroke = search.jaw.stroke_m
        for d in args.logs:
            for log, r in tqdm(graded_logs([d], "refusal_section"), desc=str(d), unit="trial",
                               file=sys.stderr):
                try:
                    first, pads = readings(search, cell.loop.segmenter,
                                           stored_frame(template, log, r.trial_id),
                                           np.asarray(r.T_base_tcp))
                except ValueError as exc:
                    print(f"{d} trial {r.trial_id}: {exc}", file=sys.stderr)
                    continue
                rows.append(Reading(str(d), r.trial_id, r.object_label, bool(r.success),
                                    float(r.score or 0.0), first, pads))
    print(f"# the stroke ({stroke * 1e3:.0f} mm) against the section at the pads' length "
          f"({config.gripper.pad_length_m * 1e3:.0f} mm) instead of the first search's "
          f"({search.insertions()[0] * 1e3:.0f} mm)\n")
    print("| run | graded | now refused | of them held | AUC | AUC without them |")
    print("|---|---|---|---|---|---|")
    flips = []
    for d in args.logs:
        run = [q for q in rows if q.run == str(d)]
        if not run:
            continue
        flip = np.array([q.first_m <= stroke < q.pads_m for q in run])
        y = np.array([q.held for q in run])
        s = np.array([q.score for q in run])
        flips += [q for q, f in zip(run, flip) if f]
        print(f"| {d} | {len(run)} | {int(flip.sum())} | {int(y[flip].sum())} | "
              f"{auc(s, y):.3f} | {auc(s[~flip], y[~flip]):.3f} |")
    print("\n| run | trial | object | outcome | score | width at the first plane | "
          "at the pads' length |\n|---|---|---|---|---|---|---|")
    for q in flips:
        print(f"| {q.run} | {q.trial_id} | {q.label} | {'held' if q.held else 'failed'} | "
              f"{q.score:.2f} | {q.first_m * 1e3:.1f} mm | {q.pads_m * 1e3:.1f} mm |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
