"""Gaussian-smoothed silhouette, for placing outlines between pixels."""
from __future__ import annotations

import math

import numba as nb
import numpy as np


def gaussian_taps(sigma_px: float) -> np.ndarray:
    """Normalised 1-D Gaussian taps of standard deviation sigma_px, radius ceil(3σ)."""
    radius = max(1, int(math.ceil(3.0 * sigma_px)))
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    taps = np.exp(-0.5 * (k / sigma_px) ** 2)
    return taps / taps.sum()


@nb.njit(cache=True, parallel=True)
def _separable(src, taps, tmp, out):
    h, w = src.shape
    rad = taps.shape[0] // 2
    for r in nb.prange(h):  # along rows; off-image pixels are background (0)
        for c in range(w):
            acc = 0.0
            for t in range(-rad, rad + 1):
                cc = c + t
                if 0 <= cc < w:
                    acc += taps[t + rad] * src[r, cc]
            tmp[r, c] = acc
    for r in nb.prange(h):  # then along columns
        for c in range(w):
            acc = 0.0
            for t in range(-rad, rad + 1):
                rr = r + t
                if 0 <= rr < h:
                    acc += taps[t + rad] * tmp[rr, c]
            out[r, c] = acc


def smoothed_silhouette(sil: np.ndarray, sigma_px: float) -> np.ndarray:
    """(H, W) float64 Gaussian blur of a uint8 0/1 silhouette; its 0.5 level is the outline."""
    tmp = np.empty(sil.shape, np.float64)
    out = np.empty(sil.shape, np.float64)
    _separable(sil, gaussian_taps(sigma_px), tmp, out)
    return out
