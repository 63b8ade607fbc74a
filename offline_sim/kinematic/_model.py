"""The kinematic closer's model: its own copy of a grasp world's MuJoCo model (hand geoms given
a contact margin, the table colliding with the hand only), the joints the drives close with
their speeds and limits, which joint carries which hand geom, and the start of a closing (the
object at its displaced pose, the hand at the pre-grasp, fingers open)."""
from __future__ import annotations

import copy

import numpy as np

from geometry import invert, matrix_to_quat
from ..dynamics import GraspWorld
from ..objects import object_points
from ._settings import ClosingSettings


def closing_joints(m, world: GraspWorld) -> tuple[np.ndarray, np.ndarray]:
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


class ClosingModel:
    """A grasp world set up for kinematic closing: its own copy of the world's model (hand geoms
    given a contact margin, the table colliding with the hand only, the midphase off) and
    data, so the world's dynamic simulation is untouched; the closing joints (joints, speeds,
    limit, hinge, qadr), carries[j, g] (joint j moves hand geom g), the carrier's qpos
    addresses, the object's bounding radius (radius_m) and the table's top face, and the gap
    buffers gap_object, gap_table (m, per hand geom) that the queries fill.
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
        self.joints, self.speeds = closing_joints(m, world)
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
        self.gap_object = np.zeros(len(self.hand_geoms))  # the queries' gap buffers
        self.gap_table = np.zeros(len(self.hand_geoms))

    def set_start(self, T_object_hand: np.ndarray, T_displace: np.ndarray | None,
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
