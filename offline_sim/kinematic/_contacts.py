"""The contacts a kinematic closing reached: hand-object contacts within twice the stopping
tolerance, with normals from the closest points of their geom pairs, in the object frame."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geometry import invert, pose
from ._model import ClosingModel


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


def grasp_contacts(cm: ClosingModel, start_collision: bool, reached: bool,
                   steps: int) -> ClosedGrasp:
    """Hand-object contacts within twice the tolerance at cm's current posture (its last
    collision query), in the nominal object frame."""
    m, d, w = cm.model, cm.data, cm.world
    n = d.ncon
    empty = ClosedGrasp(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int32),
                        start_collision, reached, steps)
    if start_collision or n == 0:
        return empty
    g1, g2, dist = d.contact.geom1[:n], d.contact.geom2[:n], d.contact.dist[:n]
    obj1, obj2 = cm.is_object[g1], cm.is_object[g2]
    hand_g = np.where(obj2, g1, g2)
    link = w.link_of_body[m.geom_bodyid[hand_g]]
    keep = np.flatnonzero((obj1 | obj2) & (link >= 0) & (dist < 2.0 * cm.settings.contact_tol_m))
    if keep.size == 0:
        return empty
    normals = _pair_normals(cm, hand_g[keep], np.where(obj2, g2, g1)[keep])
    # contacts in the displaced object's own frame: where on the object the hand landed
    b = w.object_body
    T_ow = invert(pose(d.xmat[b].reshape(3, 3), d.xpos[b]))
    pos = d.contact.pos[keep] @ T_ow[:3, :3].T + T_ow[:3, 3]
    return ClosedGrasp(pos, normals @ T_ow[:3, :3].T, link[keep].astype(np.int32),
                       False, reached, steps)


def _pair_normals(cm: ClosingModel, hand_geoms: np.ndarray, object_geoms: np.ndarray) -> np.ndarray:
    """(K, 3) world normals into the object, one per contact, from the closest points of
    its geom pair. Closing stops with a small gap, so the pair is apart and the line
    between its closest points is the true normal; the contact's own normal can be the
    other face's where a box's corner meets a face (MuJoCo's box-box collider)."""
    import mujoco

    m, d = cm.model, cm.data
    out = np.zeros((len(hand_geoms), 3))
    fromto = np.zeros(6)
    for pair in set(zip(hand_geoms.tolist(), object_geoms.tolist())):
        dist = mujoco.mj_geomDistance(m, d, pair[0], pair[1], cm.settings.margin_m, fromto)
        n = fromto[3:] - fromto[:3]  # from the hand geom to the object geom
        if dist <= 1e-9 or not np.linalg.norm(n) > 0:
            # touching or overlapping: the contact frame's normal (hand -> object) stands
            sel = np.flatnonzero((hand_geoms == pair[0]) & (object_geoms == pair[1]))
            for i in sel:
                out[i] = _contact_normal(cm, pair[0], pair[1])
            continue
        out[(hand_geoms == pair[0]) & (object_geoms == pair[1])] = n / np.linalg.norm(n)
    return out


def _contact_normal(cm: ClosingModel, hand_geom: int, object_geom: int) -> np.ndarray:
    """The first contact's normal of a hand/object geom pair, pointing into the object."""
    d = cm.data
    n = d.ncon
    g1, g2 = d.contact.geom1[:n], d.contact.geom2[:n]
    i = int(np.flatnonzero(((g1 == hand_geom) & (g2 == object_geom))
                           | ((g2 == hand_geom) & (g1 == object_geom)))[0])
    normal = d.contact.frame[i, :3]  # from geom1 to geom2
    return normal if g2[i] == object_geom else -normal
