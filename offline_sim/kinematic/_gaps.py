"""The gaps between the hand and what blocks it: one collision query at the current posture,
with the hand geoms' contact margin standing in for a distance query (MuJoCo reports every
pair closer than the margin, with its distance)."""
from __future__ import annotations


def query_gaps(cm, cap: float):
    """Kinematics and collision at the current qpos of cm (a ClosingModel); per hand geom the
    smallest gap to the object into cm.gap_object and to the table into cm.gap_table (m,
    capped at cap, the margin in force). Returns MuJoCo's contacts of the query."""
    import mujoco

    from . import _closing_kernels as kern

    m, d = cm.model, cm.data
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)
    con = d.contact
    kern.split_gaps(con.geom, con.dist, cm.slot, cm.table_geom, cap, cm.gap_object, cm.gap_table)
    return con
