"""The grasp database: written in batches by offline_sim, read as arrays by scoring."""
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from offline_sim.database import GraspDatabaseWriter, GraspRecord
from scoring import GraspDatabase, GraspDatabaseError


def record(k: int, quality: float) -> GraspRecord:
    T = np.eye(4)
    T[:3, 3] = (0.01 * k, 0.0, 0.1)
    return GraspRecord(candidate=k, T_object_hand=T, nominal_ok=True, samples_run=100,
                       discarded_early=False, success_rate=quality, quality=quality,
                       a_mean=0.1, b_mean=quality, c_mean=0.9, approach=np.array([0, 0, -1.0]),
                       force_var=0.2, position_var=1e-4, normal_var=0.01, seed=7, wall_s=1.5)


def test_written_grasps_read_back_ranked_as_arrays(tmp_path):
    path = tmp_path / "grasps.db"
    with GraspDatabaseWriter(path) as db:
        box = db.object_id("box", mass_kg=0.2, radius_m=0.05, stable_poses=np.eye(4)[None])
        hand = db.hand_id("parallel", "1", {"finger_width_m": 0.015})
        db.write_batch(box, hand, [record(0, 0.5), record(1, 0.9)])
        db.write_batch(box, hand, [record(2, 0.7)])
    with GraspDatabase(path) as read:
        assert read.objects() == ["box"] and read.hands() == [("parallel", "1")]
        assert read.hand_params("parallel") == {"finger_width_m": 0.015}
        table = read.grasps("box", "parallel")
        assert list(table.candidate) == [1, 2, 0]
        np.testing.assert_allclose(table.quality, [0.9, 0.7, 0.5])
        assert table.T_object_hand.shape == (3, 4, 4)
        assert table.T_object_hand[0][0, 3] == pytest.approx(0.01)
        np.testing.assert_allclose(table.approach[0], [0, 0, -1])
        assert np.isnan(table.pfc).all()
        assert len(read.grasps("box", "parallel", k=2)) == 2


def test_database_is_in_wal_mode_and_the_reader_cannot_write(tmp_path):
    path = tmp_path / "grasps.db"
    GraspDatabaseWriter(path).close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    with GraspDatabase(path) as read:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            read._db.execute("INSERT INTO meta VALUES ('x', 'y')")


def test_reader_errors_name_the_file_and_what_is_there(tmp_path):
    with pytest.raises(GraspDatabaseError, match="does not exist"):
        GraspDatabase(tmp_path / "nope.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(GraspDatabaseError, match="not a graspline grasp database"):
        GraspDatabase(junk)
    path = tmp_path / "g.db"
    with GraspDatabaseWriter(path) as db:
        db.object_id("box")
        db.hand_id("parallel", "1", {})
    with GraspDatabase(path) as read:
        with pytest.raises(GraspDatabaseError, match=r"no object 'mug'; it has \['box'\]"):
            read.grasps("mug", "parallel")
        with pytest.raises(GraspDatabaseError, match=r"no hand 'barrett'"):
            read.grasps("box", "barrett")


def test_same_object_name_with_another_mesh_is_refused(tmp_path):
    with GraspDatabaseWriter(tmp_path / "g.db") as db:
        db.object_id("box", mesh_sha256="a" * 64)
        assert db.object_id("box", mesh_sha256="a" * 64) == 1
        with pytest.raises(GraspDatabaseError, match="built from another mesh"):
            db.object_id("box", mesh_sha256="b" * 64)


def test_a_failed_batch_leaves_nothing_behind(tmp_path):
    with GraspDatabaseWriter(tmp_path / "g.db") as db:
        box, hand = db.object_id("box"), db.hand_id("parallel", "1", {})
        db.write_batch(box, hand, [record(0, 0.5)])
        with pytest.raises(sqlite3.IntegrityError):
            db.write_batch(box, hand, [record(1, 0.5), record(0, 0.6)])  # 0 is already there
        assert db.finished_candidates(box, hand) == {0}


WRITER = """
import sys, time, numpy as np
sys.path.insert(0, {root!r})
from offline_sim.database import GraspDatabaseWriter
from tests.offline_sim.test_graspdb import record
db = GraspDatabaseWriter(sys.argv[1])
box, hand = db.object_id("box"), db.hand_id("parallel", "1", {{}})
done = db.finished_candidates(box, hand)
todo = [k for k in range(200) if k not in done]
for start in range(0, len(todo), 5):
    db.write_batch(box, hand, [record(k, 0.5) for k in todo[start:start + 5]])
    time.sleep(0.01)
print("finished", flush=True)
"""


def test_build_killed_with_sigkill_resumes_without_loss_or_duplicates(tmp_path):
    path = tmp_path / "g.db"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = WRITER.format(root=root)
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)])
    deadline = time.time() + 60
    while time.time() < deadline:  # kill it in the middle of the build
        time.sleep(0.05)
        if path.exists():
            try:
                with GraspDatabase(path) as read:
                    if "box" in read.objects() and len(read.grasps("box", "parallel")) >= 40:
                        break
            except (GraspDatabaseError, sqlite3.OperationalError):
                pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with GraspDatabase(path) as read:
        first = read.grasps("box", "parallel").candidate
    assert 40 <= len(first) < 200
    assert len(first) % 5 == 0  # whole batches only
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert "finished" in out.stdout, out.stderr
    with GraspDatabase(path) as read:
        final = read.grasps("box", "parallel").candidate
    assert sorted(final) == list(range(200))  # nothing lost, nothing twice
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM grasps").fetchone()[0] == 200
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 200


def test_object_points_and_stable_poses_read_back_as_written(tmp_path):
    path = tmp_path / "g.db"
    points = np.random.default_rng(0).normal(size=(50, 3))
    poses = np.stack([np.eye(4), np.diag([1.0, -1.0, -1.0, 1.0])])
    with GraspDatabaseWriter(path) as db:
        db.object_id("box", stable_poses=poses, points=points)
        db.object_id("bare")
    with GraspDatabase(path) as read:
        np.testing.assert_array_equal(read.object_points("box"), points)
        np.testing.assert_array_equal(read.stable_poses("box"), poses)
        assert read.stable_poses("bare").shape == (0, 4, 4)
        with pytest.raises(GraspDatabaseError, match="'bare' has no surface sample"):
            read.object_models()
        with pytest.raises(GraspDatabaseError, match="'bare' has no surface sample"):
            read.object_points("bare")
        with pytest.raises(GraspDatabaseError, match=r"no object 'mug'; it has \['bare', 'box'\]"):
            read.object_points("mug")


def test_schema_2_file_serves_grasps_refuses_points_and_a_writer_fills_them_in(tmp_path):
    path = tmp_path / "old.db"
    with GraspDatabaseWriter(path) as db:
        box = db.object_id("box", mass_kg=0.2, radius_m=0.05, stable_poses=np.eye(4)[None])
        db.write_batch(box, db.hand_id("parallel", "1", {}), [record(0, 0.5)])
    con = sqlite3.connect(path)  # make it what a schema-2 build left
    con.executescript(SCHEMA_2_OBJECTS)
    before = con.execute("SELECT * FROM objects").fetchall()
    con.close()
    with GraspDatabase(path) as read:
        assert len(read.grasps("box", "parallel")) == 1
        np.testing.assert_array_equal(read.stable_poses("box"), np.eye(4)[None])
        with pytest.raises(GraspDatabaseError, match="schema version 2, which predates object "
                                                     "models: run the same `graspline db build`"):
            read.object_points("box")
    points = np.random.default_rng(1).normal(size=(20, 3))
    with GraspDatabaseWriter(path) as db:  # what a resumed build does with the object's row
        assert db.object_id("box", mass_kg=0.2, radius_m=0.05, stable_poses=np.eye(4)[None],
                            points=points) == box
    con = sqlite3.connect(path)
    after = con.execute("SELECT * FROM objects").fetchall()
    con.close()
    assert [r[:-1] for r in after] == before  # every other column bit for bit
    with GraspDatabase(path) as read:
        assert read.schema_version == 3
        np.testing.assert_array_equal(read.object_points("box"), points)
        (shape,) = read.object_models()
        assert shape.name == "box" and shape.points.shape == (20, 3)
        np.testing.assert_array_equal(shape.stable_poses, np.eye(4)[None])
        assert len(read.grasps("box", "parallel")) == 1


# schema 2's objects table, rebuilt from a newer file's (SQLite's DROP COLUMN cannot drop a last
# column with a comment after it)
SCHEMA_2_OBJECTS = """
CREATE TABLE o2 (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, mesh_path TEXT,
                 mesh_sha256 TEXT, scale REAL NOT NULL DEFAULT 1.0, mass_kg REAL, radius_m REAL,
                 stable_poses BLOB);
INSERT INTO o2 SELECT id, name, mesh_path, mesh_sha256, scale, mass_kg, radius_m, stable_poses
FROM objects;
PRAGMA foreign_keys = OFF;
DROP TABLE objects;
ALTER TABLE o2 RENAME TO objects;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
"""
