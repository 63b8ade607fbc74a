"""The batched Numba kernel of the image-space antipodal measure (Tan et al. 2021).

Only arithmetic lives here; validation, the parameter vector and the naming of outputs are in
``_measure``. Parameters, outputs and scratch rows are indexed by the named constants below
(``prm[P_LEVER_PX]``, ``outf[F_SCORE, k]``); Numba folds them into the compiled code.
The reading of the paper follows docs/design.md; ``scoring.reference`` is the same reading in
plain Python, and the tests hold the two to each other value for value.

``_score_one`` reads as the paper's steps, each a helper inlined by Numba (measured as fast
as one function): the collision scan (``_line_ends_on_object``, Tan III-C), the grasp points
and primary contacts (eq. 4: ``_coarse_hits`` for every line at once, then ``_fine_back`` and
``_crossing`` per line; ``_end_distance`` line by line where a candidate reads off the
image), ``_d_t`` (eq. 9), ``_forms_couple`` and ``_r_r`` (eq. 10), ``_side_contacts`` with
``_normal_angle_at`` and ``_contact_angle`` (contacts, normals and contact angles, eqs. 6-8
and 11), ``_s_a`` (eqs. 12-13), ``_s_f`` (eqs. 14-15), ``_normalise`` / ``_normalise_s_f`` and
``_score`` (eq. 16).

Where this departs from the paper and docs/design.md (each made the score jump under one-pixel
changes of the image; docs/scoring.md gives the measurements):
- grasp points sit on the outline between pixels (the blurred silhouette's 0.5 crossing
  after the paper's pixel search), not on pixel centres;
- R_r prefers grasp points at least ``min_lever_fraction`` of the finger width from the pivot,
  and no couple forms when the near-primary contact regions overlap across the finger;
- S_a takes each side's net lean |mean β| instead of eq. 12's all-or-nothing sign test, and
  averages the two sides as eq. 13 does.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

CHUNK = 256  # candidates per scratch row at most; prange runs over chunks so nothing is allocated per candidate


def chunk_count(n: int) -> int:
    """How many chunks a parallel kernel splits n candidates into: CHUNK each at most, and
    at least one per Numba thread (a search's batches of 250-500 candidates in chunks of
    CHUNK kept one of two threads idle)."""
    return max(1, min(n, max(-(-n // CHUNK), nb.get_num_threads())))


# prm : (N_PARAMS,) float64, the measure's parameters (MeasureParams; angles rad, lengths px)
P_D_T_THRESHOLD = 0      # D_t scoring 0
P_R_R_THRESHOLD = 1      # R_r scoring 0, rad
P_S_A_THRESHOLD = 2      # S_a scoring 0, rad
P_S_F_KNEE_FRACTION = 3  # S_f = this * w ...
P_S_F_KNEE_SCORE = 4     # ... scores this
P_S_F_ZERO_FRACTION = 5  # S_f = this * w scores 0
P_K = 6                  # weight of the worst feature (eq. 16)
P_SECONDARY_TOL_PX = 7   # grasp points this close to their side's primary are contacts
P_NO_PIVOT_RAD = 8       # R_r when no grasp point reaches a plate
P_LEVER_PX = 9           # R_r prefers grasp points this far from the pivot
P_BALANCE_TOL_PX = 10    # grasp points this close to a primary share its load (couple test)
N_PARAMS = 11

# outf : (N_FLOAT_OUT, N) float32, one column per candidate
F_SCORE = 0
F_D_T, F_R_R, F_S_A, F_S_F = 1, 2, 3, 4                      # raw features (ratio, rad, rad, px)
F_SCORE_D_T, F_SCORE_R_R, F_SCORE_S_A, F_SCORE_S_F = 5, 6, 7, 8  # normalised feature scores
F_LEFT_COL, F_LEFT_ROW, F_RIGHT_COL, F_RIGHT_ROW = 9, 10, 11, 12  # primary contacts' object pixels
F_WIDTH_PX = 13          # distance between the primaries' outlines
N_FLOAT_OUT = 14
# outb : (N_BOOL_OUT, N) bool
B_COLLISION, B_MISSING = 0, 1
N_BOOL_OUT = 2
# scratch : (N_SCRATCH, n) float64 per chunk, one column per grasp line
S_DIST_LEFT, S_DIST_RIGHT = 0, 1  # grasp distances Δr (px), NaN where the line has none
S_J_LEFT, S_J_RIGHT = 2, 3        # sample index j of the object pixel each was found at
S_END_COL_LEFT, S_END_ROW_LEFT = 4, 5    # the lines' ends the left searches start from (px)
S_END_COL_RIGHT, S_END_ROW_RIGHT = 6, 7  # and the right ones
N_SCRATCH = 8


@nb.njit(cache=True, inline="always")
def _pixel(sil, px, py):
    """Silhouette value at the pixel nearest to (px, py) = (column, row); 0 off the image."""
    vx = px + 0.5
    vy = py + 0.5
    if vx < 0.0 or vy < 0.0:
        return 0
    col = np.uint64(vx)  # truncation is floor here (vx, vy >= 0); unsigned: no wraparound
    row = np.uint64(vy)
    if row >= sil.shape[0] or col >= sil.shape[1]:
        return 0
    return sil[row, col]


@nb.njit(cache=True, inline="always")
def _pixel_inside(sil, px, py):
    """Silhouette value at the pixel nearest to (px, py), a point known to round to a pixel
    inside the image (``_box_inside``): _pixel without its bounds tests."""
    return sil[np.uint64(py + 0.5), np.uint64(px + 0.5)]


@nb.njit(cache=True, inline="always")
def _box_inside(rows, cols, x, y, c, s, dw_a, dw_b, half_r, n_samples):
    """Whether every sample a candidate's searches read (lines Δw between dw_a and dw_b, the
    first and last of eq. 3's monotone offsets; each line from either end inwards, samples
    j = 0..n_samples-1) rounds to a pixel inside a rows x cols image. Each coordinate,
    computed as _line_centre and the searches compute it, is a chain of correctly rounded
    operations monotone in Δw and in j, so its extremes lie at the corners: the outer lines,
    the first and last sample of either search."""
    for dw_i in (dw_a, dw_b):
        lx, ly = _line_centre(x, y, c, s, dw_i)
        for ux, uy in ((-c, -s), (c, s)):
            ex = lx + half_r * ux
            ey = ly + half_r * uy
            for j in (0, n_samples - 1):
                col = ex - j * ux + 0.5
                row = ey - j * uy + 0.5
                if not (0.0 <= col < cols and 0.0 <= row < rows):
                    return False
    return True


@nb.njit(cache=True, inline="always")
def _fine_back(sil, ex, ey, ux, uy, j, step, inside):
    """The outermost sample of the run of object samples ending at coarse hit j, searching
    back from line end (ex, ey) along -u at most step - 1 samples (Tan III-C's fine step);
    inside as for _coarse_hits."""
    jc = j
    for jb in range(j - 1, j - step, -1):
        v = _pixel_inside(sil, ex - jb * ux, ey - jb * uy) if inside else \
            _pixel(sil, ex - jb * ux, ey - jb * uy)
        if v == 0:
            break
        jc = jb
    return jc


@nb.njit(cache=True, inline="always")
def _search_side(sil, ex, ey, ux, uy, n_samples, step):
    """Sample index j of the outermost object pixel seen from line end (ex, ey) inwards.

    Samples sit at j = 0..n_samples-1 pixels from the end along -u. Coarse steps of
    ``step``, then a fine step back (Tan III-C). Returns -1 when the coarse search finds none.
    """
    j = step
    while j < n_samples:
        if _pixel(sil, ex - j * ux, ey - j * uy) != 0:
            return _fine_back(sil, ex, ey, ux, uy, j, step, False)
        j += step
    return -1


@nb.njit(cache=True, inline="always")
def _coarse_hits(sil, x, y, c, s, dw, ux, uy, half_r, n_samples, step, hits, ex, ey, active):
    """The coarse searches of every grasp line at once, from the ends at +half_r u inwards,
    for a candidate whose samples all lie inside the image (``_box_inside``: the reads skip
    their bounds tests).

    hits[i] on entry: >= 0 to search line i, < 0 to skip it; on return the first coarse
    sample j (a multiple of step) that is an object pixel, or -1. ex, ey receive the lines'
    ends (px). The lines step in lockstep, those still searching kept in ``active`` (int64
    scratch, one entry per line) by a count rather than a branch: the same hits as
    _search_side's coarse loop line by line, without its data-dependent exit per line (a
    mispredicted branch each). 15 % of the kernel's time on fully evaluated candidates;
    the same in lockstep for the fine steps back was 18 % slower (docs/performance.md).
    """
    searching = 0
    for i in range(dw.shape[0]):
        lx, ly = _line_centre(x, y, c, s, dw[i])
        ex[i] = lx + half_r * ux
        ey[i] = ly + half_r * uy
        if hits[i] >= 0.0:
            active[searching] = i
            searching += 1
        hits[i] = -1.0
    j = step
    while j < n_samples and searching > 0:
        kept = 0
        for a in range(searching):
            i = active[a]
            hit = _pixel_inside(sil, ex[i] - j * ux, ey[i] - j * uy) != 0
            hits[i] = float(j) if hit else hits[i]
            active[kept] = i  # kept only if it did not hit: the count says
            kept += 0 if hit else 1
        searching = kept
        j += step


@nb.njit(cache=True, inline="always")
def _crossing(blur, ex, ey, ux, uy, j):
    """(j, sub-pixel distance in px from line end (ex, ey) to the outline): where the blurred
    silhouette crosses 0.5 between samples j - 1 and j (j the outermost object sample)."""
    b_in = _bilinear(blur, ex - j * ux, ey - j * uy)
    b_out = _bilinear(blur, ex - (j - 1) * ux, ey - (j - 1) * uy)
    t = 1.0
    if b_in > b_out:
        t = min(max((0.5 - b_out) / (b_in - b_out), 0.0), 1.0)
    return j, j - 1.0 + t


@nb.njit(cache=True, inline="always")
def _bilinear(img, px, py):
    """Bilinear interpolation of a float image at (column px, row py); 0 off the image."""
    h, w = img.shape
    if px >= 0.0 and py >= 0.0:  # the common case: truncation is floor, no per-pixel checks
        uc = np.uint64(px)
        ur = np.uint64(py)
        if uc + 1 < w and ur + 1 < h:
            fx = px - float(uc)
            fy = py - float(ur)
            one = np.uint64(1)
            return ((1.0 - fy) * ((1.0 - fx) * img[ur, uc] + fx * img[ur, uc + one])
                    + fy * ((1.0 - fx) * img[ur + one, uc] + fx * img[ur + one, uc + one]))
    c0 = int(math.floor(px))
    r0 = int(math.floor(py))
    fx = px - c0
    fy = py - r0
    v = 0.0
    for dr in range(2):
        r = r0 + dr
        if r < 0 or r >= h:
            continue
        wr = fy if dr == 1 else 1.0 - fy
        for dc in range(2):
            c = c0 + dc
            if c < 0 or c >= w:
                continue
            v += wr * (fx if dc == 1 else 1.0 - fx) * img[r, c]
    return v


@nb.njit(cache=True, inline="always")
def _refined(sil, blur, scratch, row_ex, row_ey, ux, uy, hit, step, i):
    """(j, distance) of line i's search from its coarse hit (_coarse_hits; -1: none), its
    end read from scratch rows row_ex, row_ey: the fine step back and the outline crossing,
    as _end_distance gives them."""
    if hit < 0.0:
        return -1, -1.0
    ex = scratch[row_ex, i]
    ey = scratch[row_ey, i]
    return _crossing(blur, ex, ey, ux, uy, _fine_back(sil, ex, ey, ux, uy, int(hit), step, True))


@nb.njit(cache=True, inline="always")
def _end_distance(sil, blur, lx, ly, ux, uy, half_r, n_samples, step):
    """Sub-pixel distance (px) from one end of a grasp line inward to the object's outline.

    The pixel search (``_search_side``) finds the first object sample j; the outline is then
    placed between samples j - 1 and j where the blurred silhouette crosses 0.5 (_crossing).
    Returns (j, distance), or (-1, -1.0) when the line meets no object.
    """
    ex = lx + half_r * ux
    ey = ly + half_r * uy
    j = _search_side(sil, ex, ey, ux, uy, n_samples, step)
    if j < 0:
        return -1, -1.0
    return _crossing(blur, ex, ey, ux, uy, j)


@nb.njit(cache=True, inline="always")
def _contact_angle(normal_angle, theta, side):
    """Signed contact angle β (rad) of a contact whose outward normal points at normal_angle.

    theta : the closing direction, wrapped to [-π, π).
    β is the angle between the finger's push (+x_G for the left finger, side 0; -x_G for the
    right) and the inward normal, at most π/2, negative when the normal's y_G is (eq. 11).
    A NaN normal_angle (no defined normal) gives 0. Angle arithmetic instead of acos of a
    dot product: the same value, an order of magnitude cheaper.
    """
    if normal_angle != normal_angle:
        return 0.0
    psi = normal_angle - theta  # normal's direction in {G}; both angles in [-π, π]
    if psi < -math.pi:
        psi += 2.0 * math.pi
    elif psi >= math.pi:
        psi -= 2.0 * math.pi
    beta = math.pi - abs(psi) if side == 0 else abs(psi)
    beta = min(beta, 0.5 * math.pi)
    return -beta if psi < 0.0 else beta


@nb.njit(cache=True, inline="always")
def _normalise(value, threshold):
    """Linear feature score through (0, 1) and (threshold, 0), clipped to [0, 1] (Tan III-E)."""
    v = 1.0 - value / threshold
    return min(max(v, 0.0), 1.0)


@nb.njit(cache=True, inline="always")
def _normalise_s_f(s_f, w, knee_frac, knee_score, zero_frac):
    """Two-slope S_f score: 0 -> 1, knee_frac*w -> knee_score, zero_frac*w -> 0 (Tan III-E)."""
    knee = knee_frac * w
    zero = zero_frac * w
    if s_f <= knee:
        v = 1.0 - (1.0 - knee_score) * s_f / knee
    else:
        v = knee_score * (1.0 - (s_f - knee) / (zero - knee))
    return min(max(v, 0.0), 1.0)


@nb.njit(cache=True, inline="always")
def _line_centre(x, y, c, s, dw_i):
    """Point of grasp line i at Δr = 0, (column, row) px (eqs. 1-2)."""
    return x - dw_i * s, y + dw_i * c


@nb.njit(cache=True, inline="always")
def _object_dr(j, half_r, side):
    """Δr (px) of search sample j from the end of side 0 (left, -r/2) or 1 (right, +r/2)."""
    return -half_r + j if side == 0 else half_r - j


@nb.njit(cache=True, inline="always")
def _clear_outputs(outf, outb, k):
    """Column k as for a candidate not evaluated: no indicator, score 0, features NaN."""
    outb[B_COLLISION, k] = False
    outb[B_MISSING, k] = False
    outf[F_SCORE, k] = 0.0
    for q in (F_D_T, F_R_R, F_S_A, F_S_F):
        outf[q, k] = np.nan
    for q in (F_SCORE_D_T, F_SCORE_R_R, F_SCORE_S_A, F_SCORE_S_F):
        outf[q, k] = 0.0
    for q in (F_LEFT_COL, F_LEFT_ROW, F_RIGHT_COL, F_RIGHT_ROW, F_WIDTH_PX):
        outf[q, k] = np.nan


@nb.njit(cache=True, inline="always")
def _line_ends_on_object(sil, lx, ly, c, s, half_r, inside):
    """Whether an end (Δr = ±r/2) of the grasp line through (lx, ly) lies on the object
    (Tan III-C collision, eqs. 1-3); inside: the candidate's samples all lie in the image
    (``_box_inside``; the ends are the searches' first samples), so the reads skip their
    bounds tests."""
    if inside:
        return (_pixel_inside(sil, lx - half_r * c, ly - half_r * s) != 0
                or _pixel_inside(sil, lx + half_r * c, ly + half_r * s) != 0)
    return (_pixel(sil, lx - half_r * c, ly - half_r * s) != 0
            or _pixel(sil, lx + half_r * c, ly + half_r * s) != 0)


@nb.njit(cache=True, inline="always")
def _d_t(d_l, d_r, i_l, i_r, r):
    """D_t = |Δr of the left primary + Δr of the right primary| / r, a ratio (eq. 9)."""
    return abs(d_l[i_l] + d_r[i_r]) / r


@nb.njit(cache=True, inline="always")
def _forms_couple(d_l, d_r, dw, i_l, i_r, balance):
    """Whether the primaries make a couple: the grasp points within ``balance`` px of each
    primary span Δw ranges that do not overlap (eq. 10's "different lines", made robust to
    sub-pixel ties: overlapping ranges join the two contact regions by one line of action)."""
    lo_l, hi_l, lo_r, hi_r = np.inf, -np.inf, np.inf, -np.inf
    for i in range(dw.shape[0]):
        if d_l[i] - d_l[i_l] <= balance:  # NaN compares False
            lo_l = min(lo_l, dw[i])
            hi_l = max(hi_l, dw[i])
        if d_r[i_r] - d_r[i] <= balance:
            lo_r = min(lo_r, dw[i])
            hi_r = max(hi_r, dw[i])
    return hi_l < lo_r or hi_r < lo_l


@nb.njit(cache=True, inline="always")
def _r_r(d_l, d_r, dw, i_l, i_r, lever, no_pivot):
    """R_r (rad) of a couple: the smallest angle through which a grasp point reaches its
    finger plate as each side pivots about its primary contact (eq. 10); no_pivot if none does.

    The couple's sign decides which grasp points swing towards the plate. Points with a lever
    of at least ``lever`` px decide when there are any: close to the pivot, outline
    quantisation swamps the angle. The smallest angle atan(dx / lever) is tracked as the
    smallest ratio, compared by cross-multiplying, so that only the winner pays for an atan2.
    """
    sigma = 1.0 if dw[i_r] > dw[i_l] else -1.0
    far_dx, far_arm, near_dx, near_arm = -1.0, 1.0, -1.0, 1.0  # dx < 0: none yet
    for i in range(dw.shape[0]):
        for side in range(2):
            d = d_l if side == 0 else d_r
            i_p = i_l if side == 0 else i_r
            if i == i_p or d[i] != d[i]:
                continue
            dy = dw[i] - dw[i_p]
            if (sigma * dy > 0.0) != (side == 0):
                continue  # this point swings away from the plate
            dx = abs(d[i] - d[i_p])
            arm = abs(dy)
            if arm >= lever:
                if far_dx < 0.0 or dx * far_arm < far_dx * arm:
                    far_dx, far_arm = dx, arm
            elif near_dx < 0.0 or dx * near_arm < near_dx * arm:
                near_dx, near_arm = dx, arm
    if far_dx >= 0.0:
        return min(math.atan2(far_dx, far_arm), no_pivot)
    if near_dx >= 0.0:
        return min(math.atan2(near_dx, near_arm), no_pivot)
    return no_pivot


@nb.njit(cache=True, inline="always")
def _normal_angle_at(nang, x, y, c, s, dw_i, dr):
    """Outward normal angle (rad, image axes; NaN if none) at the object pixel at (Δw, Δr),
    read from the precomputed field of the weighted circular window (eqs. 6-8)."""
    lx, ly = _line_centre(x, y, c, s, dw_i)
    # an object pixel, so inside the image: non-negative, truncation is floor
    col = np.uint64(lx + dr * c + 0.5)
    row = np.uint64(ly + dr * s + 0.5)
    return nang[row, col]


@nb.njit(cache=True, inline="always")
def _side_contacts(nang, x, y, c, s, theta_w, dw, d, j, d_p, half_r, tol, side):
    """One side's contacts, the primary and the grasp points within ``tol`` px of it:
    (count, sum of contact angles β in rad (eq. 11), smallest and largest Δw in px (eq. 14)).

    side 0 = left (its finger pushes along +x_G), 1 = right; d, j : that side's grasp
    distances and samples; d_p : its primary's Δr. The normal is read at the object pixel
    the search stopped on.
    """
    push = 1.0 if side == 0 else -1.0
    n_c = 0
    beta_sum = 0.0
    w_min = np.inf
    w_max = -np.inf
    for i in range(dw.shape[0]):
        di = d[i]
        if di != di or push * (di - d_p) > tol:
            continue
        dj = _object_dr(j[i], half_r, side)
        beta = _contact_angle(_normal_angle_at(nang, x, y, c, s, dw[i], dj), theta_w, side)
        n_c += 1
        beta_sum += beta
        w_min = min(w_min, dw[i])
        w_max = max(w_max, dw[i])
    return n_c, beta_sum, w_min, w_max


@nb.njit(cache=True, inline="always")
def _s_a(beta_sum_l, n_l, beta_sum_r, n_r):
    """S_a (rad): the mean over the two sides of each side's net lean |mean β| (eqs. 12-13).

    The paper's mean angle when all of a side's β share a sign (SI = 0, eq. 12), and instead
    of a hard 0 for mixed signs the part that does not cancel, so that pixel-normal scatter
    (about 3.4 deg) around a flat face cannot switch it.
    """
    return 0.5 * (abs(beta_sum_l) / n_l + abs(beta_sum_r) / n_r)


@nb.njit(cache=True, inline="always")
def _s_f(w_min_l, w_max_l, w_min_r, w_max_r):
    """S_f (px): the mean of the two sides' absolute contact-span centres |Δw| (eqs. 14-15)."""
    return 0.5 * abs(0.5 * (w_min_l + w_max_l)) + 0.5 * abs(0.5 * (w_min_r + w_max_r))


@nb.njit(cache=True, inline="always")
def _score(sc_dt, sc_rr, sc_sa, sc_sf, k_weight):
    """S = k * worst feature score + (1 - k) * mean of the other three (eq. 16)."""
    lo = min(min(sc_dt, sc_rr), min(sc_sa, sc_sf))
    rest = (sc_dt + sc_rr + sc_sa + sc_sf - lo) / 3.0
    return k_weight * lo + (1.0 - k_weight) * rest


@nb.njit(cache=True, inline="always")
def _write_primary_pixels(outf, k, x, y, c, s, dw, d_l, d_r, j_l, j_r, i_l, i_r, half_r):
    """The primaries' object pixels (where the search stopped on their lines) and the
    distance between their outlines (px) into column k."""
    lx, ly = _line_centre(x, y, c, s, dw[i_l])
    dj = _object_dr(j_l[i_l], half_r, 0)
    outf[F_LEFT_COL, k] = math.floor(lx + dj * c + 0.5)
    outf[F_LEFT_ROW, k] = math.floor(ly + dj * s + 0.5)
    lx, ly = _line_centre(x, y, c, s, dw[i_r])
    dj = _object_dr(j_r[i_r], half_r, 1)
    outf[F_RIGHT_COL, k] = math.floor(lx + dj * c + 0.5)
    outf[F_RIGHT_ROW, k] = math.floor(ly + dj * s + 0.5)
    outf[F_WIDTH_PX, k] = d_r[i_r] - d_l[i_l]


@nb.njit(cache=True, inline="always")
def _score_one(sil, blur, nang, x, y, theta, dw, w, r, step, prm, scratch, active, outf, outb,
               k):
    """Evaluate one candidate; write its outputs into column k of ``outf`` and ``outb``.

    ``scratch`` (N_SCRATCH, n): the S_* rows (the normal of a contact is read at its object
    pixel, sample S_J_*); ``prm`` the P_* parameters; ``outf`` the F_* rows, ``outb`` the B_*
    rows. Features are NaN, feature scores 0 where the candidate collides or misses.
    """
    d_l = scratch[S_DIST_LEFT]
    d_r = scratch[S_DIST_RIGHT]
    j_l = scratch[S_J_LEFT]
    j_r = scratch[S_J_RIGHT]
    c = math.cos(theta)
    s = math.sin(theta)
    theta_w = theta - 2.0 * math.pi * math.floor((theta + math.pi) / (2.0 * math.pi))
    half_r = 0.5 * r
    n_samples = int(math.floor(r)) + 1
    _clear_outputs(outf, outb, k)
    # Most candidates read nothing off the image: their reads skip the bounds tests.
    inside = _box_inside(sil.shape[0], sil.shape[1], x, y, c, s, dw[0], dw[-1], half_r,
                         n_samples)
    # Collision (Tan III-C): an end of any grasp line on the object.
    for i in range(dw.shape[0]):
        lx, ly = _line_centre(x, y, c, s, dw[i])
        if _line_ends_on_object(sil, lx, ly, c, s, half_r, inside):
            outb[B_COLLISION, k] = True
            return

    # Grasp points (GRPV, eq. 4): per line, the outline seen from each end; the primary
    # contacts are the left one of smallest Δr and the right one of largest (ties: lowest
    # line). This loop and the collision loop stay here, not in helpers: a helper holding
    # either loop, or the pair of searches of one line, measured 1 to 45% slower (the mix of
    # bench_scoring, one thread, paired runs); Numba's inlining leaves those ones costlier.
    i_l = -1
    i_r = -1
    if inside:  # the coarse searches of all lines at once: left, then right where left hit
        j_l[:] = 0.0
        _coarse_hits(sil, x, y, c, s, dw, -c, -s, half_r, n_samples, step, j_l,
                     scratch[S_END_COL_LEFT], scratch[S_END_ROW_LEFT], active)
        j_r[:] = j_l
        _coarse_hits(sil, x, y, c, s, dw, c, s, half_r, n_samples, step, j_r,
                     scratch[S_END_COL_RIGHT], scratch[S_END_ROW_RIGHT], active)
    for i in range(dw.shape[0]):
        if inside:
            jl, el = _refined(sil, blur, scratch, S_END_COL_LEFT, S_END_ROW_LEFT, -c, -s,
                              j_l[i], step, i)
            jr, er = _refined(sil, blur, scratch, S_END_COL_RIGHT, S_END_ROW_RIGHT, c, s,
                              j_r[i], step, i)
        else:
            lx, ly = _line_centre(x, y, c, s, dw[i])
            jl, el = _end_distance(sil, blur, lx, ly, -c, -s, half_r, n_samples, step)
            jr, er = -1, -1.0
            if jl >= 0:  # a line the left search crossed without a hit has no grasp points
                jr, er = _end_distance(sil, blur, lx, ly, c, s, half_r, n_samples, step)
        d_l[i] = -half_r + el if el >= 0.0 else np.nan
        d_r[i] = half_r - er if er >= 0.0 else np.nan
        j_l[i] = jl
        j_r[i] = jr
        if el >= 0.0 and (i_l < 0 or d_l[i] < d_l[i_l]):
            i_l = i
        if er >= 0.0 and (i_r < 0 or d_r[i] > d_r[i_r]):
            i_r = i
    if i_l < 0 or i_r < 0:
        outb[B_MISSING, k] = True
        return

    # The four features (eqs. 9-15), their scores and the score (eq. 16).
    d_t = _d_t(d_l, d_r, i_l, i_r, r)
    r_r = 0.0  # the primaries on one line of action: no rotation
    if _forms_couple(d_l, d_r, dw, i_l, i_r, prm[P_BALANCE_TOL_PX]):
        r_r = _r_r(d_l, d_r, dw, i_l, i_r, prm[P_LEVER_PX], prm[P_NO_PIVOT_RAD])
    tol = prm[P_SECONDARY_TOL_PX]
    n_l, beta_l, w_min_l, w_max_l = _side_contacts(nang, x, y, c, s, theta_w, dw, d_l, j_l,
                                                   d_l[i_l], half_r, tol, 0)
    n_r, beta_r, w_min_r, w_max_r = _side_contacts(nang, x, y, c, s, theta_w, dw, d_r, j_r,
                                                   d_r[i_r], half_r, tol, 1)
    s_a = _s_a(beta_l, n_l, beta_r, n_r)
    s_f = _s_f(w_min_l, w_max_l, w_min_r, w_max_r)

    sc_dt = _normalise(d_t, prm[P_D_T_THRESHOLD])
    sc_rr = _normalise(r_r, prm[P_R_R_THRESHOLD])
    sc_sa = _normalise(s_a, prm[P_S_A_THRESHOLD])
    sc_sf = _normalise_s_f(s_f, w, prm[P_S_F_KNEE_FRACTION], prm[P_S_F_KNEE_SCORE],
                           prm[P_S_F_ZERO_FRACTION])
    outf[F_SCORE, k] = _score(sc_dt, sc_rr, sc_sa, sc_sf, prm[P_K])
    outf[F_D_T, k] = d_t
    outf[F_R_R, k] = r_r
    outf[F_S_A, k] = s_a
    outf[F_S_F, k] = s_f
    outf[F_SCORE_D_T, k] = sc_dt
    outf[F_SCORE_R_R, k] = sc_rr
    outf[F_SCORE_S_A, k] = sc_sa
    outf[F_SCORE_S_F, k] = sc_sf
    _write_primary_pixels(outf, k, x, y, c, s, dw, d_l, d_r, j_l, j_r, i_l, i_r, half_r)


@nb.njit(cache=True, parallel=True)
def score_kernel(sil, blur, nang, xs, ys, thetas, dw, w, r, step, prm, scratch, outf, outb):
    """Score every candidate (xs[k], ys[k], thetas[k]) into column k of the outputs.

    sil : (H, W) uint8; blur : (H, W) float32 smoothed silhouette; nang : (H, W) float32
    boundary normal angles, rad (NaN elsewhere); xs, ys, thetas : (N,) float64 pixels /
    radians; dw : (n,) float64 line offsets, px; w, r : finger width and open width, px; step :
    coarse search step, px; prm : (N_PARAMS,) float64, the P_* parameters; scratch :
    (chunk_count(N), N_SCRATCH, n) float64, one row per chunk of candidates; outf : (N_FLOAT_OUT, N) float32, the F_* rows;
    outb : (N_BOOL_OUT, N) bool, the B_* rows.
    """
    n_cand = xs.shape[0]
    n_chunks = scratch.shape[0]
    chunk = (n_cand + n_chunks - 1) // n_chunks
    for ch in nb.prange(n_chunks):
        rows = scratch[ch]
        active = np.empty(dw.shape[0], np.int64)  # the lines still searching (_coarse_hits)
        stop = min((ch + 1) * chunk, n_cand)
        for k in range(ch * chunk, stop):
            _score_one(sil, blur, nang, xs[k], ys[k], thetas[k], dw, w, r, step, prm,
                       rows, active, outf, outb, k)


@nb.njit(cache=True, parallel=True)
def grpv_kernel(sil, blur, xs, ys, thetas, dw, r, step, out):
    """Grasp distances Δr (px) of every candidate's grasp points into out[k, side, line].

    side 0 = left, 1 = right; NaN where the coarse search finds no object pixel (GRPV, eq. 4).
    """
    half_r = 0.5 * r
    n_samples = int(math.floor(r)) + 1
    for k in nb.prange(xs.shape[0]):
        c = math.cos(thetas[k])
        s = math.sin(thetas[k])
        for i in range(dw.shape[0]):
            lx = xs[k] - dw[i] * s
            ly = ys[k] + dw[i] * c
            jl, el = _end_distance(sil, blur, lx, ly, -c, -s, half_r, n_samples, step)
            er = -1.0
            if jl >= 0:
                _, er = _end_distance(sil, blur, lx, ly, c, s, half_r, n_samples, step)
            out[k, 0, i] = -half_r + el if el >= 0.0 else np.nan
            out[k, 1, i] = half_r - er if er >= 0.0 else np.nan
