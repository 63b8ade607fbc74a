"""The open hand's volume as boxes in its TCP frame: what the onboard filter sweeps along a
database grasp's approach against the scene, for a hand the filter has no built-in volume of
(a user's MJCF hand). Written to the grasp database with the hand's parameters."""
from __future__ import annotations

import itertools

import numpy as np

from ._hands import HandModel

_CORNERS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))   # (8, 3) unit box corners


def open_hand_volume(model: HandModel) -> dict:
    """{"boxes": [[lo, hi], ...], "closing_half_m": float}: one axis-aligned box per body of the
    hand, in the TCP frame (z = approach, metres), bounding that body's collision geoms in
    every preshape the hand opens to (MuJoCo's per-geom bounding boxes at the preshape's
    forward kinematics); closing_half_m is half the hand's open aperture."""
    import mujoco

    m = model.spec().compile()
    d = mujoco.MjData(m)
    solid = np.flatnonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0))
    geoms = solid if len(solid) else np.arange(m.ngeom)
    site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, model.tcp_site)
    if site < 0:
        raise ValueError(f"hand {model.name!r}: no TCP site {model.tcp_site!r} in its MJCF")
    joints = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j, _ in model.preshape]
    points: dict[int, list[np.ndarray]] = {}
    for values in model.preshapes or ((),):
        d.qpos[:] = m.qpos0
        for j, v in zip(joints, values):
            if j >= 0:
                d.qpos[m.jnt_qposadr[j]] = v
        mujoco.mj_kinematics(m, d)
        R_site, p_site = d.site_xmat[site].reshape(3, 3), d.site_xpos[site]
        for g in geoms:
            centre, half = m.geom_aabb[g, :3], m.geom_aabb[g, 3:]
            local = centre + _CORNERS * half                                 # geom frame
            world = local @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
            points.setdefault(int(m.geom_bodyid[g]), []).append((world - p_site) @ R_site)
    boxes = []
    for body in sorted(points):
        p = np.concatenate(points[body])
        boxes.append([p.min(axis=0).round(6).tolist(), p.max(axis=0).round(6).tolist()])
    return {"boxes": boxes, "closing_half_m": round(0.5 * float(model.aperture_m), 6)}
