"""The picking loop with a multi-finger hand on the simulated cell (issue 22): the database
as its only grasp source, the object recognised by vision.recognise (or the cell's truth),
the grasp executed with the Hand (preshape, approach, close, lift, judge), objects the
database lacks named in the NoGrasp reason, the jaw-only commands refused naming the hand,
and ``graspline demo --hand`` end to end.

Real parts: databases built by ``graspline db build`` / ``ensure_demo_database``, the MuJoCo
cell with its SimHand, the tabletop segmenter, SQLite trial logs."""
from __future__ import annotations

import msgspec
import cv2
import numpy as np
import pytest

pytest.importorskip("mujoco")

from onboard import (PickingCell, TrialLog, config_hash, open_picking_cell,  # noqa: E402
                     sim_cell_file, write_report)
from onboard.loop import DatabaseSource, PickingLoop, SimulatedTruth  # noqa: E402
from tests.onboard.db_scene import build_database  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def box_db(tmp_path_factory):
    """The built-in box's grasps for the three-finger hand (20 candidates; seconds)."""
    return build_database(tmp_path_factory.mktemp("db") / "box.sqlite", pfc=False)


@pytest.fixture(scope="module")
def box_db_underactuated(tmp_path_factory):
    """The built-in box's grasps for the underactuated hand (no preshape joints; seconds)."""
    from onboard.cli import main

    path = tmp_path_factory.mktemp("db") / "box-underactuated.sqlite"
    assert main(["db", "build", "--objects", "builtin:box", "--hand", "underactuated",
                 "--candidates", "20", "--samples", "3", "--workers", "0", "--pfc", "off",
                 "--out", str(path)]) == 0
    return path


def _box_alone(box_db, log_dir, hand="three_finger", mode="best"):
    """(SimCell, TrialLog, PickingLoop): the hand over the box alone, the loop planning with
    the box's database (vision recognising it), in mode ("best" or "validate")."""
    from offline_sim.cell import SimCell, SimCellSettings
    from vision import make_segmenter

    config = sim_cell_file(hand=hand, database=str(box_db), log_dir=str(log_dir))
    # noise-free depth and the 2 mm margin of db_scene, as the filter's own tests have them
    config = msgspec.structs.replace(config, database=msgspec.structs.replace(
        config.database, collision_margin_m=0.002))
    sim = SimCell(SimCellSettings(hand=hand, objects_per_table=(1, 1),
                                  builtin=("box",), depth_noise=False), seed=0)
    log = TrialLog(log_dir)
    loop = PickingLoop(config, camera=sim.camera, segmenter=make_segmenter("tabletop"),
                       gripper=None, arm=sim.arm, trial_log=log, cell_hash="test",
                       truth=SimulatedTruth(sim), hand=sim.hand_device, mode=mode)
    return sim, log, loop


def test_the_loop_recognises_the_box_places_a_database_grasp_and_the_hand_holds_it(box_db,
                                                                                   tmp_path):
    sim, log, loop = _box_alone(box_db, tmp_path / "trials")
    try:
        assert [type(s) for s in loop.planner.sources] == [DatabaseSource]
        z0 = sim.world.T_world_object(0)[2, 3]
        rec = loop.pick()
        # vision.recognise named it (the default recogniser), the hand held it, it rose
        assert (rec.outcome, rec.success, rec.source, rec.object_label) == \
            ("success", True, "database", "box")
        assert rec.gripper_status.startswith("holding")
        assert rec.features["pose_confidence"] >= 0.5 and rec.features["db_kept"] >= 1
        assert rec.features["db_reject_cone"] >= 1   # the reasons are in the trial log
        assert "preshape_0" in rec.features
        # placed in the bin: away from where it lay, and the hand open again
        assert abs(sim.world.T_world_object(0)[2, 3] - z0) > 0.01 or \
            np.linalg.norm(sim.world.T_world_object(0)[:2, 3]) > 0.2
        assert not sim.hand_device.status().object_detected
        logged = log.get(rec.trial_id)
        assert logged.source == "database"
        # the overlay draws the hand's closing line and fingertips in the score's colour,
        # labelled as a database grasp (a jaw's overlay has no label in its top-left corner)
        overlay = cv2.imread(str(logged.images["overlay"]), cv2.IMREAD_COLOR)
        assert overlay is not None
        coloured = (overlay[..., 1] > 150) & (overlay[..., 0] < 60)   # green-yellow, not grey
        assert coloured.sum() > 50
        assert (overlay[:24, :400] < 60).all(axis=2).sum() > 20     # the label's black text
        # beside it, as tall, the database grasp in the box's frame: the box's surface points
        # (grey), the fingertips and closing line in the score's colour, the title's text
        panel = cv2.imread(str(logged.images["db_grasp"]), cv2.IMREAD_COLOR)
        assert panel is not None and panel.shape[0] == overlay.shape[0]
        grey = (panel.max(axis=2) - panel.min(axis=2) < 8) & (panel[..., 0] > 50) & \
            (panel[..., 0] < 210)
        assert grey.sum() > 300
        assert ((panel[..., 1] > 150) & (panel[..., 0] < 60)).sum() > 50
        assert (panel[:60] < 60).all(axis=2).sum() > 100
        # the report shows the panel beside the trial's overlay
        page = write_report(tmp_path / "trials", tmp_path / "report").read_text()
        assert page.count('<a class=db_grasp href="overlays/1_db_grasp.png">') == 1
        assert (tmp_path / "report" / "overlays" / "1_db_grasp.png").is_file()
    finally:
        sim.close()
        log.close()


def test_validate_mode_draws_database_grasps_across_the_levels_of_their_quality(box_db,
                                                                               tmp_path):
    sim, log, loop = _box_alone(box_db, tmp_path / "trials", mode="validate")
    try:
        recs = [loop.pick() for _ in range(4)]
        logged = [log.get(r.trial_id) for r in recs]
    finally:
        sim.close()
        log.close()
    executed = [r for r in logged if r.source == "database"]
    assert len(executed) == 4, [(r.outcome, r.error) for r in logged]
    assert all(r.mode == "validate" for r in executed)
    # the trial log keeps each grasp's level (0..4 of its database quality, the score it
    # records) and the level of the best kept grasp; the draws reach below the top level
    for r in executed:
        assert r.score == pytest.approx(r.features["db_quality"])
        assert r.features["db_level"] == min(4, int(r.score * 5))
    levels = [int(r.features["db_level"]) for r in executed]
    tops = [int(r.features["db_top_level"]) for r in executed]
    assert any(lvl < top for lvl, top in zip(levels, tops)), (levels, tops)


def test_a_hand_without_preshape_joints_executes_its_database_grasp_too(box_db_underactuated,
                                                                        tmp_path):
    sim, log, loop = _box_alone(box_db_underactuated, tmp_path / "trials", "underactuated")
    try:
        rec = loop.pick()
        assert rec.source == "database" and rec.outcome in ("success", "failure")
        assert not any(k.startswith("preshape_") for k in rec.features)   # none to command
        assert rec.gripper_status and rec.error == ""
    finally:
        sim.close()
        log.close()


def test_a_hand_error_during_the_pick_stops_it_safely_and_the_trial_says_why(box_db, tmp_path):
    sim, log, loop = _box_alone(box_db, tmp_path / "trials")
    try:
        sim.hand_device.shutdown()   # the hand is gone: its first command raises HandError
        rec = loop.pick()
        assert rec.outcome == "error" and rec.success is None
        assert rec.error.startswith("hand: the hand was shut down")
        assert loop.state.fault is None   # a hand fault is not an arm fault
        np.testing.assert_allclose(sim.arm.T_base_tcp[:3, 3], loop.home[:3, 3], atol=0.01)
    finally:
        sim.close()
        log.close()


def test_a_hands_approach_stops_on_nothing_seen_ask_for_a_look_at_the_hand(box_db, tmp_path):
    sim, log, loop = _box_alone(box_db, tmp_path / "trials", mode="validate")
    try:
        for k in (1, 2):  # stopped where it started, at home: out of the camera's view
            sim.arm.fail_next = "protective stop: 180 N on the hand (injected)"
            rec = loop.pick()
            assert "nothing under the hand" in rec.error, rec.error
            assert loop.state.unseen_stops == k
        assert loop.state.hand_check and "see to the hand" in loop.state.fault
        loop.pick()  # the simulated operator sees to the hand first
        assert sim.hand_checks == 1 and not loop.state.hand_check
    finally:
        sim.close()
        log.close()


def test_objects_the_database_lacks_are_named_in_the_trial(box_db, tmp_path):
    # the box is picked (or not) and the trial names the objects the database cannot serve:
    # in its note beside a pick, in the no-grasp reason when nothing is picked
    def said(rec) -> str:
        return f"{rec.error or ''} {rec.note or ''}"

    # vision: the other objects match no model well enough, so they are "not recognised"
    with open_picking_cell(sim=True, hand="three_finger", database_path=str(box_db),
                           log_dir=str(tmp_path / "v")) as cell:
        assert [type(s) for s in cell.loop.planner.sources] == [DatabaseSource]
        rec = cell.pick_record()
        assert ": not recognised (" in said(rec)
    # the simulated cell's truth names them, and the source says the database lacks them
    with open_picking_cell(sim=True, hand="three_finger", database_path=str(box_db),
                           recogniser="truth", log_dir=str(tmp_path / "t")) as cell:
        rec = cell.pick_record()
        assert "object 0: 'bottle' is not in the grasp database" in said(rec)


def test_jaw_commands_on_a_hand_cell_fail_in_one_line_naming_the_hand_and_status_works(
        box_db, tmp_path):
    config = sim_cell_file(hand="three_finger", database=str(box_db), log_dir=str(tmp_path))
    with PickingCell(config, config_hash(config)) as cell:
        st = cell.status()
        assert st.gripper == "three_finger hand empty" and st.arm and st.trials == 0
        for call in (cell.grip, cell.release):
            with pytest.raises(RuntimeError, match=r"^(grip|release) commands a parallel-jaw "
                                                   r"gripper; this cell carries the "
                                                   r"three_finger hand"):
                call()
        frame = cell.devices.camera.read(2.0)
        with pytest.raises(ValueError, match="^score_pose scores parallel-jaw grasps; this cell "
                                             "carries the three_finger hand$"):
            cell.loop.score_pose(frame, cell.loop.home)


@pytest.mark.slow   # the demo database (built once per run by the fixture: minutes on two cores)
def test_demo_with_the_three_finger_hand_finds_its_database_runs_trials_and_reports(
        tmp_path, capsys, three_finger_demo_cache):
    from onboard.cli import main

    cache, out = three_finger_demo_cache.path, tmp_path / "out"
    assert main(["demo", "--hand", "three_finger", "--trials", "3", "--seed", "0",
                 *three_finger_demo_cache.args, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 trial(s): " in text and (out / "report" / "index.html").is_file()
    # the hand's cell warms its kernels up too (segmentation and silhouettes: no image search)
    assert "kernels loaded from cache in " in text or "compiling kernels ... done in " in text
    assert list(cache.glob("demo-three_finger-*.sqlite"))
    log_dir, = out.glob("trials-*")
    log = TrialLog(log_dir)
    try:
        records = [log.get(k) for k in range(1, log.count() + 1)]
    finally:
        log.close()
    assert len(records) == 3
    executed = [r for r in records if r.outcome != "no_grasp"]
    assert executed and all(r.source == "database" for r in executed)
    # with seed 0 the second trial's cylinder is held (physics and the build are seeded)
    assert any(r.success for r in executed)
    assert all("db_kept" in r.features for r in executed)
