"""Numba kernels of the kinematic closing's per-step arithmetic (KinematicCloser's fast path).

Each does what a few lines of NumPy did in the kinematic closer, on a handful of numbers, so
that a closing step costs its MuJoCo collision query and little Python around it. The NumPy
lines stay as the tests' reference path (tests/offline_sim/kinematic_reference.py); the
kernels and the contacts of the two paths are compared in tests/offline_sim/test_kinematic.py.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def split_gaps(pairs: np.ndarray, dist: np.ndarray, slot: np.ndarray, table_geom: int,
               cap: float, g_obj: np.ndarray, g_tab: np.ndarray) -> None:
    """Per hand geom the smallest gap to the object (g_obj) and to the table (g_tab), capped
    at cap. pairs (n, 2) int32 geom ids of MuJoCo's contacts, dist (n,) their distances (m);
    slot : per model geom its index among the hand geoms, -1 for others. Every pair is
    hand-obstacle (hand geoms do not collide with each other)."""
    g_obj[:] = cap
    g_tab[:] = cap
    for i in range(pairs.shape[0]):
        a, b = pairs[i, 0], pairs[i, 1]
        if slot[a] >= 0:
            k, other = slot[a], b
        else:
            k, other = slot[b], a
        if other == table_geom:
            if dist[i] < g_tab[k]:
                g_tab[k] = dist[i]
        elif dist[i] < g_obj[k]:
            g_obj[k] = dist[i]


@nb.njit(cache=True)
def closing_step(gap: np.ndarray, q: np.ndarray, moving: np.ndarray, carries: np.ndarray,
                 speeds: np.ndarray, limit: np.ndarray, hinge: np.ndarray, geom_xpos: np.ndarray,
                 hand_geoms: np.ndarray, rbound: np.ndarray, xanchor: np.ndarray,
                 joints: np.ndarray, tol: float) -> bool:
    """One conservative-advancement step of the closing joints, in place: joints whose
    carried geoms are within tol of an obstacle (gap (G,), m) or at their limit stop
    (moving (J,) bool); the others advance q (J,) at speeds (J,) for the longest time in
    which no point of a geom moves further than its gap less tol/2 (a point's speed bounded
    by its joints' speeds times their reach: distance from the hinge's anchor plus the geom's
    bounding radius, 1 for a slide), or until a limit. Returns False when no joint moves."""
    nj, ng = carries.shape
    any_moving = False
    for j in range(nj):
        if moving[j]:
            if q[j] == limit[j]:
                moving[j] = False
                continue
            for g in range(ng):
                if carries[j, g] and gap[g] < tol:
                    moving[j] = False
                    break
            if moving[j]:
                any_moving = True
    if not any_moving:
        return False
    dt = np.inf
    for g in range(ng):
        hg = hand_geoms[g]
        rate = 0.0
        for j in range(nj):
            if moving[j] and carries[j, g]:
                if hinge[j]:
                    a = joints[j]
                    dx = geom_xpos[hg, 0] - xanchor[a, 0]
                    dy = geom_xpos[hg, 1] - xanchor[a, 1]
                    dz = geom_xpos[hg, 2] - xanchor[a, 2]
                    rate += abs(speeds[j]) * (np.sqrt(dx * dx + dy * dy + dz * dz) + rbound[g])
                else:
                    rate += abs(speeds[j])
        if rate > 0:
            t = (max(gap[g], tol) - 0.5 * tol) / rate
            if t < dt:
                dt = t
    for j in range(nj):
        if moving[j]:
            t = (limit[j] - q[j]) / speeds[j]
            if t < dt:
                dt = t
    for j in range(nj):
        if moving[j]:
            v = q[j] + speeds[j] * dt
            if (v - limit[j]) * np.sign(speeds[j]) >= 0:
                v = limit[j]
            q[j] = v
    return True


@nb.njit(cache=True)
def mark_clear(clear: np.ndarray, lo: np.ndarray, hi: np.ndarray, h: float, total: float) -> None:
    """Mark clear the lattice positions t_j = j h (j < n) and t_n = total that lie in any
    interval [lo_i, hi_i] (metres of travel); clear (n + 1,) bool."""
    n = clear.shape[0] - 1
    for i in range(lo.shape[0]):
        a_f, b_f = max(lo[i], 0.0), min(hi[i], total)
        if b_f < a_f:
            continue
        a = max(int(np.ceil(a_f / h)), 0)
        b = min(int(np.floor(b_f / h)), n - 1)
        for j in range(a, b + 1):
            clear[j] = True
        if a_f <= total <= b_f:
            clear[n] = True


@nb.njit(cache=True)
def pair_slopes(pairs: np.ndarray, dist: np.ndarray, frame: np.ndarray, slot: np.ndarray,
                table_geom: int, approach: np.ndarray, g_out: np.ndarray, k_out: np.ndarray) -> int:
    """Per hand-object geom pair among MuJoCo's contacts, its gap (the smallest distance of
    the pair's contacts, m) and how fast the approach closes it: k = approach . n, n the
    unit normal of that contact pointing from the hand geom to the object geom (the
    direction along which the pair is that far apart). Table pairs are left out. Writes
    g_out[:P], k_out[:P] and returns P."""
    n_pairs = 0
    keys = np.empty(pairs.shape[0], np.int64)
    for i in range(pairs.shape[0]):
        a, b = pairs[i, 0], pairs[i, 1]
        if slot[a] >= 0:
            hand, other, sign = a, b, 1.0
        else:
            hand, other, sign = b, a, -1.0
        if other == table_geom:
            continue
        key = hand * 1_000_003 + other
        k = sign * (approach[0] * frame[i, 0] + approach[1] * frame[i, 1] + approach[2] * frame[i, 2])
        found = -1
        for p in range(n_pairs):
            if keys[p] == key:
                found = p
                break
        if found < 0:
            keys[n_pairs] = key
            g_out[n_pairs] = dist[i]
            k_out[n_pairs] = k
            n_pairs += 1
        elif dist[i] < g_out[found]:
            g_out[found] = dist[i]
            k_out[found] = k
    return n_pairs


@nb.njit(cache=True)
def object_reach(g: np.ndarray, k: np.ndarray, start: np.ndarray, moved: np.ndarray, cap: float,
                 clearance: float, ahead: np.ndarray, behind: np.ndarray) -> None:
    """How far the hand may move ahead of and behind each query along the approach and stay
    clearance (m) clear of the object, which has moved by moved[q] (m) since query q.
    Query q measured pairs start[q]:start[q + 1] with gaps g and closing rates k (see
    pair_slopes); pairs it did not report were at least cap apart. A pair g apart along n
    is, after the hand translates by s along the approach, g - k s apart along n (exactly:
    a translation), and its distance is at least that (for the closest points' direction
    the two are equal, and the distance of two convex geoms, one translating along a line,
    is convex in the travel with that slope): so ahead s <= (g - clearance - moved) / k where
    k > 0 (no limit where k <= 0), behind s <= (g - clearance - moved) / -k where k < 0;
    unreported pairs allow cap - clearance - moved either way. -1 where the query clears
    nothing."""
    for q in range(start.shape[0] - 1):
        base = cap - clearance - moved[q]
        a, b = base, base
        for p in range(start[q], start[q + 1]):
            r = g[p] - clearance - moved[q]
            if r < 0:
                a, b = -1.0, -1.0
                break
            if k[p] > 0:
                a = min(a, r / k[p])
            elif k[p] < 0:
                b = min(b, r / -k[p])
        ahead[q] = a
        behind[q] = b


@nb.njit(cache=True)
def object_motion(T_a: np.ndarray, T_b: np.ndarray, c0: np.ndarray, reach: float, reach_z: float,
                  out: np.ndarray) -> None:
    """_ApproachMemo.moved's bound for each of T_b (H, 4, 4) against T_a (4, 4), into out (H,):
    |(R_a - R_b) c0 + t_a - t_b| + sqrt(3 - tr(R_aᵀ R_b)) times the object's reach across the
    axis of R_aᵀ R_b (reach_z, widened by the tilt, where that axis is within 1e-9 of the
    vertical; else reach), inflated by 1e-9 relative and absolute for rounding."""
    for h in range(T_b.shape[0]):
        tr = 0.0
        tilt = 0.0
        for i in range(3):
            for jj in range(3):
                mij = 0.0  # (R_aᵀ R_b)[i, jj]
                for k in range(3):
                    mij += T_a[k, i] * T_b[h, k, jj]
                if i == jj:
                    tr += mij
                elif i == 2 or jj == 2:
                    tilt += abs(mij)
        spin = np.sqrt(max(3.0 - tr, 0.0) + 1e-15)
        r = reach_z + 2.0 * tilt * reach if tilt < 1e-9 else reach
        s2 = 0.0
        for i in range(3):
            v = T_a[i, 3] - T_b[h, i, 3]
            for k in range(3):
                v += (T_a[i, k] - T_b[h, i, k]) * c0[k]
            s2 += v * v
        out[h] = (np.sqrt(s2) + spin * r) * (1.0 + 1e-9) + 1e-9
