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
def depth_cuts(depth, cand, jump_m, jump_ratio, cut, rows, cols):
    """cut[r, c] = 1 for each candidate farther than some 4-neighbour candidate by more than
    max(jump_m, jump_ratio * nearer depth) (the far side of every discontinuity), else 0.
    The cut pixels' coordinates go to rows, cols (each >= H W long), in row-major order;
    returns how many there are."""
    h, w = depth.shape
    n = 0
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
            if out:
                rows[n] = r
                cols[n] = c
                n += 1
    return n


@nb.njit(cache=True)
def component_stats(labels, depth, seed, n_labels, pixel_area):
    """(area, seeds, box) per label: the sum over its pixels of depth² * pixel_area (metres²
    seen face-on; pixel_area = 1 / (fx fy)), how many of its pixels are seeds, and its
    bounding box (row0, row1, col0, col1), end exclusive."""
    area = np.zeros(n_labels)
    seeds = np.zeros(n_labels, np.int64)
    box = np.empty((n_labels, 4), np.int64)
    box[:, 0] = box[:, 2] = labels.shape[0] + labels.shape[1]
    box[:, 1] = box[:, 3] = 0
    for r in range(labels.shape[0]):
        for c in range(labels.shape[1]):
            k = labels[r, c]
            if k > 0:
                z = depth[r, c]
                area[k] += z * z * pixel_area
                if seed[r, c]:
                    seeds[k] += 1
                box[k, 0] = min(box[k, 0], r)
                box[k, 1] = max(box[k, 1], r + 1)
                box[k, 2] = min(box[k, 2], c)
                box[k, 3] = max(box[k, 3], c + 1)
    return area, seeds, box


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
    <= tip sets its nearest pixel; both triangles of every 2 x 2 block of such samples set
    the pixels whose centres they cover, and every pair of image neighbours that is not
    between two drawn blocks (the outline, and lone strips) sets the pixels nearest to it,
    unless their samples are more than max_step apart along x or y (a larger gap is a
    step in depth, not surface). Pixel (0, 0) is centred on plane point (x0, y0); inv_m =
    pixels per metre.
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
    # drawn[r, c]: the block with top-left sample (r, c) was drawn; padded by one all round.
    drawn = np.zeros((h + 1, w + 1), np.bool_)
    for r in range(h - 1):
        for c in range(w - 1):
            if ok[r, c] and ok[r, c + 1] and ok[r + 1, c] and ok[r + 1, c + 1]:
                span = max(abs(u[r + 1, c + 1] - u[r, c]), abs(v[r + 1, c + 1] - v[r, c]),
                           abs(u[r + 1, c] - u[r, c + 1]), abs(v[r + 1, c] - v[r, c + 1]))
                if span <= step:
                    _triangle(out, u[r, c], v[r, c], u[r, c + 1], v[r, c + 1],
                              u[r + 1, c + 1], v[r + 1, c + 1])
                    _triangle(out, u[r, c], v[r, c], u[r + 1, c + 1], v[r + 1, c + 1],
                              u[r + 1, c], v[r + 1, c])
                    drawn[r + 1, c + 1] = True
    for r in range(h):
        for c in range(w):
            if not ok[r, c]:
                continue
            # pair to the right: edge of blocks (r - 1, c) and (r, c)
            if c + 1 < w and ok[r, c + 1] and not (drawn[r, c + 1] and drawn[r + 1, c + 1]) and \
                    max(abs(u[r, c + 1] - u[r, c]), abs(v[r, c + 1] - v[r, c])) <= step:
                _segment(out, u[r, c], v[r, c], u[r, c + 1], v[r, c + 1])
            # pair below: edge of blocks (r, c - 1) and (r, c)
            if r + 1 < h and ok[r + 1, c] and not (drawn[r + 1, c] and drawn[r + 1, c + 1]) and \
                    max(abs(u[r + 1, c] - u[r, c]), abs(v[r + 1, c] - v[r, c])) <= step:
                _segment(out, u[r, c], v[r, c], u[r + 1, c], v[r + 1, c])


@nb.njit(cache=True)
def grid_window(grid, x0, y0, inv_m, h, w, pad):
    """(row0, row1, col0, col1), end exclusive: the rows and columns of an (gh, gw, 3) grid
    of plane samples (NaN: none) that hold every finite sample whose pixel (pixel (0, 0)
    centred on plane point (x0, y0), inv_m pixels a metre) lies within pad pixels of an
    h x w image, grown by one row and column each way (within the grid); all 0 when none
    does."""
    gh, gw = grid.shape[0], grid.shape[1]
    r0, r1, c0, c1 = gh, -1, gw, -1
    for r in range(gh):
        for c in range(gw):
            x, y, z = grid[r, c, 0], grid[r, c, 1], grid[r, c, 2]
            if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
                continue
            u, v = _pixel_of(x, y, x0, y0, inv_m)
            if -pad <= u <= w - 1 + pad and -pad <= v <= h - 1 + pad:
                r0, r1, c0, c1 = min(r0, r), max(r1, r), min(c0, c), max(c1, c)
    if r1 < 0:
        return 0, 0, 0, 0
    return max(r0 - 1, 0), min(r1 + 2, gh), max(c0 - 1, 0), min(c1 + 2, gw)


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
                dx, dy = grid[r, c + 1, 0] - grid[r, c, 0], grid[r, c + 1, 1] - grid[r, c, 1]
                steps[n] = dx * dx + dy * dy
                n += 1
            if r + 1 < h and mask[r + 1, c]:
                dx, dy = grid[r + 1, c, 0] - grid[r, c, 0], grid[r + 1, c, 1] - grid[r, c, 1]
                steps[n] = dx * dx + dy * dy
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


@nb.njit(cache=True)
def plane_moments(points, normal, offset, tol):
    """(count, centroid (3,), scatter (3, 3)) of the points (N, 3) within tol of the plane
    (normal, offset), metres: what a least-squares plane fit of the inliers needs."""
    n = 0
    s = np.zeros(3)
    for i in range(points.shape[0]):
        p0, p1, p2 = points[i, 0], points[i, 1], points[i, 2]
        if abs(normal[0] * p0 + normal[1] * p1 + normal[2] * p2 + offset) < tol:
            n += 1
            s[0] += p0
            s[1] += p1
            s[2] += p2
    c = s / max(n, 1)
    S = np.zeros((3, 3))
    for i in range(points.shape[0]):
        p0, p1, p2 = points[i, 0], points[i, 1], points[i, 2]
        if abs(normal[0] * p0 + normal[1] * p1 + normal[2] * p2 + offset) < tol:
            d0, d1, d2 = p0 - c[0], p1 - c[1], p2 - c[2]
            S[0, 0] += d0 * d0
            S[0, 1] += d0 * d1
            S[0, 2] += d0 * d2
            S[1, 1] += d1 * d1
            S[1, 2] += d1 * d2
            S[2, 2] += d2 * d2
    S[1, 0], S[2, 0], S[2, 1] = S[0, 1], S[0, 2], S[1, 2]
    return n, c, S


@nb.njit(cache=True)
def reassign_cuts(labels, depth, rows, cols, jump_m, jump_ratio, passes, steep_passes):
    """Give cut pixels (rows, cols) the label of their labelled 4-neighbour nearest in depth;
    labels (H, W) int32 in place. The first passes take only neighbours within the jump
    threshold max(jump_m, jump_ratio * depth); the steep passes take the nearest whatever the
    step. Each pass reads the labels as the previous pass left them (no order dependence)."""
    h, w = labels.shape
    n = rows.size
    todo = np.ones(n, np.bool_)
    new = np.zeros(n, np.int32)
    for k in range(passes + steep_passes):
        changed = 0
        for i in range(n):
            if not todo[i]:
                continue
            r, c = rows[i], cols[i]
            z = depth[r, c]
            tol = max(jump_m, jump_ratio * z) if k < passes else np.inf
            best, best_dz = 0, np.inf
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                r2, c2 = r + dr, c + dc
                if 0 <= r2 < h and 0 <= c2 < w and labels[r2, c2] > 0:
                    dz = abs(depth[r2, c2] - z)
                    if dz <= tol and dz < best_dz:
                        best, best_dz = labels[r2, c2], dz
            new[i] = best
        for i in range(n):
            if todo[i] and new[i] > 0:
                labels[rows[i], cols[i]] = new[i]
                todo[i] = False
                changed += 1
        if changed == 0 and k >= passes:
            return


@nb.njit(cache=True)
def claim_holes(own, valid, max_steps, out):
    """out (h, w) bool: the pixels without a reading whose nearest readings (4-connected
    steps, at most max_steps, through pixels without one) are own's; ties go to the others.

    own, valid : (h, w) bool. Grown a layer a step from the readings, reading the previous
    layer only, so the result does not depend on the scan order.
    """
    h, w = own.shape
    # owner: 1 the object's, 0 someone else's, -1 not reached yet; the unreached pixels,
    # row-major, are all a layer visits (a pass over the box per layer cost most of it)
    owner = np.empty((h, w), np.int8)
    hr = np.empty(h * w, np.int64)
    hc = np.empty(h * w, np.int64)
    n_h = 0
    for r in range(h):
        for c in range(w):
            out[r, c] = False
            if valid[r, c]:
                owner[r, c] = 1 if own[r, c] else 0
            else:
                owner[r, c] = -1
                hr[n_h] = r
                hc[n_h] = c
                n_h += 1
    got = np.empty(n_h, np.int8)
    for _ in range(max_steps):
        grew = False
        for k in range(n_h):  # read the previous layer only
            r, c = hr[k], hc[k]
            mine, theirs = 0, 0
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                r2, c2 = r + dr, c + dc
                if 0 <= r2 < h and 0 <= c2 < w:
                    o = owner[r2, c2]
                    if o == 1:
                        mine += 1
                    elif o == 0:
                        theirs += 1
            got[k] = -1
            if mine + theirs > 0:
                got[k] = 1 if mine > theirs else 0
                grew = True
        if not grew:
            break
        left = 0
        for k in range(n_h):  # then write the layer, keeping the pixels still unreached
            if got[k] >= 0:
                owner[hr[k], hc[k]] = got[k]
            else:
                hr[left] = hr[k]
                hc[left] = hc[k]
                left += 1
        n_h = left
    for r in range(h):
        for c in range(w):
            out[r, c] = owner[r, c] == 1 and not valid[r, c]


@nb.njit(cache=True)
def extent_above(grid, tip):
    """(count, mean x, mean y, min x, min y, max x, max y) of the samples of grid (h, w, 3)
    at depth <= tip (NaN samples never are), metres."""
    n = 0
    sx = sy = 0.0
    x0 = y0 = np.inf
    x1 = y1 = -np.inf
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            if grid[r, c, 2] <= tip:
                x, y = grid[r, c, 0], grid[r, c, 1]
                n += 1
                sx += x
                sy += y
                x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
    return n, sx / max(n, 1), sy / max(n, 1), x0, y0, x1, y1


@nb.njit(cache=True)
def fill_from_neighbours(depth, mask, valid, out):
    """out (h, w) float32: depth where mask and valid; masked pixels without a reading take the
    mean depth of their 4-neighbours filled in the previous layer, layer after layer from the
    readings inwards (through masked pixels only); NaN where nothing reaches or off the mask.
    Returns how many masked pixels stay unfilled."""
    h, w = depth.shape
    # the unfilled masked pixels, row-major: each layer visits them only (a pass over the
    # whole box per layer cost most of a neighbours' mask spanning the table)
    hr = np.empty(h * w, np.int64)
    hc = np.empty(h * w, np.int64)
    n_h = 0
    for r in range(h):
        for c in range(w):
            if mask[r, c] and valid[r, c]:
                out[r, c] = depth[r, c]
            else:
                out[r, c] = np.nan
                if mask[r, c]:
                    hr[n_h] = r
                    hc[n_h] = c
                    n_h += 1
    vals = np.empty(n_h)
    grows = np.empty(n_h, np.bool_)
    while n_h > 0:
        grew = 0
        for k in range(n_h):  # read the previous layer only
            r, c = hr[k], hc[k]
            s, n = 0.0, 0
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                r2, c2 = r + dr, c + dc
                if 0 <= r2 < h and 0 <= c2 < w:
                    v = out[r2, c2]
                    if v == v:
                        s += v
                        n += 1
            grows[k] = n > 0
            if n > 0:
                vals[k] = s / n
                grew += 1
        if grew == 0:
            break
        left = 0
        for k in range(n_h):  # then write the layer, keeping the pixels still unfilled
            if grows[k]:
                out[hr[k], hc[k]] = vals[k]
            else:
                hr[left] = hr[k]
                hc[left] = hc[k]
                left += 1
        n_h = left
    return n_h


@nb.njit(cache=True)
def splat_depth(grid, lo_x, lo_y, m, out):
    """out (H, W) float32, filled with +inf by the caller: the least depth (grid[..., 2],
    metres, as float32) of the (h, w, 3) grid's finite samples nearest each pixel, pixel
    (0, 0) centred on plane point (lo_x, lo_y), m metres a pixel."""
    gh, gw = grid.shape[0], grid.shape[1]
    H, W = out.shape
    for i in range(gh):
        for j in range(gw):
            x, y, z = grid[i, j, 0], grid[i, j, 1], grid[i, j, 2]
            if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
                continue
            u = int(np.rint((x - lo_x) / m))
            v = int(np.rint((y - lo_y) / m))
            if 0 <= u < W and 0 <= v < H:
                zf = np.float32(z)
                if zf < out[v, u]:
                    out[v, u] = zf


@nb.njit(cache=True)
def fill_depth_holes(within, passes, out):
    """Up to ``passes`` times, the +inf pixels of out (H, W) float32 inside ``within`` (H, W)
    bool take the least value of their 3 x 3 neighbourhood as it was before the pass (+inf
    beyond the border), stopping once none is left; in place."""
    H, W = out.shape
    prev = np.empty_like(out)
    for _ in range(passes):
        any_hole = False
        for r in range(H):
            for c in range(W):
                prev[r, c] = out[r, c]
                if within[r, c] and math.isinf(out[r, c]):
                    any_hole = True
        if not any_hole:
            break
        for r in range(H):
            for c in range(W):
                if not (within[r, c] and math.isinf(prev[r, c])):
                    continue
                best = np.float32(np.inf)
                for r2 in range(max(r - 1, 0), min(r + 2, H)):
                    for c2 in range(max(c - 1, 0), min(c + 2, W)):
                        if prev[r2, c2] < best:
                            best = prev[r2, c2]
                out[r, c] = best
