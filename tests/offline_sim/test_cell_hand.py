"""The simulated cell with a multi-finger hand: database grasps placed by the object's true
pose are executed physically (preshape, approach, torque-limited close, lift, hold) and judged;
a grasp placed beside the object closes on nothing and is judged failed. The parallel-jaw cell
is covered by tests/onboard (its trial logs must stay bit for bit as they were)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("mujoco")

from drivers.hand import Hand, HandDisconnected, HandFault, HandTimeout  # noqa: E402
from offline_sim.cell import (HandGraspSettings, SimCell, SimCellSettings, SimHand,  # noqa: E402
                              pregrasp_pose)
from onboard.cli import main  # noqa: E402
from scoring import GraspDatabase  # noqa: E402


@pytest.fixture(scope="module")
def grasp_db(tmp_path_factory):
    """A tiny database of the built-in box for the two multi-finger hands (seconds to build)."""
    path = tmp_path_factory.mktemp("db") / "grasps.sqlite"
    for hand in ("three_finger", "underactuated"):
        assert main(["db", "build", "--objects", "builtin:box", "--hand", hand, "--candidates",
                     "20", "--samples", "3", "--workers", "0", "--out", str(path)]) == 0
    with GraspDatabase(path) as db:
        yield db


def _cell(hand: str) -> SimCell:
    """A cell with the hand and the built-in box alone on the table (seed 0)."""
    return SimCell(SimCellSettings(hand=hand, objects_per_table=(1, 1), builtin=("box",),
                                   depth_noise=False), seed=0)


def _best_from_above(db: GraspDatabase, hand: str, T_world_object: np.ndarray):
    """The best database grasp whose approach points down in the object's resting pose (a
    grasp from below the table cannot be reached: the loop's filter leaves it out)."""
    t = db.grasps("box", hand)
    T = T_world_object @ t.T_object_hand
    i = int(np.flatnonzero(T[:, 2, 2] < -0.7)[0])
    return T[i], t.preshape[i], t.quality[i]


@pytest.mark.parametrize("hand", ["three_finger", "underactuated"])
def test_best_database_grasp_placed_by_the_true_pose_lifts_and_holds_the_box(grasp_db, hand):
    with _cell(hand) as cell:
        T_base_hand, preshape, quality = _best_from_above(grasp_db, hand,
                                                          cell.world.T_world_object(0))
        z0 = cell.world.T_world_object(0)[2, 3]
        out = cell.execute_grasp(T_base_hand, preshape, object_index=0)
        assert quality > 0
        assert out.stage == "held", out.message
        assert out.success and out.object_detected and out.rose is True
        # the truth, read directly: the box is up in the hand, the fingers on it
        assert cell.world.T_world_object(0)[2, 3] > z0 + 0.05
        assert out.status.n_contacts >= 2
        assert cell.hand_device.status().object_detected


def test_a_grasp_beside_the_box_closes_on_nothing_and_is_judged_failed(grasp_db):
    with _cell("three_finger") as cell:
        T, preshape, _ = _best_from_above(grasp_db, "three_finger", cell.world.T_world_object(0))
        z0 = cell.world.T_world_object(0)[2, 3]
        # 5 cm of air between the box and the nearest finger: the open hand spans aperture_m
        radius = float(np.linalg.norm(cell.world.objects[0].visual[0][:, :2], axis=1).max())
        T = T.copy()
        T[:3, 3] += (radius + 0.5 * cell.hand.aperture_m + 0.05) * T[:3, 0]
        out = cell.execute_grasp(T, preshape, object_index=0)
        assert out.stage == "held"
        assert not out.success and not out.object_detected and out.rose is False
        assert not out.status.finger_contact.any()
        assert abs(cell.world.T_world_object(0)[2, 3] - z0) < 0.005


def test_sim_hand_is_a_hand_with_the_models_joints_and_fingers():
    with _cell("three_finger") as cell:
        hand = cell.hand_device
        assert isinstance(hand, Hand) and isinstance(hand, SimHand) and cell.gripper is None
        assert hand.preshape_joints == ("f1_spread", "f2_spread")
        st = hand.status()
        assert st.joint_names == ("f1_spread", "f1_prox", "f1_dist", "f2_spread", "f2_prox",
                                  "f2_dist", "f3_prox", "f3_dist")
        assert st.finger_names == ("palm", "f1_base", "f2_base", "f3_base")
        assert not st.object_detected and not st.finger_contact.any()
        # preshape moves the spread servo; the coupled finger follows through the equality
        hand.preshape(np.array([np.pi / 2, np.pi / 2]))
        q = dict(zip(st.joint_names, hand.status().joint_positions))
        assert q["f1_spread"] == pytest.approx(np.pi / 2, abs=0.03)
        assert q["f2_spread"] == pytest.approx(np.pi / 2, abs=0.03)
        # closing on nothing (hand high above the table) curls the fingers, detects nothing
        closed = hand.close()
        q = dict(zip(closed.joint_names, closed.joint_positions))
        assert q["f3_prox"] > 0.5 and not closed.object_detected
        hand.open()
        q = dict(zip(st.joint_names, hand.status().joint_positions))
        assert abs(q["f3_prox"]) < 0.05


def test_sim_hand_faults_timeouts_and_lifecycle_are_typed():
    with _cell("three_finger") as cell:
        hand = cell.hand_device
        with pytest.raises(ValueError, match="preshape q must be 2 finite values"):
            hand.preshape(np.zeros(3))
        with pytest.raises(ValueError, match="effort must be a fraction"):
            hand.close(effort=1.5)
        with pytest.raises(HandTimeout, match="closing not finished within 0.02 s"):
            hand.close(timeout_s=0.02)
        assert isinstance(HandTimeout("x", hand="sim"), TimeoutError)
        hand.fault = (0x0B, "overcurrent")
        with pytest.raises(HandFault, match="0x0B: overcurrent"):
            hand.open()
        hand.fault = None
        hand.open()
    assert hand.shut_down
    hand.shutdown()  # twice is safe
    with pytest.raises(HandDisconnected):
        hand.status()


def test_a_hand_left_connected_warns_when_collected():
    cell = _cell("underactuated")
    hand = cell.hand_device
    cell.hand_device = None
    with pytest.warns(ResourceWarning, match="SimHand on sim-cell was not shut down"):
        hand.__del__()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hand.__del__()  # shut down by the first: silent now
    cell.close()


def test_multi_finger_cell_lays_only_database_objects_and_rejects_bad_hands(tmp_path):
    with SimCell(SimCellSettings(hand="three_finger", objects_per_table=(5, 5),
                                 depth_noise=False), seed=3) as cell:
        # random primitives are on by default; a multi-finger cell leaves them out
        assert {o.name for o in cell.world.objects} <= set(SimCellSettings().builtin)
    with pytest.raises(ValueError, match="SimCellSettings.hand must be one of parallel, "
                                         "three_finger, underactuated or a JSON"):
        SimCellSettings(hand="allegro")
    bad = tmp_path / "hand.json"
    bad.write_text('{"closing_actuators": ["a"]}')
    with pytest.raises(ValueError, match="SimCellSettings.hand .*no 'mjcf' key"):
        SimCell(SimCellSettings(hand=str(bad)), seed=0)


def test_pregrasp_pose_backs_off_along_the_approach():
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])   # approach straight down
    T[:3, 3] = (0.1, 0.2, 0.05)
    P = pregrasp_pose(T, 0.08)
    np.testing.assert_allclose(P[:3, 3], (0.1, 0.2, 0.13))
    np.testing.assert_array_equal(P[:3, :3], T[:3, :3])
    with pytest.raises(ValueError, match="HandGraspSettings.lift_m must be finite and > 0"):
        HandGraspSettings(lift_m=0.0)


def test_demo_database_is_built_once_then_reused(tmp_path):
    from offline_sim.database import ensure_demo_database

    kw = dict(objects=("box",), candidates=6, samples=2, workers=0, progress=False)
    path = ensure_demo_database("three_finger", tmp_path, **kw)
    with GraspDatabase(path) as db:
        first = db.grasps("box", "three_finger")
        assert len(first) > 0 and first.preshape.shape == (len(first), 2)
    again = ensure_demo_database("three_finger", tmp_path, **kw)
    assert again == path
    with GraspDatabase(path) as db:
        np.testing.assert_array_equal(db.grasps("box", "three_finger").quality, first.quality)
        assert [b.status for b in db.builds()] == ["finished", "finished"]
    with pytest.raises(ValueError, match="objects must be built-in objects"):
        ensure_demo_database("three_finger", tmp_path, objects=("anvil",))


def test_demo_with_an_unknown_hand_fails_in_one_line_before_building_anything(tmp_path, capsys):
    assert main(["demo", "--hand", "bogus", "--cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("graspline demo: error: --hand must be one of parallel, three_finger, "
                   "underactuated or a JSON hand description file, got 'bogus'")
    assert not any(tmp_path.iterdir())


def test_the_picking_cell_with_a_multi_finger_hand_stops_at_the_gripper_in_one_line(tmp_path):
    from onboard import CellSetupError, open_picking_cell

    with pytest.raises(CellSetupError, match="sim.hand is 'three_finger', a multi-finger hand "
                                             ".*multi-finger planning is not wired yet"):
        open_picking_cell(sim=True, hand="three_finger", log_dir=str(tmp_path / "trials"))
