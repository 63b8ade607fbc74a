"""The simulated cell with a multi-finger hand: database grasps placed by the object's true
pose are executed physically (preshape, approach, torque-limited close, lift, hold) and judged;
a grasp placed beside the object closes on nothing and is judged failed. The parallel-jaw cell
is covered by tests/onboard (its trial logs must stay bit for bit as they were)."""
from __future__ import annotations

import warnings
from pathlib import Path

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


def test_a_multi_finger_picking_cell_without_a_grasp_database_is_refused_in_one_line(tmp_path):
    import msgspec

    from onboard import CellSetupError, PickingCell, config_hash, open_picking_cell, sim_cell_file

    with pytest.raises(ValueError, match="hand 'three_finger' plans with a grasp database; "
                                         "give database="):
        open_picking_cell(sim=True, hand="three_finger", log_dir=str(tmp_path / "trials"))
    plain = sim_cell_file(log_dir=str(tmp_path / "trials"))
    config = msgspec.structs.replace(plain, sim=msgspec.structs.replace(plain.sim,
                                                                        hand="three_finger"))
    with pytest.raises(CellSetupError, match="sim.hand is 'three_finger', a multi-finger hand: "
                                             "it plans with a grasp database, so the cell file "
                                             "needs a 'database' section"):
        PickingCell(config, config_hash(config))


HANDS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hands"
ALLEGRO = HANDS / "wonik_allegro" / "left_hand.xml"
# Menagerie's Allegro (left): 16 position servos, no force range, no TCP site. The
# description closes it by a synergy (every flexion joint at once, the thumb's proximal
# rotation at half speed), preshapes the thumb into opposition, and adds a TCP 6 cm in front
# of the palm: z out of the palm (the approach), x along the fingers.
ALLEGRO_DESCRIPTION = {
    "name": "allegro_left",
    "synergy": {"ffa1": 1.0, "ffa2": 1.0, "ffa3": 1.0, "mfa1": 1.0, "mfa2": 1.0, "mfa3": 1.0,
                "rfa1": 1.0, "rfa2": 1.0, "rfa3": 1.0, "tha1": 0.5, "tha2": 1.0, "tha3": 1.0},
    "closing_speed": 3.0, "torque_limit": 0.6, "preshape": {"thj0": 1.3},
    "links": ["palm", "ff_distal", "mf_distal", "rf_distal", "th_distal"],
    "tcp": {"body": "palm", "pos": [0.06, 0.0, 0.0], "quat": [0.0, 0.70710678, 0.0, 0.70710678]},
    "aperture_m": 0.12, "grasp_depth_m": 0.03}


@pytest.mark.skipif(not ALLEGRO.is_file(), reason=f"Menagerie's hands are not at {HANDS}")
def test_menagerie_allegro_closed_by_its_synergy_lifts_an_upright_cylinder(tmp_path):
    import json

    description = tmp_path / "allegro.json"
    description.write_text(json.dumps({"mjcf": str(ALLEGRO), **ALLEGRO_DESCRIPTION}))
    with SimCell(SimCellSettings(hand=str(description), objects_per_table=(1, 1),
                                 builtin=("cylinder",), depth_noise=False), seed=0) as cell:
        hand, w = cell.hand_device, cell.world
        assert cell.hand.name == "allegro_left" and len(w.fingers.drives.act_ids) == 12
        assert hand.finger_names == ("palm", "rf_base", "mf_base", "ff_base", "th_base")
        T_wo = w.T_world_object(0)
        assert abs(T_wo[2, 2]) > 0.99, "the cylinder should rest upright with seed 0"
        # a side power grasp: palm towards the cylinder from the arm's side, fingers
        # horizontal (they wrap around the vertical axis), the thumb above them
        c = T_wo[:3, 3]
        z = np.array([c[0], c[1] + 0.5, 0.0])
        z /= np.linalg.norm(z)
        y = np.array([0.0, 0.0, 1.0])
        T = np.eye(4)
        T[:3, :3] = np.column_stack([np.cross(y, z), y, z])
        T[:3, 3] = (c[0], c[1], 0.07)
        open_q = hand.status().joint_positions
        out = cell.execute_grasp(T, np.array([1.3]), object_index=0)
        assert out.stage == "held", out.message
        assert out.success and out.object_detected and out.rose is True
        assert out.status.finger_contact.all()   # palm, three fingers and the thumb
        q = dict(zip(out.status.joint_names, out.status.joint_positions - open_q))
        # every joint of the synergy closed; the abduction joints (not in it) barely moved
        assert min(q[j] for j in ("ffj1", "ffj2", "ffj3", "mfj1", "rfj3", "thj2", "thj3")) > 0.4
        assert max(abs(q[j]) for j in ("ffj0", "mfj0", "rfj0")) < 0.25
        assert w.T_world_object(0)[2, 3] > T_wo[2, 3] + 0.05


def test_a_synergy_makes_one_drive_per_joint_and_a_tcp_site_is_added(tmp_path):
    from offline_sim.hands import load_mjcf_hand

    xml = tmp_path / "pinch.xml"
    xml.write_text("""<mujoco><worldbody><body name="palm"><geom type="box" size="0.02 0.02 0.01"/>
      <body name="a"><joint name="ja" axis="0 1 0"/><geom type="capsule" fromto="0.03 0 0 0.03 0 0.05" size="0.005"/></body>
      <body name="b"><joint name="jb" axis="0 1 0"/><geom type="capsule" fromto="-0.03 0 0 -0.03 0 0.05" size="0.005"/></body>
      </body></worldbody><actuator><position name="pa" joint="ja" kp="2"/><position name="pb" joint="jb" kp="2"/></actuator></mujoco>""")
    hand = load_mjcf_hand(xml, synergy={"pa": 1.0, "pb": -0.5}, closing_speed=2.0,
                          torque_limit=0.3, links=["a", "b"],
                          tcp={"body": "palm", "pos": [0, 0, 0.04]})
    assert [(d.actuators, d.closing_speed, d.ratios) for d in hand.drives] == [
        (("pa",), 2.0, (1.0,)), (("pb",), 1.0, (-1.0,))]
    model = hand.spec().compile()
    assert model.site("tcp").pos.tolist() == [0.0, 0.0, 0.04]
    with pytest.raises(ValueError, match="give closing_actuators or synergy, not both"):
        load_mjcf_hand(xml, closing_actuators=["pa"], synergy={"pa": 1.0}, links=["a"])
    with pytest.raises(ValueError, match=r"has no tcp body \['wrist'\]"):
        load_mjcf_hand(xml, synergy={"pa": 1.0}, torque_limit=0.3, links=["a"],
                       tcp={"body": "wrist"})


LEAP = HANDS / "leap_hand" / "right_hand.xml"
# Menagerie's LEAP hand (right): 16 position servos (kp 3), no force range, no TCP site, and a
# free joint on its palm (for a mocap weld; the cell's arm carries the hand instead, so it is
# left out when the hand is attached). Its palm frame: fingers along +x, side by side along
# y (index at +8 mm, ring at -83 mm), curling towards -z; the thumb sticks out along +y until
# its carpometacarpal joint (th_cmc) turns it into opposition below the palm. The description
# closes it by a synergy (every flexion joint of the three fingers at once, the thumb's
# proximal joint at half speed and its distal joint), preshapes the thumb into opposition, and
# adds a TCP 70 mm below the palm at the middle finger's row: z out of the palm (the approach),
# x along the fingers.
LEAP_DESCRIPTION = {
    "name": "leap_right",
    "synergy": {"if_mcp_act": 1.0, "if_pip_act": 1.0, "if_dip_act": 1.0,
                "mf_mcp_act": 1.0, "mf_pip_act": 1.0, "mf_dip_act": 1.0,
                "rf_mcp_act": 1.0, "rf_pip_act": 1.0, "rf_dip_act": 1.0,
                "th_mcp_act": 0.5, "th_ipl_act": 1.0},
    "closing_speed": 3.0, "torque_limit": 0.6, "preshape": {"th_cmc": 1.5},
    "links": ["palm", "if_ds", "mf_ds", "rf_ds", "th_ds"],
    "tcp": {"body": "palm", "pos": [-0.03, -0.035, -0.07], "quat": [0.0, 1.0, 0.0, 0.0]},
    "aperture_m": 0.12, "grasp_depth_m": 0.03}


@pytest.mark.skipif(not LEAP.is_file(), reason=f"Menagerie's hands are not at {HANDS}")
def test_menagerie_leap_gets_a_database_whose_best_grasp_lifts_an_upright_cylinder(tmp_path):
    import json

    from offline_sim.database import ensure_demo_database

    # the database names a described hand by its file's stem, the cell by its "name"
    description = tmp_path / "leap_right.json"
    description.write_text(json.dumps({"mjcf": str(LEAP), **LEAP_DESCRIPTION}))
    path = ensure_demo_database(str(description), tmp_path / "cache", objects=("cylinder",),
                                candidates=6, samples=2, workers=0, progress=False)
    with GraspDatabase(path) as db:
        assert db.hands()[0][0] == "leap_right"
        table = db.grasps("cylinder", "leap_right")
    assert len(table) >= 1 and table.quality[0] > 0
    np.testing.assert_array_equal(table.preshape, np.full((len(table), 1), 1.5))
    with SimCell(SimCellSettings(hand=str(description), objects_per_table=(1, 1),
                                 builtin=("cylinder",), depth_noise=False), seed=0) as cell:
        hand, w = cell.hand_device, cell.world
        assert cell.hand.name == "leap_right" and len(w.fingers.drives.act_ids) == 11
        assert hand.finger_names == ("palm", "if_bs", "mf_bs", "rf_bs", "th_mp")
        T_wo = w.T_world_object(0)
        assert abs(T_wo[2, 2]) > 0.99, "the cylinder should rest upright with seed 0"
        # the database's best grasp reachable from above, placed by the true pose
        T = T_wo @ table.T_object_hand
        i = int(np.flatnonzero(T[:, 2, 2] < -0.7)[0])
        open_q = hand.status().joint_positions
        out = cell.execute_grasp(T[i], table.preshape[i], object_index=0)
        assert out.stage == "held", out.message
        assert out.success and out.object_detected and out.rose is True
        assert out.status.finger_contact.all()   # palm, three fingers and the thumb
        q = dict(zip(out.status.joint_names, out.status.joint_positions - open_q))
        # every joint of the synergy closed; the fingers' side joints (not in it) barely moved,
        # the thumb's preshape held it in opposition
        assert min(q[j] for j in ("if_mcp", "if_pip", "if_dip", "mf_mcp", "rf_pip",
                                  "th_ipl")) > 0.4
        assert max(abs(q[j]) for j in ("if_rot", "mf_rot", "rf_rot")) < 0.25
        assert q["th_cmc"] > 1.2   # its weak servo (kp 3) yields a little to the object
        assert w.T_world_object(0)[2, 3] > T_wo[2, 3] + 0.05
    # the picking loop plans with it too: its volume (no built-in one) is the one the build
    # wrote into the database, one box per body of the open hand
    from onboard import TrialLog, sim_cell_file
    from onboard.loop import PickingLoop, SimulatedTruth
    from vision import make_segmenter

    config = sim_cell_file(hand=str(description), database=str(path),
                           log_dir=str(tmp_path / "trials"))
    with SimCell(SimCellSettings(hand=str(description), objects_per_table=(1, 1),
                                 builtin=("cylinder",), depth_noise=False), seed=0) as sim:
        loop = PickingLoop(config, camera=sim.camera, segmenter=make_segmenter("tabletop"),
                           gripper=None, arm=sim.arm, trial_log=TrialLog(tmp_path / "trials"),
                           cell_hash="test", truth=SimulatedTruth(sim), hand=sim.hand_device)
        volume = loop.planner.sources[0].hand
        assert volume.name == "leap_right" and len(volume.centre) >= 16
        rec = loop.pick()
        assert (rec.source, rec.object_label) == ("database", "cylinder"), rec.outcome
        assert rec.outcome in ("success", "failure")   # a grasp was placed and executed
