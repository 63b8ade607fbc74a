"""Antipodal candidates: pairs of silhouette boundary pixels whose outward normals oppose
within the friction cone, at a distance the open jaw spans (the 2-D analogue of Dex-Net's
antipodal sampler); each pair gives a candidate centred between them, closing along them or
square to the faces they lie on."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from ._measure import PreparedSilhouette, _checked_target, _prepared
from ._types import GripperProjection, MeasureParams

# Boundary pixels taken per silhouette at most (a random, seeded subset beyond): the pairing
# loop is quadratic in them; 400 pixels is the whole outline of a 120 mm object at 1 mm/px.
MAX_BOUNDARY_PX = 400
# Pairs closer than this (pixels) are one side's two neighbours, not two sides.
MIN_PAIR_PX = 2.0


@dataclass(frozen=True)
class AntipodalPairs:
    """Candidates on antipodal boundary pairs, one entry per pair: x, y (N,) float64 the grasp
    centre, pixels (column, row), the pair's midpoint; contact_a, contact_b (N, 2) float64
    the pair's pixels (column, row), contact_b the one further along (cos θ, sin θ); theta
    (N,) float64 the closing direction, radians in [0, π): for even entries along the pair,
    for odd ones along the bisector of the two inward normals (n_b - n_a), which on two
    parallel faces closes square to them wherever on them the pair lies."""

    x: np.ndarray
    y: np.ndarray
    theta: np.ndarray
    contact_a: np.ndarray
    contact_b: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


@nb.njit(cache=True, nogil=True)
def _pair_kernel(cols, rows, ncol, nrow, cos_cone, min_d, max_d, out_a, out_b):
    """Write the index pairs (a < b) of boundary pixels (cols, rows; outward unit normals
    ncol, nrow, image axes) at a distance in [min_d, max_d] pixels whose normals both lie
    within the cone (cosine cos_cone) about the line joining them, pointing apart, into
    out_a, out_b (room for every pair); return how many."""
    n = cols.shape[0]
    k = 0
    lo2, hi2 = min_d * min_d, max_d * max_d
    for a in range(n):
        for b in range(a + 1, n):
            dx = cols[b] - cols[a]
            dy = rows[b] - rows[a]
            d2 = dx * dx + dy * dy
            if d2 < lo2 or d2 > hi2:
                continue
            d = math.sqrt(d2)
            ux, uy = dx / d, dy / d
            # a's outward normal points away from b, b's away from a: the fingers push
            # each contact inwards, along the line, within the cone
            if -(ncol[a] * ux + nrow[a] * uy) < cos_cone:
                continue
            if ncol[b] * ux + nrow[b] * uy < cos_cone:
                continue
            out_a[k] = a
            out_b[k] = b
            k += 1
    return k


def antipodal_candidates(silhouette: np.ndarray | PreparedSilhouette,
                         projection: GripperProjection, *, target: np.ndarray | None = None,
                         friction: float = 1.0, max_candidates: int = 512,
                         max_boundary_px: int = MAX_BOUNDARY_PX,
                         seed: int | np.random.Generator | None = 0,
                         params: MeasureParams | None = None) -> AntipodalPairs:
    """At most max_candidates candidates on antipodal boundary pairs (AntipodalPairs).

    A pair is two boundary pixels of the target (the whole silhouette when target is None)
    with outward normals (Tan eqs. 6-8, ``normal_field``) within the friction cone (half-angle
    atan(friction)) about the line joining them, pointing apart, and at most the open width
    apart; the candidate is the pair's midpoint, closing along the pair (even entries) or
    along the bisector of the pair's inward normals (odd entries). Boundary pixels
    touching a neighbour in the silhouette have no normal and make no pair. Beyond
    max_boundary_px boundary pixels, and beyond max_candidates pairs, a seeded random subset
    is taken: same seed, same candidates.
    """
    for name, v in (("max_candidates", max_candidates), ("max_boundary_px", max_boundary_px)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"antipodal_candidates: {name} must be an integer >= 1, got {v!r}")
    if not (isinstance(friction, (int, float)) and math.isfinite(friction) and friction > 0):
        raise ValueError(f"antipodal_candidates: friction must be a finite number > 0, "
                         f"got {friction!r}")
    if not isinstance(projection, GripperProjection):
        raise ValueError(f"projection must be a GripperProjection, got {type(projection).__name__}")
    prepared = _prepared(silhouette, params or MeasureParams())
    target = _checked_target(target, prepared.mask.shape)
    rng = np.random.default_rng(seed)
    on = np.isfinite(prepared.normal_angle)
    if target is not None:
        on &= target != 0
    rows, cols = np.nonzero(on)
    if rows.size > max_boundary_px:
        pick = np.sort(rng.choice(rows.size, max_boundary_px, replace=False))
        rows, cols = rows[pick], cols[pick]
    n = rows.size
    if n < 2:
        e = np.empty(0)
        return AntipodalPairs(e, e.copy(), e.copy(), np.empty((0, 2)), np.empty((0, 2)))
    out_a = np.empty(n * (n - 1) // 2, np.int64)
    out_b = np.empty_like(out_a)
    cf, rf = cols.astype(np.float64), rows.astype(np.float64)
    k = _pair_kernel(cf, rf, prepared.normal_col[rows, cols], prepared.normal_row[rows, cols],
                     math.cos(math.atan(friction)), MIN_PAIR_PX,
                     float(projection.open_width_px), out_a, out_b)
    a, b = out_a[:k], out_b[:k]
    if k > max_candidates:
        pick = np.sort(rng.choice(k, max_candidates, replace=False))
        a, b = a[pick], b[pick]
    # a < b in raster order: b is never above a, so the pair's direction is in [0, π]
    ca = np.stack([cf[a], rf[a]], axis=1)
    cb = np.stack([cf[b], rf[b]], axis=1)
    along = np.arctan2(cb[:, 1] - ca[:, 1], cb[:, 0] - ca[:, 0])
    na_c, na_r = prepared.normal_col[rows, cols], prepared.normal_row[rows, cols]
    square = np.arctan2(na_r[b] - na_r[a], na_c[b] - na_c[a])
    # a random pair on two parallel faces is mostly oblique to them; the measure scores the
    # square closing best (Tan's S_a, S_f), so half the candidates close that way
    theta = np.where(np.arange(a.size) % 2 == 0, along, square) % np.pi
    theta[theta >= np.pi] = 0.0  # a tiny negative angle rounds to π modulo π
    return AntipodalPairs(0.5 * (ca[:, 0] + cb[:, 0]), 0.5 * (ca[:, 1] + cb[:, 1]), theta,
                          ca, cb)
