"""SimCell.take_off_hand: an object the release left on the hand (a part hooked on a finger) is
taken off as the next cycle starts. The camera looks at the table and cannot see it, and the
next approach would press it onto the table: a protective stop charged to a grasp that did
not cause it (seed 150's taped 2F-140: an L-bracket held, then five stops on a bottle)."""
from __future__ import annotations

import mujoco
import numpy as np

from geometry import matrix_to_quat, quat_to_matrix
from offline_sim.cell import SimCell, SimCellSettings


def _cell() -> SimCell:
    """Two boxes (50 x 80 x 120 mm) on the table, the jaw open at home."""
    settings = SimCellSettings(objects_per_table=(2, 2), builtin=("box",),
                               random_primitives=False, depth_noise=False)
    return SimCell(settings, seed=0, cache_dir=None)


def _grip_in_the_air(cell: SimCell, k: int) -> None:
    """Put object k between the open pads at the TCP (its 50 mm side across) and close."""
    w = cell.world
    T = w.T_world_tcp()
    q = w.object_qposadr[k]
    w.data.qpos[q:q + 3] = T[:3, 3]
    w.data.qpos[q + 3:q + 7] = matrix_to_quat(T[:3, :3])
    mujoco.mj_forward(w.model, w.data)
    w.data.ctrl[w.close_actuator] = w.ctrl_closed
    cell.step(1500)


def test_an_object_carried_by_the_hand_is_taken_off_as_a_cycle_starts_and_the_rest_stay():
    cell = _cell()
    w = cell.world
    _grip_in_the_air(cell, 0)
    assert w.T_world_object(0)[2, 3] > 0.2  # carried at home, well over the table
    assert w.objects_hanging_on_hand() == [0]
    stays = w.T_world_object(1)
    cell.start_cycle()
    assert w.on_table() == [1]  # parked, off the table
    assert cell.taken_off_hand == 1
    np.testing.assert_allclose(w.T_world_object(1), stays, atol=1e-4)
    cell.close()


def _hand_touches(w, k: int) -> bool:
    """Whether any hand geom touches object k (0-based) now."""
    pairs = [(int(c.geom1), int(c.geom2)) for c in w.data.contact[:w.data.ncon]]
    return any(w.hand_geom[g] and w.geom_instance[o] == k + 1
               for a, b in pairs for g, o in ((a, b), (b, a)))


def test_an_object_on_the_table_that_the_hand_touches_is_left_where_it_is():
    cell = _cell()
    w = cell.world
    w.data.ctrl[w.close_actuator] = w.ctrl_closed  # fingertips together, lowered onto box 1
    cell.step(500)
    a = w.flange_qposadr
    T_flange = np.eye(4)
    T_flange[:3, :3] = quat_to_matrix(w.data.qpos[a + 3:a + 7])
    T_flange[:3, 3] = w.data.qpos[a:a + 3]
    tcp_to_flange = T_flange[:3, 3] - w.T_world_tcp()[:3, 3]
    middle = w.T_world_object(1)[:3, 3]
    for dz in np.arange(0.2, 0.0, -0.001):  # down over its middle until the hand meets it
        T = T_flange.copy()
        T[:3, 3] = middle + (0.0, 0.0, dz) + tcp_to_flange
        w.teleport_flange(T)
        if _hand_touches(w, 1):
            break
    assert _hand_touches(w, 1)
    assert w.objects_hanging_on_hand() == []  # it touches the table too
    cell.start_cycle()
    assert w.on_table() == [0, 1]
    assert cell.taken_off_hand == 0
    cell.close()
