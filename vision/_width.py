"""The narrowest width of an object as the depth camera sees it, with its uncertainty.

The silhouette (vision.silhouette) overstates an object's width, measured on the simulated
D400 at 0.7 m (benchmarks/bench_width.py, docs/figures.md): by about 3 mm on boxes from the
mask's edge, where the sensor's holes in the occlusion band beside a depth step (each
lost with a probability, two pixels wide) are claimed by the segmenter and filled with
the object's depth, so that points appear up to two camera pixels outside its outline; and
by about 1.5 mm more from drawing (each sample sets its nearest silhouette pixel, and the
narrowest width counts pixel centres plus one pixel). Neither is noise: both are biases
of the way the width is drawn. Here the width is taken from the readings alone: the masked
pixels that have a depth reading, above the fingertip plane, their minimum Feret diameter in
the projection plane (no pixel added: on the noise-free simulated D400 it reads the truth to
0.0 mm, p95 0.7 mm). What remains is the pixel grid and the depth noise: the uncertainty,
WIDTH_UNCERTAINTY_PX camera pixels at the object's distance. On curved outlines (scans) it
reads about 2.6 mm narrow, mostly on the side the camera sees over the object's top, from
the sensor's holes beside the depth step there and at grazing angles (bench_width, its
per-side table and --without, docs/figures.md): not corrected here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame

from ._types import ObjectMask, Silhouette

# The measured error of the width from the readings (bench_width, 0.7 m): p95 of |error| over
# boxes and cylinders, in camera pixels at the object's distance (docs/figures.md)
WIDTH_UNCERTAINTY_PX = 2.5
MIN_NEIGHBOURS = 2  # of 8, above the fingertips, for a reading to count


@dataclass(frozen=True)
class SeenWidth:
    """An object's narrowest width as seen, metres: width_m the estimate (the masked readings'
    minimum Feret diameter above the fingertips), uncertainty_m the bound of its error
    (WIDTH_UNCERTAINTY_PX camera pixels at the object's distance), and pixel_m one camera
    pixel's footprint there. NaN width without a reading above the tips. outline_xy: the
    readings' convex hull whose width that is, (N, 2) x, y in the silhouette's plane frame
    (sil.T_base_plane), metres; empty without a width."""

    width_m: float
    uncertainty_m: float
    pixel_m: float
    outline_xy: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)), compare=False,
                                   repr=False)


def seen_width(frame: RGBDFrame, mask: np.ndarray | ObjectMask, sil: Silhouette) -> SeenWidth:
    """The narrowest width (metres) of the object under ``mask`` at ``sil``'s fingertip plane,
    from the camera's readings alone (no filled hole, no drawing), with its uncertainty."""
    import cv2
    from scipy.spatial import ConvexHull, QhullError

    m = mask.mask if isinstance(mask, ObjectMask) else np.asarray(mask, bool)
    # within the mask's box grown by a pixel (the 3 x 3 count below sees its border as 0,
    # as it sees the frame's 0s): the same pixels in the same order as over the whole frame,
    # at a fraction of the cost
    c0, r0, bw, bh = mask.box_px if isinstance(mask, ObjectMask) else \
        cv2.boundingRect(m.view(np.uint8))
    r0, c0 = max(r0 - 1, 0), max(c0 - 1, 0)
    r1, c1 = min(r0 + bh + 2, m.shape[0]), min(c0 + bw + 2, m.shape[1])
    m, depth = m[r0:r1, c0:c1], frame.depth_m[r0:r1, c0:c1]
    with np.errstate(invalid="ignore"):
        rows, cols = np.nonzero(m & (depth > 0))  # NaN compares False: holes stay out
    z = depth[rows, cols].astype(np.float64)
    k = frame.intrinsics
    p_cam = k.deproject_pixels(cols + c0, rows + r0, z)
    T_plane_camera = np.linalg.inv(sil.T_base_plane) @ frame.T_base_camera
    q = p_cam @ T_plane_camera[:3, :3].T + T_plane_camera[:3, 3]
    # above the fingertips (the plane's z runs along the approach: z <= 0), less the pixels
    # with fewer than MIN_NEIGHBOURS such neighbours of 8: specks of the support's noise grown
    # into the mask (a low object's fingertips stop a few millimetres over the support), where
    # the object's own outline, a wall seen at a grazing angle included, borders its top
    above = np.zeros(m.shape, np.float32)
    above[rows, cols] = q[:, 2] <= 0.0
    around = cv2.filter2D(above, -1, np.ones((3, 3), np.float32),
                          borderType=cv2.BORDER_CONSTANT) - above
    keep = (above[rows, cols] > 0) & (around[rows, cols] >= MIN_NEIGHBOURS)
    if np.count_nonzero(keep) < 3:
        return SeenWidth(math.nan, math.nan, math.nan)
    pixel_m = float(np.median(z[keep])) / math.sqrt(k.fx * k.fy)
    xy = q[keep, :2]
    try:
        hull = xy[ConvexHull(xy).vertices]
    except QhullError:  # all on a line: no width across it but a pixel
        return SeenWidth(pixel_m, WIDTH_UNCERTAINTY_PX * pixel_m, pixel_m, xy)
    return SeenWidth(_feret_min(hull), WIDTH_UNCERTAINTY_PX * pixel_m, pixel_m, hull)


def _feret_min(hull: np.ndarray) -> float:
    """The least extent (metres) of a convex polygon (N, 2) over the normals of its edges."""
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = normals[length[:, 0] > 0] / length[length[:, 0] > 0]
    proj = hull @ normals.T
    return float((proj.max(axis=0) - proj.min(axis=0)).min())
