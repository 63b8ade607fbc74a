"""The trial log on real SQLite files and real PNG images, including a kill -9 mid-trial."""
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from onboard import TrialImages, TrialLog, TrialLogError, TrialRecord

ROOT = Path(__file__).resolve().parents[2]


def images_for(tid: int, h: int = 48, w: int = 64) -> TrialImages:
    """Images whose content says which trial they belong to."""
    rng = np.random.default_rng(tid)
    depth = (0.5 + 0.001 * tid + rng.uniform(0, 0.2, (h, w))).astype(np.float32)
    depth[0, :5] = 0.0  # no reading
    depth[1, :5] = np.nan
    return TrialImages(
        before_color=rng.integers(0, 256, (h, w, 3), dtype=np.uint8),
        before_depth_m=depth,
        after_color=np.full((h, w, 3), tid % 256, np.uint8),
        after_depth_m=depth + np.float32(0.01),
        silhouette=rng.random((h, w)) > 0.5,
        overlay=np.dstack([np.full((h, w), c, np.uint8) for c in (10, 20, tid % 256)]))


def record_for(tid: int, started: float) -> TrialRecord:
    T = np.eye(4)
    T[:3, 3] = (0.4, -0.1, 0.02 + 0.001 * tid)
    return TrialRecord(
        trial_id=tid, started_at_s=started, cell_hash="abc123", object_label="mug",
        mode="validate", n_candidates=500 + tid, score=0.73, features={"d_t": 0.1, "s_f_px": 2.5},
        source="image_search", x_px=31.5, y_px=12.0, theta_rad=0.3, T_base_tcp=T, width_m=0.08,
        force_n=20.0, stage_s={"capture": 0.031, "search": 0.0042}, gripper_status="holding",
        gripper_width_m=0.043, object_detected=True, outcome="success", success=True,
        outcome_source="simulator", movement_m=-0.004, movement_rad=0.05,
        truth_movement_m=-0.0037, truth_movement_rad=0.048, note="ok")


def test_finished_trial_reads_back_every_field_and_image(tmp_path):
    with TrialLog(tmp_path / "log") as log:
        tid = log.begin(object_label="mug", cell_hash="abc123", mode="validate",
                        started_at_s=1700000000.0)
        rec = record_for(tid, 1700000000.0)
        imgs = images_for(tid)
        stored = log.finish(rec, imgs)
        assert stored.finished_at_s is not None and stored.finished_at_s >= rec.started_at_s
        got = log.get(tid)
    for name in ("cell_hash", "object_label", "mode", "n_candidates", "score", "features",
                 "source", "x_px", "y_px", "theta_rad", "width_m", "force_n", "stage_s",
                 "gripper_status", "gripper_width_m", "object_detected", "outcome", "success",
                 "outcome_source", "movement_m", "movement_rad", "truth_movement_m",
                 "truth_movement_rad", "note", "started_at_s"):
        assert getattr(got, name) == getattr(rec, name), name
    np.testing.assert_array_equal(got.T_base_tcp, rec.T_base_tcp)
    assert set(got.images) == {"before_color", "before_depth", "after_color", "after_depth",
                               "silhouette", "overlay"}
    assert got.images["before_depth"] == tmp_path / "log" / "images" / str(tid) / "before_depth.png"
    with TrialLog(tmp_path / "log") as log:
        np.testing.assert_array_equal(log.image(tid, "before_color"), imgs.before_color)
        np.testing.assert_array_equal(log.image(tid, "overlay"), imgs.overlay)
        np.testing.assert_array_equal(log.image(tid, "silhouette"), imgs.silhouette)
        depth = log.image(tid, "before_depth")
        assert depth.dtype == np.float32
        ok = np.isfinite(imgs.before_depth_m) & (imgs.before_depth_m > 0)
        assert np.abs(depth[ok] - imgs.before_depth_m[ok]).max() <= 0.0005 + 1e-6
        assert (depth[~ok] == 0).all()
    # the depth file itself is a 16-bit PNG in millimetres
    import cv2
    raw = cv2.imread(str(got.images["after_depth"]), cv2.IMREAD_UNCHANGED)
    assert raw.dtype == np.uint16 and raw[5, 5] == round(float(imgs.after_depth_m[5, 5]) * 1000)


def test_record_from_grasp_choice_carries_the_chosen_grasp(tmp_path):
    from onboard import GraspChoice

    T = np.eye(4)
    T[:3, 3] = (0.5, 0.1, 0.03)
    choice = GraspChoice(trial_id=3, object_label="bowl", T_base_tcp=T, pregrasp_m=0.1,
                         width_m=0.07, force_n=15.0, score=0.81, features={"d_t": 0.2},
                         source="image_search", x_px=40.0, y_px=22.5, theta_rad=1.2,
                         n_candidates=720, stage_s={"search": 0.004})
    rec = TrialRecord.from_choice(choice, started_at_s=5.0, cell_hash="h", mode="validate")
    assert (rec.trial_id, rec.object_label, rec.mode, rec.cell_hash) == (3, "bowl", "validate", "h")
    assert (rec.score, rec.width_m, rec.force_n, rec.n_candidates) == (0.81, 0.07, 15.0, 720)
    assert (rec.x_px, rec.y_px, rec.theta_rad, rec.source) == (40.0, 22.5, 1.2, "image_search")
    assert rec.features == {"d_t": 0.2} and rec.stage_s == {"search": 0.004}
    np.testing.assert_array_equal(rec.T_base_tcp, T)
    assert rec.outcome == "pending" and rec.success is None


def test_no_grasp_trial_has_no_pose_and_no_images(tmp_path):
    with TrialLog(tmp_path) as log:
        tid = log.begin()
        log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), outcome="no_grasp",
                               note="no object above the table"))
        got = log.get(tid)
    assert got.T_base_tcp is None and got.images == {} and got.success is None
    assert got.outcome == "no_grasp" and got.note == "no object above the table"


def test_pending_trial_is_closed_by_a_controller_in_another_connection(tmp_path):
    loop_log = TrialLog(tmp_path)
    tid = loop_log.begin(object_label="box")
    loop_log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), score=0.5,
                                outcome="pending"))
    with TrialLog(tmp_path) as controller:
        assert controller.get(tid).outcome == "pending"
        closed = controller.report_outcome(tid, False, note="dropped on lift", source="controller")
    assert (closed.outcome, closed.success, closed.outcome_source) == ("failure", False, "controller")
    got = loop_log.get(tid)
    assert (got.outcome, got.success, got.note) == ("failure", False, "dropped on lift")
    loop_log.close()
    loop_log.close()  # twice is fine


def test_outcome_reported_before_finish_is_kept(tmp_path):
    with TrialLog(tmp_path) as log:
        tid = log.begin()
        log.report_outcome(tid, True, source="operator")
        log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), score=0.9))
        got = log.get(tid)
    assert (got.outcome, got.success, got.outcome_source) == ("success", True, "operator")


def test_report_outcome_on_unknown_or_closed_trial_names_it(tmp_path):
    with TrialLog(tmp_path) as log:
        with pytest.raises(TrialLogError, match=r"no trial 42 in .*trials\.sqlite"):
            log.report_outcome(42, True)
        tid = log.begin()
        log.report_outcome(tid, True)
        with pytest.raises(TrialLogError, match=rf"trial {tid} is already closed \(success\)"):
            log.report_outcome(tid, False)
        assert log.get(tid).success is True


def test_finish_refuses_unknown_twice_and_contradictory_records(tmp_path):
    with TrialLog(tmp_path) as log:
        with pytest.raises(TrialLogError, match="trial 7 was never begun"):
            log.finish(TrialRecord(trial_id=7, started_at_s=0.0))
        tid = log.begin()
        bad = TrialRecord(trial_id=tid, started_at_s=0.0, outcome="success", success=False)
        with pytest.raises(TrialLogError, match=rf"trial {tid}: success=False contradicts outcome 'success'"):
            log.finish(bad)
        with pytest.raises(TrialLogError, match=rf"trial {tid}: outcome must be one of"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0, outcome="dropped"))
        with pytest.raises(TrialLogError, match=r"T_base_tcp must be a finite 4 x 4 array or None, got shape \(3, 3\)"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0, T_base_tcp=np.eye(3)))
        with pytest.raises(TrialLogError, match=r"image before_depth must be a 2-D array"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0),
                       TrialImages(before_color=np.zeros((4, 4, 3), np.uint8),
                                   before_depth_m=np.zeros((4, 4, 3))))
        assert not (tmp_path / "images" / str(tid) / "before_color.png").exists()
        with pytest.raises(TrialLogError, match=rf"trial {tid}: features\['d_t'\] must be a finite number, got 'high'"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0, features={"d_t": "high"}))
        with pytest.raises(TrialLogError, match=rf"trial {tid}: score must be a finite number or None, got nan"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0, score=float("nan")))
        log.finish(TrialRecord(trial_id=tid, started_at_s=0.0, outcome="error", error="arm fault"))
        with pytest.raises(TrialLogError, match=f"trial {tid} is already finished"):
            log.finish(TrialRecord(trial_id=tid, started_at_s=0.0))
        assert log.count() == 1 and log.get(tid).error == "arm fault"


def test_other_schema_version_or_foreign_database_is_refused_naming_the_file(tmp_path):
    with TrialLog(tmp_path / "a"):
        pass
    con = sqlite3.connect(tmp_path / "a" / "trials.sqlite")
    con.execute("PRAGMA user_version=2")
    con.close()
    with pytest.raises(TrialLogError, match=r"a/trials\.sqlite has trial-log schema version 2; "
                                            r"this graspline reads version 1"):
        TrialLog(tmp_path / "a")
    (tmp_path / "b").mkdir()
    con = sqlite3.connect(tmp_path / "b" / "trials.sqlite")
    con.execute("CREATE TABLE grasps (id INTEGER)")
    con.close()
    with pytest.raises(TrialLogError, match=r"b/trials\.sqlite is an SQLite file but not a trial log \(tables: grasps\)"):
        TrialLog(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "trials.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(TrialLogError, match=r"c/trials\.sqlite is not a trial log"):
        TrialLog(tmp_path / "c")


def test_log_is_wal_and_versioned(tmp_path):
    with TrialLog(tmp_path):
        pass
    con = sqlite3.connect(tmp_path / "trials.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == 1
    con.close()


def test_warm_ups_are_kept_beside_the_trials_and_a_log_without_them_reads_none(tmp_path):
    from onboard import KernelWarmUp

    with TrialLog(tmp_path) as log:
        assert log.warm_ups() == []  # a log written before warm-ups were recorded
        tid = log.begin()
        first = KernelWarmUp(41.5, 17, 17, 0, at_s=100.0)
        again = KernelWarmUp(0.8, 17, 0, 17, at_s=200.0)
        log.record_warm_up(first)
        log.record_warm_up(again)
        assert log.warm_ups() == [first, again]
    con = sqlite3.connect(tmp_path / "trials.sqlite")
    # the trials and the schema version are as before: readers of version 1 read this log
    assert con.execute("PRAGMA user_version").fetchone()[0] == 1
    assert con.execute("SELECT trial_id FROM trials").fetchall() == [(tid,)]
    con.close()
    with TrialLog(tmp_path) as log:
        assert log.warm_ups() == [first, again]


WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from tests.onboard.test_trials import images_for, record_for
    from onboard import TrialLog
    log = TrialLog(sys.argv[1])
    while True:
        tid = log.begin(object_label="mug", mode="validate")
        print("begun", tid, flush=True)
        log.finish(record_for(tid, time.time()), images_for(tid, 480, 640))
        print("done", tid, flush=True)
""")


def test_kill_9_mid_trial_loses_no_earlier_trial(tmp_path):
    """A writer killed with SIGKILL at random points of a trial, three times over the same
    log: every trial it reported done is whole (row and six readable images with the right
    content) and the trial it was in is at most a pending, unfinished row."""
    log_dir = tmp_path / "log"
    done: list[int] = []
    rng = np.random.default_rng(3)
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT)),
                                  str(log_dir)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        n_done = 0
        for line in child.stdout:
            kind, tid = line.split()
            if kind == "done":
                done.append(int(tid))
                n_done += 1
            elif n_done >= 2:
                # in the middle of this trial's images or its commit
                time.sleep(rng.uniform(0.0, 0.05))
                os.kill(child.pid, signal.SIGKILL)
                break
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
    with TrialLog(log_dir) as log:
        records = {r.trial_id: r for r in log.records()}
        assert set(done) <= set(records)
        # at least one kill landed inside a trial (between begin and the finished commit)
        assert any(r.finished_at_s is None for r in records.values())
        for tid, rec in records.items():
            if rec.finished_at_s is None:
                assert rec.outcome == "pending" and rec.images == {} and tid not in done
                continue
            want = images_for(tid, 480, 640)
            np.testing.assert_array_equal(log.image(tid, "before_color"), want.before_color)
            np.testing.assert_array_equal(log.image(tid, "after_color"), want.after_color)
            np.testing.assert_array_equal(log.image(tid, "overlay"), want.overlay)
            np.testing.assert_array_equal(log.image(tid, "silhouette"), want.silhouette)
            for name in ("before_depth", "after_depth"):
                assert log.image(tid, name).shape == (480, 640)
            assert rec.outcome == "success" and rec.n_candidates == 500 + tid
        # the log goes on after the kills: a new trial gets a fresh id
        tid = log.begin()
        assert tid > max(records)
    con = sqlite3.connect(log_dir / "trials.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert len(done) >= 6


def test_cli_list_show_outcome_and_report(tmp_path, capsys):
    from onboard.cli import main

    log_dir = tmp_path / "log"
    with TrialLog(log_dir) as log:
        done = log.begin(object_label="mug", started_at_s=1700000000.0)
        log.finish(record_for(done, 1700000000.0), images_for(done))
        waiting = log.begin(object_label="box")
        log.finish(TrialRecord(trial_id=waiting, started_at_s=1700000060.0, score=0.42,
                               stage_s={"capture": 0.5}))
    assert main(["trials", "list", str(log_dir)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and lines[-1] == "2 trial(s)"
    assert lines[1].split() == ["1", "2023-11-14", "22:13:20", "validate", "mug", "0.730",
                                "success", "simulator", "-4.0", "2.9", "0.035"]
    assert lines[2].split()[5:7] == ["0.420", "pending"]

    assert main(["trials", "show", str(log_dir), str(done)]) == 0
    out = capsys.readouterr().out
    assert "  object_label         mug\n" in out and "d_t=0.1, s_f_px=2.5" in out
    assert "+1.0000 +0.0000 +0.0000 +0.4000" in out
    assert f"images/{done}/overlay.png" in out

    assert main(["trials", "outcome", str(log_dir), str(waiting), "--failure",
                 "--note", "slipped"]) == 0
    assert capsys.readouterr().out.strip() == f"trial {waiting}: failure (by operator)"
    with TrialLog(log_dir) as log:
        assert (log.get(waiting).success, log.get(waiting).note) == (False, "slipped")
    assert main(["trials", "outcome", str(log_dir), str(waiting), "--success"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"graspline trials: error: trial {waiting} is already closed (failure)")
    assert err.count("\n") == 0

    assert main(["trials", "report", str(log_dir), "--out", str(tmp_path / "rep")]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'rep' / 'index.html'}"
    assert (tmp_path / "rep" / "levels.png").is_file()


def test_cli_missing_log_or_trial_exits_2_with_one_line(tmp_path, capsys):
    from onboard.cli import main

    assert main(["trials", "list", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert f"no trial log in {tmp_path / 'nothing'} (no trials.sqlite)" in err
    assert not (tmp_path / "nothing").exists()  # looking never creates a log
    with TrialLog(tmp_path / "log"):
        pass
    assert main(["trials", "show", str(tmp_path / "log"), "9"]) == 2
    assert "no trial 9 in" in capsys.readouterr().err
