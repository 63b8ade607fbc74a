"""Boundary-pixel normals of a binary silhouette (Tan eqs. 6-8)."""
from __future__ import annotations

import numba as nb
import numpy as np


def disc_weights(m: int) -> np.ndarray:
    """(m, m) float64 weights that turn the square window into a disc of diameter m.

    The paper asks for a circular neighbourhood without giving the weights; we use the
    anti-aliased disc w = clip(m/2 - distance, 0, 1), so that pixels on the rim count in
    proportion to how far inside the circle they lie and no direction is favoured.
    """
    h = m // 2
    dy, dx = np.mgrid[-h:h + 1, -h:h + 1].astype(np.float64)
    return np.clip(m / 2.0 - np.hypot(dx, dy), 0.0, 1.0)


@nb.njit(cache=True, nogil=True)
def contact_normal(sil: np.ndarray, row: int, col: int, weights: np.ndarray) -> tuple:
    """Outward unit normal (n_col, n_row) of the silhouette at pixel (row, col), image axes.

    The negated, normalised sum of the weighted vectors from the pixel to its non-vacant
    neighbours in an m x m window (Tan eqs. 6-8). Pixels outside the image are vacant.
    Returns (0.0, 0.0) where the sum vanishes (an isolated pixel, a symmetric neighbourhood).
    """
    h_img, w_img = sil.shape
    half = weights.shape[0] // 2
    sx = 0.0
    sy = 0.0
    for dy in range(-half, half + 1):
        r = row + dy
        if r < 0 or r >= h_img:
            continue
        for dx in range(-half, half + 1):
            c = col + dx
            if c < 0 or c >= w_img or sil[r, c] == 0:
                continue
            wgt = weights[dy + half, dx + half]
            sx += wgt * dx  # eq. 7: M_x0 o M_p o M_w
            sy += wgt * dy  # eq. 8
    norm = np.sqrt(sx * sx + sy * sy)
    if norm < 1e-12:
        return 0.0, 0.0
    return -sx / norm, -sy / norm  # eq. 6


@nb.njit(cache=True, nogil=True)
def _is_boundary(sil: np.ndarray, row: int, col: int) -> bool:
    """True for an object pixel with a vacant (or off-image) 8-neighbour."""
    h_img, w_img = sil.shape
    if sil[row, col] == 0:
        return False
    for dy in range(-1, 2):
        r = row + dy
        for dx in range(-1, 2):
            c = col + dx
            if r < 0 or r >= h_img or c < 0 or c >= w_img or sil[r, c] == 0:
                return True
    return False


@nb.njit(cache=True, parallel=True)
def _normal_field_kernel(sil, weights, nx, ny):
    h_img, w_img = sil.shape
    for row in nb.prange(h_img):
        for col in range(w_img):
            if _is_boundary(sil, row, col):
                a, b = contact_normal(sil, row, col, weights)
                nx[row, col] = a
                ny[row, col] = b


def normal_field(sil: np.ndarray, m: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Normals (n_col, n_row) at every boundary pixel of a uint8 silhouette, zero elsewhere.

    Every contact the kernel can find is a boundary pixel: the sample before it on its grasp
    line is at most one pixel away in each axis and is vacant. So one pass over the image
    replaces a 7 x 7 window per contact per candidate.
    """
    nx = np.zeros(sil.shape, dtype=np.float64)
    ny = np.zeros(sil.shape, dtype=np.float64)
    _normal_field_kernel(sil, disc_weights(m), nx, ny)
    return nx, ny
