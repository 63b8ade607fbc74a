"""Paired: what the width as seen changes in logged cell trials, against the readings alone.

vision.seen_width gives the depth holes at an object's outline back to it by colour (since
2026-11-27); the loop refuses a target seen wider than the jaw's stroke. This replays runs of
bench_cell: each graded trial's stored before-frame (depth and colour) is segmented again,
the executed grasp's target measured again both ways (seen_width, and by_colour=False: the
readings alone, the width before), and it prints, per run, how much wider the target reads,
which draws would now be refused (or no longer be) and how they ended, and the AUC with
every draw read over the stroke left out, each way.

Run from the repository root, with the cell file and pad friction the runs had:

    .venv/bin/python -m benchmarks.replay_width OUT/validate [OUT2/validate ...] \\
        [--cell benchmarks/jaws/short_pad.yaml] [--pad-friction 0.5]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc, cell_config
from benchmarks.replay_cell import add_run_cell_arguments, stored_frame


def replay_run(cell, search, template, log_dir: Path) -> None:
    """Print one run's changes: the width's change (mm), the draws whose refusal changes,
    the AUC with the draws read over the stroke left out, the readings alone and as seen."""
    from tqdm import tqdm

    from onboard import TrialLog, TrialLogError
    from onboard.loop import planned_on_finer_cut
    from vision import seen_width

    stroke = cell.loop.config.gripper.open_width_m
    log = TrialLog(log_dir)
    recs = [r for r in log.records() if r.success is not None and r.T_base_tcp is not None]
    score, held, before, after = [], [], [], []
    for r in tqdm(recs, desc=str(log_dir), unit="trial", file=sys.stderr):
        try:
            frame = stored_frame(template, log, r.trial_id)
            masks = cell.loop.segment(frame, finer_cut=planned_on_finer_cut(r.features))
            if not masks:
                continue
            sp = search.scored_pose(frame, masks, r.T_base_tcp)
        except (ValueError, TrialLogError) as exc:
            print(f"trial {r.trial_id}: {exc}", file=sys.stderr)
            continue
        mask = masks[sp.mask_index]
        w0 = seen_width(frame, mask, sp.silhouette, by_colour=False).width_m
        w1 = seen_width(frame, mask, sp.silhouette).width_m
        score.append(r.score)
        held.append(bool(r.success))
        before.append(w0)
        after.append(w1)
        if (w0 > stroke) != (w1 > stroke):
            print(f"  trial {r.trial_id}: {w0 * 1e3:.1f} -> {w1 * 1e3:.1f} mm, score "
                  f"{r.score:.2f}, {'held' if r.success else 'failed'}")
    s, y = np.array(score), np.array(held)
    w0, w1 = np.array(before), np.array(after)
    old, new = w0 > stroke, w1 > stroke
    dw = (w1 - w0) * 1e3
    print(f"{log_dir}: {len(s)} graded, stroke {stroke * 1e3:.0f} mm; wider by "
          f"{np.nanmedian(dw):+.2f} mm median, {np.nanpercentile(dw, 95):+.2f} p95; read over "
          f"the stroke: {old.sum()} "
          f"({(old & y).sum()} held) -> {new.sum()} ({(new & y).sum()} held); AUC without them "
          f"{auc(s[~old], y[~old]):.3f} -> {auc(s[~new], y[~new]):.3f}")


def main(argv: list[str] | None = None) -> int:
    import msgspec

    from onboard import CameraConfig, PickingCell, config_hash
    from onboard.loop import ImageSearch

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="bench_cell OUT/validate folders")
    add_run_cell_arguments(p)
    args = p.parse_args(argv)
    for d in args.runs:
        if not (d / "trials.sqlite").is_file():
            raise SystemExit(f"replay_width: {d} holds no trial log (no trials.sqlite): give "
                             f"bench_cell's OUT/validate folder")
    w, h = (int(v) for v in args.image.lower().split("x"))
    config = cell_config(0, Path(tempfile.mkdtemp(prefix="replay_")), None, args.cell,
                         args.pad_friction)
    config = msgspec.structs.replace(config, camera=CameraConfig(width_px=w, height_px=h))
    with PickingCell(config, config_hash(config)) as cell:
        template = cell.devices.camera.read()  # the cell's intrinsics and camera pose
        search = next(s for s in cell.loop.planner.sources if isinstance(s, ImageSearch))
        for d in args.runs:
            replay_run(cell, search, template, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
