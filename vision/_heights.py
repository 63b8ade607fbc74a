"""Depth seen along the approach: the first surface met in each silhouette pixel, and the
object's volume and centre above its support (the depth half of graspline's score)."""
from __future__ import annotations

import numpy as np

from ._kernels import fill_depth_holes, splat_depth

# Camera pixels are coarser than silhouette pixels at the usual ranges (a D435 at 0.75 m
# samples every 1.6 mm; silhouettes are drawn at 1 mm): a pixel with no sample takes the
# nearest surface of its 3 x 3 neighbours, this many times over.
FILL_PASSES = 3


def surface_depth(grid: np.ndarray, lo: np.ndarray, shape: tuple[int, int], m: float,
                  within: np.ndarray) -> np.ndarray:
    """(H, W) float32: the least depth along the approach (metres, plane coordinates) of the
    grid's samples nearest each pixel, pixel (0, 0) centred on plane point lo; holes of up to
    FILL_PASSES pixels inside ``within`` (the drawn surface) take their neighbours' least
    depth, so the surface never grows past its outline; +inf where nothing reaches."""
    return surface_depths(grid, lo, shape, m, (within,))[0]


def surface_depths(grid: np.ndarray, lo: np.ndarray, shape: tuple[int, int], m: float,
                   withins: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    """surface_depth for each of several drawn surfaces of one grid (a target at its
    fingertips and the whole of it): the samples are placed once, each surface's holes
    filled on its own copy."""
    base = np.full(shape, np.inf, np.float32)
    if grid.size == 0:
        return [base.copy() for _ in withins]
    # Numba passes (tests/vision/test_kernels.py holds them to the numpy arithmetic below,
    # surface_depth_reference): the numpy form took half of each silhouette's time
    splat_depth(np.ascontiguousarray(grid, dtype=np.float64), float(lo[0]), float(lo[1]),
                float(m), base)
    out = []
    for within in withins:
        depth = base.copy()
        fill_depth_holes(np.ascontiguousarray(within, dtype=np.bool_), FILL_PASSES, depth)
        out.append(depth)
    return out


def surface_depth_reference(grid: np.ndarray, lo: np.ndarray, shape: tuple[int, int],
                            m: float, within: np.ndarray) -> np.ndarray:
    """surface_depth in numpy (its earlier form, kept as the kernel's reference for tests)."""
    out = np.full(shape, np.inf, np.float32)
    if grid.size == 0:
        return out
    q = grid.reshape(-1, 3)
    q = q[np.isfinite(q).all(axis=1)]
    u = np.rint((q[:, 0] - lo[0]) / m).astype(np.intp)
    v = np.rint((q[:, 1] - lo[1]) / m).astype(np.intp)
    inside = (u >= 0) & (u < shape[1]) & (v >= 0) & (v < shape[0])
    np.minimum.at(out, (v[inside], u[inside]), q[inside, 2].astype(np.float32))
    for _ in range(FILL_PASSES):
        hole = np.isinf(out) & within
        if not hole.any():
            break
        out[hole] = _min3x3(out)[hole]
    return out


def _min3x3(a: np.ndarray) -> np.ndarray:
    """Each pixel's least value over its 3 x 3 neighbourhood (+inf beyond the border)."""
    p = np.pad(a, 1, constant_values=np.inf)
    h, w = a.shape
    return np.min([p[r:r + h, c:c + w] for r in range(3) for c in range(3)], axis=0)


def volume_and_centre(depth: np.ndarray, support_depth_m: float, m: float,
                      min_height_m: float = 0.002) -> tuple[float, np.ndarray]:
    """(volume, m³; centre, (column, row) pixels) of the columns between a surface-depth map
    and a support support_depth_m further along the approach: the object taken as solid
    under what the camera sees of it. Columns under min_height_m (table noise) are left out;
    (0.0, [NaN, NaN]) when none is left or the support is unknown (NaN)."""
    if not np.isfinite(support_depth_m):
        return 0.0, np.full(2, np.nan)
    h = np.where(np.isfinite(depth), support_depth_m - depth, 0.0)
    h[h < min_height_m] = 0.0
    total = float(h.sum())
    if total <= 0.0:
        return 0.0, np.full(2, np.nan)
    # the first moments from the marginal sums (no (H, W) index grids)
    centre = np.array([h.sum(axis=0, dtype=np.float64) @ np.arange(h.shape[1]) / total,
                       h.sum(axis=1, dtype=np.float64) @ np.arange(h.shape[0]) / total])
    return total * m * m, centre
