"""The narrowest width of an object as the depth camera sees it, with its uncertainty.

The silhouette (vision.silhouette) overstates an object's width, measured on the simulated
D400 at 0.7 m (benchmarks/bench_width.py, docs/figures.md): by about 3 mm on boxes from the
mask's edge, where the sensor's holes in the occlusion band beside a depth step (each
lost with a probability, two pixels wide) are claimed by the segmenter and filled with
the object's depth, so that points appear up to two camera pixels outside its outline; and
by about 1.5 mm more from drawing (each sample sets its nearest silhouette pixel, and the
narrowest width counts pixel centres plus one pixel). Neither is noise: both are biases
of the way the width is drawn. Here the width is taken from the readings: the masked
pixels that have a depth reading, above the fingertip plane, their minimum Feret diameter in
the projection plane (no pixel added: on the noise-free simulated D400 it reads the truth to
0.0 mm, p95 0.7 mm).

The readings alone read rounded outlines (scans) about 2.6 mm narrow: the sensor loses the
outermost pixels, in the band beside the depth step and at grazing angles, and a curved
outline has few pixels at its extreme. The colour camera has no such holes (depth is
aligned to colour), so a hole is given back to the object where its colour tells (unlike
the segmenter, which claims every hole beside the object and so widened the silhouette):
within EDGE_PX pixels of a kept reading, whose colour is nearer the object's hue than its
surroundings' (hue: the RGB vector's direction, whatever the shading), where the two differ
by MIN_HUE_DEG at least, and with no reading below the fingertips within BELOW_PX pixels (a
hole beside one may lie below them too: a lying cylinder seen from above). A hole has no
depth: it is placed on its ray at its nearest reading's height or where the ray meets the
fingertip plane, whichever lies further inside the readings' outline (a wall seen at a
grazing angle lies below the top's edge, not beside it). Measured by bench_width (median
bias; docs/figures.md), on 30 tables each of seeds 0-2 and 60 held-out tables of seed 3:
scans -2.0, -1.8, -0.8 and -1.8 mm (the readings alone -2.6, -2.8, -1.8, -2.4), boxes +1.0
to +1.4 (+0.3 to +0.6), cylinders -0.2 to -0.8 (-0.8 to -1.4). What remains
on the scans is mostly the far side the camera does not see, below the ray that grazes the
object's top. The uncertainty: WIDTH_UNCERTAINTY_PX camera pixels at the object's distance.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame

from ._types import ObjectMask, Silhouette

# The measured error of the width (bench_width, 0.7 m): p95 of |error| over boxes and
# cylinders, in camera pixels at the object's distance (docs/figures.md)
WIDTH_UNCERTAINTY_PX = 2.5
MIN_NEIGHBOURS = 2  # of 8, above the fingertips, for a reading to count
# Holes this close to a kept reading may be the object's (the D400's occlusion band beside a
# depth step is two pixels on each side; further, walls seen at grazing angles widen boxes)
EDGE_PX = 2
# and none with a reading below the fingertips this close: it may lie below them too
BELOW_PX = 3
# The angle (degrees) between the object's colour and its surroundings' (as RGB vectors: hue
# and saturation, whatever the shading) for colour to tell them apart; where it cannot, the
# holes stay out. A camera's colour noise (about 2 of 255 levels) turns a colour by under 1°.
MIN_HUE_DEG = 5.0
MIN_BRIGHTNESS = 20.0  # of 255 (the RGB vector's length): darker has no hue to speak of
# the pixel offsets within EDGE_PX, nearest first
_OFFSETS = np.array(sorted(((dr, dc) for dr in range(-EDGE_PX, EDGE_PX + 1)
                            for dc in range(-EDGE_PX, EDGE_PX + 1)
                            if 0 < dr * dr + dc * dc <= EDGE_PX ** 2),
                           key=lambda o: o[0] * o[0] + o[1] * o[1]))


@dataclass(frozen=True)
class SeenWidth:
    """An object's narrowest width as seen, metres: width_m the estimate (the minimum Feret
    diameter, above the fingertips, of the masked readings and of the holes at their edge
    that have the object's colour), uncertainty_m the bound of its error
    (WIDTH_UNCERTAINTY_PX camera pixels at the object's distance), and pixel_m one camera
    pixel's footprint there. NaN width without a reading above the tips. outline_xy: the
    convex hull whose width that is, (N, 2) x, y in the silhouette's plane frame
    (sil.T_base_plane), metres; empty without a width."""

    width_m: float
    uncertainty_m: float
    pixel_m: float
    outline_xy: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)), compare=False,
                                   repr=False)


def seen_width(frame: RGBDFrame, mask: np.ndarray | ObjectMask, sil: Silhouette, *,
               by_colour: bool = True) -> SeenWidth:
    """The narrowest width (metres) of the object under ``mask`` at ``sil``'s fingertip plane,
    from the camera's readings and the holes at their edge that have the object's colour (no
    filled hole, no drawing), with its uncertainty. by_colour=False: the readings alone (the
    width before 2026-11-27, for comparison)."""
    import cv2
    from scipy.spatial import ConvexHull, QhullError

    m = mask.mask if isinstance(mask, ObjectMask) else np.asarray(mask, bool)
    # within the mask's box grown by the band of holes and a few pixels of its surroundings
    # (the 3 x 3 count below sees the crop's border as 0, as it sees the frame's 0s): the same
    # pixels in the same order as over the whole frame, at a fraction of the cost
    c0, r0, bw, bh = mask.box_px if isinstance(mask, ObjectMask) else \
        cv2.boundingRect(m.view(np.uint8))
    grow = EDGE_PX + 4
    r1, c1 = min(r0 + bh + grow, m.shape[0]), min(c0 + bw + grow, m.shape[1])
    r0, c0 = max(r0 - grow, 0), max(c0 - grow, 0)
    m, depth = m[r0:r1, c0:c1], frame.depth_m[r0:r1, c0:c1]
    with np.errstate(invalid="ignore"):
        valid = depth > 0  # NaN compares False: holes stay out
    rows, cols = np.nonzero(m & valid)
    z = depth[rows, cols].astype(np.float64)
    k = frame.intrinsics
    T_plane_camera = np.linalg.inv(sil.T_base_plane) @ frame.T_base_camera
    q = k.deproject_pixels(cols + c0, rows + r0, z) @ T_plane_camera[:3, :3].T \
        + T_plane_camera[:3, 3]
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
    if not by_colour:
        return SeenWidth(_feret_min(hull), WIDTH_UNCERTAINTY_PX * pixel_m, pixel_m, hull)
    kept = np.zeros(m.shape, bool)
    kept[rows[keep], cols[keep]] = True
    below = np.zeros(m.shape, bool)
    below[rows, cols] = q[:, 2] > 0.0
    hr, hc, hz = _holes_of_the_object(frame.color[r0:r1, c0:c1], depth, valid, m, kept, below)
    if hr.size:
        at_reading = k.deproject_pixels(hc + c0, hr + r0, hz) @ T_plane_camera[:3, :3].T \
            + T_plane_camera[:3, 3]
        xy = np.concatenate([hull, _placed_inside(at_reading, T_plane_camera[:3, 3], hull)])
        hull = xy[ConvexHull(xy).vertices]
    return SeenWidth(_feret_min(hull), WIDTH_UNCERTAINTY_PX * pixel_m, pixel_m, hull)


def _holes_of_the_object(color: np.ndarray, depth: np.ndarray, valid: np.ndarray,
                         mask: np.ndarray, kept: np.ndarray, below: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The holes with a kept reading within EDGE_PX pixels and no reading below the fingertips
    within BELOW_PX, whose nearest object reading is a kept one and whose colour is the
    object's: their rows and columns in the crop, and that reading's depth (metres)."""
    import cv2

    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * EDGE_PX + 1, 2 * EDGE_PX + 1))
    near_kept = cv2.dilate(kept.view(np.uint8), disc).view(bool)
    near_below = cv2.dilate(below.view(np.uint8), cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (2 * BELOW_PX + 1, 2 * BELOW_PX + 1))).view(bool)
    hr, hc = np.nonzero(near_kept & ~near_below & ~valid)
    obj, other = mask & valid, valid & ~mask
    if hr.size == 0 or not other.any():  # no hole, or no surroundings to tell it from
        none = np.zeros(0, np.int64)
        return none, none, np.zeros(0)
    owner = _nearest(obj, hr, hc)
    # the surroundings' colour: the mean of the readings outside the mask a little further out
    size = (2 * (EDGE_PX + 3) + 1,) * 2
    n_other = cv2.boxFilter(other.view(np.uint8).astype(np.float32), -1, size,
                            normalize=False, borderType=cv2.BORDER_CONSTANT)[hr, hc]
    c_other = cv2.boxFilter(color * other[..., None].view(np.uint8), cv2.CV_32F, size,
                            normalize=False, borderType=cv2.BORDER_CONSTANT)[hr, hc]
    c_other /= np.maximum(n_other, 1.0)[:, None]
    c_obj = color[owner].astype(np.float32)
    c_hole = color[hr, hc].astype(np.float32)
    ok = kept[owner] & (n_other > 0) \
        & (_hue_cos(c_hole, c_obj) > _hue_cos(c_hole, c_other)) \
        & (_hue_cos(c_other, c_obj) < math.cos(math.radians(MIN_HUE_DEG)))
    return hr[ok], hc[ok], depth[owner][ok].astype(np.float64)


def _nearest(pixels: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """The row and column of the True pixel of ``pixels`` nearest to each (rows, cols), each
    having one within EDGE_PX pixels."""
    padded = np.pad(pixels, EDGE_PX)
    r = rows[:, None] + _OFFSETS[:, 0]
    c = cols[:, None] + _OFFSETS[:, 1]
    first = padded[r + EDGE_PX, c + EDGE_PX].argmax(axis=1)  # the offsets go nearest first
    at = np.arange(rows.size)
    return r[at, first], c[at, first]


def _hue_cos(c: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The cosine of the angle between each RGB colour ``c`` (N, 3) and its ``base`` (N, 3):
    their likeness in hue and saturation whatever the shading (a darker side of the same
    surface lies along the same ray); -1 where either is too dark to have a hue."""
    nc, nb = np.linalg.norm(c, axis=1), np.linalg.norm(base, axis=1)
    cos = (c * base).sum(axis=1) / np.maximum(nc * nb, 1e-9)
    return np.where((nc > MIN_BRIGHTNESS) & (nb > MIN_BRIGHTNESS), cos, -1.0)


def _placed_inside(at_reading: np.ndarray, camera: np.ndarray, hull: np.ndarray) -> np.ndarray:
    """Each hole's point (N, 2 of x, y, plane frame, metres) on its ray: at its nearest
    reading's height (``at_reading``, (N, 3)) or where the ray meets the fingertip plane (z = 0),
    whichever lies further inside ``hull``, the readings' convex hull (counter-clockwise)."""
    ray = at_reading - camera
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(np.abs(ray[:, 2]) > 1e-9, -camera[2] / ray[:, 2], 1.0)
    at_tips = camera + ray * t[:, None]
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)  # outward, counter-clockwise
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    offset = (hull * normals).sum(axis=1)

    def outside(p: np.ndarray) -> np.ndarray:
        return (p[:, :2] @ normals.T - offset).max(axis=1)

    return np.where((outside(at_reading) <= outside(at_tips))[:, None], at_reading,
                    at_tips)[:, :2]


def _feret_min(hull: np.ndarray) -> float:
    """The least extent (metres) of a convex polygon (N, 2) over the normals of its edges."""
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = normals[length[:, 0] > 0] / length[length[:, 0] > 0]
    proj = hull @ normals.T
    return float((proj.max(axis=0) - proj.min(axis=0)).min())
