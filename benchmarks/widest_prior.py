"""A rounded section's widest point placed at half its height: the rule tried for the pinches
the heights read as level.

The tilt term reads a contact's lean from the heights inwards of it (an arc fitted to them)
and from the footprint running on beyond it (the undercut). A lying banana or can pinched a
few millimetres above its widest section leans 10-20° at the pads' lower edges, yet its
undercut there is under a pixel and the D400's depth steps (4-5 mm at 0.7 m) make the arc
read level (docs/scoring.md, "The scanned objects under 0.90 with taped pads"). This rule
supplies the height the camera does not see: a section standing on the support whose seen
heights rise gradually from both contacts (rounded, not walls) is taken as circular, its
widest point half way up, so fingertips f above the support under a cap c high are rise =
(f - c) / 2 above it, and the normals there lean asin(rise / r) with r = (f + c) / 2.

It replays bench_cell's stored frames (each validate pass's graded trials, as replay_cell),
rebuilds each grasp's silhouette and contacts as the loop scored them, reads the heights
along the chord between the contacts (averaged over the finger's grasp lines, the sensor's
holes at the outline left out), and where the rule reads a larger lean than the score did,
replaces the tilt factor with the one that lean gives (DepthParams' margins inside the pads'
friction cone). It prints each run's AUC, and its scanned objects' AUC, before and after,
and the grasps whose score the rule changes:

    .venv/bin/python -m benchmarks.widest_prior OUT/validate --cell benchmarks/jaws/2f85.yaml \\
        --pad-friction 0.5
"""
from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc
from benchmarks.replay_cell import (add_run_cell_arguments, graded_logs, replay_config,
                                     stored_frame)

GRADUAL = 0.6  # a side is rounded when its first seen height is under this share of the cap
MIN_CAP_M = 0.005  # a cap lower than this is no section to read


@dataclass(frozen=True)
class Pinch:
    """One graded grasp as the loop scored it: outcome, score, the tilt it read (radians) and
    its factor, and the chord's heights above the fingertips (metres, NaN unseen, from the
    left contact to the right one, one per pixel) with the fingertips' height above the
    support (metres; NaN without a support)."""

    label: str
    held: bool
    score: float
    tilt_rad: float
    score_tilt: float
    chord_m: np.ndarray
    floor_m: float


def chord_heights(heights: np.ndarray, left: np.ndarray, right: np.ndarray,
                  offsets: np.ndarray) -> np.ndarray:
    """Metres: heights (H, W) read every pixel from the left contact to the right one
    ((column, row) pixels), each the mean over the grasp lines offsets (px) across the
    chord; NaN where no line sees the surface."""
    d = right - left
    n = int(round(float(np.hypot(*d))))
    if n < 1:
        return np.full(1, np.nan)
    u = d / np.hypot(*d)
    k = np.arange(n + 1, dtype=np.float64)[:, None]
    cols = np.rint(left[0] + k * u[0] - offsets[None, :] * u[1]).astype(int)
    rows = np.rint(left[1] + k * u[1] + offsets[None, :] * u[0]).astype(int)
    inside = (rows >= 0) & (rows < heights.shape[0]) & (cols >= 0) & (cols < heights.shape[1])
    read = np.full(cols.shape, np.nan)
    read[inside] = heights[rows[inside], cols[inside]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row no line sees: NaN, as wanted
        return np.nanmean(read, axis=1)


def widest_lean(p: Pinch) -> float:
    """Radians: the lean at the fingertips of a circular section standing on the support
    whose cap above them is the chord's highest reading (0 at or under its widest point);
    NaN where the chord is no rounded section (too low, unseen, or a wall at either end)."""
    seen = np.flatnonzero(np.isfinite(p.chord_m))
    if seen.size < 3 or not p.floor_m > 0:
        return math.nan
    cap = float(np.nanmax(p.chord_m))
    if not cap > MIN_CAP_M:
        return math.nan
    if max(p.chord_m[seen[0]], p.chord_m[seen[-1]]) >= GRADUAL * cap:
        return math.nan
    rise = 0.5 * (p.floor_m - cap)
    return math.asin(min(rise / (0.5 * (p.floor_m + cap)), 1.0)) if rise > 0 else 0.0


def tilt_factor(lean_rad: float, pad_mu: float, full_rad: float, zero_rad: float) -> float:
    """The tilt term's factor for a lean (radians): 1 full_rad inside the pads' friction
    cone atan(pad_mu), 0 zero_rad inside it, linear between (scoring's DepthParams)."""
    cone = math.atan(pad_mu)
    hi, lo = cone - zero_rad, cone - full_rad
    return min(max((hi - lean_rad) / (hi - lo), 0.0), 1.0)


def rescored(p: Pinch, pad_mu: float, full_rad: float, zero_rad: float) -> float:
    """The grasp's score with the rule's lean where it reads more than the score's."""
    lean = widest_lean(p)
    if not (lean > p.tilt_rad) or not p.score_tilt > 0:
        return p.score
    return p.score / p.score_tilt * tilt_factor(lean, pad_mu, full_rad, zero_rad)


def pinch_of(search, frame, masks, T_base_tcp: np.ndarray, label: str, held: bool,
             offsets: np.ndarray) -> Pinch:
    """The grasp at T_base_tcp as the image search scores it on frame, with its chord's
    heights (the target's sensor holes at its outline left out; none without contacts)."""
    scored = search.scored_pose(frame, masks, np.asarray(T_base_tcp))
    sil, sc = scored.silhouette, scored.scores
    left = np.asarray(sc.contact_left[0], np.float64)
    right = np.asarray(sc.contact_right[0], np.float64)
    chord = np.full(1, np.nan)
    if np.all(np.isfinite(left)) and np.all(np.isfinite(right)):
        heights = np.array(sil.height_m, np.float64)
        if sil.target_read is not None:
            heights[sil.target & ~sil.target_read] = np.nan
        chord = chord_heights(heights, left, right, offsets)
    return Pinch(label, held, float(sc.score[0]), float(sc.contact_tilt_rad[0]),
                 float(sc.score_tilt[0]), chord, float(sil.floor_m))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", type=Path, help="bench_cell's OUT/validate folders")
    add_run_cell_arguments(p)
    args = p.parse_args(argv)
    from tqdm import tqdm

    from onboard import PickingCell, config_hash
    from onboard.loop import ImageSearch, planned_on_finer_cut, pose_as_scored
    from scoring import DepthParams

    recs = graded_logs(args.logs, "widest_prior")
    config = replay_config("widest_prior", args.cell, args.pad_friction, args.image)
    pinches, ids = [], []
    with PickingCell(config, config_hash(config)) as cell:
        template = cell.devices.camera.read()
        search = next(s for s in cell.loop.planner.sources if isinstance(s, ImageSearch))
        offsets = np.asarray(search.projection.line_offsets_px(), np.float64)
        mu = search.jaw.friction
        for log, r in tqdm(recs, desc="replaying", unit="trial", file=sys.stderr):
            frame = stored_frame(template, log, r.trial_id)
            masks = cell.loop.segment(frame, finer_cut=planned_on_finer_cut(r.features))
            if not masks:
                continue
            try:
                pinch = pinch_of(search, frame, masks,
                                 pose_as_scored(r.T_base_tcp, r.features or {}),
                                 r.object_label, bool(r.success), offsets)
            except ValueError as exc:
                print(f"trial {r.trial_id}: {exc}", file=sys.stderr)
                continue
            pinches.append(pinch)
            ids.append(r.trial_id)
    prm = DepthParams()
    y = np.array([q.held for q in pinches])
    before = np.array([q.score for q in pinches])
    after = np.array([rescored(q, mu, prm.tilt_margin_full_rad, prm.tilt_margin_zero_rad)
                      for q in pinches])
    scanned = np.array([q.label.startswith("ycb_") for q in pinches])
    changed = np.flatnonzero(np.abs(after - before) > 0.01)
    print(f"\n{len(pinches)} graded trials, pad friction {mu}; the rule "
          f"changes {changed.size} scores ({int(y[changed].sum())} held, "
          f"{int((~y[changed]).sum())} failed)\n")
    print("| | AUC | scanned objects' AUC |\n|---|---|---|")
    for name, s in (("as replayed", before), ("widest at half height", after)):
        print(f"| {name} | {auc(s, y):.3f} | {auc(s[scanned], y[scanned]):.3f} "
              f"({int(scanned.sum())}) |")
    print("\n| trial | object | outcome | score | with the rule | lean read / the rule's |")
    print("|---|---|---|---|---|---|")
    for k in changed:
        q = pinches[k]
        print(f"| {ids[k]} | {q.label} | {'held' if q.held else 'failed'} | {before[k]:.2f} | "
              f"{after[k]:.2f} | {math.degrees(q.tilt_rad):.1f}° / "
              f"{math.degrees(widest_lean(q)):.1f}° |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
