"""The closing phase: every finger joint closes at its drive speed until a link it carries
touches the object or the table, or it reaches its limit, by conservative advancement (each
step moves no point of the hand further than the gap in front of it)."""
from __future__ import annotations

import numpy as np

from ._gaps import query_gaps
from ._model import ClosingModel


def close_joints(cm: ClosingModel, gap: np.ndarray, steps: int) -> int:
    """The closing phase (joints at their speeds until blocked or at a limit) by
    conservative advancement, the per-step arithmetic in _closing_kernels.closing_step;
    gap : per hand geom at the start. Returns steps plus the queries made."""
    from . import _closing_kernels as kern

    s, d = cm.settings, cm.data
    q = d.qpos[cm.qadr].copy()
    moving = np.ones(len(cm.joints), bool)
    g_obj, g_tab = cm.gap_object, cm.gap_table
    gap = np.ascontiguousarray(gap, np.float64)
    for _ in range(s.max_steps):
        if not kern.closing_step(gap, q, moving, cm.carries, cm.speeds, cm.limit,
                                 cm.hinge, d.geom_xpos, cm.hand_geoms, cm.hand_rbound,
                                 d.xanchor, cm.joints, s.contact_tol_m):
            break
        d.qpos[cm.qadr] = q
        query_gaps(cm, s.margin_m)
        np.minimum(g_obj, g_tab, out=gap)
        steps += 1
    return steps
