"""Kinematic grasp closing against a fixed object, and Weisz & Allen's P(force closure).

Weisz & Allen (sec. II-A) run GraspIt!'s grasping heuristic with the object held still: the
hand approaches along its approach direction and stops at the pre-grasp or at the first
contact, then every finger joint closes until it is blocked by contact or by its limit; ε of
the contacts reached decides force closure. Here MuJoCo does the geometry: the hand moves by
writing joint positions (mj_kinematics) and the gaps come from its collision detection with a
contact margin (mj_collision reports every pair closer than the margin, with its distance), so
no dynamics runs and the object never moves.

Motion is by conservative advancement: each step moves every free point of the hand by at
most the gap in front of it, so nothing passes through the object, and gaps shrink
geometrically to the contact tolerance instead of creeping in fixed small steps. The approach
(a translation) stops at the first position of a 0.25 mm lattice along it that is within the
tolerance of a contact; which positions are queried only changes the cost, so P(fc)'s poses
skip the queries that their neighbours' gaps make needless (KinematicCloser._approach), and
the contacts are those of a cold approach, bit for bit.

Where a P(fc) grid's time goes (README, "P(fc)"): MuJoCo's collision queries, about 9 per
pose (an approach query costs about as much as a closing step), qhull on the poses whose
force closure no neighbour's hull settles, and the Python around both.

Departures from the paper (GraspIt! is not available; these are ours):
- Joints close at their drive speeds with no load (Kim eq. 1 at τ = 0), a tendon's speed split
  over its joints as compliant joints share it at rest (coefficient over stiffness). A joint
  stops when any link it carries touches the object or the table, so a BH8 finger whose
  proximal link is blocked curls its distal one on, as GraspIt!'s autograsp does.
- Joints coupled by an equality (a parallel jaw's mimic finger) start with the ratio of the
  coupling but stop independently: with the object fixed, a coupled jaw would otherwise stop
  at the first pad, where the real object would be pushed to the second.
- Phases 1a and 2a (withdrawing and re-opening the hand) collapse into starting the approach
  from the pre-grasp posture, which our candidates already hold open; phase 2b (approaching
  further for non-fingertip grasps) is left out, as in our dynamic simulation.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from geometry import invert, matrix_to_quat, pose
from ._world import GraspWorld, object_points
from ._uncertainty import grid_transforms, pfc_grid
from ._wrench import contact_wrenches, ferrari_canny

# a certificate must clear δ by more than qhull's joggle moves ε (~1e-11)
_CERTIFICATE_MARGIN = 1e-9
# a gap bound must clear the contact tolerance by more than MuJoCo's distance error
# (its convex collider stops at ccd_tolerance, 1e-6 by default) to stand for a query
_GAP_NOISE = 1e-5


@dataclass(frozen=True)
class ClosingSettings:
    """Tolerances and limits of the kinematic closing (metres).

    contact_tol_m : a gap this small is a contact (motion stops there);
    margin_m : gaps are measured up to this distance (MuJoCo's contact margin on hand geoms),
        which also caps one step; withdraw_m : how far back along the approach the hand starts
        (None: the object's bounding radius plus 1 cm); table : whether the table blocks the
        hand and fingers; max_steps : cap on steps per phase (a stuck search ends there).
    approach_margin_m : during the approach, gaps are measured up to this distance, the
        hand stops on a lattice of positions contact_tol_m / 2 apart, and a query clears the
        travel along each measured pair's direction and over the table's height
        (KinematicCloser._approach); more than margin_m makes a query dearer and saved none
        (README). The queries along the way leave out MuJoCo's extra contact points per pair
        (multiccd: a third of a query's cost), the contacts at the end have them. None: the
        previous path, kept as the benchmark's baseline: the approach steps as the closing
        does, each at most the smallest gap within margin_m, table included, and the
        closing's arithmetic runs in NumPy. Both stop within contact_tol_m
        of the first contact and never pass through; their step sequences, and so their
        contacts within the tolerance, differ.
    """

    contact_tol_m: float = 5e-4
    margin_m: float = 0.02
    withdraw_m: float | None = None
    table: bool = True
    max_steps: int = 400
    approach_margin_m: float | None = 0.02

    def __post_init__(self) -> None:
        if not 0 < self.contact_tol_m < self.margin_m:
            raise ValueError(f"ClosingSettings: need 0 < contact_tol_m < margin_m, got "
                             f"{self.contact_tol_m!r} and {self.margin_m!r}")
        if self.approach_margin_m is not None and not self.approach_margin_m >= self.margin_m:
            raise ValueError(f"ClosingSettings: approach_margin_m must be None or >= margin_m, "
                             f"got {self.approach_margin_m!r}")
        if self.withdraw_m is not None and not self.withdraw_m >= 0:
            raise ValueError(f"ClosingSettings: withdraw_m must be >= 0, got {self.withdraw_m!r}")
        if self.max_steps < 1:
            raise ValueError(f"ClosingSettings: max_steps must be >= 1, got {self.max_steps!r}")


@dataclass(frozen=True)
class ClosedGrasp:
    """The contacts a kinematic closing reached, in the object frame of the nominal pose.

    positions : (K, 3) metres; normals : (K, 3) unit, into the object; links : (K,) index into
    HandModel.links; start_collision : the hand overlapped the object or table where the
    approach starts (no grasp); reached_pregrasp : the approach ran its full length;
    steps : collision queries (kinematic steps) in both phases.
    """

    positions: np.ndarray
    normals: np.ndarray
    links: np.ndarray
    start_collision: bool
    reached_pregrasp: bool
    steps: int


@dataclass(frozen=True)
class PfcResult:
    """P(fc) over a grid and what it took: closed (N,) whether each grid pose is force closure
    (ε > δ); epsilons (N,) the ε that decided it (exact, or with exact_epsilons off a bound
    that settled it: a lower bound above δ or an upper bound below it); the nominal ε, the
    rotation centre (world, the centroid of the nominal contacts), steps, wall seconds, and
    certified: poses settled by a neighbour's hull, without qhull (KinematicCloser.force_closure);
    closing_s: of wall_s, the seconds spent closing the hand (the rest is mostly hulls)."""

    pfc: float
    closed: np.ndarray
    epsilons: np.ndarray
    nominal_epsilon: float
    centre_world: np.ndarray
    mean_steps: float
    wall_s: float
    certified: int = 0
    closing_s: float = 0.0


class _ApproachMemo:
    """The approach queries of earlier poses of one grasp, for later poses to skip queries.

    Each pose of a P(fc) grid moves the object and not the hand, so an object gap measured
    at travel t on an earlier pose is still a lower bound at t less the most any point of the
    object has moved between the two poses (bounded over the vertices of the object's convex
    geoms), and a table gap stands as measured. Keeps the poses of the last `history` closings.
    """

    def __init__(self, closer: "KinematicCloser", centre: np.ndarray | None = None,
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


@dataclass
class _FcMemo:
    """What the last hull of a P(fc) run found, for its neighbours on the grid to reuse.

    links, wrenches, epsilon : the one-contact-per-link subset's links, unit wrenches and exact
    ε at the pose where qhull last ran on it; direction : the weakest wrench direction (unit,
    6-D) of the last full contact set; certified : decisions settled without qhull;
    facets : (vertex wrenches, simplices, offsets) of the last hull that showed force closure
    (a subset's or the full set's; _hull_epsilon).
    """

    links: tuple[int, ...] = ()
    wrenches: np.ndarray | None = None
    epsilon: float = 0.0
    direction: np.ndarray | None = None
    certified: int = 0
    facets: tuple | None = None


def _cone_wrenches(p: np.ndarray, n: np.ndarray, mu: float, torque_scale_m: float) -> np.ndarray:
    """contact_wrenches(p, n, mu=mu, torque_scale_m=torque_scale_m) for (N, 3) contacts with
    8 cone edges, the same arithmetic in the same order (bit for bit, tested) with less
    NumPy overhead: np.cross and the norms written out per component."""
    n = n / np.sqrt(n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2])[:, None]
    # tangent_basis: t1 = n x helper, helper world x (or y where n is near x), t2 = n x t1
    near_x = ~(np.abs(n[:, 0]) < 0.9)
    hx, hy = (~near_x).astype(np.float64), near_x.astype(np.float64)
    t1 = np.empty_like(n)
    t1[:, 0] = n[:, 1] * 0.0 - n[:, 2] * hy
    t1[:, 1] = n[:, 2] * hx - n[:, 0] * 0.0
    t1[:, 2] = n[:, 0] * hy - n[:, 1] * hx
    t1 /= np.sqrt(t1[:, 0] * t1[:, 0] + t1[:, 1] * t1[:, 1] + t1[:, 2] * t1[:, 2])[:, None]
    t2 = _cross(n, t1)
    f = (n[:, None, :] + mu * (_COS8[None, :, None] * t1[:, None, :]
                               + _SIN8[None, :, None] * t2[:, None, :]))
    f = (f / np.sqrt(1.0 + mu * mu)).reshape(-1, 3)
    tau = _cross(np.repeat(p, 8, axis=0), f) / torque_scale_m
    return np.hstack([f, tau])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a x b of (N, 3) arrays, as np.cross computes it."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


_PHI8 = 2.0 * np.pi * np.arange(8) / 8
_COS8, _SIN8 = np.cos(_PHI8), np.sin(_PHI8)


def _hull_epsilon(w: np.ndarray) -> tuple[float, np.ndarray, tuple | None]:
    """(ε, weakest direction, facets) of unit wrenches w (M, 6), as ferrari_canny computes ε:
    the direction u is a unit vector with max_i w_i . u equal to the hull's smallest facet
    offset (negative when the origin is outside), or with w u = 0 when w does not span 6-D;
    facets : (vertices (V, 6), simplices (F, 6) indices into them, offsets (F,)) of the hull,
    None without one."""
    from scipy.spatial import ConvexHull, QhullError

    _, sv, vt = np.linalg.svd(w, full_matrices=True)
    if (sv > 1e-9).sum() < w.shape[1]:  # ferrari_canny's rank test (matrix_rank, tol 1e-9)
        return 0.0, vt[-1], None  # the wrenches leave out a direction: w . vt[-1] = 0
    try:
        hull = ConvexHull(w, qhull_options="QJ")
    except QhullError:
        return 0.0, vt[-1], None
    offsets = -hull.equations[:, -1]
    i = int(np.argmin(offsets))
    rows, simplices = np.unique(hull.simplices, return_inverse=True)
    facets = (w[rows], simplices.reshape(hull.simplices.shape), offsets)
    return float(max(0.0, offsets[i])), hull.equations[i, :-1].copy(), facets


def _closing_joints(m, world: GraspWorld) -> tuple[np.ndarray, np.ndarray]:
    """(joint ids, speeds) of the hand joints the drives move, speeds signed to close (rad/s
    or m/s), equality-coupled joints included."""
    import mujoco

    rate: dict[int, float] = {}
    for a, v in zip(world.drives.act_ids, world.drives.act_speed * world.drives.act_sign):
        if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
            j = int(m.actuator_trnid[a, 0])
            rate[j] = rate.get(j, 0.0) + float(v)
        elif m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_TENDON:
            t = int(m.actuator_trnid[a, 0])
            adr, num = m.tendon_adr[t], m.tendon_num[t]
            joints = m.wrap_objid[adr:adr + num].astype(int)
            coef = m.wrap_prm[adr:adr + num].astype(float)
            if np.any(m.wrap_type[adr:adr + num] != mujoco.mjtWrap.mjWRAP_JOINT):
                raise ValueError(f"hand {world.hand.name!r}: kinematic closing needs fixed "
                                 f"tendons; tendon {t} is spatial")
            stiff = m.jnt_stiffness[joints]
            # at rest, springs k share a tendon displacement as c/k (no springs: as c)
            w = coef / stiff if np.all(stiff > 0) else coef
            for j, share in zip(joints, float(v) * w / float(coef @ w)):
                rate[int(j)] = rate.get(int(j), 0.0) + share
        else:
            raise ValueError(f"hand {world.hand.name!r}: actuator {a} drives neither a joint nor a "
                             f"fixed tendon; kinematic closing cannot follow it")
    for e in range(m.neq):
        involved = {int(m.eq_obj1id[e]), int(m.eq_obj2id[e])}
        if m.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT:
            j1, j2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            if j2 in rate and j1 not in rate:  # joint1 = c0 + c1 joint2 (+ higher terms)
                rate[j1] = float(m.eq_data[e, 1]) * rate[j2]
        elif any(world.hand_body[b] for b in involved if 0 <= b < m.nbody):
            raise ValueError(f"hand {world.hand.name!r}: equality {e} closes a linkage loop; kinematic "
                             f"closing supports joint couplings only")
    ids = np.array(sorted(rate), np.int64)
    return ids, np.array([rate[j] for j in ids])


class KinematicCloser:
    """Kinematic closing of one world's hand on its object, fixed at any displaced pose.

    Holds its own copy of the world's model (hand geoms given a contact margin, object-table
    pairs switched off) and data, so the world's dynamic simulation is untouched.
    """

    def __init__(self, world: GraspWorld, settings: ClosingSettings = ClosingSettings()) -> None:
        import mujoco

        self.world, self.settings = world, settings
        m = copy.deepcopy(world.model)
        self.model, self.data = m, mujoco.MjData(m)
        hand_geom = world.hand_body[m.geom_bodyid]
        obj_geom = m.geom_bodyid == world.object_body
        hand_geom &= (m.geom_contype != 0) | (m.geom_conaffinity != 0)
        m.geom_margin[hand_geom] = settings.margin_m
        m.geom_gap[:] = 0.0
        # the midphase's bounding boxes are the compiled ones, without the margin set here,
        # so it would drop the pairs whose gap we need; the broadphase alone includes it
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MIDPHASE
        # the table collides with the hand only (contype 0, conaffinity 2): object-table
        # pairs cost narrow-phase time every step and the object does not move anyway
        t = world.table_geom
        m.geom_contype[t], m.geom_conaffinity[t] = (0, 2) if settings.table else (0, 0)
        self.hand_geoms = np.flatnonzero(hand_geom)
        self.obstacle = obj_geom.copy()
        self.obstacle[t] = settings.table
        self.is_object = obj_geom
        self.joints, self.speeds = _closing_joints(m, world)
        self.qadr = m.jnt_qposadr[self.joints]
        lo, hi = m.jnt_range[self.joints].T
        limited = m.jnt_limited[self.joints].astype(bool)
        # the limit in the closing direction (a closing speed < 0 runs to the lower one)
        self.limit = np.where(limited, np.where(self.speeds > 0, hi, lo),
                              np.where(self.speeds > 0, np.inf, -np.inf))
        self.hinge = m.jnt_type[self.joints] == mujoco.mjtJoint.mjJNT_HINGE
        # carries[j, g]: joint j moves hand geom g (g's body is the joint's body or below it)
        gb = m.geom_bodyid[self.hand_geoms]
        carries = np.zeros((len(self.joints), len(self.hand_geoms)), bool)
        for i, j in enumerate(self.joints):
            jb = m.jnt_bodyid[j]
            for k, b in enumerate(gb):
                while b > jb:
                    b = m.body_parentid[b]
                carries[i, k] = b == jb
        self.carries = carries
        self.carrier_qadr = np.array([m.jnt_qposadr[m.actuator_trnid[a, 0]]
                                      for a in world.carrier_actuators])
        # the object's bounding radius about its frame: the torque scale of ε and how far
        # back an approach starts clear of it
        self.radius_m = float(np.linalg.norm(object_points(world.obj), axis=1).max())
        self.withdraw_m = settings.withdraw_m if settings.withdraw_m is not None else self.radius_m + 0.01
        # per model geom: its slot among the hand geoms (-1: not a hand geom)
        self.slot = np.full(m.ngeom, -1, np.int64)
        self.slot[self.hand_geoms] = np.arange(len(self.hand_geoms))
        self.table_geom = int(t)
        # the table's top face (world): its outward normal, a point on it, its half extents;
        # the approach's table rule needs a box (or plane) that does not move
        mujoco.mj_kinematics(m, self.data)
        self.table_kind = int(m.geom_type[t])
        self.table_R = self.data.geom_xmat[t].reshape(3, 3).copy()
        self.table_top = self.data.geom_xpos[t] + self.table_R[:, 2] * (
            m.geom_size[t, 2] if self.table_kind == mujoco.mjtGeom.mjGEOM_BOX else 0.0)
        self.table_half = m.geom_size[t, :2].copy()
        self.hand_rbound = m.geom_rbound[self.hand_geoms].copy()
        self._mount = None  # (T_object_hand, mount position, quaternion, approach) last set
        self._g_obj = np.zeros(len(self.hand_geoms))  # the fast path's gap buffers
        self._g_tab = np.zeros(len(self.hand_geoms))

    def _gaps(self) -> np.ndarray:
        """Per hand geom the smallest gap (m, capped at the margin) to an obstacle, after
        kinematics and collision at the current qpos."""
        g_obj, g_tab = self._split_gaps(self.settings.margin_m)
        return np.minimum(g_obj, g_tab)

    def _split_gaps(self, cap: float) -> tuple[np.ndarray, np.ndarray]:
        """Per hand geom the smallest gap (m, capped at cap, the margin in force) to the
        object and to the table, after kinematics and collision at the current qpos."""
        import mujoco

        m, d = self.model, self.data
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
        nh = len(self.hand_geoms)
        gap = np.full(2 * nh, cap)  # [object gaps | table gaps]
        n = d.ncon
        if n:
            con = d.contact
            g1, g2, dist = con.geom1[:n], con.geom2[:n], con.dist[:n]
            # every pair is hand-obstacle (hand geoms do not collide with each other)
            first_is_hand = self.slot[g1] >= 0
            hand = np.where(first_is_hand, g1, g2)
            other = np.where(first_is_hand, g2, g1)
            np.minimum.at(gap, self.slot[hand] + nh * (other == self.table_geom), dist)
        return gap[:nh], gap[nh:]

    def _set_start(self, T_object_hand: np.ndarray, T_displace: np.ndarray | None,
                   preshape: np.ndarray | None) -> np.ndarray:
        """Object at its displaced resting pose, hand mount at the pre-grasp, joints open;
        returns the approach direction (world)."""
        m, d, w = self.model, self.data, self.world
        d.qpos[:] = m.qpos0
        T_wo = w.T_world_object if T_displace is None else np.asarray(T_displace) @ w.T_world_object
        q = w.object_qposadr
        d.qpos[q:q + 3] = T_wo[:3, 3]
        d.qpos[q + 3:q + 7] = matrix_to_quat(T_wo[:3, :3])
        # the hand is planned against the nominal pose: it does not know the object moved
        # (the mount's pose is kept for the next call with the same grasp: P(fc)'s poses)
        T_object_hand = np.asarray(T_object_hand, np.float64)
        if self._mount is None or not np.array_equal(self._mount[0], T_object_hand):
            T_w_tcp = w.T_world_object @ T_object_hand
            T_w_root = T_w_tcp @ invert(w.T_root_tcp)
            self._mount = (T_object_hand.copy(), T_w_root[:3, 3].copy(),
                           matrix_to_quat(T_w_root[:3, :3]), T_w_tcp[:3, 2].copy())
        _, pos, quat, approach = self._mount
        m.body_pos[w.mount_body] = pos
        m.body_quat[w.mount_body] = quat
        values = w.preshape_value if preshape is None else np.asarray(preshape, np.float64)
        d.qpos[w.preshape_qposadr] = values
        return approach.copy()

    def close(self, T_object_hand: np.ndarray, T_displace: np.ndarray | None = None,
              preshape: np.ndarray | None = None, *, warm: _ApproachMemo | None = None) -> ClosedGrasp:
        """Approach and close on the object displaced by T_displace (4, 4, world; None: at
        rest) with the hand planned at T_object_hand (TCP in the nominal object frame).
        warm : what earlier closings of the same grasp (T_object_hand, preshape) measured on
        their approach (an _ApproachMemo; pfc keeps one per grasp); it saves collision
        queries and changes nothing else: the contacts are those of a cold closing (tested).
        Ignored by the previous path (approach_margin_m None)."""
        s, d = self.settings, self.data
        tol = s.contact_tol_m
        approach = self._set_start(T_object_hand, T_displace, preshape)
        travel = self.withdraw_m
        d.qpos[self.carrier_qadr] = -travel * approach
        if s.approach_margin_m is None:
            steps, gap = self._approach_reference(approach)
            if gap is None:  # the displaced object sits where the hand starts
                return self._result(True, False, steps)
            reached, gap = gap
            steps = self._close_joints_reference(gap, steps)
            return self._result(False, reached, steps)
        import mujoco

        if warm is not None:
            warm.start(T_object_hand, preshape, T_displace)
        # the gaps along the way need each pair's nearest points only: without MuJoCo's
        # extra contact points per pair (multiccd) a query costs about a third less; the
        # contacts of the result are queried with them, at the final posture
        m, flags = self.model, self.model.opt.disableflags
        m.opt.disableflags = flags | mujoco.mjtDisableBit.mjDSBL_MULTICCD
        try:
            steps, gap = self._approach(approach, warm)
            if gap is None:  # the displaced object sits where the hand starts
                return self._result(True, False, steps)
            reached, gap = gap
            steps = self._close_joints(gap, steps)
        finally:
            m.opt.disableflags = flags
        if not flags & mujoco.mjtDisableBit.mjDSBL_MULTICCD:
            mujoco.mj_collision(m, d)  # the kinematics are those of the last query
            steps += 1
        return self._result(False, reached, steps)

    def _close_joints(self, gap: np.ndarray, steps: int) -> int:
        """The closing phase (joints at their speeds until blocked or at a limit) by
        conservative advancement, the per-step arithmetic in _closing_kernels.closing_step;
        gap : per hand geom at the start. Returns steps plus the queries made."""
        import mujoco

        from . import _closing_kernels as kern

        m, s, d = self.model, self.settings, self.data
        q = d.qpos[self.qadr].copy()
        moving = np.ones(len(self.joints), bool)
        g_obj, g_tab = self._g_obj, self._g_tab
        gap = np.ascontiguousarray(gap, np.float64)
        for _ in range(s.max_steps):
            if not kern.closing_step(gap, q, moving, self.carries, self.speeds, self.limit,
                                     self.hinge, d.geom_xpos, self.hand_geoms, self.hand_rbound,
                                     d.xanchor, self.joints, s.contact_tol_m):
                break
            d.qpos[self.qadr] = q
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            con = d.contact
            kern.split_gaps(con.geom, con.dist, self.slot, self.table_geom, s.margin_m, g_obj, g_tab)
            np.minimum(g_obj, g_tab, out=gap)
            steps += 1
        return steps

    def _close_joints_reference(self, gap: np.ndarray, steps: int) -> int:
        """The closing phase in NumPy, as before the kernels (the benchmark's baseline)."""
        s, d = self.settings, self.data
        tol = s.contact_tol_m
        q = d.qpos[self.qadr].copy()
        moving = np.ones(len(self.joints), bool)
        for _ in range(s.max_steps):
            blocked = (self.carries & (gap < tol)[None, :]).any(axis=1)
            moving &= ~blocked & (q != self.limit)
            if not moving.any():
                break
            lever = self._levers()
            # fastest a point of geom g can move per second of closing: its joints' speeds
            # times their lever arms (an upper bound, so the step never overshoots the gap)
            rate = (np.abs(self.speeds)[:, None] * lever * (self.carries & moving[:, None])).sum(axis=0)
            live = rate > 0
            dt = float(np.min((np.maximum(gap[live], tol) - 0.5 * tol) / rate[live]))
            with np.errstate(divide="ignore", invalid="ignore"):
                to_limit = np.where(moving, (self.limit - q) / self.speeds, np.inf)
            dt = min(dt, float(to_limit.min()))
            q = np.where(moving, q + self.speeds * dt, q)
            q = np.where(moving & ((q - self.limit) * np.sign(self.speeds) >= 0), self.limit, q)
            d.qpos[self.qadr] = q
            gap = self._gaps()
            steps += 1
        return steps

    def _approach_reference(self, approach: np.ndarray):
        """The approach by conservative advancement within margin_m, every obstacle bounding
        a step by its Euclidean gap: (steps, None) when the hand starts inside an obstacle,
        else (steps, (reached the pre-grasp, gaps per hand geom at the stop))."""
        s, d = self.settings, self.data
        tol = s.contact_tol_m
        travel, steps = self.withdraw_m, 0
        gap = self._gaps()
        if gap.min() < -tol:
            return steps, None
        # approach: the whole hand translates, so every point moves by the step itself
        while travel > 0 and gap.min() >= tol and steps < s.max_steps:
            step = min(travel, gap.min() - 0.5 * tol)
            travel -= step
            d.qpos[self.carrier_qadr] = -travel * approach
            gap = self._gaps()
            steps += 1
        return steps, (travel <= 0, gap)

    def _approach(self, approach: np.ndarray, warm: _ApproachMemo | None = None):
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
        every position); returns as _approach_reference."""
        import mujoco

        from . import _closing_kernels as kern

        m, s, d = self.model, self.settings, self.data
        tol = s.contact_tol_m
        total = self.withdraw_m
        h = 0.5 * tol
        n = int(np.ceil(total / h))  # lattice 0..n, position n the pre-grasp
        cap = s.approach_margin_m
        d.qpos[self.carrier_qadr] = -total * approach
        mujoco.mj_kinematics(m, d)
        # how fast the hand sinks towards the table's top per metre of approach; valid
        # as the table's gap rate while every hand geom stays over the top face (then
        # its gap to the box is its height above the top) and for a plane everywhere
        sink = float(-(approach @ self.table_R[:, 2]))
        if self.table_kind == mujoco.mjtGeom.mjGEOM_BOX:
            xy = (d.geom_xpos[self.hand_geoms] - self.table_top) @ self.table_R[:, :2]
            reach = self.hand_rbound + total
            if np.any(np.abs(xy) + reach[:, None] > self.table_half[None, :]):
                sink = 1.0  # beyond the footprint: the Euclidean bound
        elif self.table_kind != mujoco.mjtGeom.mjGEOM_PLANE:
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
            m.geom_margin[self.hand_geoms] = cap
        steps, j, measured = 0, 0, -1
        g_obj, g_tab = self._g_obj, self._g_tab
        a = np.ascontiguousarray(approach, np.float64)
        try:
            while True:
                if not (clear_obj[j] and clear_tab[j]) or j == n:
                    t = total if j == n else j * h
                    d.qpos[self.carrier_qadr] = -(total - t) * approach
                    mujoco.mj_kinematics(m, d)
                    mujoco.mj_collision(m, d)
                    con = d.contact
                    pairs, dist = con.geom, con.dist
                    kern.split_gaps(pairs, dist, self.slot, self.table_geom, cap, g_obj, g_tab)
                    measured, steps = j, steps + 1
                    go, gt = float(g_obj.min()), float(g_tab.min())
                    if j == 0 and min(go, gt) < -tol:
                        return steps, None
                    if min(go, gt) < tol or j == n:
                        break
                    pg, pk = np.empty(len(dist)), np.empty(len(dist))
                    npair = kern.pair_slopes(pairs, dist, con.frame, self.slot, self.table_geom, a, pg, pk)
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
                m.geom_margin[self.hand_geoms] = s.margin_m
        assert measured == j  # the stop was queried: the data holds its contacts
        # the closing reads gaps within margin_m: a gap beyond it is capped there, as the
        # closing's own queries report it (the contacts of _result need dist < 2 tol only)
        gap = np.minimum(np.minimum(g_obj, g_tab), s.margin_m)
        return steps, (j == n, gap)

    def _levers(self) -> np.ndarray:
        """(joints, hand geoms) metres a point of each geom moves per unit of each joint: the
        reach from a hinge's anchor (distance to the anchor plus the geom's bounding radius),
        or 1 for a slide."""
        m, d = self.model, self.data
        reach = np.linalg.norm(d.geom_xpos[self.hand_geoms][None, :, :]
                               - d.xanchor[self.joints][:, None, :], axis=2)
        reach += m.geom_rbound[self.hand_geoms][None, :]
        return np.where(self.hinge[:, None], reach, 1.0)

    def _result(self, start_collision: bool, reached: bool, steps: int) -> ClosedGrasp:
        """Hand-object contacts within twice the tolerance, in the nominal object frame."""
        m, d, w = self.model, self.data, self.world
        n = d.ncon
        empty = ClosedGrasp(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int32),
                            start_collision, reached, steps)
        if start_collision or n == 0:
            return empty
        g1, g2, dist = d.contact.geom1[:n], d.contact.geom2[:n], d.contact.dist[:n]
        obj1, obj2 = self.is_object[g1], self.is_object[g2]
        hand_g = np.where(obj2, g1, g2)
        link = w.link_of_body[m.geom_bodyid[hand_g]]
        keep = np.flatnonzero((obj1 | obj2) & (link >= 0) & (dist < 2.0 * self.settings.contact_tol_m))
        if keep.size == 0:
            return empty
        normals = self._pair_normals(hand_g[keep], np.where(obj2, g2, g1)[keep])
        # contacts in the displaced object's own frame: where on the object the hand landed
        b = w.object_body
        T_ow = invert(pose(d.xmat[b].reshape(3, 3), d.xpos[b]))
        pos = d.contact.pos[keep] @ T_ow[:3, :3].T + T_ow[:3, 3]
        return ClosedGrasp(pos, normals @ T_ow[:3, :3].T, link[keep].astype(np.int32),
                           False, reached, steps)

    def _pair_normals(self, hand_geoms: np.ndarray, object_geoms: np.ndarray) -> np.ndarray:
        """(K, 3) world normals into the object, one per contact, from the closest points of
        its geom pair. Closing stops with a small gap, so the pair is apart and the line
        between its closest points is the true normal; the contact's own normal can be the
        other face's where a box's corner meets a face (MuJoCo's box-box collider)."""
        import mujoco

        m, d = self.model, self.data
        out = np.zeros((len(hand_geoms), 3))
        fromto = np.zeros(6)
        for pair in set(zip(hand_geoms.tolist(), object_geoms.tolist())):
            dist = mujoco.mj_geomDistance(m, d, pair[0], pair[1], self.settings.margin_m, fromto)
            n = fromto[3:] - fromto[:3]  # from the hand geom to the object geom
            if dist <= 1e-9 or not np.linalg.norm(n) > 0:
                # touching or overlapping: the contact frame's normal (hand -> object) stands
                sel = np.flatnonzero((hand_geoms == pair[0]) & (object_geoms == pair[1]))
                for i in sel:
                    out[i] = self._contact_normal(pair[0], pair[1])
                continue
            out[(hand_geoms == pair[0]) & (object_geoms == pair[1])] = n / np.linalg.norm(n)
        return out

    def _contact_normal(self, hand_geom: int, object_geom: int) -> np.ndarray:
        """The first contact's normal of a hand/object geom pair, pointing into the object."""
        d = self.data
        n = d.ncon
        g1, g2 = d.contact.geom1[:n], d.contact.geom2[:n]
        i = int(np.flatnonzero(((g1 == hand_geom) & (g2 == object_geom))
                               | ((g2 == hand_geom) & (g1 == object_geom)))[0])
        normal = d.contact.frame[i, :3]  # from geom1 to geom2
        return normal if g2[i] == object_geom else -normal

    def epsilon(self, grasp: ClosedGrasp, mu: float, torque_scale_m: float) -> float:
        """Ferrari-Canny ε of the contacts (0 without any)."""
        if len(grasp.positions) == 0:
            return 0.0
        return ferrari_canny(grasp.positions, grasp.normals, mu=mu, torque_scale_m=torque_scale_m)

    def force_closure(self, grasp: ClosedGrasp, mu: float, torque_scale_m: float,
                      delta: float = 0.001, exact: bool = False,
                      memo: _FcMemo | None = None) -> tuple[bool, float]:
        """(ε > delta, the ε that decided it). Tries one contact per link first (the one
        nearest the link's contact centroid), with 4 of its 8 cone edges, then with all 8:
        a subset's wrench hull lies inside the whole set's, so its ε is a lower bound, and
        when that already exceeds delta the hull of every contact (qhull's cost grows fast
        with the points: 12 contacts are 96 wrenches) is not needed. exact : always return
        the exact ε.

        memo : what an earlier (neighbouring) pose found; with it two certificates settle
        most poses without qhull, both exact. (1) Where this subset has the memo's links (and
        maybe more), with each of their wrenches within η of its counterpart there, every support value
        max_i w_i . u drops by at most η, so ε >= ε_memo - η: force closure if that exceeds
        delta. (2) Where the memo's weakest direction u has max_i w_i . u <= delta over all
        contacts, ε <= delta: not force closure. The ε returned is then that bound."""
        if len(grasp.positions) == 0:
            return False, 0.0
        pos, nrm = grasp.positions, grasp.normals
        if exact:
            eps = self.epsilon(grasp, mu, torque_scale_m)
            return eps > delta, eps
        pick = []
        for k in np.unique(grasp.links):  # sorted: the subset's rows are in link order
            idx = np.flatnonzero(grasp.links == k)
            c = pos[idx].mean(axis=0)
            pick.append(idx[np.argmin(np.linalg.norm(pos[idx] - c, axis=1))])
        links = tuple(int(k) for k in np.unique(grasp.links))
        # the wrenches of all contacts once; a contact's rows depend on it alone
        full = _cone_wrenches(pos, nrm, mu, torque_scale_m)  # = contact_wrenches (tested)
        sub = full.reshape(len(pos), -1, 6)[pick].reshape(-1, 6)
        if memo is not None and memo.epsilon > delta and set(memo.links) <= set(links):
            # the rows of the memo's links (a link that came into contact since only adds
            # wrenches, and a superset's hull holds the subset's)
            rows = np.concatenate([np.arange(8) + 8 * links.index(k) for k in memo.links])
            eta = float(np.sqrt(((sub[rows] - memo.wrenches) ** 2).sum(axis=1).max()))
            if memo.epsilon - eta > delta + _CERTIFICATE_MARGIN:
                memo.certified += 1
                return True, memo.epsilon - eta
        if memo is not None and memo.facets is not None:
            # (1b) the same argument with any counterparts, facet by facet: each vertex v of
            # the last hull that showed force closure has a wrench of this pose within η_v
            # (its nearest). A unit u in v's normal cone is a combination Σ α_f u_f of the
            # normals of v's facets with Σ α_f >= 1, so max_i w_i . u >= v . u - η_v >=
            # min over v's facets of b_f - η_v; hence ε >= min over facets f of
            # (b_f - max of η_v over f's vertices), which is ε_memo - max η at worst
            verts, simplices, offsets = memo.facets
            d2 = ((verts[:, None, :] - full[None, :, :]) ** 2).sum(axis=2)
            eta = np.sqrt(d2.min(axis=1))
            bound = float((offsets - eta[simplices].max(axis=1)).min())
            if bound > delta + _CERTIFICATE_MARGIN:
                memo.certified += 1
                return True, bound
        if memo is not None and memo.direction is not None:
            upper = float((full @ memo.direction).max())
            if upper < delta - _CERTIFICATE_MARGIN:
                memo.certified += 1
                return False, max(upper, 0.0)
        # every other edge of the subset's cones (4 of 8): their hull lies inside the
        # subset's, so its ε is a lower bound too, at about a tenth of qhull's time
        lower, _, facets = _hull_epsilon(sub.reshape(len(pick), -1, 6)[:, ::2].reshape(-1, 6))
        if lower > delta:
            if memo is not None:
                memo.facets = facets
            return True, lower
        if len(pick) < len(pos):
            lower, _, facets = _hull_epsilon(sub)
            if memo is not None:
                memo.links, memo.wrenches, memo.epsilon = links, sub, lower
                if lower > delta:
                    memo.facets = facets
            if lower > delta:
                return True, lower
        eps, direction, facets = _hull_epsilon(full)
        if memo is not None:
            memo.direction = direction
            if len(pick) == len(pos):
                memo.links, memo.wrenches, memo.epsilon = links, sub, eps
            if eps > delta:
                memo.facets = facets
        return eps > delta, eps

    def pfc(self, T_object_hand: np.ndarray, preshape: np.ndarray | None = None, *,
            grid: np.ndarray | None = None, mu: float = 0.8, torque_scale_m: float | None = None,
            delta: float = 0.001, exact_epsilons: bool = False, reuse_hulls: bool = True,
            warm_approach: bool = True, progress=None) -> PfcResult:
        """Weisz & Allen's P(fc) of one grasp: close on every (x, y, θ) displacement of the
        grid (default ±10 mm, ±20°, 1 mm / 1°: 18,081 poses), turning about the centroid of the
        nominal contacts in the table plane; P(fc) = share of poses with ε > delta.
        torque_scale_m : default the object's radius; exact_epsilons : compute every pose's
        exact ε (slower; P(fc) is the same either way); reuse_hulls : let neighbouring poses
        settle force closure by the certificates of force_closure (the same decisions, fewer
        hulls); warm_approach : let each pose's approach skip the collision queries that
        earlier poses' gaps make needless (the same contacts, fewer queries: close's warm);
        progress : callable(done, total)."""
        import time

        t0 = time.perf_counter()
        w = self.world
        if torque_scale_m is None:
            torque_scale_m = getattr(w.obj, "radius_m", None) or self.radius_m
        g = pfc_grid() if grid is None else np.asarray(grid, np.float64)
        nominal = self.close(T_object_hand, None, preshape)
        eps0 = self.epsilon(nominal, mu, torque_scale_m)
        T_wo = w.T_world_object
        centre = (T_wo[:3, :3] @ nominal.positions.mean(axis=0) + T_wo[:3, 3]
                  if len(nominal.positions) else (T_wo @ np.asarray(T_object_hand))[:3, 3])
        transforms = grid_transforms(g, centre, (0.0, 0.0, 1.0))
        eps = np.zeros(len(g))
        closed = np.zeros(len(g), bool)
        steps = 0
        memo = _FcMemo() if reuse_hulls and not exact_epsilons else None  # neighbours share hulls
        approach = _ApproachMemo(self, centre) if warm_approach else None  # neighbours share gaps
        closing_s = 0.0
        for i, T in enumerate(transforms):
            t1 = time.perf_counter()
            grasp = self.close(T_object_hand, T, preshape, warm=approach)
            closing_s += time.perf_counter() - t1
            closed[i], eps[i] = self.force_closure(grasp, mu, torque_scale_m, delta,
                                                   exact_epsilons, memo)
            steps += grasp.steps
            if progress is not None:
                progress(i + 1, len(g))
        return PfcResult(float(closed.mean()), closed, eps, eps0, centre, steps / max(len(g), 1),
                         time.perf_counter() - t0, 0 if memo is None else memo.certified, closing_s)

