"""Approaches that stop where the planning frame shows nothing under the hand: a part hooked on
a finger rides down with the hand, out of the table camera's view, and stops every approach
after it (seed 150's taped 2F-140: an L-bracket, five stops in a row on a bottle). A run of
them faults the loop for the operator to see to the hand; the simulated cell's operator does
it by itself, a real cell's is asked."""
from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

pytest.importorskip("mujoco")

from geometry import matrix_to_quat  # noqa: E402
from onboard import GraspChoice  # noqa: E402
from onboard.loop import NO_TRUTH, StageClock, read_stop  # noqa: E402

from .test_loop import small_cell  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture()
def cell(tmp_path):
    """The simulated cell with two 50 x 80 x 120 mm boxes on each table."""
    c = small_cell(5, tmp_path, width_px=640)
    sim = c.devices.truth
    sim.use_settings(dataclasses.replace(sim.settings, objects_per_table=(2, 2),
                                         builtin=("box",), random_primitives=False))
    yield c
    c.close()


def _plan(cell):
    """A plan with a grasp on one of the two boxes (new tables until there is one)."""
    for _ in range(6):
        plan = cell.loop.plan()
        if isinstance(plan.choice, GraspChoice):
            return plan
        cell.devices.truth.new_table()
    pytest.fail("no grasp on six tables of two boxes")


def _finger_centre(cell, T: np.ndarray, side: float) -> np.ndarray:
    """The middle of one open finger's footprint at the grasp (base frame, on the table)."""
    g = cell.config.gripper
    p = T[:3, 3] + side * (0.5 * g.open_width_m + 0.5 * g.finger_thickness_m) * T[:3, 0]
    return np.array([p[0], p[1], 0.0])


def _stand_under_finger(cell, plan, side: float = 1.0) -> int:
    """After the capture, stand the box the grasp is not on under one finger, 80 mm tall, its
    inner edge 10 mm inside the finger's middle (clear of the grasped box): something the
    frame does not show. Its index."""
    sim = cell.devices.truth
    w = sim.world
    target = cell.loop.truth.object_index(plan.frame, plan.chosen_mask)
    k = 1 - target
    T = plan.choice.T_base_tcp
    x = T[:3, 0] * side
    x = np.array([x[0], x[1], 0.0]) / np.linalg.norm(x[:2])
    up = np.array([0.0, 0.0, 1.0])
    # the box's axes (50, 80, 120 mm): 50 mm across the closing direction, 80 mm up, 120 mm
    # along it
    R = np.column_stack([np.cross(up, x), up, x])
    centre = _finger_centre(cell, T, side) + (0.06 - 0.010) * x + (0.0, 0.0, 0.0405)
    q = w.object_qposadr[k]
    w.data.qpos[q:q + 3] = centre
    w.data.qpos[q + 3:q + 7] = matrix_to_quat(R)
    dof = w.model.jnt_dofadr[w.model.body_jntadr[w.object_body[k]]]
    w.data.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(w.model, w.data)
    sim.step(200)
    return k


def _seen_points(frame) -> np.ndarray:
    """(N, 3) the frame's depth readings in the base frame (metres)."""
    d = frame.depth_m
    v, u = np.nonzero(np.isfinite(d) & (d > 0))
    cam = frame.intrinsics.deproject_pixels(u, v, d[v, u])
    T = frame.T_base_camera
    return cam @ T[:3, :3].T + T[:3, 3]


def _tips_at(T: np.ndarray, tip: np.ndarray, tcp_to_tip_m: float) -> np.ndarray:
    """T moved so that its fingertips' middle is at tip (base frame)."""
    out = T.copy()
    out[:3, 3] = tip - tcp_to_tip_m * T[:3, 2]
    return out


def _over_bare_table(frame, T: np.ndarray, tcp_to_tip_m: float) -> np.ndarray:
    """T moved over the table's seen point farthest from anything taller (within 0.25 m of
    it), the fingertips 30 mm over the table."""
    pts = _seen_points(frame)
    table, tall = pts[pts[:, 2] < 0.003], pts[pts[:, 2] > 0.010]
    near = table[np.linalg.norm(table[:, :2] - T[:2, 3], axis=1) < 0.25][::50]
    gap = np.array([np.min(np.linalg.norm(tall[::20, :2] - p[:2], axis=1)) for p in near])
    assert gap.max() > 0.08
    return _tips_at(T, near[int(np.argmax(gap))] + (0.0, 0.0, 0.030), tcp_to_tip_m)


def test_a_stop_over_the_bare_table_reads_unseen_and_one_on_a_seen_top_does_not(cell):
    plan = _plan(cell)
    g = cell.config.gripper
    T = plan.choice.T_base_tcp
    pts = _seen_points(plan.frame)
    r = read_stop(plan.frame, _over_bare_table(plan.frame, T, g.tcp_to_tip_m), g)
    assert r is not None and r.unseen
    assert abs(r.clearance_m - 0.030) < 0.006  # the table, 30 mm under the fingertips
    assert "nothing under the hand" in r.text()
    # one finger's middle over the grasped box's middle, the fingertips at its seen top
    box = pts[plan.chosen_mask.mask[np.isfinite(plan.frame.depth_m) & (plan.frame.depth_m > 0)]]
    top = np.array([*box[:, :2].mean(axis=0), np.percentile(box[:, 2], 95)])
    finger = (0.5 * g.open_width_m + 0.5 * g.finger_thickness_m) * T[:3, 0]
    r = read_stop(plan.frame, _tips_at(T, top - finger, g.tcp_to_tip_m), g)
    assert r is not None and not r.unseen and r.seen_points > 20
    assert "surface points" in r.text()


def test_two_approaches_in_a_row_stopped_on_an_unseen_part_fault_the_loop_for_the_hand(cell):
    loop = cell.loop
    plan = _plan(cell)
    _stand_under_finger(cell, plan)
    ex = loop.execute(plan, StageClock({}))
    assert ex.success is False and "nothing under the hand" in ex.error
    assert loop.state.fault is None and loop.state.unseen_stops == 1
    assert cell.devices.arm.T_base_tcp[2, 3] > 0.1  # backed away
    cell.devices.truth.new_table()  # the part rides on with the hand to the next table
    plan = _plan(cell)
    _stand_under_finger(cell, plan, side=-1.0)
    loop.execute(plan, StageClock({}))
    assert loop.state.hand_check and "see to the hand" in loop.state.fault
    assert cell.status().state == "faulted"
    assert cell.devices.arm.T_base_tcp[2, 3] > 0.1  # backed away, not left on the part
    # a real cell (no truth of its own) refuses to pick until a person clears it
    truth = loop.truth
    loop.truth = NO_TRUTH
    with pytest.raises(RuntimeError, match="see to the hand"):
        cell.pick_record()
    loop.truth = truth
    # the simulated cell's operator sees to the hand, and the loop picks again
    rec = cell.pick_record()
    assert cell.devices.truth.hand_checks == 1
    assert rec.outcome in ("success", "failure", "no_grasp", "error")
    assert not loop.state.hand_check


def test_a_stop_on_something_the_frame_shows_does_not_count_towards_the_hand_check(cell):
    loop = cell.loop
    loop.state.unseen_stops = 1  # one unseen stop before
    plan = _plan(cell)
    # the grasp moved onto the box's own top: the fingers stop on what the frame shows
    sim = cell.devices.truth
    target = cell.loop.truth.object_index(plan.frame, plan.chosen_mask)
    T = plan.choice.T_base_tcp.copy()
    top = sim.world.T_world_object(target)[:3, 3]
    g = cell.config.gripper
    finger = (0.5 * g.open_width_m + 0.5 * g.finger_thickness_m) * T[:3, 0]
    # aimed at the table: a finger meets the box's top on the way down
    T = _tips_at(T, np.array([*(top - finger)[:2], 0.0]), g.tcp_to_tip_m)
    plan.choice = dataclasses.replace(plan.choice, T_base_tcp=T)
    ex = loop.execute(plan, StageClock({}))
    assert ex.success is False and "protective stop" in ex.error
    assert "nothing under the hand" not in ex.error
    assert loop.state.unseen_stops == 0 and loop.state.fault is None


def test_a_controllers_reports_of_stops_on_nothing_seen_fault_the_cell_until_cleared(cell):
    g = cell.config.gripper
    for k in range(2):
        choice = cell.best_grasp()
        assert isinstance(choice, GraspChoice)
        frame = cell.devices.camera.read()  # the scene as best_grasp saw it (nothing moved)
        stop = _over_bare_table(frame, choice.T_base_tcp, g.tcp_to_tip_m)
        s = cell.report_outcome(choice.trial_id, False, "protective stop", stop)
        assert s.outcome == "failure" and "nothing under the hand" in s.note
        assert cell.loop.state.unseen_stops == k + 1
    assert cell.status().state == "faulted"
    refused = cell.best_grasp()
    assert not isinstance(refused, GraspChoice) and "see to the hand" in refused.reason
    cell.clear_fault()
    assert isinstance(cell.best_grasp(), GraspChoice)


def test_a_controllers_stop_on_the_grasped_objects_top_is_not_counted(cell):
    cell.loop.state.unseen_stops = 1
    choice = cell.best_grasp()
    assert isinstance(choice, GraspChoice)
    frame = cell.devices.camera.read()
    g = cell.config.gripper
    pts = _seen_points(frame)
    T = choice.T_base_tcp
    near = pts[np.linalg.norm(pts[:, :2] - T[:2, 3], axis=1) < 0.02]  # the grasped top
    top = np.array([*T[:2, 3], np.percentile(near[:, 2], 95)])
    finger = (0.5 * g.open_width_m + 0.5 * g.finger_thickness_m) * T[:3, 0]
    s = cell.report_outcome(choice.trial_id, False, None, _tips_at(T, top - finger,
                                                                    g.tcp_to_tip_m))
    assert "surface points" in s.note
    assert cell.loop.state.unseen_stops == 0 and cell.status().state != "faulted"


def test_graspline_run_stops_on_a_faulted_cell_saying_why_and_keeps_the_trials(cell, capsys):
    from onboard.cli._demo import _trials

    _plan(cell)  # a table with a grasp on it
    cell.devices.arm.fault = "emergency stop (injected)"
    try:
        _trials(cell, 3)
    finally:
        cell.devices.arm.fault = None
    out = capsys.readouterr().out
    assert "stopped: the cell is faulted (arm faulted" in out
    assert "1 trial(s)" in out and len(cell.log.records()) == 1
