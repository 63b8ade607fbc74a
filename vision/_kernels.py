"""Numba kernels of the tabletop segmenter: per-pixel heights and depth cuts in one pass each.

Only arithmetic lives here; ``_tabletop`` validates and names the outputs. Each prange
iteration writes only its own row of every output (no races). tests/vision/test_kernels.py
holds plain-numpy references of the same arithmetic and compares them pixel for pixel.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True)
def height_classes(depth, rx, ry, normal, offset, grow_h, min_h, max_h, max_range, cand, seed):
    """For each pixel of depth (H, W) metres with a reading in (0, max_range]: cand =
    grow_h < height < max_h; seed = cand and height > min_h (both 0 without a reading).
    Height above the plane (normal, offset) of the point depth * (rx[u], ry[v], 1), metres.
    Outputs (H, W) uint8, overwritten."""
    h, w = depth.shape
    n0, n1, n2 = normal[0], normal[1], normal[2]
    for r in nb.prange(h):
        base = n1 * ry[r] + n2
        for c in range(w):
            z = depth[r, c]
            ok = z > 0.0 and z <= max_range  # False for NaN
            if ok:
                hgt = z * (n0 * rx[c] + base) + offset
                is_cand = hgt > grow_h and hgt < max_h
                cand[r, c] = is_cand
                seed[r, c] = is_cand and hgt > min_h
            else:
                cand[r, c] = 0
                seed[r, c] = 0


@nb.njit(cache=True, inline="always")
def _jumps_to(depth, cand, z, r, c, jump_m, jump_ratio):
    """True when candidate (r, c) at depth z is farther, by more than the jump threshold at
    the nearer depth, than the candidate neighbour (r, c) of the caller."""
    if not cand[r, c]:
        return False
    q = depth[r, c]
    if z <= q:
        return False
    return z - q > max(jump_m, jump_ratio * q)


@nb.njit(cache=True, parallel=True)
def depth_cuts(depth, cand, jump_m, jump_ratio, cut):
    """cut[r, c] = 1 for each candidate farther than some 4-neighbour candidate by more than
    max(jump_m, jump_ratio * nearer depth) (the far side of every discontinuity), else 0."""
    h, w = depth.shape
    for r in nb.prange(h):
        for c in range(w):
            out = False
            if cand[r, c]:
                z = depth[r, c]
                out = ((c + 1 < w and _jumps_to(depth, cand, z, r, c + 1, jump_m, jump_ratio))
                       or (c > 0 and _jumps_to(depth, cand, z, r, c - 1, jump_m, jump_ratio))
                       or (r + 1 < h and _jumps_to(depth, cand, z, r + 1, c, jump_m, jump_ratio))
                       or (r > 0 and _jumps_to(depth, cand, z, r - 1, c, jump_m, jump_ratio)))
            cut[r, c] = out
