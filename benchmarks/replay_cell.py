"""Paired ablation: re-score the grasps of logged cell trials on their stored depth frames.

bench_cell.py runs the loop, so two runs with different scoring settings see different tables
and draw different grasps; their AUCs differ by several hundredths from the tables alone (seed
0, 1 and 3 of the same code: 0.90 to 0.93). This replays a run instead: each graded trial's
before-frame (the stored 16-bit depth, millimetres) is segmented again and the grasp that was
executed is scored again with the settings given, so every variant is judged on the same
grasps and the same outcomes. The first column, the settings the run had, checks the replay:
its scores should match the logged ones (the depth is read back to within 0.5 mm; the colour
as stored, where the log has it).

Run from the repository root:

    .venv/bin/python -m benchmarks.replay_cell OUT/validate [OUT2/validate ...] \\
        [--as-run join_touching=false] --variant join_touching=true --variant density_kg_m3=1000

A run of another jaw replays on its cell file (``--cell benchmarks/jaws/short_pad.yaml
[--pad-friction 0.5]``, as bench_cell ran it); ``--label mug`` keeps one kind's trials and
``--per-trial`` prints each trial's logged and replayed scores (a gripper key such as the
palm's size is compared by replaying with two cell files); ``--masks DIR`` draws each trial's
masks as the segmenter made them, the grasp's target in red. Each --variant is a list of
scoring settings (the cell file's ``scoring`` keys, YAML values, comma-separated) on top of
--as-run, the settings the runs had where not the defaults; the
image size must be the runs' (--image, default 640x480).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc, cell_config, clustered_bootstrap, kind_of


def parse_variant(text: str) -> dict[str, object]:
    """'a=1,b=false' -> {'a': 1, 'b': False} (values read as YAML)."""
    import yaml

    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise SystemExit(f"--variant {text!r}: {part!r} is not KEY=VALUE")
        key, value = part.split("=", 1)
        out[key.strip()] = yaml.safe_load(value)
    return out


def replay(log_dirs: list[Path], variants: list[dict], base, limit: int = 0,
           labels: tuple[str, ...] = (), masks_dir: Path | None = None):
    """(records, scores): the graded trials of the logs (only those of the labels given, if
    any), and per variant their scores (NaN where the replay found nothing to score), on the
    cell base describes (replay_config's: the runs' jaw, pad friction and camera size).
    With masks_dir, a picture per trial of the segmenter's masks on its frame, the grasp's
    target in red (masks_dir/trial-ID.png)."""
    import msgspec
    from tqdm import tqdm

    from onboard import PickingCell, TrialLogError, config_hash
    from onboard.loop import planned_on_finer_cut, planned_on_readings, pose_as_scored

    recs = [(log, r) for log, r in graded_logs(log_dirs, "replay_cell")
            if not labels or r.object_label in labels]
    recs = recs[:limit] if limit else recs
    if not recs:
        raise SystemExit(f"replay_cell: no graded trial with a grasp pose in "
                         f"{', '.join(map(str, log_dirs))}")
    scores = np.full((len(variants), len(recs)), np.nan)
    with PickingCell(base, config_hash(base)) as cell:
        template = cell.devices.camera.read()  # the cell's intrinsics and camera pose
        for v, settings in enumerate(variants):
            cell.loop.config = msgspec.structs.replace(
                cell.loop.config, scoring=msgspec.structs.replace(base.scoring, **settings))
            name = ", ".join(f"{k}={val}" for k, val in settings.items()) or "as run"
            for k, (log, r) in enumerate(tqdm(recs, desc=name, unit="trial", file=sys.stderr)):
                try:
                    frame = stored_frame(template, log, r.trial_id)
                    # the pose as scored: the executed one less its centring on the readings
                    finer = planned_on_finer_cut(r.features)  # segmented and drawn as planned
                    scores[v, k] = cell.loop.score_pose(
                        frame, pose_as_scored(r.T_base_tcp, r.features or {}),
                        finer_cut=finer, holes_left_out=planned_on_readings(r.features))[0]
                    if masks_dir is not None and v == 0:
                        write_masks(masks_dir / f"trial-{r.trial_id}.png", cell.loop, frame,
                                    r.T_base_tcp, finer_cut=finer)
                except (ValueError, TrialLogError) as exc:
                    print(f"trial {r.trial_id}: {exc}", file=sys.stderr)
    return [r for _, r in recs], scores


def graded_logs(log_dirs: list[Path], tool: str) -> list:
    """(trial log, record) of every graded trial with a grasp pose in bench_cell's pass
    folders (OUT/validate, OUT/best); SystemExit naming the folder without a trial log."""
    from onboard import TrialLog

    recs = []
    for d in log_dirs:
        if not (d / "trials.sqlite").is_file():
            raise SystemExit(f"{tool}: {d} holds no trial log (no trials.sqlite): give "
                             f"bench_cell's OUT/validate folder")
        log = TrialLog(d)
        recs += [(log, r) for r in log.records()
                 if r.success is not None and r.T_base_tcp is not None]
    return recs


def add_run_cell_arguments(p) -> None:
    """The replays' --cell, --pad-friction and --image: the cell a bench_cell run had (its jaw
    file, pad friction and camera size), for replay_config."""
    p.add_argument("--cell", default=None, metavar="FILE",
                   help="the cell file the runs had (its jaw; default the built-in cell)")
    p.add_argument("--pad-friction", type=float, default=None,
                   help="the pad friction the runs had, as bench_cell's (default the cell's)")
    p.add_argument("--image", default="640x480", help="the runs' camera size, WxH")


def replay_config(tool: str, cell_file: str | None, pad_friction: float | None, image: str):
    """The cell a replay scores on: cell_file's jaw (the built-in cell without one) at
    pad_friction, as bench_cell ran it, with the runs' camera size image ("WxH");
    SystemExit naming a bad cell file or size."""
    import msgspec

    from onboard import CameraConfig, CellFileError

    try:
        w_px, h_px = (int(v) for v in image.lower().split("x"))
    except ValueError:
        raise SystemExit(f"{tool}: --image must be WxH in pixels (640x480), "
                         f"got {image!r}") from None
    try:
        config = cell_config(0, Path(tempfile.mkdtemp(prefix=f"{tool}_")), None, cell_file,
                             pad_friction)
    except CellFileError as exc:
        raise SystemExit(f"{tool}: {exc}") from None
    return msgspec.structs.replace(config, camera=CameraConfig(width_px=w_px, height_px=h_px))


def stored_frame(template, log, trial_id: int):
    """A trial's before-frame as its log stored it: the depth (millimetres, read back as
    metres) and the colour where the log has it (the width as seen gives depth holes back by
    colour), on the cell's intrinsics and camera pose (``template``, a frame of the cell)."""
    from onboard import TrialLogError

    depth = log.image(trial_id, "before_depth")
    try:
        color = log.image(trial_id, "before_color")
    except TrialLogError:
        color = template.color
    return dataclasses.replace(template, depth_m=depth, color=color, seq=trial_id,
                               instance_ids=None)


def write_masks(path: Path, loop, frame, T_base_tcp: np.ndarray, *,
                finer_cut: bool = False) -> None:
    """A PNG of the segmenter's masks on frame (its finer cut with finer_cut; each a grey,
    the target of a grasp at T_base_tcp in red: the mask nearest its fingertips' point, as
    PickingLoop.score_pose takes it), for seeing what the scoring took as the object."""
    import cv2

    from onboard.loop import nearest_mask

    masks = loop.segment(frame, finer_cut=finer_cut)
    picture = np.full((*frame.depth_m.shape, 3), 255, np.uint8)
    for k, m in enumerate(masks):
        picture[m.mask.astype(bool)] = 90 + 120 * k // max(len(masks), 1)
    if masks:
        tip = T_base_tcp[:3, 3] + loop.config.gripper.tcp_to_tip_m * T_base_tcp[:3, 2]
        picture[masks[nearest_mask(frame, masks, tip)].mask.astype(bool)] = (0, 0, 220)  # BGR
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), picture)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", type=Path, help="trial log folders (bench_cell's OUT/validate)")
    p.add_argument("--as-run", default="", help="the scoring settings the runs had, where not "
                   "the defaults (KEY=VALUE,...): the first row, the replay's check")
    p.add_argument("--variant", action="append", default=[], help="scoring settings KEY=VALUE,...")
    add_run_cell_arguments(p)
    p.add_argument("--limit", type=int, default=0, help="only the first N graded trials")
    p.add_argument("--label", action="append", default=[],
                   help="only the trials on objects of this label (repeatable)")
    p.add_argument("--per-trial", action="store_true",
                   help="also print each trial's outcome, logged and replayed scores")
    p.add_argument("--masks", type=Path, default=None, metavar="DIR",
                   help="write a picture per trial of the segmenter's masks, the target in red")
    args = p.parse_args(argv)
    base = replay_config("replay_cell", args.cell, args.pad_friction, args.image)
    as_run = parse_variant(args.as_run)
    variants = [as_run] + [{**as_run, **parse_variant(v)} for v in args.variant]
    import yaml

    from onboard import CellFileError, parse_cell_file
    for v in variants:  # checked as a cell file's scoring keys: one line naming key and value
        try:
            parse_cell_file(yaml.safe_dump({"scoring": v}), "--variant")
        except CellFileError as exc:
            raise SystemExit(f"replay_cell: {exc}") from None
    recs, scores = replay(args.logs, variants, base, args.limit, tuple(args.label), args.masks)
    ok = np.array([bool(r.success) for r in recs])
    logged = np.array([r.score for r in recs], float)
    kinds = np.array([kind_of(r.object_label) for r in recs])
    print(f"# replay of {len(recs)} graded trials from {', '.join(map(str, args.logs))}"
          f"{' on ' + args.cell if args.cell else ''}\n")
    if args.per_trial:
        print("| trial | object | outcome | error | logged | " +
              " | ".join(f"variant {i}" for i in range(len(variants))) + " |")
        print("|---|---|---|---|---|" + "---|" * len(variants))
        for k, r in enumerate(recs):
            print(f"| {r.trial_id} | {r.object_label} | {'held' if r.success else 'failed'} | "
                  f"{(r.error or '')[:60]} | {r.score:.3f} | "
                  + " | ".join(f"{scores[v, k]:.3f}" for v in range(len(variants))) + " |")
        print()
    good = np.isfinite(scores[0])
    if not good.any():
        raise SystemExit("replay_cell: no trial could be scored again (see the lines above)")
    diff = np.abs(scores[0][good] - logged[good])
    print(f"replay check (as run vs logged): |score difference| median {np.median(diff):.3f}, "
          f"p90 {np.percentile(diff, 90):.3f}; {int((diff > 0.1).sum())} trials differ by more "
          f"than 0.1; {int((~good).sum())} not scored\n")
    print("| variant | AUC | 95 % interval by kind | success per level 0-.2/.2-.4/.4-.6/.6-.8/.8-1 "
          "| top level |\n|---|---|---|---|---|")
    rows = [("logged scores", logged)] + [
        ("replayed as run" if i == 0 else ", ".join(f"{k}={v}" for k, v in s.items()), scores[i])
        for i, s in enumerate(variants)]
    for name, s in rows:
        s = np.where(np.isfinite(s), s, 0.0)
        lo, hi = clustered_bootstrap(s, ok, kinds)
        levels = []
        for a in (0.0, 0.2, 0.4, 0.6, 0.8):
            m = (s >= a) & ((s < a + 0.2) | (a == 0.8))
            levels.append(f"{ok[m].mean():.0%}" if m.any() else "-")
        top = s >= 0.8
        print(f"| {name} | {auc(s, ok):.3f} | {lo:.3f}-{hi:.3f} | {' / '.join(levels)} | "
              f"{(ok[top].mean() if top.any() else math.nan):.0%} of {int(top.sum())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
