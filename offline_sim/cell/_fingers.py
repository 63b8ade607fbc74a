"""The ids a multi-finger hand in the cell needs: its closing drives (the grasp simulation's
HandDrives), the other servos (preshape joints such as a BH8's spread), its joints, and which
finger each of its geoms belongs to.

A finger is a subtree below the hand's root body (the palm): each child of the root is one
finger with every body under it; geoms of the root itself belong to "palm". That holds for the
built-in hands (f1_base ... f3_base) and for Menagerie's Allegro and LEAP hands alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics import HAND_PREFIX, hand_drives
from ..dynamics._controller import HandDrives
from ..hands import HandModel


@dataclass(frozen=True)
class FingerIndex:
    """A multi-finger hand compiled into a cell world.

    drives : the closing drives (Kim eq. 1 moves their servo targets); drive_open : (A,) their
    targets with the hand open (its joints at the model's reference pose, as the grasp
    simulation starts), clipped to the control range; servo_ids / servo_rest : (S,) the
    hand's other position servos and their targets at that pose; force_range : (nu, 2) every
    actuator's force range as compiled (closing with effort < 1 scales the drives' range);
    joint_names (J,), joint_qposadr (J,), joint_dofadr (J,) : the hand's hinge and slide
    joints; preshape_actuator : (P,) the servo of each preshape joint of the HandModel, -1 for
    a joint coupled to another by an equality; finger_names (F,), finger_of_geom (ngeom,) :
    the finger of each hand geom, -1 for geoms not of the hand.
    """

    drives: HandDrives
    drive_open: np.ndarray
    servo_ids: np.ndarray
    servo_rest: np.ndarray
    force_range: np.ndarray
    joint_names: tuple[str, ...]
    joint_qposadr: np.ndarray
    joint_dofadr: np.ndarray
    preshape_actuator: np.ndarray
    finger_names: tuple[str, ...]
    finger_of_geom: np.ndarray


def index_fingers(model, data, hand: HandModel, flange_body: int) -> FingerIndex:
    """The FingerIndex of hand, attached below flange_body in model (names prefixed with
    HAND_PREFIX); data is left reset (every joint at its reference position)."""
    import mujoco

    O = mujoco.mjtObj
    drives = hand_drives(model, hand, HAND_PREFIX)
    parent = model.body_parentid
    roots = [b for b in range(model.nbody) if parent[b] == flange_body]
    if len(roots) != 1:
        raise ValueError(f"hand {hand.name!r}: expected one root body on the arm's flange, "
                         f"found {len(roots)}")
    root = roots[0]
    # finger of each body: the child of the root on its path up (-1: not the hand, 0: palm)
    children = [b for b in range(model.nbody) if parent[b] == root]
    finger_of_body = np.full(model.nbody, -1, np.int64)
    finger_of_body[root] = 0
    for b in range(model.nbody):
        p = b
        while p > 0 and parent[p] != root and p != root:
            p = parent[p]
        if p > 0 and parent[p] == root:
            finger_of_body[b] = 1 + children.index(p)

    def short(name: str | None) -> str:
        return (name or "").removeprefix(HAND_PREFIX)

    finger_names = ("palm",) + tuple(short(mujoco.mj_id2name(model, O.mjOBJ_BODY, c)) for c in children)
    hand_joint = [j for j in range(model.njnt) if finger_of_body[model.jnt_bodyid[j]] >= 0
                  and int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]
    mujoco.mj_resetData(model, data)
    mujoco.mj_forward(model, data)
    drive_ids = set(drives.act_ids.tolist())
    hand_act = [i for i in range(model.nu)
                if (mujoco.mj_id2name(model, O.mjOBJ_ACTUATOR, i) or "").startswith(HAND_PREFIX)]
    servos = np.array([i for i in hand_act if i not in drive_ids
                       and int(model.actuator_biastype[i]) == int(mujoco.mjtBias.mjBIAS_AFFINE)], np.int64)

    def rest(ids: np.ndarray) -> np.ndarray:
        v = data.actuator_length[ids].copy()
        lo, hi = model.actuator_ctrlrange[ids].T
        lim = model.actuator_ctrllimited[ids].astype(bool)
        return np.where(lim, np.clip(v, lo, hi), v)

    joint_act = {int(model.actuator_trnid[i, 0]): i for i in hand_act
                 if int(model.actuator_trntype[i]) == int(mujoco.mjtTrn.mjTRN_JOINT)}
    pre = []
    for name, _ in hand.preshape:
        j = mujoco.mj_name2id(model, O.mjOBJ_JOINT, HAND_PREFIX + name)
        if j < 0:
            raise ValueError(f"hand {hand.name!r}: no preshape joint named {name!r}")
        pre.append(joint_act.get(j, -1))
    if hand.preshape and all(a < 0 for a in pre):
        raise ValueError(f"hand {hand.name!r}: no servo drives any of its preshape joints "
                         f"{[n for n, _ in hand.preshape]}")
    return FingerIndex(
        drives=drives, drive_open=rest(drives.act_ids), servo_ids=servos, servo_rest=rest(servos),
        force_range=model.actuator_forcerange.copy(),
        joint_names=tuple(short(mujoco.mj_id2name(model, O.mjOBJ_JOINT, j)) for j in hand_joint),
        joint_qposadr=np.array([model.jnt_qposadr[j] for j in hand_joint], np.int64),
        joint_dofadr=np.array([model.jnt_dofadr[j] for j in hand_joint], np.int64),
        preshape_actuator=np.array(pre, np.int64), finger_names=finger_names,
        finger_of_geom=finger_of_body[model.geom_bodyid])
