"""Numba kernels of the vision stage: per-pixel heights and depth cuts (tabletop segmenter)
and the rasterisation of a depth surface into a silhouette.

Only arithmetic lives here; ``_tabletop`` and ``_silhouette`` validate and name the outputs.
The kernels run on one thread: each is a single pass of well under a millisecond over a
640 x 480 frame, and on two shared cores numba's thread pool cost more than it saved.
tests/vision/test_kernels.py holds plain references of the same arithmetic and compares them
pixel for pixel.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True)
def height_classes(depth, rx, ry, normal, offset, grow_h, min_h, max_h, max_range, cand, seed):
    """For each pixel of depth (H, W) metres with a reading in (0, max_range]: cand =
    grow_h < height < max_h; seed = cand and height > min_h (both 0 without a reading).
    Height above the plane (normal, offset) of the point depth * (rx[u], ry[v], 1), metres.
    Outputs (H, W) uint8, overwritten."""
    h, w = depth.shape
    n0, n1, n2 = normal[0], normal[1], normal[2]
    for r in range(h):
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


@nb.njit(cache=True)
def depth_cuts(depth, cand, jump_m, jump_ratio, cut):
    """cut[r, c] = 1 for each candidate farther than some 4-neighbour candidate by more than
    max(jump_m, jump_ratio * nearer depth) (the far side of every discontinuity), else 0."""
    h, w = depth.shape
    for r in range(h):
        for c in range(w):
            out = False
            if cand[r, c]:
                z = depth[r, c]
                out = ((c + 1 < w and _jumps_to(depth, cand, z, r, c + 1, jump_m, jump_ratio))
                       or (c > 0 and _jumps_to(depth, cand, z, r, c - 1, jump_m, jump_ratio))
                       or (r + 1 < h and _jumps_to(depth, cand, z, r + 1, c, jump_m, jump_ratio))
                       or (r > 0 and _jumps_to(depth, cand, z, r - 1, c, jump_m, jump_ratio)))
            cut[r, c] = out


@nb.njit(cache=True, inline="always")
def _pixel_of(x, y, x0, y0, inv_m):
    """Continuous pixel coordinates (column, row) of plane point (x, y); centres at integers."""
    return (x - x0) * inv_m, (y - y0) * inv_m


@nb.njit(cache=True, inline="always")
def _set(out, u, v):
    """Set the pixel nearest to (u, v) when it is in the image."""
    c = math.floor(u + 0.5)
    r = math.floor(v + 0.5)
    if 0 <= r < out.shape[0] and 0 <= c < out.shape[1]:
        out[r, c] = 1


@nb.njit(cache=True)
def _triangle(out, ua, va, ub, vb, uc, vc):
    """Set every pixel whose centre lies in the triangle (edges included)."""
    area = (ub - ua) * (vc - va) - (vb - va) * (uc - ua)
    if area == 0.0:
        return
    s = 1.0 if area > 0.0 else -1.0
    c0 = max(0, math.ceil(min(ua, ub, uc)))
    c1 = min(out.shape[1] - 1, math.floor(max(ua, ub, uc)))
    r0 = max(0, math.ceil(min(va, vb, vc)))
    r1 = min(out.shape[0] - 1, math.floor(max(va, vb, vc)))
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            e0 = s * ((ub - ua) * (r - va) - (vb - va) * (c - ua))
            e1 = s * ((uc - ub) * (r - vb) - (vc - vb) * (c - ub))
            e2 = s * ((ua - uc) * (r - vc) - (va - vc) * (c - uc))
            if e0 >= 0.0 and e1 >= 0.0 and e2 >= 0.0:
                out[r, c] = 1


@nb.njit(cache=True)
def _segment(out, ua, va, ub, vb):
    """Set the pixels nearest to points every half pixel along a segment."""
    n = int(math.ceil(2.0 * max(abs(ub - ua), abs(vb - va)))) + 1
    for i in range(n + 1):
        t = i / n
        _set(out, ua + t * (ub - ua), va + t * (vb - va))


@nb.njit(cache=True)
def rasterise_surface(grid, tip, x0, y0, inv_m, max_step, out):
    """Draw into out (H, W) uint8 the part of a sampled surface at depth <= tip, seen along z.

    grid : (h, w, 3) plane coordinates (x, y, depth along the approach), metres, of the
    samples of an image-grid of pixels; NaN where there is none. Every sample at depth
    <= tip sets its nearest pixel; every pair of image neighbours, and both triangles of every
    2 x 2 block, whose samples are all at depth <= tip and no more than max_step apart in
    (x, y) (a larger gap is a step in depth, not surface) set the pixels they cover. Pixel
    (0, 0) is centred on plane point (x0, y0); inv_m = pixels per metre.
    """
    h, w = grid.shape[0], grid.shape[1]
    ok = np.zeros((h, w), np.bool_)
    u = np.empty((h, w))
    v = np.empty((h, w))
    for r in range(h):
        for c in range(w):
            if grid[r, c, 2] <= tip:  # False for NaN
                ok[r, c] = True
                u[r, c], v[r, c] = _pixel_of(grid[r, c, 0], grid[r, c, 1], x0, y0, inv_m)
                _set(out, u[r, c], v[r, c])
    step = max_step * inv_m
    for r in range(h):
        for c in range(w):
            if not ok[r, c]:
                continue
            for dr, dc in ((0, 1), (1, 0)):
                r2, c2 = r + dr, c + dc
                if r2 < h and c2 < w and ok[r2, c2] and \
                        max(abs(u[r2, c2] - u[r, c]), abs(v[r2, c2] - v[r, c])) <= step:
                    _segment(out, u[r, c], v[r, c], u[r2, c2], v[r2, c2])
            if r + 1 < h and c + 1 < w and ok[r, c + 1] and ok[r + 1, c] and ok[r + 1, c + 1]:
                span = max(abs(u[r + 1, c + 1] - u[r, c]), abs(v[r + 1, c + 1] - v[r, c]),
                           abs(u[r + 1, c] - u[r, c + 1]), abs(v[r + 1, c] - v[r, c + 1]))
                if span <= step:
                    _triangle(out, u[r, c], v[r, c], u[r, c + 1], v[r, c + 1],
                              u[r + 1, c + 1], v[r + 1, c + 1])
                    _triangle(out, u[r, c], v[r, c], u[r + 1, c + 1], v[r + 1, c + 1],
                              u[r + 1, c], v[r + 1, c])


@nb.njit(cache=True)
def plane_grid(depth, mask, rx, ry, M, b, grid, steps):
    """Plane coordinates of masked pixels and the squared distances of image neighbours.

    depth, mask : (h, w) crops (metres, bool); rx, ry : their pixels' normalised image
    coordinates. grid (h, w, 3) gets q = depth (M[:, 0] rx + M[:, 1] ry + M[:, 2]) + b where
    masked, NaN elsewhere; steps (>= 2 h w) gets the squared (x, y) distances of masked
    horizontal and vertical neighbours. Returns how many steps were written.
    """
    h, w = depth.shape
    for r in range(h):
        for c in range(w):
            if mask[r, c]:
                z = depth[r, c]
                for k in range(3):
                    grid[r, c, k] = z * (M[k, 0] * rx[c] + M[k, 1] * ry[r] + M[k, 2]) + b[k]
            else:
                for k in range(3):
                    grid[r, c, k] = np.nan
    n = 0
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                continue
            if c + 1 < w and mask[r, c + 1]:
                steps[n] = (grid[r, c + 1, 0] - grid[r, c, 0]) ** 2 + (grid[r, c + 1, 1] - grid[r, c, 1]) ** 2
                n += 1
            if r + 1 < h and mask[r + 1, c]:
                steps[n] = (grid[r + 1, c, 0] - grid[r, c, 0]) ** 2 + (grid[r + 1, c, 1] - grid[r, c, 1]) ** 2
                n += 1
    return n


@nb.njit(cache=True)
def plane_inlier_counts(points, normals, offsets, tol, counts):
    """counts[k] = how many of points (M, 3) lie within tol of plane k (normals (K, 3) unit,
    offsets (K,): n . p + offset = signed distance), metres."""
    for k in range(normals.shape[0]):
        n0, n1, n2, off = normals[k, 0], normals[k, 1], normals[k, 2], offsets[k]
        c = 0
        for i in range(points.shape[0]):
            if abs(n0 * points[i, 0] + n1 * points[i, 1] + n2 * points[i, 2] + off) < tol:
                c += 1
        counts[k] = c
