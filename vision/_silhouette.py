"""Silhouettes: an object's points above the fingertips, projected orthographically along the
approach axis (Tan et al. 2021, the cross-section remark), and the frame that maps them back."""
from __future__ import annotations

import copy
import math
from collections.abc import Callable

import cv2
import numpy as np

from drivers.camera import RGBDFrame
from scoring import check_positive, narrowest_width_m

from ._base import check_frame
from ._camera import ray_axes
from ._heights import surface_depth, surface_depths, volume_and_centre
from ._kernels import (extent_above, fill_from_neighbours, grid_window, plane_grid,
                       rasterise_surface)
from ._types import ObjectMask, Silhouette, SupportPlane, check_mask

# Share of an object's points taken as outliers when finding its first point along the
# approach (a flying pixel above the object must not set the fingertip depth).
TOP_PERCENTILE = 2.0
# The samples' surface is drawn as triangles between image neighbours; neighbours farther
# apart in the plane than MAX_STEP_FACTOR times the samples' spacing (the SPACING_PERCENTILE
# of neighbour distances: a few straddle steps) are a step in depth, not surface.
MAX_STEP_FACTOR = 3.0
SPACING_PERCENTILE = 90.0
# A target joins the mass of the masks touching it only when its own volume is at most this
# share of the whole: a piece cut from a larger body (a lying bottle's neck is about 5 % of
# it), not an object leaning on a neighbour of its size (replayed trials: docs/figures.md).
FRAGMENT_SHARE = 0.25
# A piece continues a body the segmenter cut across its axis (a lying bottle's cap from its
# body) when it touches an elongated piece (major over minor spread of its pixels at least
# AXIAL_MIN_ELONGATION) on that piece's long axis (the line between their centres within
# AXIAL_MAX_ANGLE_DEG of it) and is no wider across that axis. On the stored frames of the
# seed 150-180 runs (docs/figures.md) a lying mustard bottle's cap and the 50 mm jaw's bottle
# necks lie 0-3 degrees off their body's axis (elongation 1.8-2.1); bars and mugs touching a
# neighbour 17-90 degrees off it, or beside a piece not elongated (1.0-1.6).
AXIAL_MAX_ANGLE_DEG = 10.0
AXIAL_MIN_ELONGATION = 1.7
# The outermost rows and columns of the image count as unseen: a silhouette's edge along the
# image's border is where the view ends, not the object's side.
VIEW_INSET_PX = 1.0
# Sides that drop straight from the top's edge (walls): the readings as wide at their
# narrowest WALL_PROBE_M past the top as at the fingertips, within WALL_TOLERANCE_M. On the
# stored frames of the seed-120 and seed-130 runs (docs/vision.md), boxes near the stroke
# read within 2 mm at the probe, lying cans and mugs 20-40 mm narrower.
WALL_PROBE_M = 0.005
WALL_TOLERANCE_M = 0.003


def _unit(v: object, name: str) -> np.ndarray:
    """(3,) float64 unit vector of a finite non-zero 3-vector."""
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a finite 3-vector, got {v!r}")
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ValueError(f"{name} must not be zero, got {v!r}")
    return a / n


def plane_axes(approach: np.ndarray, x_hint: np.ndarray, y_hint: np.ndarray) -> np.ndarray:
    """3 x 3 rotation whose columns are the plane's x, y, z axes (base frame): z = approach,
    x = x_hint made perpendicular to it (y_hint instead when x_hint is nearly the approach),
    y = z × x."""
    z = approach
    x = x_hint - (x_hint @ z) * z
    if x @ x < 1e-6:
        x = y_hint - (y_hint @ z) * z
    x = x / math.sqrt(x @ x)
    y = (z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0])
    R = np.empty((3, 3))
    R[:, 0], R[:, 1], R[:, 2] = x, y, z
    return R


def _to_plane(frame: RGBDFrame, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, b) with q = M p + b: camera-frame points p to plane-axis coordinates q (metres,
    origin at the base origin): q = R^T (R_bc p + t_bc)."""
    T = frame.T_base_camera
    return R.T @ T[:3, :3], R.T @ T[:3, 3]


def _view_rays(frame: RGBDFrame, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(origin, rays): the camera's centre (3,) and the rays through its image's corners,
    VIEW_INSET_PX inside the outermost pixels' centres, (4, 3) in order round the image, in
    plane-axis coordinates (metres; the last axis along the approach)."""
    M, b = _to_plane(frame, R)
    intr = frame.intrinsics
    u0, v0 = VIEW_INSET_PX, VIEW_INSET_PX
    u1, v1 = intr.width - 1 - VIEW_INSET_PX, intr.height - 1 - VIEW_INSET_PX
    corners = np.array([[u0, v0], [u1, v0], [u1, v1], [u0, v1]], np.float64)
    cam = np.column_stack([(corners[:, 0] - intr.cx) / intr.fx,
                           (corners[:, 1] - intr.cy) / intr.fy, np.ones(4)])
    return b, cam @ M.T


def _view_quads(origin: np.ndarray, rays: np.ndarray, depths: tuple[float, ...],
                lo: np.ndarray, m: float) -> list[np.ndarray] | None:
    """The camera's view at each of ``depths`` along the approach (metres, plane axes): the
    (4, 2) points its corner rays meet there, in the pixels of a silhouette whose pixel
    (0, 0) is centred on plane point lo, m metres each. None where a corner ray never meets
    one of the depths (a camera looking up to the horizon: its view there is no
    quadrilateral)."""
    quads = []
    for d in depths:
        s = (d - origin[2]) / rays[:, 2]
        if not np.all(np.isfinite(s) & (s > 0)):
            return None
        quads.append((origin[:2] + s[:, None] * rays[:, :2] - lo) / m)
    return quads


def _covers(quad: np.ndarray, shape: tuple[int, int]) -> bool:
    """Whether the convex quadrilateral quad (4, 2; pixels, either way round) covers the
    whole (H, W) image, its pixels' outer edges included."""
    pts = quad.tolist()
    area = sum(pts[k][0] * pts[k - 3][1] - pts[k - 3][0] * pts[k][1] for k in range(4))
    h, w = shape
    box = ((-0.5, -0.5), (w - 0.5, -0.5), (w - 0.5, h - 0.5), (-0.5, h - 0.5))
    for k in range(4):
        (ax, ay), (bx, by) = pts[k], pts[k - 3]  # the edge from point k to point k + 1
        if any(area * ((bx - ax) * (py - ay) - (by - ay) * (px - ax)) < 0 for px, py in box):
            return False
    return True


def _unseen(origin: np.ndarray, rays: np.ndarray, depths: tuple[float, ...], lo: np.ndarray,
            shape: tuple[int, int], m: float) -> np.ndarray | None:
    """(H, W) bool: the silhouette's pixels (pixel (0, 0) centred on plane point lo, m metres
    each) outside the camera's view at any of ``depths`` along the approach (metres, plane
    axes; _view_quads). None where no pixel is: the silhouette lies wholly in view (the
    usual case), or a corner ray never meets one of the depths (no claim is made)."""
    quads = _view_quads(origin, rays, depths, lo, m)
    if quads is None or all(_covers(q, shape) for q in quads):
        return None
    seen = np.ones(shape, np.uint8)
    for quad in quads:
        here = np.zeros(shape, np.uint8)
        # 8 fractional bits: the quadrilateral's edges to 1/256 px
        cv2.fillConvexPoly(here, np.round(np.clip(quad, -1e5, 1e5) * 256).astype(np.int32), 1,
                           lineType=cv2.LINE_8, shift=8)
        seen &= here
    return seen == 0


def _plane_grid(frame: RGBDFrame, mask: np.ndarray, R: np.ndarray, spacing: bool = True,
                edges: bool = True) -> tuple[np.ndarray, float, np.ndarray]:
    """The masked pixels' points in plane-axis coordinates (x, y, depth along the approach;
    metres, origin at the base origin) as an (h, w, 3) grid over the mask's bounding box, NaN
    outside the mask, sensor holes filled; the spacing of image neighbours in the plane
    (metres, SPACING_PERCENTILE of their distances; 0.0 when not ``spacing``); and the filled
    holes at the mask's edge (``edge_holes``, (h, w) bool; none found when not ``edges``).
    (0 x 0 grid, 0.0, 0 x 0) without a reading."""
    empty = np.empty((0, 0, 3)), 0.0, np.zeros((0, 0), bool)
    c0, r0, w, h = cv2.boundingRect(mask.view(np.uint8))
    if w == 0:
        return empty
    m = mask[r0:r0 + h, c0:c0 + w]
    d = frame.depth_m[r0:r0 + h, c0:c0 + w]
    with np.errstate(invalid="ignore"):
        ok = d > 0  # NaN compares False
    if not (m & ok).any():
        return empty
    edge = edge_holes(m, ok) if edges else np.zeros((h, w), bool)
    # Sensor holes in the mask take their neighbours' depth, layer by layer from the readings.
    filled = np.empty((h, w), np.float32)
    fill_from_neighbours(d, m, ok, filled)
    m = m & (filled == filled)  # a masked region with no reading at all stays out
    edge &= m
    d = filled
    rx, ry = ray_axes(frame.intrinsics)
    M, b = _to_plane(frame, R)
    grid = np.empty((h, w, 3))
    steps = np.empty(2 * h * w)
    n = plane_grid(d, m, rx[c0:c0 + w], ry[r0:r0 + h], M, b, grid, steps)
    if n == 0 or not spacing:
        return grid, 0.0, edge
    k = int(SPACING_PERCENTILE / 100.0 * (n - 1))
    return grid, float(np.sqrt(np.partition(steps[:n], k)[k])), edge


def edge_holes(mask: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(h, w) bool: the mask's pixels without a reading that join the mask's outside through
    such pixels (4-neighbours): the sensor's holes at the object's edge, which the segmenter
    claims. Holes inside the readings are not among them."""
    from scipy import ndimage

    holes = mask & ~valid
    if not holes.any():
        return holes
    # the outside and the holes as one region per connected piece; the pieces that hold an
    # outside pixel (the padding joins the box's border to the outside) are the edge's
    free = np.pad(~mask | holes, 1, constant_values=True)
    labels, _ = ndimage.label(free)
    outside = np.unique(labels[np.pad(~mask, 1, constant_values=True)])
    return np.isin(labels[1:-1, 1:-1], outside[outside > 0]) & holes


def _draw(grid: np.ndarray, tip: float, lo: np.ndarray, shape: tuple[int, int], m: float,
          max_step_m: float) -> np.ndarray:
    """(H, W) bool: the grid's surface at depth <= tip, pixel (0, 0) centred on plane point lo."""
    out = np.zeros(shape, np.uint8)
    if grid.size:
        rasterise_surface(grid, tip, float(lo[0]), float(lo[1]), 1.0 / m, max_step_m, out)
    return out.view(np.bool_)


def _within_reach(grid: np.ndarray, lo: np.ndarray, shape: tuple[int, int], m: float,
                  max_step_m: float) -> np.ndarray:
    """The part of a grid that can draw into a silhouette of ``shape`` whose pixel (0, 0) is
    centred on plane point lo: its samples within a surface step (max_step_m) and two pixels
    of the image, and a row and column round them. Drawing it draws what the whole grid
    draws (a triangle or segment is drawn only when its corners lie within a step of each
    other, so one that reaches the image has every corner in this part; the row round them
    keeps the blocks beside its pairs). The neighbours of a target span the table: their
    grid is mostly far from its silhouette."""
    if grid.size == 0:
        return grid
    r0, r1, c0, c1 = grid_window(grid, float(lo[0]), float(lo[1]), 1.0 / m, shape[0],
                                 shape[1], max_step_m / m + 2.0)
    return grid[r0:r1, c0:c1]


def silhouette(frame: RGBDFrame, mask: np.ndarray | ObjectMask, *,
               approach: tuple[float, float, float] | np.ndarray = (0.0, 0.0, -1.0),
               insertion_depth_m: float = 0.02, metres_per_px: float = 0.001,
               margin_m: float = 0.06, obstacles: np.ndarray | None = None,
               support: SupportPlane | None = None, clearance_m: float = 0.005,
               x_axis: tuple[float, float, float] | np.ndarray | None = None,
               attached: np.ndarray | None = None,
               fragment_share: float = FRAGMENT_SHARE,
               attached_max_width_m: float = math.inf,
               axial: np.ndarray | Callable[[], np.ndarray] | None = None) -> Silhouette:
    """The silhouette of one object for a gripper approaching along ``approach``.

    frame : an RGBDFrame with T_base_camera. mask : (H, W) bool or ObjectMask of the object.
    approach : (3,) direction of the approach in the base frame (default straight down).
    insertion_depth_m : how far past the object's first point along the approach the
        fingertips go; the silhouette keeps the object's points up to that depth (the part
        the fingers meet). support : the plane the object stands on (e.g. the
        TabletopSegmenter's ``last_plane``); when given, the fingertips stop clearance_m
        above it. metres_per_px : image resolution (default 1 mm). margin_m : free border
        around the object, metres (room for the open fingers). obstacles : (H, W) bool
        pixels of other things (e.g. the other objects' masks); their points above the
        fingertips are drawn into ``image`` (the fingers would hit them) but not ``target``.
    x_axis : base-frame direction for the image's columns, made perpendicular to the approach;
        default the camera's x axis, so a camera looking along the approach sees the
        silhouette the way it sees the image.
    attached : (H, W) bool pixels of pieces that may be one body with the object
        (``touching``); they join its volume and mass centre when the object is at most
        fragment_share of the whole by volume and the whole is somewhere at most
        attached_max_width_m wide (a jaw's stroke: wider, they are separate objects).
    axial : (H, W) bool pixels of the body the object continues along its axis
        (``axial_pieces``), or a function giving them, called only where needed; where the
        width rule separates the attached pieces, these alone join its volume and mass
        centre (fragment_share still applies): a cap cut from a bottle whose body is wider
        than the stroke is weighed with the body.

    Sensor holes in the mask (pixels with no reading) take their neighbours' depth, filled
    inwards from the readings around them; ``target_read`` is drawn without those at the
    mask's edge (``edge_holes``).
    The samples are drawn as a surface: triangles between image neighbours, except across
    steps in depth (neighbours more than MAX_STEP_FACTOR times their usual spacing apart).
    Raises ValueError for a frame without T_base_camera or a mask without any reading.
    """
    return ProjectedObject(frame, mask, approach=approach, metres_per_px=metres_per_px,
                           margin_m=margin_m, obstacles=obstacles, support=support,
                           clearance_m=clearance_m, x_axis=x_axis, attached=attached,
                           fragment_share=fragment_share,
                           attached_max_width_m=attached_max_width_m,
                           axial=axial).at(insertion_depth_m)


class ProjectedObject:
    """One object's readings (and its obstacles' and attached pieces') projected along an
    approach once, in the plane's axes; ``at(insertion_depth_m)`` draws its silhouette at any
    fingertip depth from them, each exactly as ``silhouette`` would (same arguments; both
    insertion depths of a search from one projection: the second costs its drawing only).
    Raises ValueError as ``silhouette`` does, on construction."""

    def __init__(self, frame: RGBDFrame, mask: np.ndarray | ObjectMask, *,
                 approach: tuple[float, float, float] | np.ndarray = (0.0, 0.0, -1.0),
                 metres_per_px: float = 0.001, margin_m: float = 0.06,
                 obstacles: np.ndarray | None = None, support: SupportPlane | None = None,
                 clearance_m: float = 0.005,
                 x_axis: tuple[float, float, float] | np.ndarray | None = None,
                 attached: np.ndarray | None = None, fragment_share: float = FRAGMENT_SHARE,
                 attached_max_width_m: float = math.inf,
                 axial: np.ndarray | Callable[[], np.ndarray] | None = None) -> None:
        frame = check_frame(frame)
        if frame.T_base_camera is None:
            raise ValueError("frame.T_base_camera is None: a silhouette needs the camera pose "
                             "in the base frame (hand-eye calibration)")
        h, w = frame.depth_m.shape
        if isinstance(mask, ObjectMask):
            mask = mask.mask
        mask = check_mask(mask, "mask", (h, w))
        if obstacles is not None:
            obstacles = check_mask(obstacles, "obstacles", (h, w)) & ~mask
        if attached is not None:
            attached = check_mask(attached, "attached", (h, w)) & ~mask
        a = _unit(approach, "approach")
        check_positive(metres_per_px, "metres_per_px")
        for name, v in (("margin_m", margin_m), ("clearance_m", clearance_m)):
            check_positive(v, name, allow_zero=True)
        R_bc = frame.T_base_camera[:3, :3]
        hint = R_bc[:, 0] if x_axis is None else _unit(x_axis, "x_axis")
        self._R = plane_axes(a, hint, R_bc[:, 1])
        self._frame, self._a, self._m = frame, a, float(metres_per_px)
        self._margin, self._clearance, self._support = margin_m, clearance_m, support
        self._fragment_share, self._attached_max_width = fragment_share, attached_max_width_m
        self._grid, spacing, edge = _plane_grid(frame, mask, self._R)
        self._view = _view_rays(frame, self._R)
        # the target as its readings alone draw it: the filled holes at its edge left out
        self._read_grid, self._holes_left_out = self._grid, False
        if edge.any():
            self._read_grid = self._grid.copy()
            self._read_grid[edge] = np.nan
        depth_along = self._grid[..., 2][np.isfinite(self._grid[..., 2])]
        if depth_along.size == 0:
            raise ValueError(f"mask has no pixel with a depth reading ({int(mask.sum())} pixels)")
        k_top = int(TOP_PERCENTILE / 100.0 * (depth_along.size - 1))
        self._top = float(np.partition(depth_along, k_top)[k_top])
        self._max_step = MAX_STEP_FACTOR * max(spacing, self._m)
        self._obstacle_grid = _plane_grid(frame, obstacles, self._R, spacing=False,
                                          edges=False)[0] \
            if obstacles is not None and obstacles.any() else None
        self._attached_grid = _plane_grid(frame, attached, self._R, spacing=False,
                                          edges=False)[0] \
            if attached is not None and attached.any() else None
        # found and projected only where the width rule separates the attached pieces
        self._axial, self._mask = axial, mask
        self._axial_grid: np.ndarray | None = None
        self._joined_width: float | None = None  # _joined_width_m's, once asked

    def _joined_width_m(self) -> float:
        """The narrowest width (metres) of the object and its attached pieces together, over
        their points more than the clearance above the support (the fingertips stop there:
        the table's readings a mask takes in at its outline, a few millimetres over the
        support in the sensor's noise, are never between the pads, and counted they widened
        a lying bottle 69 mm across to 82 mm, over the Franka hand's 80 mm stroke, so that
        its neck was grasped as an object of its own: docs/scoring.md). Computed once."""
        if self._joined_width is None:
            grids = (self._grid, self._attached_grid)
            above = [_off_support(g, self._R, self._support, self._frame.T_base_camera,
                                  self._clearance) for g in grids]
            if any(np.isfinite(g[..., 2]).any() for g in above):
                grids = above  # else all of it that low: no better reading than the whole
            self._joined_width = _narrowest_m(self._m, *grids)
        return self._joined_width

    def _axial_body(self) -> np.ndarray | None:
        """The axial pieces' plane grid ((h, w, 3), as the attached pieces'), None without
        any; found (``axial`` called, if a function) and projected once."""
        if self._axial_grid is None and self._axial is not None:
            pixels = self._axial() if callable(self._axial) else self._axial
            pixels = check_mask(pixels, "axial", self._mask.shape) & ~self._mask
            self._axial = None  # asked once: the grid below, or nothing
            if pixels.any():
                self._axial_grid = _plane_grid(self._frame, pixels, self._R, spacing=False,
                                               edges=False)[0]
        return self._axial_grid

    def readings_only(self) -> ProjectedObject:
        """The same object with the sensor's holes at its edge (``edge_holes``) left out:
        each silhouette ``at`` draws from it is drawn from the readings alone (its target is
        the full object's ``target_read``). Itself where there are no such holes."""
        if self._read_grid is self._grid:
            return self
        if self._attached_grid is not None:
            self._joined_width_m()  # the copy joins its pieces as the object does
        out = copy.copy(self)
        out._grid, out._holes_left_out = self._read_grid, True
        return out

    def sides_are_walls(self, insertion_depth_m: float) -> bool:
        """Whether the object's sides drop straight from its top's edge down to
        insertion_depth_m past the top (metres): its readings alone are as wide at their
        narrowest WALL_PROBE_M past the top as there, within WALL_TOLERANCE_M. A box's or an
        upright can's are; a lying can's or a mug's side bulges out below the top, and the
        sensor's holes at its edge stand for that bulge (vision.md)."""
        grid = self._read_grid
        depth = grid[..., 2]
        with np.errstate(invalid="ignore"):
            shallow = depth <= self._top + min(WALL_PROBE_M, insertion_depth_m)
            deep = depth <= self._top + insertion_depth_m
        if not shallow.any():
            return False
        m = self._m
        return bool(_narrowest_m(m, grid[deep][None]) - _narrowest_m(m, grid[shallow][None])
                    <= WALL_TOLERANCE_M)

    def at(self, insertion_depth_m: float) -> Silhouette:
        """The silhouette with the fingertips insertion_depth_m past the object's first point
        along the approach (the support's clearance permitting): ``silhouette``'s."""
        check_positive(insertion_depth_m, "insertion_depth_m", allow_zero=True)
        grid, R, m, a = self._grid, self._R, self._m, self._a
        top = self._top
        tip = top + float(insertion_depth_m)
        support_depth = math.nan  # the support's depth along the approach under the object
        if self._support is not None:
            # Stop the fingertips clearance_m above the support, on the approach line through
            # the object's centre: height(s) = n . (c + s a) + off decreases with s when n . a < 0.
            n_b, off_b = self._support.in_base(self._frame.T_base_camera)
            rate = float(n_b @ a)
            if rate < -1e-6:
                _, cx, cy, *_ = extent_above(grid, tip)
                centre = R[:, :2] @ np.array([cx, cy])
                support_depth = (-off_b - float(n_b @ centre)) / rate
                tip = max(top, min(tip, (self._clearance - off_b - float(n_b @ centre)) / rate))
        _, _, _, x0, y0, x1, y1 = extent_above(grid, tip)

        lo = np.array([x0, y0]) - self._margin
        size = np.ceil((np.array([x1, y1]) + self._margin - lo) / m).astype(int) + 1
        shape = (int(size[1]), int(size[0]))
        max_step = self._max_step
        target = _draw(grid, tip, lo, shape, m, max_step)
        target_read = target.copy() if self._read_grid is grid else \
            _draw(self._read_grid, tip, lo, shape, m, max_step)
        image = target.copy()
        whole = _draw(grid, math.inf, lo, shape, m, max_step)  # all of the target, from above
        whole_depth, depth = surface_depths(grid, lo, shape, m, (whole, target))
        volume, centre_px = volume_and_centre(whole_depth, support_depth, m)
        if self._attached_grid is not None and volume > 0:
            pieces, width = self._attached_grid, self._joined_width_m()
            if width > self._attached_max_width and self._axial_body() is not None:
                # separate objects by the width rule, but the object continues a body along
                # its axis: that body is wider than the stroke, yet the object is its part
                pieces, width = self._axial_grid, 0.0
            volume, centre_px = _join_attached(pieces, lo, m, max_step, support_depth, volume,
                                               centre_px, self._fragment_share, width,
                                               self._attached_max_width)
        if self._obstacle_grid is not None:
            near = _within_reach(self._obstacle_grid, lo, shape, m, max_step)
            drawn = _draw(near, tip, lo, shape, m, max_step)
            image |= drawn
            depth = np.minimum(depth, surface_depth(near, lo, shape, m, drawn))
        # Past the edge of the view the object (cut off by the image's border) or anything
        # else may stand: an obstacle as tall as the object's top, so that no grasp closes
        # across the cut as if it were the object's side (a can half out of view at the
        # bottom of the image, seen 69-76 mm across instead of 102, was tried three times and
        # the fingers came down on it: docs/figures.md)
        unseen = _unseen(*self._view, (tip, top), lo, shape, m)
        if unseen is None:
            unseen = np.zeros(shape, bool)
        else:
            unseen &= ~target
            image |= unseen
            depth = np.where(unseen, np.fmin(depth, np.float32(top)), depth)
        with np.errstate(invalid="ignore"):
            height = np.where(np.isfinite(depth), np.float32(tip) - depth, np.float32(np.nan))
            below = np.where(whole & np.isfinite(whole_depth), np.float32(tip) - whole_depth,
                             np.float32(np.nan))

        T_base_plane = np.eye(4)
        T_base_plane[:3, :3] = R
        T_base_plane[:3, 3] = R @ np.array([lo[0], lo[1], tip])
        centre = T_base_plane[:3, 3] + R[:, :2] @ (np.array([shape[1] - 1, shape[0] - 1]) * m / 2)
        return Silhouette(image=image, target=target,
                          metres_per_px=m, T_base_plane=T_base_plane,
                          grasp_height_m=float(centre[2]), insertion_depth_m=tip - top,
                          height_m=height.astype(np.float32), floor_m=support_depth - tip,
                          volume_m3=volume, centre_of_mass_px=centre_px, footprint=whole,
                          footprint_height_m=below.astype(np.float32, copy=False),
                          target_read=target_read, unseen=unseen,
                          holes_left_out=self._holes_left_out)


def _join_attached(grid: np.ndarray, lo: np.ndarray, m: float, max_step: float,
                   support_depth: float, volume: float, centre_px: np.ndarray,
                   fragment_share: float, joined_width_m: float,
                   max_width_m: float) -> tuple[float, np.ndarray]:
    """(volume, m³; centre, (column, row) pixels of the target's silhouette) of the target
    together with the attached pixels' solid under their seen surface, each drawn over its own
    extent (an attached body may reach past the silhouette's border); the target's own when
    it is more than fragment_share of the whole, or when the whole, joined_width_m across at
    its narrowest (ProjectedObject._joined_width_m), is nowhere narrower than max_width_m
    (metres: no body a jaw of that stroke could hold, so separate objects)."""
    if grid.size == 0 or not np.isfinite(grid[..., 2]).any():
        return volume, centre_px
    if math.isfinite(max_width_m) and joined_width_m > max_width_m:
        return volume, centre_px
    _, _, _, x0, y0, x1, y1 = extent_above(grid, math.inf)
    lo_a = np.array([x0, y0]) - m
    size = np.ceil((np.array([x1, y1]) + m - lo_a) / m).astype(int) + 1
    shape_a = (int(size[1]), int(size[0]))
    whole_a = _draw(grid, math.inf, lo_a, shape_a, m, max_step)
    v_a, c_a = volume_and_centre(surface_depth(grid, lo_a, shape_a, m, whole_a), support_depth, m)
    if v_a <= 0 or volume > fragment_share * (volume + v_a):
        return volume, centre_px
    c_a = c_a + (lo_a - lo) / m  # into the target silhouette's pixels
    return volume + v_a, (volume * np.asarray(centre_px) + v_a * c_a) / (volume + v_a)


def _off_support(grid: np.ndarray, R: np.ndarray, support: SupportPlane | None,
                 T_base_camera: np.ndarray, clearance_m: float) -> np.ndarray:
    """grid (h, w, 3: plane-axis x, y and depth along the approach, metres) with its points
    less than clearance_m above the support plane set NaN; grid itself without a support."""
    if support is None or grid.size == 0:
        return grid
    n_b, off_b = support.in_base(T_base_camera)
    with np.errstate(invalid="ignore"):
        low = (grid @ (R.T @ n_b) + off_b) < clearance_m  # height over the support; NaN: False
    if not low.any():
        return grid
    out = grid.copy()
    out[low] = np.nan
    return out


def _narrowest_m(m: float, *grids: np.ndarray) -> float:
    """The smallest width (metres) of the plane points of grids (each (h, w, 3), NaN outside
    its mask) together, drawn at m metres a pixel: scoring's minimum Feret diameter."""
    pts = np.concatenate([g[..., :2][np.isfinite(g[..., 2])] for g in grids])
    px = np.round((pts - pts.min(axis=0)) / m).astype(np.int64)
    image = np.zeros((px[:, 1].max() + 1, px[:, 0].max() + 1), bool)
    image[px[:, 1], px[:, 0]] = True
    return narrowest_width_m(image, m)


def touching(masks: list[ObjectMask] | list[np.ndarray], i: int, *, gap_px: int = 2,
             min_border_px: int = 6) -> np.ndarray:
    """(H, W) bool: the masks joined to the i-th through a chain of touches (two masks touch
    where at least min_border_px pixels of one lie within gap_px of the other: no table seen
    between), the pieces that may be one body with it (pass it as ``silhouette(...,
    attached=)``); camera pixels. A bottle's neck cut in two at its depth steps reaches the
    body through its other piece."""
    arrays = _mask_arrays(masks, i)
    group, frontier = {i}, [i]
    while frontier:
        for j in _touched(arrays, frontier.pop(), gap_px, min_border_px) - group:
            group.add(j)
            frontier.append(j)
    out = np.zeros(arrays[i].shape, bool)
    for j in group - {i}:
        out |= arrays[j]
    return out


def axial_pieces(masks: list[ObjectMask] | list[np.ndarray], i: int, *, gap_px: int = 2,
                 min_border_px: int = 6, max_angle_deg: float = AXIAL_MAX_ANGLE_DEG,
                 min_elongation: float = AXIAL_MIN_ELONGATION) -> np.ndarray:
    """(H, W) bool: the body the i-th mask continues along its axis, or nothing: the largest
    elongated mask (AXIAL_MIN_ELONGATION) larger than the i-th, touching it directly or through
    one mask, on whose long axis the i-th lies (AXIAL_MAX_ANGLE_DEG) and across which it is
    no wider, with the masks that link the two (pass it as ``silhouette(..., axial=)``);
    camera pixels. A lying bottle cut at its cap's depth step: the cap and its body."""
    arrays = _mask_arrays(masks, i)
    out = np.zeros(arrays[i].shape, bool)
    first = _touched(arrays, i, gap_px, min_border_px)
    if not first:
        return out
    second = {k: _touched(arrays, k, gap_px, min_border_px) - {i} for k in first}
    area = {j: cv2.countNonZero(arrays[j].view(np.uint8))
            for j in set().union(first, *second.values(), {i})}
    piece = _MaskShape(arrays[i])
    for j in sorted(area, key=lambda j: -area[j]):
        if area[j] <= area[i]:
            break
        if _MaskShape(arrays[j]).continued_by(piece, max_angle_deg, min_elongation):
            out |= arrays[j]
            for k in first - {j}:
                if j in second[k]:  # a piece between the two, touching both
                    out |= arrays[k]
            return out
    return out


def _touched(arrays: list[np.ndarray], i: int, gap_px: int, min_border_px: int) -> set[int]:
    """The masks touching the i-th directly: at least min_border_px of their pixels within
    gap_px of it (``touching``'s rule)."""
    # within the mask's box grown by the gap: the dilation and the overlaps are the whole
    # frame's there and nothing outside it
    k = 2 * int(gap_px) + 1
    f = arrays[i]
    h, w = f.shape
    c0, r0, bw, bh = cv2.boundingRect(f.view(np.uint8))
    r0, c0 = max(r0 - gap_px, 0), max(c0 - gap_px, 0)
    r1, c1 = min(r0 + bh + 2 * gap_px, h), min(c0 + bw + 2 * gap_px, w)
    near = cv2.dilate(f[r0:r1, c0:c1].view(np.uint8), np.ones((k, k), np.uint8),
                      borderType=cv2.BORDER_CONSTANT, borderValue=0).view(np.bool_)
    return {j for j, m in enumerate(arrays)
            if j != i and np.count_nonzero(m[r0:r1, c0:c1] & near) >= min_border_px}


class _MaskShape:
    """A mask's pixels within its bounding box: centre, long and short axes, widths (pixels)."""

    def __init__(self, mask: np.ndarray) -> None:
        c0, r0, bw, bh = cv2.boundingRect(mask.view(np.uint8))
        crop = mask[r0:r0 + bh, c0:c0 + bw].view(np.uint8)
        mo = cv2.moments(crop, binaryImage=True)
        self._crop, self._origin = crop, np.array([c0, r0], float)
        self.centre = self._origin + np.array([mo["m10"], mo["m01"]]) / max(mo["m00"], 1.0)
        # the pixels' spread (second central moments) and its principal axes
        spread, axes = np.linalg.eigh(np.array([[mo["mu20"], mo["mu11"]],
                                                [mo["mu11"], mo["mu02"]]]))
        self.elongation = math.sqrt(spread[1] / spread[0]) if spread[0] > 0 else math.inf
        self.along, self.across = axes[:, 1], axes[:, 0]

    def width_across(self, direction: np.ndarray) -> float:
        """The mask's extent along direction (pixels)."""
        rows, cols = np.nonzero(self._crop)
        return float(np.ptp(cols * direction[0] + rows * direction[1]))

    def continued_by(self, piece: _MaskShape, max_angle_deg: float,
                     min_elongation: float) -> bool:
        """Whether piece lies on this mask's long axis (the mask elongated: the spread along
        its axis over that across at least min_elongation; the line between the centres
        within max_angle_deg of the axis) and is no wider across it."""
        if self.elongation < min_elongation:
            return False
        link = piece.centre - self.centre
        dist = float(np.linalg.norm(link))
        off_axis = dist == 0 or abs(float(link @ self.along)) < dist * math.cos(
            math.radians(max_angle_deg))
        if off_axis:
            return False
        return piece.width_across(self.across) <= self.width_across(self.across)


def _mask_arrays(masks: list[ObjectMask] | list[np.ndarray], i: int) -> list[np.ndarray]:
    """The masks as (H, W) bool arrays, after checking that i indexes them."""
    if not masks:
        raise ValueError("masks is empty: there is no object to take neighbours of")
    if not (isinstance(i, (int, np.integer)) and 0 <= i < len(masks)):
        raise ValueError(f"i must be an index into the {len(masks)} masks, got {i!r}")
    return [np.ascontiguousarray(m.mask if isinstance(m, ObjectMask) else np.asarray(m, bool))
            for m in masks]


def neighbours(masks: list[ObjectMask] | list[np.ndarray], i: int) -> np.ndarray:
    """(H, W) bool: every mask but the i-th, the obstacles for a grasp on object i (pass it
    as ``silhouette(..., obstacles=)``: the support plane alone does not add them)."""
    arrays = _mask_arrays(masks, i)
    out = np.zeros(arrays[0].shape, bool)
    for j, m in enumerate(arrays):
        if j != i:
            out |= m
    return out
