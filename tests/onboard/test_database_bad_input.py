"""A grasp database that does not fit the cell (issue 22, item 5): built for another hand,
by another schema or simulation code version, a file that is truncated, text or missing a
table, an object it lacks, a pose fit that cannot be made. Each is a one-line error at start
(nothing opened left open) or a logged fallback; the loop never crashes.

Real parts: databases built by ``graspline db build`` (copies altered with sqlite3 as another
version would have left them, truncated, or replaced by text), the MuJoCo simulated cell
with its SimHand or jaw, vision.recognise, SQLite trial logs, the ``graspline`` CLI."""
from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec
import numpy as np
import pytest

pytest.importorskip("mujoco")

from onboard import (CellSetupError, PickingCell, TrialLog, config_hash,  # noqa: E402
                     sim_cell_file)
from onboard.loop import PickingLoop, SimulatedTruth, current_measures_version  # noqa: E402
from scoring import GraspDatabase, GraspDatabaseError  # noqa: E402
from tests.onboard.db_scene import build_database  # noqa: E402
from vision import (ObjectMask, models_from_database, prepare_models,  # noqa: E402
                    recognise)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def box_db(tmp_path_factory):
    """The built-in box's grasps for the three-finger hand (20 candidates; seconds)."""
    return build_database(tmp_path_factory.mktemp("db") / "box.sqlite", pfc=False)


def _copy(src: Path, dst: Path, *statements: str) -> Path:
    """A copy of a database with SQL statements applied (as another version would write it)."""
    shutil.copy(src, dst)
    with sqlite3.connect(dst) as con:
        for sql in statements:
            con.execute(sql)
    con.close()
    return dst


def _open_fds(*paths: Path) -> list[str]:
    """This process's open file descriptors on the paths or below them (Linux /proc)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if any(target.startswith(str(p)) for p in paths):
            found.append(target)
    return found


def _hand_cell_config(db: Path, log_dir: Path, *, hand: str = "three_finger",
                      database_hand: str | None = None, **section):
    """The simulated cell carrying hand, planning with db (its section's hand database_hand,
    default the cell's)."""
    config = sim_cell_file(hand=hand, database=str(db), log_dir=str(log_dir))
    return msgspec.structs.replace(config, database=msgspec.structs.replace(
        config.database, hand=database_hand or config.database.hand, **section))


def _refused(config, log_dir: Path, db: Path) -> str:
    """The one-line CellSetupError PickingCell raises for config, checked to leave neither
    the trial log nor the database open (while the error still holds the half-built cell)."""
    with pytest.raises(CellSetupError) as e:
        PickingCell(config, config_hash(config))
    assert _open_fds(db, log_dir) == [], "a file the refused cell opened is still open"
    text = str(e.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# -------------------------------------------------------------- a. another hand
def test_a_database_without_the_cell_files_hand_is_one_line_naming_hand_hands_and_path(
        box_db, tmp_path):
    config = _hand_cell_config(box_db, tmp_path / "log", hand="underactuated")
    text = _refused(config, tmp_path / "log", box_db)
    assert text == (f"grasp database {box_db} has no grasps for the 'underactuated' hand (cell "
                    f"file key 'database.hand'); it has grasps for 'three_finger'")


def test_a_database_for_another_hand_than_the_simulated_cells_is_refused_at_start(box_db,
                                                                                  tmp_path):
    # the section asks for three_finger grasps (which the file has), the cell carries the
    # underactuated hand: its grasps would be executed by the wrong fingers
    config = _hand_cell_config(box_db, tmp_path / "log", hand="underactuated",
                               database_hand="three_finger")
    text = _refused(config, tmp_path / "log", box_db)
    assert text == (f"grasp database {box_db}: the simulated cell carries the 'underactuated' "
                    f"hand (cell file key 'sim.hand') but key 'database.hand' asks for "
                    f"'three_finger'; it has grasps for 'three_finger'")


def test_graspline_run_with_a_database_for_another_hand_ends_in_one_line(box_db, tmp_path,
                                                                          capsys):
    from onboard.cli import main

    cell = tmp_path / "cell.yaml"
    cell.write_text(f"sim: {{hand: underactuated}}\n"
                    f"database: {{path: {box_db}, hand: underactuated}}\n"
                    f"log_dir: {tmp_path / 'log'}\n")
    assert main(["run", "--config", str(cell), "--trials", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("graspline run: error: ")
    assert "'underactuated' hand" in err[0] and "'three_finger'" in err[0] and str(box_db) in err[0]


# ------------------------------------------------------- b. another code version
@pytest.mark.parametrize("version, advice", [
    ("1", "run `graspline db build ... --out {path} --on-change restart` with this graspline"),
    ("4", "it was written by a newer graspline; update graspline, or build the database again"),
])
def test_another_schema_version_is_one_line_naming_both_versions_and_what_to_run(
        box_db, tmp_path, version, advice):
    path = _copy(box_db, tmp_path / f"v{version}.sqlite",
                 f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")
    with pytest.raises(GraspDatabaseError) as e:
        GraspDatabase(path)
    text = str(e.value)
    assert text.startswith(f"{path} has schema version {version}, this graspline reads "
                           f"versions 2, 3: ")
    assert advice.format(path=path) in text and "\n" not in text
    assert _open_fds(path) == [], "the refused file is still open"
    # at the cell's start: the same line after the cell file key
    config = _hand_cell_config(path, tmp_path / "log")
    assert _refused(config, tmp_path / "log", path) == f"cell file key 'database.path': {text}"


def test_grasps_ranked_by_other_simulation_code_run_with_one_warning_line(box_db, tmp_path,
                                                                          caplog):
    old = "0123456789abcdef"
    path = _copy(box_db, tmp_path / "old.sqlite",
                 f"UPDATE targets SET inputs = json_set(inputs, '$.code', '{old}')")
    current = current_measures_version()
    assert current and current != old
    with GraspDatabase(path) as db:
        assert db.code_versions("three_finger") == {"box": old}
    with GraspDatabase(box_db) as db:   # the fixture was built by this graspline
        assert db.code_versions("three_finger") == {"box": current}
    config = _hand_cell_config(path, tmp_path / "log", recogniser="truth")
    with caplog.at_level("WARNING", logger="graspline"):
        cell = PickingCell(config, config_hash(config))
    with cell:
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert warned == [
            f"grasp database {path}: the three_finger hand's grasps were ranked by the "
            f"simulation's code version {old} (box), this graspline's is {current}; the loop "
            f"uses them as they are (re-rank them with `graspline db build ... --out {path} "
            f"--on-change restart`)"]
        rec = cell.pick_record()   # the loop runs with them
        assert rec.trial_id == 1 and rec.outcome in ("success", "failure", "no_grasp")


@pytest.mark.slow   # a fresh interpreter builds the simulated cell: about 20 s
def test_the_code_version_warning_is_one_line_on_the_console_of_graspline_run(box_db, tmp_path):
    path = _copy(box_db, tmp_path / "old.sqlite",
                 "UPDATE targets SET inputs = json_set(inputs, '$.code', '0123456789abcdef')")
    cell = tmp_path / "cell.yaml"
    cell.write_text(f"sim: {{hand: three_finger}}\n"
                    f"database: {{path: {path}, hand: three_finger, recogniser: truth}}\n"
                    f"log_dir: {tmp_path / 'log'}\n")
    p = subprocess.run([sys.executable, "-m", "onboard.cli", "run", "--config", str(cell),
                        "--trials", "1"], capture_output=True, text=True, cwd=REPO,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "code version" in ln]
    assert len(lines) == 1 and "0123456789abcdef" in lines[0]
    assert current_measures_version() in lines[0]


# ---------------------------------------------------------- c. a missing object
def test_a_jaw_cell_falls_back_to_the_image_search_for_objects_the_database_lacks(
        box_db, tmp_path, caplog):
    # the jaw's cell with the database section: what the database cannot serve (the truth
    # names every object; only the box is in the file), the image search plans
    section = msgspec.structs.replace(
        _hand_cell_config(box_db, tmp_path).database, recogniser="truth")
    config = msgspec.structs.replace(sim_cell_file(seed=0, log_dir=str(tmp_path / "log")),
                                     database=section)
    with PickingCell(config, config_hash(config)) as cell, \
            caplog.at_level("INFO", logger="graspline.loop"):
        rec = cell.pick_record()
        assert rec.outcome in ("success", "failure") and rec.source == "image_search"
        assert "database: object " in rec.note, rec.note
        assert "is not in the grasp database; falling back to the image search" in rec.note
        assert any("is not in the grasp database; falling back to the image search"
                   in r.getMessage() for r in caplog.records)
        assert cell.log.get(rec.trial_id).note == rec.note   # in the trial log


def _two_objects(box_db, log_dir, recogniser=None, seed=2):
    """(SimCell, TrialLog, PickingLoop): the three-finger hand over the box and a cylinder
    (noise-free depth; the margin of db_scene), the loop planning with the box's database;
    seed 2 lays them where a grasp of the box is kept."""
    from offline_sim.cell import SimCell, SimCellSettings
    from onboard.loop import ground_truth_recogniser
    from vision import make_segmenter

    config = _hand_cell_config(box_db, log_dir, collision_margin_m=0.002)
    with GraspDatabase(box_db) as db:
        names = db.objects()
    sim = SimCell(SimCellSettings(hand="three_finger", objects_per_table=(2, 2),
                                  builtin=("box", "cylinder"), depth_noise=False), seed=seed)
    log = TrialLog(log_dir)
    truth = SimulatedTruth(sim)
    loop = PickingLoop(config, camera=sim.camera, segmenter=make_segmenter("tabletop"),
                       gripper=None, arm=sim.arm, trial_log=log, cell_hash="test",
                       truth=truth, hand=sim.hand_device,
                       recogniser=recogniser or ground_truth_recogniser(truth, names))
    return sim, log, loop


@pytest.mark.parametrize("lacks, why", [
    ("the object", "'cylinder' is not in the grasp database"),
    ("its grasps", "'cylinder' has no grasps for the three_finger hand in the grasp database"),
])
def test_a_hand_cell_picks_what_it_knows_and_notes_no_grasp_for_what_it_lacks(box_db,
                                                                             tmp_path, lacks,
                                                                             why):
    db = box_db if lacks == "the object" else _copy(   # the cylinder known, without grasps
        box_db, tmp_path / "g.sqlite", "INSERT INTO objects (name) VALUES ('cylinder')")
    sim, log, loop = _two_objects(db, tmp_path / "log")
    try:
        names = sorted(sim.object_name(k) for k in range(2))
        assert names == ["box", "cylinder"]
        rec = loop.pick()
        assert rec.source == "database" and rec.object_label == "box"
        assert "database: object " in rec.note
        assert f"{why}; no grasp for it" in rec.note
        assert log.get(rec.trial_id).note == rec.note
    finally:
        sim.close()
        log.close()


# ---------------------------------------------------------------- d. a corrupt file
@pytest.mark.parametrize("damage, what", [
    ("truncated", "cannot be read (database disk image is malformed): the file is truncated, "
                  "damaged or not a graspline grasp database"),
    ("text", "cannot be read (file is not a database): the file is truncated, damaged or not "
             "a graspline grasp database"),
    ("no results table", "is not a complete graspline grasp database: table(s) results missing"),
])
def test_a_corrupt_file_is_one_line_naming_the_path_and_what_is_wrong(box_db, tmp_path, damage,
                                                                      what):
    path = tmp_path / "bad.sqlite"
    if damage == "truncated":
        path.write_bytes(box_db.read_bytes()[: box_db.stat().st_size // 2])
    elif damage == "text":
        path.write_text("object,grasp,quality\nbox,1,0.9\n" * 50)
    else:
        _copy(box_db, path, "DROP TABLE results")
    with pytest.raises(GraspDatabaseError) as e:
        GraspDatabase(path)
    assert str(e.value).startswith(f"{path} {what}")
    assert isinstance(e.value.__cause__, sqlite3.DatabaseError) or damage == "no results table"
    assert _open_fds(path) == []
    config = _hand_cell_config(path, tmp_path / "log")
    assert _refused(config, tmp_path / "log", path) == f"cell file key 'database.path': {e.value}"


def test_a_table_dropped_after_opening_is_a_database_error_not_sqlite3s(box_db, tmp_path):
    path = _copy(box_db, tmp_path / "g.sqlite")
    with GraspDatabase(path) as db:
        with sqlite3.connect(path) as con:   # another process damages it while it is open
            con.execute("DROP TABLE grasps")
        con.close()
        with pytest.raises(GraspDatabaseError, match=rf"^{path} cannot be read \(no such table: "
                                                     r"grasps\)"):
            db.grasps("box", "three_finger")


def test_graspline_run_on_a_truncated_database_ends_in_one_line(box_db, tmp_path, capsys):
    from onboard.cli import main

    path = tmp_path / "cut.sqlite"
    path.write_bytes(box_db.read_bytes()[:9000])
    cell = tmp_path / "cell.yaml"
    cell.write_text(f"sim: {{hand: three_finger}}\ndatabase: {{path: {path}, hand: three_finger}}\n"
                    f"log_dir: {tmp_path / 'log'}\n")
    assert main(["run", "--config", str(cell), "--trials", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert err[0].startswith(f"graspline run: error: {cell}: cell file key 'database.path': "
                             f"{path} cannot be read (database disk image is malformed)")


def test_graspline_db_info_on_a_damaged_file_is_one_line(box_db, tmp_path, capsys):
    from onboard.cli import main

    text = tmp_path / "notes.sqlite"
    text.write_text("not a database\n" * 40)
    no_log = _copy(box_db, tmp_path / "no_log.sqlite", "DROP TABLE build_log")
    for path, what in ((text, "(file is not a database)"), (no_log, "(no such table: build_log)")):
        assert main(["db", "info", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"graspline db: error: {path} cannot be read {what}")
        assert err.count("\n") == 1


# ------------------------------------------------------- e. a pose fit that fails
@pytest.fixture(scope="module")
def library(box_db):
    with GraspDatabase(box_db) as db:
        return prepare_models(models_from_database(db))


def _box_frame():
    """A noise-free frame of the box alone (db_scene), its mask, and the table's plane."""
    from tests.onboard.db_scene import tabletop
    from vision import SupportPlane

    scene = tabletop()
    T = scene.frame.T_base_camera
    normal = T[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    origin_cam = T[:3, :3].T @ -T[:3, 3]
    return scene.frame, scene.box_mask, SupportPlane(normal, -float(normal @ origin_cam), 1000, 0.0)


def _handful(mask: ObjectMask, n: int = 5) -> ObjectMask:
    """The mask cut down to its first n pixels."""
    keep = np.zeros_like(mask.mask)
    v, u = np.nonzero(mask.mask)
    keep[v[:n], u[:n]] = True
    return dataclasses.replace(mask, mask=keep)


def _nan_depth(frame, mask: ObjectMask):
    """The frame with NaN depth (no reading) over the mask."""
    depth = frame.depth_m.copy()
    depth[mask.mask] = np.nan
    return dataclasses.replace(frame, depth_m=depth)


def test_recognise_reports_unknown_with_the_reason_for_a_handful_of_points_or_nan_depth(library):
    frame, mask, plane = _box_frame()
    assert recognise(frame, mask, library, support=plane).name == "box"   # the baseline
    few = recognise(frame, _handful(mask), library, support=plane)
    assert (few.name, few.T_base_object, few.confidence) == (None, None, 0.0)
    assert few.why == "5 depth points above the support in the mask (need 30)"
    nan = recognise(_nan_depth(frame, mask), mask, library, support=plane)
    assert nan.name is None and nan.why == "0 depth points above the support in the mask (need 30)"


@pytest.mark.parametrize("fault, reason", [
    ("handful", "object 0: not recognised (5 depth points above the support in the mask "
                "(need 30))"),
    ("nan_depth", "object 0: not recognised (0 depth points above the support in the mask "
                  "(need 30))"),
    ("raises", "object 0: not recognised (recognition failed: ValueError: recognise: "
               "frame.T_base_camera is None"),
])
def test_a_pose_fit_that_fails_in_a_loop_cycle_is_an_unknown_object_and_the_loop_goes_on(
        box_db, library, tmp_path, caplog, fault, reason):
    from offline_sim.cell import SimCell, SimCellSettings
    from vision import make_segmenter

    segmenter = make_segmenter("tabletop")

    def degraded(frame, mask):   # vision.recognise on what a bad frame would have given
        if fault == "handful":
            mask = _handful(mask)
        elif fault == "nan_depth":
            frame = _nan_depth(frame, mask)
        else:
            frame = dataclasses.replace(frame, T_base_camera=None)
        return recognise(frame, mask, library, support=segmenter.last_plane)

    config = _hand_cell_config(box_db, tmp_path / "log", collision_margin_m=0.002)
    sim = SimCell(SimCellSettings(hand="three_finger", objects_per_table=(1, 1),
                                  builtin=("box",), depth_noise=False), seed=0)
    log = TrialLog(tmp_path / "log")
    try:
        loop = PickingLoop(config, camera=sim.camera, segmenter=segmenter, gripper=None,
                           arm=sim.arm, trial_log=log, cell_hash="test",
                           truth=SimulatedTruth(sim), hand=sim.hand_device, recogniser=degraded)
        with caplog.at_level("WARNING", logger="graspline.loop"):
            rec = loop.pick()
        assert rec.outcome == "no_grasp" and reason in rec.error
        assert log.get(rec.trial_id).error == rec.error
        raised = [r for r in caplog.records if "recognition failed" in r.getMessage()]
        assert len(raised) == (1 if fault == "raises" else 0)
        assert loop.pick().trial_id == 2   # and the loop goes on
    finally:
        sim.close()
        log.close()
