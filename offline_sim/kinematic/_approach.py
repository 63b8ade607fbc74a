"""The approach: the open hand translates along its approach direction from where it starts
clear of the object to the pre-grasp, and stops at the first position of a lattice within the
contact tolerance of the object or the table; ApproachMemo lets the poses of a P(fc) grid skip
the queries that their neighbours' gaps make needless, without changing where the hand stops.
"""
from __future__ import annotations

import numpy as np

from geometry import matrix_to_quat
from ._gaps import query_gaps
from ._model import ClosingModel

# a gap bound must clear the contact tolerance by more than MuJoCo's distance error
# (its convex collider stops at ccd_tolerance, 1e-6 by default) to stand for a query
_GAP_NOISE = 1e-5


class ApproachMemo:
    """The approach queries of earlier poses of one grasp, for later poses to skip queries.

    Each pose of a P(fc) grid moves the object and not the hand, so an object gap measured
    at travel t on an earlier pose is still a lower bound at t less the most any point of the
    object has moved between the two poses (bounded over the vertices of the object's convex
    geoms), and a table gap stands as measured. Keeps the poses of the last `history` closings.
    """

    def __init__(self, closer: ClosingModel, centre: np.ndarray | None = None,
                 history: int = 48) -> None:
        m, d, w = closer.model, closer.data, closer.world
        import mujoco

        # points of the object at the nominal pose (world) whose motion bounds that of every
        # point of it: the vertices of its mesh geoms (MuJoCo collides a mesh's convex hull,
        # and how far a point moves is convex in the point, so its maximum over a hull is at
        # a vertex) and the bounding spheres of other geoms, radius 0 for the vertices
        saved = d.qpos.copy()
        d.qpos[:] = m.qpos0
        q = w.object_qposadr
        d.qpos[q:q + 3] = w.T_world_object[:3, 3]
        d.qpos[q + 3:q + 7] = matrix_to_quat(w.T_world_object[:3, :3])
        mujoco.mj_kinematics(m, d)
        points, radii = [], []
        for g in np.flatnonzero(closer.is_object):
            R, p = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g]
            if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
                k = m.geom_dataid[g]
                v = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
                points.append(v @ R.T + p)
                radii.append(np.zeros(len(v)))
            else:
                points.append(p[None, :].copy())
                radii.append(np.array([m.geom_rbound[g]]))
        d.qpos[:] = saved
        points, radii = np.concatenate(points), np.concatenate(radii)
        # about a centre c0, the reach of those points (with their radii) in 3-D and away
        # from the vertical axis through c0 (the grid turns the object about that axis)
        self.c0 = points.mean(axis=0) if centre is None else np.asarray(centre, np.float64)
        u = points - self.c0
        self.reach = float((np.linalg.norm(u, axis=1) + radii).max())
        self.reach_z = float((np.linalg.norm(u[:, :2], axis=1) + radii).max())
        self.history = history
        self.poses: list[np.ndarray] = []  # displacements (4, 4) of the poses kept
        self.queries: list[list[tuple]] = []  # per pose: (t, table gap, pair gaps, pair rates)
        self.key: tuple | None = None

    def start(self, T_object_hand: np.ndarray, preshape: np.ndarray | None,
              T_displace: np.ndarray | None) -> None:
        """A new pose (displacement, world; None: at rest) of a grasp begins; a grasp other
        than the one the memo holds empties it (its hand path differs)."""
        key = (np.asarray(T_object_hand, np.float64).tobytes(),
               None if preshape is None else np.asarray(preshape, np.float64).tobytes())
        if key != self.key:
            self.key, self.poses, self.queries = key, [], []
        T = np.eye(4) if T_displace is None else np.asarray(T_displace, np.float64)
        self.poses.append(T)
        self.queries.append([])
        if len(self.poses) > self.history:
            del self.poses[0], self.queries[0]

    def moved(self, T_a: np.ndarray, T_b: np.ndarray) -> np.ndarray:
        """The most any point of the object moves between displacement T_a (4, 4) and each
        of T_b (H, 4, 4): for a point c0 + u, (R_a - R_b) u + (R_a - R_b) c0 + t_a - t_b,
        where |(R_a - R_b) u| = |(I - R_aᵀ R_b) u| = 2 sin(φ/2) |u across the axis of
        R_aᵀ R_b| for its angle φ, and 2 sin(φ/2) = sqrt(3 - tr(R_aᵀ R_b)). The reach across
        the axis is reach_z where that axis is the vertical (the grid's turns, up to 1e-9),
        else the 3-D reach."""
        Ra, Rb = T_a[:3, :3], T_b[:, :3, :3]
        M = np.einsum("ji,hjk->hik", Ra, Rb)  # R_aᵀ R_b
        tilt = np.abs(M[:, 2, :2]).sum(axis=1) + np.abs(M[:, :2, 2]).sum(axis=1)
        spin = np.sqrt(np.maximum(3.0 - np.einsum("hii->h", M), 0.0) + 1e-15)  # + the trace's rounding
        reach = np.where(tilt < 1e-9, self.reach_z + 2.0 * tilt * self.reach, self.reach)
        shift = (Ra[None] - Rb) @ self.c0 + (T_a[:3, 3] - T_b[:, :3, 3])
        return (np.linalg.norm(shift, axis=1) + spin * reach) * (1.0 + 1e-9) + 1e-9

    def records(self, keep: int = 12):
        """What the queries of the `keep` kept earlier poses nearest the current one (by
        moved) measured, for _approach's clear_around: travel t (Q,), table gap (Q,),
        object pair gaps g and closing rates k (P,), query q's pairs start[q]:start[q + 1],
        and how far the object has moved since each (Q,); None when there is nothing."""
        from . import _closing_kernels as kern

        if len(self.poses) < 2:
            return None
        moved = np.empty(len(self.poses) - 1)
        kern.object_motion(self.poses[-1], np.asarray(self.poses[:-1]), self.c0, self.reach,
                           self.reach_z, moved)
        picks = np.argsort(moved, kind="stable")[:keep]
        flat = [(x, moved[i]) for i in picks for x in self.queries[i]]
        if not flat:
            return None
        t = np.array([x[0] for x, _ in flat])
        g_tab = np.array([x[1] for x, _ in flat])
        g = np.concatenate([x[2] for x, _ in flat])
        k = np.concatenate([x[3] for x, _ in flat])
        start = np.zeros(len(flat) + 1, np.int64)
        np.cumsum([len(x[2]) for x, _ in flat], out=start[1:])
        return t, g_tab, g, k, start, np.array([e for _, e in flat])

    def add(self, t: float, g_tab: float, g: np.ndarray, k: np.ndarray) -> None:
        """A query of the current pose: travel t, table gap, object pairs' gaps and rates."""
        self.queries[-1].append((t, g_tab, g, k))


def approach_lattice(cm: ClosingModel, approach: np.ndarray, warm: ApproachMemo | None = None):
    """The approach on a lattice of hand positions t_j = j h (h = contact_tol_m / 2,
    the last one the pre-grasp): the hand stops at the first lattice position whose gap
    to the object or table is below contact_tol_m (a contact), or at the pre-grasp.
    Between lattice positions 0.25 mm apart nothing can be passed through, since each
    stop is a whole tolerance clear. Which positions are queried does not change where
    the hand stops, only how many queries it takes: a query at t clears the positions
    where every hand-object pair it measured (to approach_margin_m) stays more than tol
    apart along the direction it was measured in (its gap less the travel times the
    approach's component along that direction: _closing_kernels.object_reach), and
    where the table's height does (see ClosingSettings); warm (what earlier poses of
    the same grasp measured) clears them too, its object gaps less the most the object
    has moved since (the hand's path is the same for every pose). So the stop, its
    contacts and everything after are those of a cold approach (tested against querying
    every position). Returns (steps, None) when the hand starts inside an obstacle,
    else (steps, (reached the pre-grasp, gaps per hand geom at the stop, capped at margin_m))."""
    import mujoco

    from . import _closing_kernels as kern

    m, s, d = cm.model, cm.settings, cm.data
    tol = s.contact_tol_m
    total = cm.withdraw_m
    h = 0.5 * tol
    n = int(np.ceil(total / h))  # lattice 0..n, position n the pre-grasp
    cap = s.approach_margin_m
    d.qpos[cm.carrier_qadr] = -total * approach
    mujoco.mj_kinematics(m, d)
    # how fast the hand sinks towards the table's top per metre of approach; valid
    # as the table's gap rate while every hand geom stays over the top face (then
    # its gap to the box is its height above the top) and for a plane everywhere
    sink = float(-(approach @ cm.table_R[:, 2]))
    if cm.table_kind == mujoco.mjtGeom.mjGEOM_BOX:
        xy = (d.geom_xpos[cm.hand_geoms] - cm.table_top) @ cm.table_R[:, :2]
        reach = cm.hand_rbound + total
        if np.any(np.abs(xy) + reach[:, None] > cm.table_half[None, :]):
            sink = 1.0  # beyond the footprint: the Euclidean bound
    elif cm.table_kind != mujoco.mjtGeom.mjGEOM_PLANE:
        sink = 1.0
    clear_obj = np.zeros(n + 1, bool)  # lattice positions known to be clear of each
    clear_tab = np.zeros(n + 1, bool)
    clearance = tol + _GAP_NOISE

    def clear_around(t: np.ndarray, g_tab: np.ndarray, g: np.ndarray, k: np.ndarray,
                     start: np.ndarray, moved: np.ndarray) -> None:
        """Mark clear what queries at travel t (Q,) clear: of the object, by their pairs'
        gaps and closing rates (see _closing_kernels.object_reach), less how far the
        object has moved since (moved (Q,)); of the table, by its gap g_tab (Q,), both
        ways Euclidean and in the direction it grows as far as its height allows."""
        ahead, behind = np.empty(len(t)), np.empty(len(t))
        kern.object_reach(g, k, start, moved, cap, clearance, ahead, behind)
        kern.mark_clear(clear_obj, t - behind, t + ahead, h, total)
        r = g_tab - clearance
        ok = r >= 0
        r = r[ok]
        ahead = np.maximum(r, r / sink) if sink > 0 else np.full(r.shape, np.inf)
        behind = np.maximum(r, r / -sink) if sink < 0 else np.full(r.shape, np.inf)
        kern.mark_clear(clear_tab, t[ok] - behind, t[ok] + ahead, h, total)

    if warm is not None:
        prior = warm.records()
        if prior is not None:
            clear_around(*prior)
    if cap != s.margin_m:
        m.geom_margin[cm.hand_geoms] = cap
    steps, j, measured = 0, 0, -1
    g_obj, g_tab = cm.gap_object, cm.gap_table
    a = np.ascontiguousarray(approach, np.float64)
    try:
        while True:
            if not (clear_obj[j] and clear_tab[j]) or j == n:
                t = total if j == n else j * h
                d.qpos[cm.carrier_qadr] = -(total - t) * approach
                con = query_gaps(cm, cap)
                pairs, dist = con.geom, con.dist
                measured, steps = j, steps + 1
                go, gt = float(g_obj.min()), float(g_tab.min())
                if j == 0 and min(go, gt) < -tol:
                    return steps, None
                if min(go, gt) < tol or j == n:
                    break
                pg, pk = np.empty(len(dist)), np.empty(len(dist))
                npair = kern.pair_slopes(pairs, dist, con.frame, cm.slot, cm.table_geom, a, pg, pk)
                pg, pk = pg[:npair], pk[:npair]
                if warm is not None:
                    warm.add(t, gt, pg, pk)
                clear_around(np.array([t]), np.array([gt]), pg, pk, np.array([0, npair]),
                             np.zeros(1))
            if steps >= s.max_steps:
                break
            # on to the first position not known to be clear (or the pre-grasp)
            ahead = np.flatnonzero(~(clear_obj[j + 1:n] & clear_tab[j + 1:n]))
            j = j + 1 + int(ahead[0]) if ahead.size else n
    finally:
        if cap != s.margin_m:
            m.geom_margin[cm.hand_geoms] = s.margin_m
    assert measured == j  # the stop was queried: the data holds its contacts
    # the closing reads gaps within margin_m: a gap beyond it is capped there, as the
    # closing's own queries report it (the contacts of grasp_contacts need dist < 2 tol only)
    gap = np.minimum(np.minimum(g_obj, g_tab), s.margin_m)
    return steps, (j == n, gap)
