"""Depth-only tabletop segmentation: RANSAC support plane, points above it, components split
at depth discontinuities, size limits. numpy and OpenCV; no weights."""
from __future__ import annotations

import logging
import math

import cv2
import numpy as np

from drivers.camera import RGBDFrame
from scoring import check_positive

from ._base import Segmenter, check_frame
from ._camera import ray_axes, valid_depth
from ._kernels import (claim_holes, component_stats, depth_cuts, height_classes,
                       plane_inlier_counts, plane_moments, reassign_cuts)
from ._types import ObjectMask, SupportPlane

log = logging.getLogger(__name__)


def _plane_through(p0: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> tuple:
    """Unit normals (K, 3), offsets (K,) and a non-degenerate flag (K,) of planes through
    K point triples; normals oriented towards the camera (offset > 0)."""
    n = np.cross(p1 - p0, p2 - p0)
    norm = np.linalg.norm(n, axis=1)
    ok = norm > 1e-9
    n = n / np.where(ok, norm, 1.0)[:, None]
    off = -np.einsum("ij,ij->i", n, p0)
    flip = off < 0
    n[flip] *= -1.0
    off[flip] *= -1.0
    return n, off, ok


def _refit(points: np.ndarray, n: np.ndarray, off: float, tol: float) -> tuple[np.ndarray, float] | None:
    """Total-least-squares plane (unit normal towards the camera, offset) of the (N, 3) points
    within tol of plane (n, off), or None with fewer than 3 of them."""
    count, c, scatter = plane_moments(points, n, off, tol)
    if count < 3:
        return None
    # The normal is the direction of least spread: the scatter's smallest eigenvector.
    n = np.linalg.eigh(scatter)[1][:, 0]
    off = -float(n @ c)
    return (-n, -off) if off < 0 else (n, off)


def fit_support_plane(frame: RGBDFrame, *, tolerance_m: float = 0.006, iterations: int = 256,
                      stride: int = 5, eval_points: int = 600, min_fraction: float = 0.2,
                      max_tilt_rad: float | None = math.radians(30.0),
                      max_range_m: float = 5.0, seed: int | None = 0) -> SupportPlane | None:
    """The dominant plane of a frame's depth (RANSAC, then least squares on its inliers), or
    None when no plane holds min_fraction of the readings.

    Points are the depth pixels on a grid of every stride-th row and column. iterations
    random triples are scored at once on eval_points of them (tolerance_m, metres); the best
    is refined twice by a least-squares fit to all its inliers. When the frame has
    T_base_camera and max_tilt_rad is set, only planes whose normal is within max_tilt_rad of
    the base z axis count (the support is roughly level; walls and box sides are not).
    Same seed, same plane.
    """
    frame = check_frame(frame)
    for key, v in (("iterations", iterations), ("stride", stride), ("eval_points", eval_points)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"fit_support_plane: {key} must be an integer >= 1, got {v!r}")
    check_positive(tolerance_m, "tolerance_m", "fit_support_plane")
    if max_tilt_rad is not None and not 0 < max_tilt_rad <= math.pi / 2:
        raise ValueError(f"fit_support_plane: max_tilt_rad must be in (0, pi/2] or None, "
                         f"got {max_tilt_rad!r}")
    intr = frame.intrinsics
    rx, ry = ray_axes(intr)
    d = frame.depth_m[::stride, ::stride]
    ok = valid_depth(d, max_range_m)
    n_valid = int(np.count_nonzero(ok))
    if n_valid < 50:
        log.info("no support plane: %d depth readings on the %d-pixel grid", n_valid, stride)
        return None
    vv, uu = np.nonzero(ok)
    z = d[vv, uu]
    pts = np.stack([rx[::stride][uu] * z, ry[::stride][vv] * z, z], axis=1).astype(np.float64)

    rng = np.random.default_rng(seed)
    tri = rng.integers(0, n_valid, size=(iterations, 3))
    normals, offsets, good = _plane_through(pts[tri[:, 0]], pts[tri[:, 1]], pts[tri[:, 2]])
    up = None
    if frame.T_base_camera is not None and max_tilt_rad is not None:
        up = frame.T_base_camera[2, :3]  # base z axis in camera coordinates
        good &= normals @ up >= math.cos(max_tilt_rad)
    if not good.any():
        log.info("no support plane: no level plane among %d RANSAC hypotheses", iterations)
        return None
    # Every hypothesis is scored on the same random sample of the points.
    sample = pts[rng.integers(0, n_valid, size=min(eval_points, n_valid))]
    counts = np.empty(iterations, np.int64)
    plane_inlier_counts(sample, normals, offsets, tolerance_m, counts)
    counts[~good] = -1
    best = int(np.argmax(counts))
    n, off = normals[best], float(offsets[best])
    for _ in range(2):
        fit = _refit(pts, n, off, tolerance_m)
        if fit is None:
            break
        n, off = fit
    dist = pts @ n + off
    inl = np.abs(dist) < tolerance_m
    n_in = int(np.count_nonzero(inl))
    if up is not None and n @ up < math.cos(max_tilt_rad):
        log.info("no support plane: the best plane tilts %.0f deg from level",
                 math.degrees(math.acos(min(1.0, float(n @ up)))))
        return None
    if n_in < min_fraction * n_valid:
        log.info("no support plane: best plane holds %d of %d readings (< %.0f%%)",
                 n_in, n_valid, 100 * min_fraction)
        return None
    return SupportPlane(normal=n, offset_m=off, n_inliers=n_in,
                        rms_m=float(np.sqrt(np.mean(dist[inl] ** 2))))


def _fill_sensor_holes(mask: np.ndarray, valid: np.ndarray, box: tuple[int, int, int, int],
                       max_px: int) -> None:
    """Add to ``mask`` (in place) the pixels without a depth reading that belong to it: those
    within max_px steps of a reading whose nearest readings are the object's (the object's
    half of the hole band a stereo camera leaves along depth steps), and every hole it
    encloses. Pixels with a reading are never added (the table seen through a ring stays
    out). box: (row0, row1, col0, col1) holding the mask and max_px around it."""
    r0, r1, c0, c1 = box
    m = mask[r0:r1, c0:c1]
    ok = valid[r0:r1, c0:c1]
    if ok.all():
        return
    claim = np.empty(m.shape, np.bool_)
    claim_holes(m, ok, max_px, claim)
    m |= claim
    # Enclosed holes: flood the outside from a zero border; what stays unreached is inside.
    padded = cv2.copyMakeBorder(m.view(np.uint8), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    cv2.floodFill(padded, None, (0, 0), 1)
    m |= (padded[1:-1, 1:-1] == 0) & ~ok


# The finer cut's steps as shares of the cut's when not given: 12 mm and 2 % become 8 mm and
# 1.2 %, which part seed 80's bar from the bottle it lies against and seed 90's mug from the
# box resting on it (docs/figures.md). The steps between such objects are 10-14 mm, and a
# D400's noise at 0.7 m (about 2 mm a reading) lets a few pixel pairs of a 10-14 mm edge read
# under 10 mm: at 10 mm the cut leaked through them on some frames
FINE_STEP_SHARE = 8.0 / 12.0
FINE_RATIO_SHARE = 0.6


class TabletopSegmenter(Segmenter):
    """Objects on a support surface, from depth alone (no weights).

    1. RANSAC plane of the depth (``fit_support_plane``); none → no objects.
    2. Candidates: readings between grow_height_m and max_height_m above it; an object needs
       at least min_seed_px readings higher than min_height_m (hysteresis: the low threshold
       keeps the bottom of an object's sides, the high one rejects sensor noise on the table).
    3. Depth discontinuities (jumps > max(jump_m, jump_ratio * depth) between 4-neighbours)
       cut touching objects apart; 4-connected components; cut pixels rejoin their side.
    4. Size limits: the component's area, as the sum of its pixels' footprints
       (depth² / (fx fy), metres²), must be in [min_area_m2, max_area_m2]. Smaller pieces
       within hole_claim_px of an object join it (a steep wall broken up by holes).
    5. Pixels without a reading join the object when it encloses them, or when they lie within
       hole_claim_px (4-connected steps) of a reading and their nearest readings are the
       object's (stereo cameras leave a band of holes along depth steps; the object gets its
       side of it).

    ObjectMask.label is None; confidence is the share of the mask's pixels with a depth
    reading. Masks come largest first (area in metres², not pixels). ``last_plane`` keeps the
    support plane of the last frame (camera frame), or None.

    ``segment_finer`` cuts at the smaller steps fine_jump_m and fine_jump_ratio (by default
    FINE_STEP_SHARE and FINE_RATIO_SHARE of jump_m and jump_ratio): two objects
    that touch where their surfaces meet at nearly one height (a bar lying against a lying
    bottle's rounded side) come apart there, but so do the parts of one object over a step
    (a lying mug's handle, a bottle's neck), which is why the finer cut is not the default.
    """

    name = "tabletop"

    def __init__(self, *, plane_tolerance_m: float = 0.006, min_height_m: float = 0.010,
                 grow_height_m: float = 0.004, max_height_m: float = 0.5,
                 jump_m: float = 0.012, jump_ratio: float = 0.02,
                 min_area_m2: float = 2e-4, max_area_m2: float = 0.25, min_seed_px: int = 20,
                 min_plane_fraction: float = 0.2, max_tilt_rad: float | None = math.radians(30.0),
                 max_range_m: float = 5.0, hole_claim_px: int = 4,
                 ransac_iterations: int = 256, seed: int | None = 0,
                 fine_jump_m: float | None = None, fine_jump_ratio: float | None = None):
        for key, v in (("plane_tolerance_m", plane_tolerance_m), ("min_height_m", min_height_m),
                       ("grow_height_m", grow_height_m), ("max_height_m", max_height_m),
                       ("jump_m", jump_m), ("max_area_m2", max_area_m2),
                       ("max_range_m", max_range_m)):
            check_positive(v, key, "TabletopSegmenter")
        # None: the cut's steps scaled down (8 mm and 1.2 % at the defaults)
        fine_jump_m = FINE_STEP_SHARE * jump_m if fine_jump_m is None else fine_jump_m
        fine_jump_ratio = (FINE_RATIO_SHARE * jump_ratio if fine_jump_ratio is None
                           else fine_jump_ratio)
        for key, v in (("jump_ratio", jump_ratio), ("min_area_m2", min_area_m2),
                       ("fine_jump_ratio", fine_jump_ratio)):
            check_positive(v, key, "TabletopSegmenter", allow_zero=True)
        check_positive(fine_jump_m, "fine_jump_m", "TabletopSegmenter")
        if fine_jump_m > jump_m or fine_jump_ratio > jump_ratio:
            raise ValueError(f"TabletopSegmenter: the finer cut's steps must not exceed the cut's, "
                             f"got fine_jump_m {fine_jump_m!r} (jump_m {jump_m!r}) and "
                             f"fine_jump_ratio {fine_jump_ratio!r} (jump_ratio {jump_ratio!r})")
        if not grow_height_m <= min_height_m < max_height_m:
            raise ValueError("TabletopSegmenter: need grow_height_m <= min_height_m < max_height_m, "
                             f"got {grow_height_m!r}, {min_height_m!r}, {max_height_m!r}")
        if not min_area_m2 < max_area_m2:
            raise ValueError(f"TabletopSegmenter: min_area_m2 must be < max_area_m2, got "
                             f"{min_area_m2!r} and {max_area_m2!r}")
        if max_tilt_rad is not None and not 0 < max_tilt_rad <= math.pi / 2:
            raise ValueError(f"TabletopSegmenter: max_tilt_rad must be in (0, pi/2] or None, "
                             f"got {max_tilt_rad!r}")
        if not 0.0 < min_plane_fraction <= 1.0:
            raise ValueError(f"TabletopSegmenter: min_plane_fraction must be in (0, 1], got "
                             f"{min_plane_fraction!r}")
        for key, v, least in (("min_seed_px", min_seed_px, 1),
                              ("ransac_iterations", ransac_iterations, 1),
                              ("hole_claim_px", hole_claim_px, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise ValueError(f"TabletopSegmenter: {key} must be an integer >= {least}, got {v!r}")
        self.plane_tolerance_m = float(plane_tolerance_m)
        self.min_height_m = float(min_height_m)
        self.grow_height_m = float(grow_height_m)
        self.max_height_m = float(max_height_m)
        self.jump_m = float(jump_m)
        self.jump_ratio = float(jump_ratio)
        self.fine_jump_m = float(fine_jump_m)
        self.fine_jump_ratio = float(fine_jump_ratio)
        self.min_area_m2 = float(min_area_m2)
        self.max_area_m2 = float(max_area_m2)
        self.min_seed_px = min_seed_px
        self.min_plane_fraction = float(min_plane_fraction)
        self.max_tilt_rad = max_tilt_rad
        self.max_range_m = float(max_range_m)
        self.hole_claim_px = hole_claim_px
        self.ransac_iterations = ransac_iterations
        self.seed = seed
        self.last_plane: SupportPlane | None = None

    def fit_plane(self, frame: RGBDFrame) -> SupportPlane | None:
        """The support plane of a frame with this segmenter's settings, or None."""
        return fit_support_plane(frame, tolerance_m=self.plane_tolerance_m,
                                 iterations=self.ransac_iterations,
                                 min_fraction=self.min_plane_fraction,
                                 max_tilt_rad=self.max_tilt_rad, max_range_m=self.max_range_m,
                                 seed=self.seed)

    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        return self._segment_at(frame, self.jump_m, self.jump_ratio)

    def segment_finer(self, frame: RGBDFrame) -> list[ObjectMask]:
        """The objects in ``frame`` cut at the depth steps fine_jump_m and fine_jump_ratio."""
        return self._segment_at(check_frame(frame), self.fine_jump_m, self.fine_jump_ratio)

    def _segment_at(self, frame: RGBDFrame, jump_m: float, jump_ratio: float) -> list[ObjectMask]:
        """The objects of a checked frame, cut apart at depth steps over max(jump_m,
        jump_ratio * depth) between neighbours."""
        self.last_plane = None
        depth = frame.depth_m
        valid = valid_depth(depth, self.max_range_m)
        if not valid.any():
            log.warning("frame %d: no depth readings (all zero or NaN); no objects", frame.seq)
            return []
        plane = self.fit_plane(frame)
        if plane is None:
            log.warning("frame %d: no support plane in view; no objects", frame.seq)
            return []
        self.last_plane = plane

        intr = frame.intrinsics
        rx, ry = ray_axes(intr)
        shape = depth.shape
        cand, seed = np.empty(shape, np.uint8), np.empty(shape, np.uint8)
        height_classes(depth, rx, ry, plane.normal.astype(np.float64), plane.offset_m,
                       self.grow_height_m, self.min_height_m, self.max_height_m,
                       self.max_range_m, cand, seed)
        cand, seed = cand.view(np.bool_), seed.view(np.bool_)
        if not seed.any():
            log.info("frame %d: nothing higher than %.3f m above the support", frame.seq,
                     self.min_height_m)
            return []

        cut = np.empty(shape, np.uint8)
        rows, cols = np.empty(depth.size, np.int64), np.empty(depth.size, np.int64)
        n_cut = depth_cuts(depth, cand, jump_m, jump_ratio, cut, rows, cols)
        cut = cut.view(np.bool_)
        n_lab, labels = cv2.connectedComponents((cand & ~cut).view(np.uint8), connectivity=4,
                                                ltype=cv2.CV_32S)
        # Cut pixels rejoin the side they belong to; then a wall seen at a grazing angle (a
        # jump between every two pixels) grows from its rim and its foot, a pixel a pass.
        reassign_cuts(labels, depth, rows[:n_cut], cols[:n_cut], jump_m, jump_ratio, 2, 12)
        area, seeds, boxes = component_stats(labels, depth, seed, n_lab, 1.0 / (intr.fx * intr.fy))
        keep = (seeds >= self.min_seed_px) & (area >= self.min_area_m2) & (area <= self.max_area_m2)
        keep[0] = False
        kept = np.flatnonzero(keep)
        if kept.size == 0:
            log.info("frame %d: no object within the size limits (%d candidates)", frame.seq,
                     int(np.count_nonzero(seeds[1:] >= self.min_seed_px)))
            return []

        h, w = depth.shape
        # Pieces too small to be objects (a wall seen at a grazing angle, broken up by holes)
        # join the first object, largest first, that lies within hole_claim_px of them.
        spare = ~keep
        spare[0] = False
        claim = self.hole_claim_px
        reach = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * claim + 1, 2 * claim + 1))
        out = []
        for k in kept[np.argsort(-area[kept], kind="stable")]:
            # Room around the component for the pieces and holes it may take in.
            grow = 2 + 2 * claim
            r0, r1, c0, c1 = boxes[k]
            box = (max(0, r0 - grow), min(h, r1 + grow), max(0, c0 - grow), min(w, c1 + grow))
            sub = labels[box[0]:box[1], box[2]:box[3]]
            own = sub == k
            touched = np.bincount(sub[cv2.dilate(own.view(np.uint8), reach).view(np.bool_) & ~own],
                                  minlength=n_lab) > 0
            near = touched & spare
            if near.any():
                own |= near[sub]
                spare &= ~near
            mask = np.zeros((h, w), np.bool_)
            mask[box[0]:box[1], box[2]:box[3]] = own
            _fill_sensor_holes(mask, valid, box, claim)
            crop = mask[box[0]:box[1], box[2]:box[3]]
            conf = np.count_nonzero(crop & valid[box[0]:box[1], box[2]:box[3]]) / np.count_nonzero(crop)
            obj = ObjectMask(mask=mask, label=None, confidence=conf, backend=self.name)
            c0, r0, bw, bh = cv2.boundingRect(crop.view(np.uint8))  # the box, from the crop
            obj.box_px = (box[2] + int(c0), box[0] + int(r0), int(bw), int(bh))
            out.append(obj)
        return out
