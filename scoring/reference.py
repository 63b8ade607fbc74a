"""Plain-Python reference of the image-space measure, for tests only.

The same reading of Tan et al. as the Numba kernel (see docs/design.md), written for clarity
rather than speed: one candidate at a time, the contact normals computed from their 7 x 7
window directly instead of from a precomputed field. Tests hold the kernel to it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._types import GripperProjection, MeasureParams


@dataclass
class ReferenceResult:
    """Outputs for one candidate; raw features None when not evaluated."""

    score: float
    collision: bool
    missing: bool
    d_t: float | None = None
    r_r: float | None = None
    s_a: float | None = None
    s_f: float | None = None
    score_d_t: float = 0.0
    score_r_r: float = 0.0
    score_s_a: float = 0.0
    score_s_f: float = 0.0


def _value(sil: np.ndarray, px: float, py: float) -> int:
    """Pixel value nearest to (column px, row py); 0 outside the image."""
    col, row = math.floor(px + 0.5), math.floor(py + 0.5)
    if 0 <= row < sil.shape[0] and 0 <= col < sil.shape[1]:
        return int(sil[row, col] != 0)
    return 0


def reference_normal(sil: np.ndarray, row: int, col: int, m: int = 7) -> tuple[float, float]:
    """Outward normal (n_col, n_row) at a pixel from the circular m x m window (eqs. 6-8)."""
    half = m // 2
    sum_x = sum_y = 0.0
    for dy in range(-half, half + 1):
        for dx in range(-half, half + 1):
            r, c = row + dy, col + dx
            if not (0 <= r < sil.shape[0] and 0 <= c < sil.shape[1]) or sil[r, c] == 0:
                continue
            weight = min(max(m / 2.0 - math.hypot(dx, dy), 0.0), 1.0)
            sum_x += weight * dx
            sum_y += weight * dy
    norm = math.sqrt(sum_x * sum_x + sum_y * sum_y)
    if norm < 1e-12:
        return 0.0, 0.0
    return -sum_x / norm, -sum_y / norm


def _blurred(sil: np.ndarray, row: int, col: int, sigma: float) -> float:
    """Gaussian-smoothed silhouette value at a pixel (off-image pixels are 0)."""
    radius = max(1, math.ceil(3.0 * sigma))
    taps = [math.exp(-0.5 * (k / sigma) ** 2) for k in range(-radius, radius + 1)]
    total = sum(taps)
    acc = 0.0
    for i, ti in enumerate(taps):
        for j, tj in enumerate(taps):
            r, c = row + i - radius, col + j - radius
            if 0 <= r < sil.shape[0] and 0 <= c < sil.shape[1] and sil[r, c]:
                acc += (ti / total) * (tj / total)
    return acc


def _bilinear(sil: np.ndarray, px: float, py: float, sigma: float) -> float:
    """Smoothed silhouette interpolated at (column px, row py)."""
    c0, r0 = math.floor(px), math.floor(py)
    fx, fy = px - c0, py - r0
    return ((1 - fy) * ((1 - fx) * _blurred(sil, r0, c0, sigma) + fx * _blurred(sil, r0, c0 + 1, sigma))
            + fy * ((1 - fx) * _blurred(sil, r0 + 1, c0, sigma)
                    + fx * _blurred(sil, r0 + 1, c0 + 1, sigma)))


def _outermost(sil, x, y, c, s, dw, r, step, side, sigma):
    """(Δr of the object's outline seen from one side's end, the object sample's position), or None.

    Pixel search as in the paper, then the outline placed between the last vacant and the
    first object sample where the smoothed silhouette crosses 0.5.
    """
    half = r / 2.0
    n_samples = math.floor(r) + 1
    delta = (lambda j: -half + j) if side == "L" else (lambda j: half - j)
    point = lambda j: (x - dw * s + delta(j) * c, y + dw * c + delta(j) * s)  # eqs. 1-2
    for j in range(step, n_samples, step):  # coarse search
        if _value(sil, *point(j)):
            first = j
            for back in range(j - 1, j - step, -1):  # fine search, backwards
                if not _value(sil, *point(back)):
                    break
                first = back
            b_in = _bilinear(sil, *point(first), sigma)
            b_out = _bilinear(sil, *point(first - 1), sigma)
            t = min(max((0.5 - b_out) / (b_in - b_out), 0.0), 1.0) if b_in > b_out else 1.0
            return delta(first - 1 + t), point(first)
    return None


def _normalised(value, threshold):
    return min(max(1.0 - value / threshold, 0.0), 1.0)


def reference_score(sil: np.ndarray, x: float, y: float, theta: float,
                    projection: GripperProjection,
                    params: MeasureParams | None = None) -> ReferenceResult:
    """Score one candidate (x = column, y = row, θ radians) the slow, readable way."""
    p = params or MeasureParams()
    w, r = float(projection.finger_width_px), float(projection.open_width_px)
    offsets = [float(v) for v in projection.line_offsets_px()]
    c, s = math.cos(theta), math.sin(theta)
    half = r / 2.0

    for dw in offsets:
        for end in (-half, half):
            if _value(sil, x - dw * s + end * c, y + dw * c + end * s):
                return ReferenceResult(0.0, True, False)

    step = p.coarse_step(r)
    sigma = p.outline_sigma_px
    found_l = {i: f for i, dw in enumerate(offsets)
               if (f := _outermost(sil, x, y, c, s, dw, r, step, "L", sigma)) is not None}
    # a line whose left search found nothing has no grasp points; the right search is skipped
    found_r = {i: f for i, dw in enumerate(offsets)
               if i in found_l and (f := _outermost(sil, x, y, c, s, dw, r, step, "R", sigma)) is not None}
    left = {i: f[0] for i, f in found_l.items()}
    right = {i: f[0] for i, f in found_r.items()}
    if not left or not right:
        return ReferenceResult(0.0, False, True)

    # Primary contacts; ties go to the lowest line index.
    i_l = min(left, key=lambda i: (left[i], i))
    i_r = min(right, key=lambda i: (-right[i], i))
    d_t = abs(left[i_l] + right[i_r]) / r  # eq. 9

    near_l = [offsets[i] for i, d in left.items() if d - left[i_l] <= p.balance_tol_px]
    near_r = [offsets[i] for i, d in right.items() if right[i_r] - d <= p.balance_tol_px]
    if max(near_l) >= min(near_r) and max(near_r) >= min(near_l):
        r_r = 0.0  # the near-primary contact regions overlap in Δw: no couple
    else:
        turn = 1.0 if offsets[i_r] > offsets[i_l] else -1.0
        swings = []  # (lever px, angle rad) of grasp points that swing towards their plate
        for i, d in left.items():
            dy = offsets[i] - offsets[i_l]
            if i != i_l and turn * dy > 0:
                swings.append((abs(dy), math.atan2(d - left[i_l], abs(dy))))
        for i, d in right.items():
            dy = offsets[i] - offsets[i_r]
            if i != i_r and turn * dy < 0:
                swings.append((abs(dy), math.atan2(right[i_r] - d, abs(dy))))
        lever = p.min_lever_fraction * w
        far = [a for arm, a in swings if arm >= lever]
        r_r = min(far or [a for _, a in swings] or [p.no_pivot_angle_rad])  # eq. 10

    slippery_means = []
    centre_offsets = []
    for points, found, primary, push in ((left, found_l, left[i_l], 1.0),
                                         (right, found_r, right[i_r], -1.0)):
        contacts = [i for i, d in points.items() if push * (d - primary) <= p.secondary_tol_px]
        betas = []
        for i in contacts:
            px, py = found[i][1]  # the normal is read at the object pixel the search found
            col, row = math.floor(px + 0.5), math.floor(py + 0.5)
            n_col, n_row = reference_normal(sil, row, col, p.normal_window)
            n_gx, n_gy = n_col * c + n_row * s, -n_col * s + n_row * c  # into {G}
            if n_gx == 0.0 and n_gy == 0.0:
                betas.append(0.0)
                continue
            beta = min(math.acos(min(max(-push * n_gx, -1.0), 1.0)), math.pi / 2)
            betas.append(-beta if n_gy < 0 else beta)  # eq. 11
        # eqs. 12-13 made continuous: the side's net lean |mean β| (the paper's mean angle
        # when all β share a sign; the uncancelled part instead of 0 when they do not)
        slippery_means.append(abs(sum(betas)) / len(betas))
        span = [offsets[i] for i in contacts]
        centre_offsets.append(abs((min(span) + max(span)) / 2.0))  # eq. 14
    s_a = sum(slippery_means) / 2.0  # eq. 13
    s_f = sum(centre_offsets) / 2.0  # eq. 15

    knee, zero = p.s_f_knee_fraction * w, p.s_f_zero_fraction * w
    if s_f <= knee:
        sc_sf = 1.0 - (1.0 - p.s_f_knee_score) * s_f / knee
    else:
        sc_sf = p.s_f_knee_score * (1.0 - (s_f - knee) / (zero - knee))
    feature_scores = [_normalised(d_t, p.d_t_threshold), _normalised(r_r, p.r_r_threshold_rad),
                      _normalised(s_a, p.s_a_threshold_rad), min(max(sc_sf, 0.0), 1.0)]
    worst = min(feature_scores)
    others = (sum(feature_scores) - worst) / 3.0
    score = p.k * worst + (1.0 - p.k) * others  # eq. 16
    return ReferenceResult(score, False, False, d_t, r_r, s_a, s_f, *feature_scores)
