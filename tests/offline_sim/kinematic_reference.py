"""The kinematic closer's earlier paths, kept as the tests' reference (they ran inside
KinematicCloser as ClosingSettings(approach_margin_m=None) until the subpackage split).

close_stepped approaches by conservative advancement within margin_m, each step at most the
smallest Euclidean gap to the object or the table, and closes the joints with the per-step
arithmetic in NumPy (close_joints_numpy), where KinematicCloser.close stops the approach on a
lattice and runs the Numba kernels. Both stop within contact_tol_m of the first contact and
never pass through; their step sequences, and so their contacts within the tolerance, differ.
The arithmetic of close_joints_numpy's step is what the kernel closing_step computes.

Private names of offline_sim.kinematic are used here on purpose: this module re-runs the
closer's internals the slow way to check them.
"""
from __future__ import annotations

import numpy as np

from offline_sim.kinematic import ClosedGrasp, KinematicCloser
from offline_sim.kinematic._contacts import grasp_contacts


def close_stepped(closer: KinematicCloser, T_object_hand: np.ndarray,
                  T_displace: np.ndarray | None = None,
                  preshape: np.ndarray | None = None) -> ClosedGrasp:
    """KinematicCloser.close by the stepped approach and the NumPy closing (the path that
    ClosingSettings(approach_margin_m=None) chose before)."""
    d = closer.data
    approach = closer.set_start(T_object_hand, T_displace, preshape)
    d.qpos[closer.carrier_qadr] = -closer.withdraw_m * approach
    steps, gap = approach_stepped(closer, approach)
    if gap is None:  # the displaced object sits where the hand starts
        return grasp_contacts(closer, True, False, steps)
    reached, gap = gap
    steps = close_joints_numpy(closer, gap, steps)
    return grasp_contacts(closer, False, reached, steps)


def gaps(closer: KinematicCloser) -> np.ndarray:
    """Per hand geom the smallest gap (m, capped at the margin) to an obstacle, after
    kinematics and collision at the current qpos."""
    g_obj, g_tab = split_gaps(closer, closer.settings.margin_m)
    return np.minimum(g_obj, g_tab)


def split_gaps(closer: KinematicCloser, cap: float) -> tuple[np.ndarray, np.ndarray]:
    """Per hand geom the smallest gap (m, capped at cap, the margin in force) to the
    object and to the table, after kinematics and collision at the current qpos."""
    import mujoco

    m, d = closer.model, closer.data
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)
    nh = len(closer.hand_geoms)
    gap = np.full(2 * nh, cap)  # [object gaps | table gaps]
    n = d.ncon
    if n:
        con = d.contact
        g1, g2, dist = con.geom1[:n], con.geom2[:n], con.dist[:n]
        # every pair is hand-obstacle (hand geoms do not collide with each other)
        first_is_hand = closer.slot[g1] >= 0
        hand = np.where(first_is_hand, g1, g2)
        other = np.where(first_is_hand, g2, g1)
        np.minimum.at(gap, closer.slot[hand] + nh * (other == closer.table_geom), dist)
    return gap[:nh], gap[nh:]


def close_joints_numpy(closer: KinematicCloser, gap: np.ndarray, steps: int) -> int:
    """The closing phase in NumPy, as before the kernels: what _closing_kernels.closing_step
    computes per step, and a path whose contacts the fast one's are checked against."""
    s, d = closer.settings, closer.data
    tol = s.contact_tol_m
    q = d.qpos[closer.qadr].copy()
    moving = np.ones(len(closer.joints), bool)
    for _ in range(s.max_steps):
        blocked = (closer.carries & (gap < tol)[None, :]).any(axis=1)
        moving &= ~blocked & (q != closer.limit)
        if not moving.any():
            break
        lever = levers(closer)
        # fastest a point of geom g can move per second of closing: its joints' speeds
        # times their lever arms (an upper bound, so the step never overshoots the gap)
        rate = (np.abs(closer.speeds)[:, None] * lever * (closer.carries & moving[:, None])).sum(axis=0)
        live = rate > 0
        dt = float(np.min((np.maximum(gap[live], tol) - 0.5 * tol) / rate[live]))
        with np.errstate(divide="ignore", invalid="ignore"):
            to_limit = np.where(moving, (closer.limit - q) / closer.speeds, np.inf)
        dt = min(dt, float(to_limit.min()))
        q = np.where(moving, q + closer.speeds * dt, q)
        q = np.where(moving & ((q - closer.limit) * np.sign(closer.speeds) >= 0), closer.limit, q)
        d.qpos[closer.qadr] = q
        gap = gaps(closer)
        steps += 1
    return steps


def approach_stepped(closer: KinematicCloser, approach: np.ndarray):
    """The approach by conservative advancement within margin_m, every obstacle bounding
    a step by its Euclidean gap: (steps, None) when the hand starts inside an obstacle,
    else (steps, (reached the pre-grasp, gaps per hand geom at the stop))."""
    s, d = closer.settings, closer.data
    tol = s.contact_tol_m
    travel, steps = closer.withdraw_m, 0
    gap = gaps(closer)
    if gap.min() < -tol:
        return steps, None
    # approach: the whole hand translates, so every point moves by the step itself
    while travel > 0 and gap.min() >= tol and steps < s.max_steps:
        step = min(travel, gap.min() - 0.5 * tol)
        travel -= step
        d.qpos[closer.carrier_qadr] = -travel * approach
        gap = gaps(closer)
        steps += 1
    return steps, (travel <= 0, gap)


def levers(closer: KinematicCloser) -> np.ndarray:
    """(joints, hand geoms) metres a point of each geom moves per unit of each joint: the
    reach from a hinge's anchor (distance to the anchor plus the geom's bounding radius),
    or 1 for a slide."""
    m, d = closer.model, closer.data
    reach = np.linalg.norm(d.geom_xpos[closer.hand_geoms][None, :, :]
                           - d.xanchor[closer.joints][:, None, :], axis=2)
    reach += m.geom_rbound[closer.hand_geoms][None, :]
    return np.where(closer.hinge[:, None], reach, 1.0)
