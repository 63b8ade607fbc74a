"""Silhouettes drawn analytically: polygons, rectangles, wedges, ellipses and rings, each
rotatable about a centre, rasterised in numpy (a pixel is object when its centre lies inside
the outline or on it). The tests and the benchmarks draw their silhouettes with these.

Coordinates are pixels: (column, row) = (x, y), pixel centres at integers; lengths are pixels
(``_px``), angles radians (``_rad``) in image axes (x right, y down, so a positive angle turns
x towards y).
"""
from __future__ import annotations

import math

import numpy as np

# How close (pixels) a pixel centre must be to the outline to count as on it: rotated vertices
# carry float rounding, and a centre exactly on an edge must not flip with it.
EPS_PX = 1e-9

__all__ = ["ellipse", "grasp_in_frame", "polygon", "rectangle", "ring", "rotate_points", "wedge"]


def rotate_points(points: np.ndarray, centre: tuple[float, float],
                  angle_rad: float) -> np.ndarray:
    """(N, 2) (column, row) points rotated by angle_rad (image axes) about centre."""
    c, s = math.cos(angle_rad), math.sin(angle_rad)
    p = np.asarray(points, np.float64) - centre
    return np.stack([c * p[:, 0] - s * p[:, 1], s * p[:, 0] + c * p[:, 1]], axis=1) + centre


def polygon(shape: tuple[int, int], points: np.ndarray) -> np.ndarray:
    """(H, W) uint8 silhouette (1 = object) of a filled simple polygon with (N, 2) (column, row)
    float vertices: the pixels whose centre is inside it or on its outline."""
    h, w = shape
    p = np.asarray(points, np.float64)
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 3 or not np.isfinite(p).all():
        raise ValueError(f"polygon: points must be (N >= 3, 2) finite (column, row) pixels, "
                         f"got shape {p.shape}")
    q = np.roll(p, -1, axis=0)
    rows = np.arange(h, dtype=np.float64)[:, None]  # one scanline per pixel row, at its centre
    x0, y0, x1, y1 = p[:, 0], p[:, 1], q[:, 0], q[:, 1]
    # Edges crossing each scanline (half-open in y, so a vertex on a scanline counts once).
    crosses = (y0 <= rows) != (y1 <= rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(crosses, x0 + (rows - y0) * (x1 - x0) / (y1 - y0), np.inf)
    x.sort(axis=1)
    n_cross = crosses.sum(axis=1)
    cols = np.arange(w, dtype=np.float64)[None, :]
    out = np.zeros((h, w), bool)
    # Inside between crossings 0-1, 2-3, ... (even-odd rule).
    for k in range(0, int(n_cross.max(initial=0)) - 1, 2):
        left, right = x[:, k:k + 1], x[:, k + 1:k + 2]
        out |= (n_cross[:, None] > k + 1) & (cols >= left - EPS_PX) & (cols <= right + EPS_PX)
    # The outline is inside too, also where a scanline only touches it (a vertex at the top or
    # bottom, a horizontal edge), which the crossings above do not see.
    lo_y, hi_y = np.minimum(y0, y1), np.maximum(y0, y1)
    near = (rows >= lo_y - EPS_PX) & (rows <= hi_y + EPS_PX)
    flat = np.abs(y1 - y0) <= EPS_PX
    with np.errstate(divide="ignore", invalid="ignore"):
        xs = np.where(near & ~flat, x0 + (rows - y0) * (x1 - x0) / (y1 - y0), np.nan)
    r, c = np.nonzero(np.abs(xs - np.round(xs)) <= EPS_PX)
    u = np.round(xs[r, c]).astype(np.int64)
    keep = (u >= 0) & (u < w)
    out[r[keep], u[keep]] = True
    for e in np.nonzero(flat)[0]:
        v = int(round(y0[e]))
        if abs(y0[e] - v) <= EPS_PX and 0 <= v < h:
            lo_x, hi_x = min(x0[e], x1[e]), max(x0[e], x1[e])
            out[v] |= (cols[0] >= lo_x - EPS_PX) & (cols[0] <= hi_x + EPS_PX)
    return out.astype(np.uint8)


def rectangle(shape: tuple[int, int], centre: tuple[float, float], width_px: float,
              height_px: float, angle_rad: float = 0.0) -> np.ndarray:
    """A width_px (along columns) x height_px rectangle, rotated by angle_rad about its
    centre."""
    cx, cy = centre
    w, h = width_px / 2, height_px / 2
    pts = np.array([[cx - w, cy - h], [cx + w, cy - h], [cx + w, cy + h], [cx - w, cy + h]])
    return polygon(shape, rotate_points(pts, centre, angle_rad))


def wedge(shape: tuple[int, int], centre: tuple[float, float], top_width_px: float,
          bottom_width_px: float, height_px: float, angle_rad: float = 0.0) -> np.ndarray:
    """A symmetric trapezoid (slanted left and right faces), rotated by angle_rad about its
    centre."""
    cx, cy = centre
    top, bottom, h = top_width_px / 2, bottom_width_px / 2, height_px / 2
    pts = np.array([[cx - top, cy - h], [cx + top, cy - h],
                    [cx + bottom, cy + h], [cx - bottom, cy + h]])
    return polygon(shape, rotate_points(pts, centre, angle_rad))


def ellipse(shape: tuple[int, int], centre: tuple[float, float], semi_x_px: float,
            semi_y_px: float, angle_rad: float = 0.0, n: int = 180) -> np.ndarray:
    """An ellipse with semi-axes along columns/rows before rotation by angle_rad, as a
    polygon of n vertices."""
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pts = np.stack([centre[0] + semi_x_px * np.cos(t), centre[1] + semi_y_px * np.sin(t)],
                   axis=1)
    return polygon(shape, rotate_points(pts, centre, angle_rad))


def ring(shape: tuple[int, int], centre: tuple[float, float], outer_r_px: float,
         inner_r_px: float) -> np.ndarray:
    """An annulus of outer and inner radius: a mug rim seen from above."""
    return (ellipse(shape, centre, outer_r_px, outer_r_px)
            & (1 - ellipse(shape, centre, inner_r_px, inner_r_px)))


def grasp_in_frame(centre: tuple[float, float], angle_rad: float, dx_px: float, dy_px: float,
                   theta_rad: float) -> tuple[float, float, float]:
    """(x, y, θ) of a grasp given relative to a shape's frame (dx_px, dy_px from its centre,
    theta_rad), placed for the shape rotated by angle_rad about centre."""
    (x, y), = rotate_points(np.array([[centre[0] + dx_px, centre[1] + dy_px]]), centre,
                            angle_rad)
    return x, y, theta_rad + angle_rad
