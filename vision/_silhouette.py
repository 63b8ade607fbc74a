"""Silhouettes: an object's points above the fingertips, projected orthographically along the
approach axis (Tan et al. 2021, the cross-section remark), and the frame that maps them back."""
from __future__ import annotations

import math

import cv2
import numpy as np

from drivers.camera import RGBDFrame

from ._base import check_frame
from ._camera import ray_axes
from ._types import ObjectMask, Silhouette, SupportPlane, check_mask

# Share of an object's points taken as outliers when finding its first point along the
# approach (a flying pixel above the object must not set the fingertip depth).
TOP_PERCENTILE = 2.0
# Samples are splatted to their nearest pixel and joined by a 3 x 3 closing; where their
# spacing in the plane exceeds DENSIFY_ABOVE pixels, points are first interpolated between
# image neighbours (up to MAX_DENSIFY times denser), skipping pairs more than
# MAX_STEP_FACTOR spacings apart (depth steps inside the object).
DENSIFY_ABOVE = 1.6
MAX_DENSIFY = 8
MAX_STEP_FACTOR = 3.0
# Percentile of neighbouring samples' distances in the plane taken as their spacing (a few
# pairs straddle a depth step inside the object and are far apart).
SPACING_PERCENTILE = 90.0


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
    if np.linalg.norm(x) < 1e-3:
        x = y_hint - (y_hint @ z) * z
    x = x / np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)


def _fill_depth(depth: np.ndarray, mask: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """depth with every masked pixel that has no reading given its nearest masked reading's
    depth (sensor holes); (h, w) crops, float32. The mask must hold a reading."""
    holes = mask & ~valid
    if not holes.any():
        return depth
    src = np.where(mask & valid, 0, 1).astype(np.uint8)
    # Label of the nearest zero pixel; zero pixels are labelled 1.. in row-major order.
    _, lab = cv2.distanceTransformWithLabels(src, cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL)
    source = np.flatnonzero(src.ravel() == 0)
    out = depth.copy()
    out[holes] = depth.ravel()[source[lab[holes] - 1]]
    return out


def _to_plane(frame: RGBDFrame, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, b) with q = M p + b: camera-frame points p to plane-axis coordinates q (metres,
    origin at the base origin): q = R^T (R_bc p + t_bc)."""
    T = frame.T_base_camera
    return R.T @ T[:3, :3], R.T @ T[:3, 3]


def _project(frame: RGBDFrame, R: np.ndarray, rows: np.ndarray, cols: np.ndarray,
             z: np.ndarray) -> np.ndarray:
    """Plane-axis coordinates (N, 3), metres, of pixels (rows, cols) at depths z (metres):
    q = z (M[:, 0] rx + M[:, 1] ry + M[:, 2]) + b, with (rx, ry, 1) the pixel's ray."""
    rx, ry = ray_axes(frame.intrinsics)
    M, b = _to_plane(frame, R)
    ray = np.outer(rx[cols], M[:, 0]) + np.outer(ry[rows], M[:, 1]) + M[:, 2]
    return ray * z[:, None] + b


def _masked_points(frame: RGBDFrame, mask: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Plane-axis coordinates (N, 3), metres, of the masked pixels that have a reading."""
    rows, cols = np.nonzero(mask)
    z = frame.depth_m[rows, cols].astype(np.float64)
    ok = z > 0  # NaN compares False
    return _project(frame, R, rows[ok], cols[ok], z[ok])


def _points_in_plane(frame: RGBDFrame, mask: np.ndarray,
                     R: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Plane-axis coordinates q (N, 3), metres, of the masked pixels' points (origin: the base
    origin), sensor holes filled; index (h, w): each pixel's row in q over the mask's bounding
    box, -1 outside the mask; and the spacing of neighbouring samples in the plane (metres, a
    high percentile over horizontal and vertical image neighbours)."""
    empty = np.empty((0, 3)), np.full((1, 1), -1, np.int64), 0.0
    c0, r0, w, h = cv2.boundingRect(mask.view(np.uint8))
    if w == 0:
        return empty
    m = mask[r0:r0 + h, c0:c0 + w]
    d = frame.depth_m[r0:r0 + h, c0:c0 + w]
    with np.errstate(invalid="ignore"):
        ok = d > 0  # NaN compares False
    if not (m & ok).any():
        return empty
    d = _fill_depth(d, m, ok)
    # Number the masked pixels, so image neighbours can be paired without a dense grid.
    index = np.full((h, w), -1, np.int64)
    rows, cols = np.nonzero(m)
    index[rows, cols] = np.arange(rows.size)
    q = _project(frame, R, rows + r0, cols + c0, d[rows, cols].astype(np.float64))
    steps = [np.einsum("ij,ij->i", q[i, :2] - q[j, :2], q[i, :2] - q[j, :2])
             for i, j in _neighbour_pairs(index)]
    s2 = np.concatenate(steps)
    if s2.size == 0:
        return q, index, 0.0
    k = int(SPACING_PERCENTILE / 100.0 * (s2.size - 1))
    return q, index, float(np.sqrt(np.partition(s2, k)[k]))


def _neighbour_pairs(index: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(i, j) rows of q for every horizontal, then every vertical, pair of masked neighbours."""
    out = []
    for a, b in ((index[:, :-1], index[:, 1:]), (index[:-1, :], index[1:, :])):
        pair = (a >= 0) & (b >= 0)
        out.append((a[pair], b[pair]))
    return out


def _densify(q: np.ndarray, index: np.ndarray, k: int, max_step_m: float) -> np.ndarray:
    """q with k - 1 points added inside every neighbour pair and (k - 1)² inside every 2 x 2
    block of masked pixels, interpolated linearly, so the samples are k times denser; pairs
    and blocks spanning more than max_step_m in the plane (a depth step) are left open."""
    t = np.arange(1, k) / k
    parts = [q]
    for i, j in _neighbour_pairs(index):
        d = q[j] - q[i]
        near = np.einsum("ij,ij->i", d[:, :2], d[:, :2]) <= max_step_m ** 2
        parts.append((q[i[near], None, :] + t[None, :, None] * d[near, None, :]).reshape(-1, 3))
    c = (index[:-1, :-1], index[:-1, 1:], index[1:, :-1], index[1:, 1:])
    full = (c[0] >= 0) & (c[1] >= 0) & (c[2] >= 0) & (c[3] >= 0)
    p00, p01, p10, p11 = (q[ci[full]] for ci in c)
    span = np.maximum(np.abs(p11 - p00)[:, :2].max(axis=1), np.abs(p10 - p01)[:, :2].max(axis=1))
    keep = span <= max_step_m
    p00, p01, p10, p11 = p00[keep], p01[keep], p10[keep], p11[keep]
    s, u = (a.ravel() for a in np.meshgrid(t, t, indexing="ij"))
    # Bilinear: (1-s)(1-u) p00 + (1-s) u p01 + s (1-u) p10 + s u p11, for every block at once.
    w = np.stack([(1 - s) * (1 - u), (1 - s) * u, s * (1 - u), s * u], axis=0)  # (4, (k-1)²)
    inner = np.einsum("cn,cpk->pnk", w, np.stack([p00, p01, p10, p11], axis=0))
    parts.append(inner.reshape(-1, 3))
    return np.concatenate(parts)


def _splat(xy: np.ndarray, shape: tuple[int, int], m: float) -> np.ndarray:
    """(H, W) bool image of plane points (N, 2), metres from the pixel (0, 0) centre, each set
    in its nearest pixel, then closed with a 3 x 3 square so neighbouring samples join."""
    img = np.zeros(shape, np.uint8)
    u = np.rint(xy[:, 0] / m).astype(np.intp)
    v = np.rint(xy[:, 1] / m).astype(np.intp)
    inside = (u >= 0) & (u < shape[1]) & (v >= 0) & (v < shape[0])
    img[v[inside], u[inside]] = 1
    img = cv2.morphologyEx(img, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    return img.view(np.bool_)


def silhouette(frame: RGBDFrame, mask: np.ndarray | ObjectMask, *,
               approach: tuple[float, float, float] | np.ndarray = (0.0, 0.0, -1.0),
               insertion_depth_m: float = 0.02, metres_per_px: float = 0.001,
               margin_m: float = 0.06, obstacles: np.ndarray | None = None,
               support: SupportPlane | None = None, clearance_m: float = 0.005,
               x_axis: tuple[float, float, float] | np.ndarray | None = None) -> Silhouette:
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

    Sensor holes in the mask (pixels with no reading) take their nearest reading's depth;
    the samples are joined by a closing as wide as their spacing in the plane.
    Raises ValueError for a frame without T_base_camera or a mask without any reading.
    """
    frame = check_frame(frame)
    if frame.T_base_camera is None:
        raise ValueError("frame.T_base_camera is None: a silhouette needs the camera pose in "
                         "the base frame (hand-eye calibration)")
    h, w = frame.depth_m.shape
    if isinstance(mask, ObjectMask):
        mask = mask.mask
    mask = check_mask(mask, "mask", (h, w))
    if obstacles is not None:
        obstacles = check_mask(obstacles, "obstacles", (h, w)) & ~mask
    a = _unit(approach, "approach")
    for name, v, lo in (("insertion_depth_m", insertion_depth_m, 0.0),
                        ("metres_per_px", metres_per_px, None), ("margin_m", margin_m, 0.0),
                        ("clearance_m", clearance_m, 0.0)):
        ok = isinstance(v, (int, float)) and math.isfinite(v) and (v >= lo if lo is not None else v > 0)
        if not ok:
            raise ValueError(f"{name} must be finite and {'>= 0' if lo is not None else '> 0'}, got {v!r}")
    m = float(metres_per_px)

    R_bc = frame.T_base_camera[:3, :3]
    hint = R_bc[:, 0] if x_axis is None else _unit(x_axis, "x_axis")
    R = plane_axes(a, hint, R_bc[:, 1])

    q, index, spacing = _points_in_plane(frame, mask, R)
    if q.shape[0] == 0:
        raise ValueError(f"mask has no pixel with a depth reading ({int(mask.sum())} pixels)")
    depth_along = q[:, 2]
    k_top = int(TOP_PERCENTILE / 100.0 * (depth_along.size - 1))
    top = float(np.partition(depth_along, k_top)[k_top])
    tip = top + float(insertion_depth_m)
    if support is not None:
        # Stop the fingertips clearance_m above the support, on the approach line through the
        # object's centre: height(s) = n . (c + s a) + off decreases with s when n . a < 0.
        n_b, off_b = support.in_base(frame.T_base_camera)
        rate = float(n_b @ a)
        if rate < -1e-6:
            centre = R @ np.array([*q[:, :2].mean(axis=0), 0.0])
            tip = min(tip, (clearance_m - off_b - float(n_b @ centre)) / rate)
    tip = max(tip, top)
    ratio = spacing / m
    if ratio > DENSIFY_ABOVE:
        # Samples too sparse for a 3 x 3 closing to join: interpolate between neighbours.
        q = _densify(q, index, min(MAX_DENSIFY, math.ceil(ratio / DENSIFY_ABOVE)),
                     MAX_STEP_FACTOR * spacing)
    keep = q[:, 2] <= tip
    xy = q[keep, :2]

    lo = xy.min(axis=0) - margin_m
    size = np.ceil((xy.max(axis=0) + margin_m - lo) / m).astype(int) + 1
    shape = (int(size[1]), int(size[0]))
    target = _splat(xy - lo, shape, m)

    image = target
    if obstacles is not None and obstacles.any():
        qo = _masked_points(frame, obstacles, R)
        qo = qo[qo[:, 2] <= tip]
        if qo.size:
            image = target | _splat(qo[:, :2] - lo, shape, m)

    T_base_plane = np.eye(4)
    T_base_plane[:3, :3] = R
    T_base_plane[:3, 3] = R @ np.array([lo[0], lo[1], tip])
    centre = T_base_plane[:3, 3] + R[:, :2] @ (np.array([shape[1] - 1, shape[0] - 1]) * m / 2)
    return Silhouette(image=image.copy() if image is target else image, target=target,
                      metres_per_px=m, T_base_plane=T_base_plane,
                      grasp_height_m=float(centre[2]), insertion_depth_m=tip - top)
