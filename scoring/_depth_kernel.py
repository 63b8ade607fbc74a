"""The batched Numba kernel of the depth terms (``_physical``): one pass per candidate.

Only arithmetic lives here; the jaw, the view and the thresholds reach the kernel as a
float64 vector indexed by the named constants below (``prm[Q_STROKE_M]``), filled by
``_physical.write_physical_terms``; ``_physical``'s docstring names the terms and says what
each one means. The kernel
reads the candidates it is given by index (``idx``) from the search's own arrays and writes
each term into the output arrays at that index: no gather of a batch's evaluated candidates
before it, no scatter after it, and no array allocated per candidate (the profile fit's
samples live in a scratch row per chunk of candidates, as the score kernel's do).

The terms were numpy code around two kernels before; this one computes them in float64 in
the same order and stores float32, and gives the same bytes in every field (compared on 152
batches of random candidates on eight cell tables). ``error_model="numpy"``: a division by
zero gives inf or NaN as numpy's does, not an exception.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

# the finger bodies' band and the palm's are sampled every BODY_STEP_PX across and along (and
# at their edges): a thing thinner than that under a finger is not one the arm would stop on
BODY_STEP_PX = 2

# prm : (N_PARAMS,) float64 (lengths in pixels or metres as named)
Q_HALF_R = 0             # half the open width, px
Q_BODY_PX = 1            # a finger body's depth behind its pad plus the margin, px
Q_PROBE_PX = 2           # the side's height is read this far in from a contact, px
Q_PALM_M = 3             # anything this high above the fingertips under the palm lands on it (inf: none)
Q_M_PER_PX = 4           # metres per pixel
Q_PAD_LENGTH_M = 5       # contact heights are capped at the pad's length
Q_MIN_CONTACT_M = 6      # contact height scoring 0
Q_CONTACT_SPAN_M = 7     # full_contact_m - min_contact_m
Q_ABOVE_WIDEST_M = 8     # an undercut beyond this puts the contact above the widest section
Q_STROKE_M = 9           # the jaw's stroke
Q_TILT_HI_RAD = 10       # atan(μ) - tilt_margin_zero_rad: a lean scoring 0
Q_TILT_SPAN_RAD = 11     # max(tilt_margin_full - tilt_margin_zero, 1e-9)
Q_WEIGHT_N = 12          # the object's weight M g (NaN: unknown mass, no torque term)
Q_TAU_PER_M_NM = 13      # 2 μ F: the pads' torsional friction per metre of mean patch radius
Q_PAD_WIDTH_PX = 14      # the pad's width across the closing direction, px
Q_PROFILE_PX = 15        # the tilt profile is read this far in from each contact, px
Q_FIT_TOL_PX = 16        # a profile further than this (RMS, px) from an arc is no rounded side
Q_CENTRE_COL = 17        # the mass centre, px (NaN: unknown)
Q_CENTRE_ROW = 18
Q_BELOW_PX = 19          # the surface under the fingertips is read this far out from a contact, px
Q_BELOW_REACH_M = 20     # ... and meets the pad when it reaches within this of their plane
Q_LEDGE_RAD = 21         # a lean beyond this is a ledge under the pad, not a side it presses
Q_BAND_TOL_PX = 22       # a pad's line meeting the object this close inwards of the primary touches
Q_SWING_LEVER_M = 23     # a grasp this far off the mass centre scores 0 on the swing term
N_PARAMS = 24


@nb.njit(cache=True, inline="always")
def _hit(image, px, py) -> bool:
    """Whether pixel (px, py) (rounded) is inside image and set."""
    c = int(np.floor(px + 0.5))
    r = int(np.floor(py + 0.5))
    return 0 <= r < image.shape[0] and 0 <= c < image.shape[1] and image[r, c] != 0


@nb.njit(cache=True, inline="always")
def _side_height(height, cx, cy, ux, uy, probe_px):
    """The highest surface within probe_px inwards of contact (cx, cy) along (ux, uy);
    NaN where unseen."""
    best = -np.inf
    n = max(1, int(probe_px))
    for k in range(n + 1):
        c = int(np.floor(cx + k * ux + 0.5))
        r = int(np.floor(cy + k * uy + 0.5))
        if 0 <= r < height.shape[0] and 0 <= c < height.shape[1]:
            v = height[r, c]
            if v == v:
                best = max(best, v)
    return best if best > -np.inf else np.nan


@nb.njit(cache=True, inline="always")
def _line_pixel(cx, cy, ux, uy, k, off):
    """(row, column) of the pixel k steps along (ux, uy) from (cx, cy) on the grasp line
    off pixels across it (rounded to the nearest pixel; may lie outside an image)."""
    row = int(np.floor(cy + k * uy + off * ux + 0.5))
    return row, int(np.floor(cx + k * ux - off * uy + 0.5))


@nb.njit(cache=True, inline="always")
def _read(image, row, col):
    """image[row, col]; NaN outside the image."""
    if 0 <= row < image.shape[0] and 0 <= col < image.shape[1]:
        return image[row, col]
    return np.nan


@nb.njit(cache=True, inline="always")
def _undercut(footprint, cx, cy, ux, uy, limit_px):
    """How far (pixels) the object's whole footprint runs on outwards from contact (cx, cy)
    along (ux, uy): the part of it under the fingertip plane that the pad cannot reach."""
    for k in range(1, int(limit_px) + 1):
        if not _hit(footprint, cx + k * ux, cy + k * uy):
            return k - 1.0
    return limit_px


@nb.njit(cache=True, inline="always")
def _wedge_run(footprint, x, y, c, s, lcol, lrow, rcol, rrow, width, offsets, limit_px,
               above_px):
    """The widest section (pixels, 0 if none) the pads would have to reach around on the
    pad's grasp lines: on each line, read outwards from the two contacts' places on it, the
    whole footprint running on more than above_px beyond both (a rounded section under them;
    a part running on beyond one side only, a mug's handle, is no such section). A pad
    straddling a lying can's end meets the can above its widest section on the lines over its
    body, though its middle line leaves at a corner."""
    a_l = (lcol - x) * c + (lrow - y) * s
    a_r = (rcol - x) * c + (rrow - y) * s
    k0 = np.floor(above_px) + 1.0  # the first pixel out that must be footprint on both sides
    widest = 0.0
    for i in range(offsets.shape[0]):
        ox = x - offsets[i] * s
        oy = y + offsets[i] * c
        lx, ly = ox + a_l * c, oy + a_l * s
        rx, ry = ox + a_r * c, oy + a_r * s
        # most lines end at a wall: two reads each side decide it
        if not (_hit(footprint, lx, ly) and _hit(footprint, rx, ry)
                and _hit(footprint, lx - k0 * c, ly - k0 * s)
                and _hit(footprint, rx + k0 * c, ry + k0 * s)):
            continue
        u_l = _undercut(footprint, lx, ly, -c, -s, limit_px)
        u_r = _undercut(footprint, rx, ry, c, s, limit_px)
        if min(u_l, u_r) > above_px:
            widest = max(widest, width + u_l + u_r)
    return widest


@nb.njit(cache=True, inline="always")
def _grid_inside(rows, cols, cx, cy, ux, uy, n, off_lo, off_hi):
    """Whether every sample (cx + k ux - off uy, cy + k uy + off ux), k in 1..n, off in
    [off_lo, off_hi], rounds to a pixel inside a rows x cols image. Each coordinate is
    computed as the profile computes it, a chain of correctly rounded operations monotone
    in k and in off, so its extremes lie at the grid's corners."""
    for k in (1, n):
        for off in (off_lo, off_hi):
            col = cx + k * ux - off * uy + 0.5
            row = cy + k * uy + off * ux + 0.5
            if not (0.0 <= col < cols and 0.0 <= row < rows):
                return False
    return True


@nb.njit(cache=True, error_model="numpy")
def _arc_fit(height, cx, cy, ux, uy, offsets, n_px, tol_px, m, xs, zs):
    """(a, t), pixels: the circular arc through contact (cx, cy) fitted to the heights
    (metres above the fingertips' plane) seen inwards along (ux, uy) for up to n_px pixels,
    each distance's heights averaged over the grasp lines (offsets across the finger,
    pixels, ascending; one line's depth is too noisy). Where every sample lies in the image
    (_grid_inside) the reads skip their bounds tests. An arc whose centre lies a inwards and
    t under the plane rises as z(x) = sqrt(t² + 2 a x - x²) - t, so 2 a x - 2 t z = x² + z²:
    (a, t) is its least-squares fit (any radius: a lying can's section or a banana's rounded
    corner). (NaN, NaN) with fewer than 3 distances seen, a centre not inwards, or an arc
    further than tol_px (RMS) from the heights: not a rounded side. xs, zs : scratch of at
    least int(n_px) entries (the samples, for the fit's error)."""
    n = int(n_px)
    sxx = sxz = szz = bx = bz = 0.0
    k_n = 0
    inside = n >= 1 and _grid_inside(height.shape[0], height.shape[1], cx, cy, ux, uy,
                                     n, offsets[0], offsets[-1])
    for k in range(1, n + 1):
        total = 0.0
        seen = 0
        if inside:
            ak = cx + k * ux
            bk = cy + k * uy
            for off in offsets:
                v = height[np.uint64(bk + off * ux + 0.5), np.uint64(ak - off * uy + 0.5)]
                if v == v:
                    total += v
                    seen += 1
        else:
            for off in offsets:
                row, col = _line_pixel(cx, cy, ux, uy, k, off)
                v = _read(height, row, col)
                if v == v:
                    total += v
                    seen += 1
        if seen == 0:
            continue
        x, z = float(k), total / seen / m
        xs[k_n], zs[k_n] = x, z
        k_n += 1
        sxx += x * x
        sxz += x * z
        szz += z * z
        bx += x * (x * x + z * z)
        bz += z * (x * x + z * z)
    if k_n < 3:
        return np.nan, np.nan
    # normal equations of [2x, -2z] (a, t) = x² + z²
    det = sxx * szz - sxz * sxz
    if det <= 1e-12:
        return np.nan, np.nan
    a = (szz * bx - sxz * bz) / (2.0 * det)
    t = (sxz * bx - sxx * bz) / (2.0 * det)
    if not a > 0.0:
        return np.nan, np.nan
    err = 0.0
    for i in range(k_n):
        q = t * t + 2.0 * a * xs[i] - xs[i] * xs[i]
        d = zs[i] - (np.sqrt(max(q, 0.0)) - t)
        err += d * d
    if np.sqrt(err / k_n) > tol_px:
        return np.nan, np.nan
    return a, t


@nb.njit(cache=True, error_model="numpy")
def _side_lean(height, cx, cy, ux, uy, offsets, n_px, tol_px, m, xs, zs):
    """Radians: how far the normal of the side met at contact (cx, cy) leans out of the
    horizontal, from the arc _arc_fit fits to its heights (arguments as there): atan(t / a).
    0 when t <= 0 (a wall: the fit puts the centre above the plane; or a pinch at or under
    the widest point); NaN where the heights are no arc (not a rounded side)."""
    a, t = _arc_fit(height, cx, cy, ux, uy, offsets, n_px, tol_px, m, xs, zs)
    if not t == t:
        return np.nan
    return np.arctan2(t, a) if t > 0.0 else 0.0


@nb.njit(cache=True, inline="always")
def _median(buf, n):
    """The median of buf[:n] (n >= 1), which it sorts in place (insertion sort: n is a
    finger's few grasp lines)."""
    for i in range(1, n):
        v = buf[i]
        j = i - 1
        while j >= 0 and buf[j] > v:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = v
    h = n // 2
    return buf[h] if n % 2 == 1 else 0.5 * (buf[h - 1] + buf[h])


@nb.njit(cache=True, inline="always")
def _step_reads(below, cx, cy, ux, uy, offsets, k, step):
    """The depths (metres above the fingertips' plane) the grasp lines (offsets, pixels) read
    k pixels out along (ux, uy) from contact (cx, cy), into step[:seen]: (seen, the sum of
    their pixels' own distances out in pixels, the highest of them; -inf with none)."""
    top = -np.inf
    out = 0.0
    seen = 0
    for off in offsets:
        row, col = _line_pixel(cx, cy, ux, uy, k, off)
        v = _read(below, row, col)
        if v == v:
            step[seen] = v
            out += (col - cx) * ux + (row - cy) * uy  # the pixel's own distance out
            seen += 1
            if v > top:
                top = v
    return seen, out, top


@nb.njit(cache=True, error_model="numpy")
def _below_lean(below, cx, cy, ux, uy, offsets, n_px, m, reach_m, ledge_rad):
    """Radians: how far the normal of the surface the pad's lower edge meets at contact
    (cx, cy) leans out of the horizontal, read from the target's whole surface under the
    fingertips' plane (below: metres above that plane, NaN off the footprint) outwards
    along (ux, uy) for up to n_px pixels, each step's depth the median over the grasp lines
    and its distance out their mean (offsets, pixels; each pixel read at its own distance out
    along (ux, uy)): one line seeing past the side's edge to the body far below (a mixed
    pixel at the pad's end) moves a mean by centimetres, a median not. A line d = a + b x
    fitted to the depths d under the plane at distances x (metres): where it reaches the
    plane at the contact (|a| <= reach_m) the side goes on down and out under
    the pad's edge, the pad presses it there and its normal leans by atan(1 / b) (an upright
    bottle's shoulder under its cap). 0 where the surface stays further under the plane (a
    step the pad passes above) or leans beyond ledge_rad (a ledge under the pad); NaN with
    fewer than 3 steps seen or any pixel read more than reach_m above the plane (the target
    goes on above the pad there: no side under it)."""
    n = int(n_px)
    sx = sd = sxx = sxd = 0.0
    k_n = 0
    step = np.empty(offsets.size)
    for k in range(1, n + 1):
        seen, out, top = _step_reads(below, cx, cy, ux, uy, offsets, k, step)
        if top == -np.inf:
            break  # the footprint ends: what lies beyond is no part of this side
        if top > reach_m:
            return np.nan  # the target stands above the plane out there: no side under the pad
        x, d = out / seen * m, -_median(step, seen)
        k_n += 1
        sx += x
        sd += d
        sxx += x * x
        sxd += x * d
    if k_n < 3:
        return np.nan
    b = (k_n * sxd - sx * sd) / (k_n * sxx - sx * sx)
    a = (sd - b * sx) / k_n
    if abs(a) > reach_m or not b > 0.0:
        return 0.0
    lean = math.atan(1.0 / b)
    return lean if lean <= ledge_rad else 0.0


@nb.njit(cache=True, error_model="numpy")
def _level_beyond(below, cx, cy, ux, uy, offsets, n_px, reach_m):
    """Whether the whole target's surface beyond contact (cx, cy), read outwards along
    (ux, uy) for n_px pixels (below: metres above the fingertips' plane, NaN off the
    footprint; each step's depth the median over the grasp lines, offsets in pixels), stays
    on the whole (the median of the steps) no further than reach_m under the plane: what
    the finger meets there is a top level with its lower end, not a side before the pad's
    face (the plane cutting a lying can wider than the stroke on the slant near its end,
    where the outline is only the depth noise's: the jaw closed on nothing or rolled it).
    Unlike _below_lean, no line reading above the plane vetoes it: it is a median of
    medians, which the outline's depth noise (on the runs' frames up to half the lines of a
    step reading 5-12 mm above the plane on the first pixels out) hardly moves."""
    n = int(n_px)
    meds = np.empty(max(n, 1))
    step = np.empty(offsets.size)
    k_n = 0
    for k in range(1, n + 1):
        seen = _step_reads(below, cx, cy, ux, uy, offsets, k, step)[0]
        if seen > 0:
            meds[k_n] = _median(step, seen)
            k_n += 1
    return k_n >= 3 and _median(meds, k_n) >= -reach_m


@nb.njit(cache=True, inline="always")
def _palm_hit(height, x, y, c, s, offsets, across, half_r, palm_m):
    """Whether anything between the open fingers of candidate (x, y, cos θ, sin θ) (the
    band of the grasp lines, sampled every BODY_STEP_PX) stands more than palm_m above the
    fingertips (heights in metres, NaN where nothing is seen)."""
    n = int(half_r)
    for i in across:
        bx = x - offsets[i] * s
        by = y + offsets[i] * c
        for j in range(-n, n + 1, BODY_STEP_PX):
            col = int(np.floor(bx + j * c + 0.5))
            row = int(np.floor(by + j * s + 0.5))
            if 0 <= row < height.shape[0] and 0 <= col < height.shape[1]:
                if height[row, col] > palm_m:  # NaN compares False
                    return True
    return False


@nb.njit(cache=True, inline="always")
def _bodies_inside(rows, cols, x, y, c, s, offsets, across, along, half_r):
    """Whether every finger-body sample of _bodies_land rounds to a pixel inside a rows x cols
    image: each coordinate, computed as there, is monotone in the line's offset and in the
    distance, so the extremes lie at the corners of the samples' grid (across and along
    ascend, as _physical._sample_lines makes them, and so do eq. 3's offsets)."""
    for off in (offsets[across[0]], offsets[across[-1]]):
        bx = x - off * s
        by = y + off * c
        for d in (half_r + along[0], half_r + along[-1]):
            for col, row in ((bx + d * c + 0.5, by + d * s + 0.5),
                             (bx - d * c + 0.5, by - d * s + 0.5)):
                if not (0.0 <= col < cols and 0.0 <= row < rows):
                    return False
    return True


@nb.njit(cache=True, inline="always")
def _bodies_land(image, height, x, y, c, s, offsets, across, along, half_r, palm_m):
    """Whether a finger body (the band from each open finger's line end outwards, sampled at
    across x along) lands on anything in image, or the palm on anything between the open
    fingers higher than palm_m (metres) above them. Where every body sample lies in the
    image (_bodies_inside) the reads skip their bounds tests."""
    if _bodies_inside(image.shape[0], image.shape[1], x, y, c, s, offsets, across, along,
                      half_r):
        for i in across:
            bx = x - offsets[i] * s
            by = y + offsets[i] * c
            for j in along:
                d = half_r + j
                if (image[np.uint64(by + d * s + 0.5), np.uint64(bx + d * c + 0.5)] != 0
                        or image[np.uint64(by - d * s + 0.5), np.uint64(bx - d * c + 0.5)] != 0):
                    return True
    else:
        for i in across:
            bx = x - offsets[i] * s
            by = y + offsets[i] * c
            for j in along:
                d = half_r + j
                if _hit(image, bx + d * c, by + d * s) or _hit(image, bx - d * c, by - d * s):
                    return True
    if palm_m == palm_m and palm_m < np.inf:
        return _palm_hit(height, x, y, c, s, offsets, across, half_r, palm_m)
    return False


@nb.njit(cache=True, inline="always", error_model="numpy")
def _patch_radius(height_m, half_width_m):
    """The mean distance from its centre of a height_m x 2 half_width_m rectangle (metres;
    NaN where the height is not positive or unknown): ``_physical.mean_patch_radius_m``."""
    p = 0.5 * height_m
    if not p > 0.0:
        return np.nan
    q = half_width_m
    d = math.hypot(p, q)
    return ((2.0 * p * q * d + math.pow(p, 3.0) * math.log((q + d) / p)
             + math.pow(q, 3.0) * math.log((p + d) / q)) / (6.0 * p * q))


@nb.njit(cache=True, inline="always")
def _clip01(v):
    """v clipped to [0, 1]; NaN stays NaN (as numpy's clip)."""
    return v if v != v else min(max(v, 0.0), 1.0)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _tilt(width, undercut, profile):
    """Radians, the contact normals' lean: 0 where the side's heights rise as a wall (profile
    0), else the larger of the profile's lean and the undercut's (the side read as a circular
    section whose half-chord at the contact is half the width and whose radius runs on by the
    undercut, acos(c / (c + u))), as numpy's fmax takes it: a NaN loses to a number."""
    if profile == 0.0:
        return 0.0
    half = 0.5 * width
    q = half / (half + undercut) if half + undercut != 0.0 else np.nan  # 0 / 0, as numpy
    under = math.acos(min(max(q, -1.0), 1.0)) if q == q else np.nan
    if profile != profile:
        return under
    return profile if under != under else max(under, profile)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _band_m(image, x, y, c, s, cx, cy, ux, uy, offsets, prm):
    """The width (metres) of the pad's overlap with the side at one contact: the span across
    the pad of its lines that meet the object within Q_BAND_TOL_PX inwards (ux, uy) of the
    primary contact (cx, cy) (Tan et al.'s contact region, eq. 14), one line's share added,
    at most the pad's width; one line's share where none reads a hit."""
    n = offsets.shape[0]
    share = (offsets[n - 1] - offsets[0]) / (n - 1) if n > 1 else prm[Q_PAD_WIDTH_PX]
    a = (cx - x) * c + (cy - y) * s  # the contact along the closing direction from the centre
    lo = np.inf
    hi = -np.inf
    for i in range(n):
        bx = x - offsets[i] * s + a * c
        by = y + offsets[i] * c + a * s
        for k in range(int(prm[Q_BAND_TOL_PX]) + 1):
            if _hit(image, bx + k * ux, by + k * uy):
                lo = min(lo, offsets[i])
                hi = max(hi, offsets[i])
                break
    span = hi - lo + share if hi >= lo else share
    return min(span, prm[Q_PAD_WIDTH_PX]) * prm[Q_M_PER_PX]


@nb.njit(cache=True, error_model="numpy", inline="always")
def _torque_ratio(prm, lever_m, height_m, band_l_m, band_r_m):
    """τ_g / τ_max = M g d / (μ F (r̄_l + r̄_r)), r̄ the mean radius of each pad's overlap
    with the side (height_m x that side's band, ``_band_m``); 0 for an unknown mass, NaN
    without a lever or a height."""
    if prm[Q_WEIGHT_N] != prm[Q_WEIGHT_N]:
        return 0.0
    r_mean = 0.5 * (_patch_radius(height_m, 0.5 * band_l_m)
                    + _patch_radius(height_m, 0.5 * band_r_m))
    return prm[Q_WEIGHT_N] * lever_m / (prm[Q_TAU_PER_M_NM] * r_mean)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _one(image, height, footprint, below, x, y, theta, lcol, lrow, rcol, rrow, width,
         offsets, across, along, lines, prm, palm, xs, zs):
    """The depth terms of one candidate (see depth_terms_kernel; palm its wide palm's
    factor, 1 without one): body, contact height, tilt, section, lever, torque ratio, and
    the contact, torque, tilt, palm and swing factors and their product."""
    half_r = prm[Q_HALF_R]
    m = prm[Q_M_PER_PX]
    c, s = np.cos(theta), np.sin(theta)
    body = palm == 0.0 or _bodies_land(image, height, x, y, c, s, offsets, across, along, half_r,
                                   prm[Q_PALM_M])
    h = np.nan
    u_l = u_r = np.nan  # the undercut beyond the left and the right contact, px
    have = lcol == lcol and rcol == rcol
    if have:
        hl = _side_height(height, lcol, lrow, c, s, prm[Q_PROBE_PX])
        hr = _side_height(height, rcol, rrow, -c, -s, prm[Q_PROBE_PX])
        h = min(hl, hr) if (hl == hl and hr == hr) else np.nan
        u_l = _undercut(footprint, lcol, lrow, -c, -s, half_r)
        u_r = _undercut(footprint, rcol, rrow, c, s, half_r)
    lever = np.nan
    if prm[Q_CENTRE_COL] == prm[Q_CENTRE_COL]:
        lever = abs(c * (prm[Q_CENTRE_ROW] - y) - s * (prm[Q_CENTRE_COL] - x)) * m
    if h == h:
        h = min(h, prm[Q_PAD_LENGTH_M])
    s_c = _clip01((h - prm[Q_MIN_CONTACT_M]) / prm[Q_CONTACT_SPAN_M])
    if not np.isfinite(s_c):
        s_c = 0.0
    u_max = max(u_l, u_r) if (u_l == u_l and u_r == u_r) else np.nan
    undercut = u_max if u_max * m > prm[Q_ABOVE_WIDEST_M] else 0.0
    profile = np.nan
    if have and width == width and width > 0:
        n = min(prm[Q_PROFILE_PX], 0.5 * width)  # not past the grasp's middle
        ll = _side_lean(height, lcol, lrow, c, s, lines, n, prm[Q_FIT_TOL_PX], m, xs, zs)
        lr = _side_lean(height, rcol, rrow, -c, -s, lines, n, prm[Q_FIT_TOL_PX], m, xs, zs)
        profile = lr if not (ll == ll) or lr > ll else ll
    tilt = _tilt(width, undercut, profile)
    if undercut > 0.0:  # the side runs on under the fingertips: does the pad's edge press it?
        for cx, cy, ux, uy, u in ((lcol, lrow, -c, -s, u_l), (rcol, rrow, c, s, u_r)):
            if u * m > prm[Q_ABOVE_WIDEST_M]:
                lean = _below_lean(below, cx, cy, ux, uy, lines, min(prm[Q_BELOW_PX], u), m,
                                   prm[Q_BELOW_REACH_M], prm[Q_LEDGE_RAD])
                if lean > tilt:  # NaN: no reading, never larger
                    tilt = lean
                # a top level with the fingertips under the finger's whole depth: the finger
                # comes down on it, the pad's face meets no side (narrower, the finger passes
                # over its edge: the ledge rule above)
                if u >= prm[Q_BODY_PX] and _level_beyond(below, cx, cy, ux, uy, lines,
                                                         prm[Q_BODY_PX], prm[Q_BELOW_REACH_M]):
                    tilt = 0.5 * math.pi
    section = (width + (u_l + u_r)) * m
    # a section under both contacts, as on the pad's other lines below (a handle beyond one
    # contact is none)
    wedge = section > prm[Q_STROKE_M] and min(u_l, u_r) * m > prm[Q_ABOVE_WIDEST_M]
    if have and width == width and not wedge:
        # the pad's whole width, not its middle line alone: a pad over a lying can's end
        run = _wedge_run(footprint, x, y, c, s, lcol, lrow, rcol, rrow, width, offsets, half_r,
                         prm[Q_ABOVE_WIDEST_M] / m) * m
        if run > prm[Q_STROKE_M]:
            section = max(section, run)
            wedge = True
    s_tilt = _clip01((prm[Q_TILT_HI_RAD] - tilt) / prm[Q_TILT_SPAN_RAD])
    if not np.isfinite(s_tilt):
        s_tilt = 1.0
    if wedge:
        s_tilt = 0.0
    band_l = band_r = np.nan
    if have:
        band_l = _band_m(image, x, y, c, s, lcol, lrow, c, s, offsets, prm)
        band_r = _band_m(image, x, y, c, s, rcol, rrow, -c, -s, offsets, prm)
    ratio = _torque_ratio(prm, lever, h, band_l, band_r)
    s_t = _clip01(1.0 - ratio)
    if not np.isfinite(s_t):
        s_t = 1.0  # no contact height or lever known: no torque term
    s_palm = palm if palm > 0.0 else 1.0  # a palm that lands is the body term's
    # held far off its mass centre, a rounded object the pads touch at a few points turns
    # about the grasp axis as it is lifted, whatever it weighs (docs/scoring.md, "The swing
    # about the grasp axis")
    s_sw = _clip01(1.0 - lever / prm[Q_SWING_LEVER_M]) if lever == lever else 1.0
    factor = 0.0 if body else s_c * s_t * s_tilt * s_palm * s_sw
    return body, h, tilt, section, lever, ratio, s_c, s_t, s_tilt, s_palm, s_sw, factor


@nb.njit(cache=True, parallel=True, error_model="numpy")
def depth_terms_kernel(image, height, footprint, below, idx, xs, ys, ts, lcol, lrow, rcol,
                       rrow, width, offsets, across, along, lines, prm, palm, scratch, tan,
                       out_body, out_h, out_tilt, out_section, out_lever, out_ratio, out_sc,
                       out_st, out_stilt, out_spalm, out_ssw, out_score):
    """The depth terms of candidates idx (indices into every per-candidate array).

    image : (H, W) uint8, anything the fingers meet; height : (H, W) float32 metres above the
    fingertips (NaN unseen); footprint : (H, W) uint8, the target's whole footprint (1 x 1
    zero: none); below : (H, W) float32, the whole target's surface in metres above the
    fingertips, negative under them (NaN off the footprint; 1 x 1 NaN: none); xs, ys, ts : float64 px, px, rad; lcol, lrow, rcol, rrow : float32 the
    primary contacts' pixels (NaN: none); width : float32 px between the contacts; offsets :
    (n,) float64 grasp-line offsets px; across (int64 line indices) x along (float64 px
    beyond the open finger) : the finger bodies' samples; lines : the offsets the tilt profile
    averages; prm : the Q_* parameters; palm : (len(idx),) float64, a wide palm's factor
    (1 clear, 0 landing, between: grazing, _physical._wide_palm_factor) in idx's order, or
    empty (no wide palm: 1); scratch : (chunks, 2, >= int(prm[Q_PROFILE_PX])
    + 1) float64, one row per chunk of candidates (prange runs over chunks); tan : float32 Tan's score. Writes at each index: out_body (bool: a body or
    the palm lands), the contact height, tilt, section and lever (metres, rad), the torque
    ratio, the five factors (out_sc, out_st, out_stilt, out_spalm, out_ssw) and out_score =
    tan x their product (0 on a body collision), all
    float32.
    """
    n = idx.shape[0]
    wide = palm.shape[0] > 0
    chunk = (n + scratch.shape[0] - 1) // scratch.shape[0]
    for ch in nb.prange(scratch.shape[0]):
        xs_buf = scratch[ch, 0]
        zs_buf = scratch[ch, 1]
        for k in range(ch * chunk, min((ch + 1) * chunk, n)):
            i = idx[k]
            body, h, tilt, section, lever, ratio, s_c, s_t, s_tilt, s_palm, s_sw, factor = _one(
                image, height, footprint, below, xs[i], ys[i], ts[i], float(lcol[i]),
                float(lrow[i]),
                float(rcol[i]), float(rrow[i]), float(width[i]), offsets, across, along, lines,
                prm, palm[k] if wide else 1.0, xs_buf, zs_buf)
            out_body[i] = body
            out_h[i] = h
            out_tilt[i] = tilt
            out_section[i] = section
            out_lever[i] = lever
            out_ratio[i] = ratio
            out_sc[i] = s_c
            out_st[i] = s_t
            out_stilt[i] = s_tilt
            out_spalm[i] = s_palm
            out_ssw[i] = s_sw
            # a product of two float32 values is exact in float64: one rounding, as numpy's
            out_score[i] = np.float32(float(tan[i]) * float(np.float32(factor)))


@nb.njit(cache=True, parallel=True)
def palm_factor_kernel(height, cols, rows, xs, ys, ts, half_len, half_wid, inner_len,
                       inner_wid, palm_m, graze, out):
    """Per candidate (xs, ys, ts: px, px, rad): the palm factor of a palm half_len along the
    closing direction and half_wid across it (pixels) over pixels (cols, rows) standing more
    than palm_m (metres) above the fingertips (the outline of everything that tall: a tall
    region reaches into the rectangle only across its outline, or under the grasp's centre,
    read in height): 0 where one lies inside the rectangle inner_len x inner_wid (it
    lands), graze where one lies inside the palm only, 1 else. Every outline pixel is read:
    a sampled rectangle misses a thin rim under its edge."""
    for k in nb.prange(xs.shape[0]):
        c, s = np.cos(ts[k]), np.sin(ts[k])
        f = 1.0
        row = int(np.floor(ys[k] + 0.5))
        col = int(np.floor(xs[k] + 0.5))
        if 0 <= row < height.shape[0] and 0 <= col < height.shape[1] \
                and height[row, col] > palm_m:  # NaN compares False
            f = 0.0
        for i in range(cols.shape[0]):
            if f == 0.0:
                break
            dx = cols[i] - xs[k]
            dy = rows[i] - ys[k]
            a = abs(dx * c + dy * s)
            b = abs(dy * c - dx * s)
            if a <= half_len and b <= half_wid:
                f = 0.0 if (a <= inner_len and b <= inner_wid) else graze
        out[k] = f
