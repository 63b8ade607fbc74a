"""Fingers landing on the far side: the rules tried for the approach's protective stops.

A finger whose inner face passes close to the side of an object facing away from the camera
can land on it: the camera does not see a rounded side below where its rays graze it (and
the D400 loses the surface seen at more than 78° from its normal), so the seen outline there
ends short of the widest point. This replays bench_cell's stored frames (the validate pass's
graded trials), rebuilds each grasp's silhouette and contacts as the loop scored them, and for
the side of each contact facing away from the camera reads:

- clear: the finger's inner face's distance beyond the seen outline (metres);
- band: where the camera's ray grazing that outline meets the fingertips' plane, beyond it
  (the seen outline's height above the plane times the ray's slope): what may be hidden;
- rise: how much higher the surface is within RISE_PX pixels inwards (rounded, not a wall);
- mirrored: how much further the side facing the camera reaches from the top's middle;

and counts, per rule, the held and failed grasps it would zero, and the AUC before and after
(docs/scoring.md, "Fingers landing on the far side"). Rules: "band" (clear < band), "rounded"
(and rise > --rise-mm), "jam" (and the pad's lower edge, meeting a circular section of half
the seen width hidden below a lean of the ray's angle plus --grazing-deg, would press it into
the support: lean + atan(pad friction) > atan(1 / --support-friction)); and "mirror" (clear
under how much further the side facing the camera reaches from the middle of the top).

    .venv/bin/python -m benchmarks.far_side OUT/validate --cell benchmarks/jaws/short_pad.yaml \\
        --pad-friction 1.0
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.bench_cell import auc
from benchmarks.replay_cell import graded_logs, replay_config

RISE_PX = 8  # silhouette pixels inwards from the contact read for the rise


@dataclass(frozen=True)
class FarSide:
    """One contact's side facing away from the camera: clear, band, height of the seen
    outline above the fingertips' plane (h0), rise and mirrored, metres; ray_rad the camera
    ray's angle from the approach in the closing plane; half_width_m half the seen section."""

    clear: float
    band: float
    h0: float
    rise: float
    ray_rad: float
    half_width_m: float
    mirrored: float = 0.0


@dataclass(frozen=True)
class Graded:
    """A graded trial: held, whether it ended in a protective stop on the approach, its
    replayed score, and its far sides."""

    held: bool
    approach_stop: bool
    score: float
    far: list[FarSide]


def far_sides(search, frame, masks, T_base_tcp: np.ndarray,
              open_width_m: float) -> tuple[float, list[FarSide]]:
    """(score, far sides) of the grasp at T_base_tcp as the image search scores it
    (ImageSearch.scored_pose, as score_pose)."""
    scored = search.scored_pose(frame, masks, np.asarray(T_base_tcp))
    sil, sc, x, y, t = scored.silhouette, scored.scores, scored.x_px, scored.y_px, scored.theta_rad
    m = sil.metres_per_px
    R = sil.T_base_plane[:3, :3]
    q = R.T @ (frame.T_base_camera[:3, 3] - sil.T_base_plane[:3, 3])
    camera_px, camera_h = np.array([q[0], q[1]]) / m, -q[2]  # the plane's z is the approach
    u = np.array([math.cos(t), math.sin(t)])
    half_r = 0.5 * open_width_m / m
    heights = sil.height_m
    extent = _mirror_extents(heights, sil.target, x, y, u, half_r)
    out = []
    for contact, outward in ((sc.contact_left[0], -u), (sc.contact_right[0], u)):
        p = np.asarray(contact, np.float64)
        if not np.all(np.isfinite(p)):
            continue
        towards_camera = float(outward @ (camera_px - p)) * m
        if towards_camera >= 0.0:
            continue  # this side faces the camera: seen down to its widest point
        rows = np.clip(np.rint(p[1] - np.arange(RISE_PX + 1) * outward[1]).astype(int), 0,
                       heights.shape[0] - 1)
        cols = np.clip(np.rint(p[0] - np.arange(RISE_PX + 1) * outward[0]).astype(int), 0,
                       heights.shape[1] - 1)
        read = heights[rows, cols]
        h0, inner = float(read[0]), float(np.nanmax(read))
        tan_ray = -towards_camera / max(camera_h - h0, 1e-3)
        clear = (half_r - abs(float((p - np.array([x, y])) @ u))) * m
        near, far = (extent[1], extent[0]) if outward @ u < 0 else (extent[0], extent[1])
        out.append(FarSide(clear, h0 * tan_ray, h0, inner - h0, math.atan(tan_ray),
                           0.5 * float(sc.width_px[0]) * m, max(near - far, 0.0) * m))
    return float(sc.score[0]), out


def _mirror_extents(heights: np.ndarray, target: np.ndarray, x: float, y: float,
                    u: np.ndarray, half_r: float) -> tuple[float, float]:
    """(left, right) extents (px) of the target along the grasp line through (x, y) from the
    middle of its top (the heights within 2 mm of the highest); NaN where it is not seen."""
    ks = np.arange(-int(half_r), int(half_r) + 1, dtype=np.float64)
    cols = np.rint(x + ks * u[0]).astype(int)
    rows = np.rint(y + ks * u[1]).astype(int)
    ok = (rows >= 0) & (rows < heights.shape[0]) & (cols >= 0) & (cols < heights.shape[1])
    ks, rows, cols = ks[ok], rows[ok], cols[ok]
    on = target[rows, cols] & np.isfinite(heights[rows, cols])
    if not on.any():
        return math.nan, math.nan
    h = heights[rows, cols]
    top = np.nanmax(np.where(on, h, np.nan))
    middle = float(np.mean(ks[on & (h >= top - 0.002)]))
    return middle - float(ks[on].min()), float(ks[on].max()) - middle


def zeroed(g: Graded, rule: str, rise_m: float, grazing_rad: float, pad_mu: float,
           support_mu: float) -> bool:
    """Whether the rule zeroes the grasp (see the module's docstring)."""
    for f in g.far:
        if rule == "mirror":  # the far side as far out as the near one, from the top's middle
            if f.clear < f.mirrored:
                return True
            continue
        if not f.clear < f.band:
            continue
        if rule == "band":
            return True
        if not f.rise > rise_m:
            continue
        if rule == "rounded":
            return True
        lean = f.ray_rad + grazing_rad  # the last seen lean of a rounded side
        rho = f.half_width_m
        if rho <= 0 or f.clear >= rho * (1.0 - math.cos(lean)):
            continue  # the finger passes outside the hidden widest point
        met = math.acos(min(1.0, math.cos(lean) + max(f.clear, 0.0) / rho))
        if met + math.atan(pad_mu) > math.atan(1.0 / support_mu):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", type=Path, help="bench_cell's OUT/validate folders")
    p.add_argument("--cell", default=None, help="the runs' jaw cell file")
    p.add_argument("--pad-friction", type=float, default=1.0)
    p.add_argument("--support-friction", type=float, default=0.6,
                   help="object-support friction (the simulated cell's table: 0.6)")
    p.add_argument("--grazing-deg", type=float, default=12.0,
                   help="90° less the largest incidence the camera reads (the D400 model: 78°)")
    p.add_argument("--rise-mm", type=float, default=5.0)
    p.add_argument("--image", default="640x480")
    args = p.parse_args(argv)
    from tqdm import tqdm

    from onboard import PickingCell, config_hash
    from onboard.loop import ImageSearch, planned_on_finer_cut

    recs = graded_logs(args.logs, "far_side")
    config = replay_config("far_side", args.cell, args.pad_friction, args.image)
    graded = []
    with PickingCell(config, config_hash(config)) as cell:
        template = cell.devices.camera.read()
        search = next(s for s in cell.loop.planner.sources if isinstance(s, ImageSearch))
        grip = cell.loop.config.gripper
        for log, r in tqdm(recs, desc="replaying", unit="trial", file=sys.stderr):
            frame = dataclasses.replace(template, depth_m=log.image(r.trial_id, "before_depth"),
                                        seq=r.trial_id, instance_ids=None)
            masks = cell.loop.segment(frame, finer_cut=planned_on_finer_cut(r.features))
            if not masks:
                continue
            score, far = far_sides(search, frame, masks, r.T_base_tcp, grip.open_width_m)
            stop = "protective stop" in (r.error or "") and "approach" in (r.error or "")
            graded.append(Graded(bool(r.success), stop, score, far))
    s = np.array([g.score for g in graded])
    y = np.array([g.held for g in graded])
    stops = sum(g.approach_stop for g in graded)
    print(f"\n{len(graded)} graded trials, {stops} ended in a protective stop on the approach; "
          f"AUC as replayed {auc(s, y):.3f}\n")
    print("| rule | zeroes held | zeroes failed | of them approach stops | AUC after |")
    print("|---|---|---|---|---|")
    for rule in ("band", "rounded", "jam", "mirror"):
        z = np.array([zeroed(g, rule, args.rise_mm * 1e-3, math.radians(args.grazing_deg),
                             args.pad_friction, args.support_friction) for g in graded])
        print(f"| {rule} | {int((z & y).sum())} | {int((z & ~y).sum())} | "
              f"{sum(g.approach_stop for g, k in zip(graded, z) if k)} of {stops} | "
              f"{auc(np.where(z, 0.0, s), y):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
