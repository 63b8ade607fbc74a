"""`graspline db info` and `db top` on a database built by offline_sim."""
import pytest

pytest.importorskip("scipy")

from offline_sim.database import build_database  # noqa: E402
from onboard.cli import main  # noqa: E402
from tests.offline_sim.test_build import interrupt_at, target  # noqa: E402
from tests.offline_sim.test_graspdb import SCHEMA_2_OBJECTS  # noqa: E402


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "grasps.db"
    build_database([target(n=12)], path, workers=0, progress=False, command="test build")
    return path


def test_info_lists_objects_hands_counts_and_builds(db_path, capsys):
    assert main(["db", "info", str(db_path)]) == 0
    out = capsys.readouterr().out
    assert "1 object(s), 1 hand(s), 12/12 grasps of 1 target(s) written" in out
    row = next(line for line in out.splitlines() if "planar_jaw" in line).split()
    assert row[:6] == ["bar", "planar_jaw", "12/12", "grasps", "100%", "finished"]
    assert "finished  (test build)" in out


def cli_build(out, *extra, samples="2"):
    return main(["db", "build", "--objects", "builtin:box", "--hand", "parallel", "--candidates", "2",
                 "--samples", samples, "--workers", "0", "--out", str(out), *extra])


def test_db_build_resumed_with_other_settings_stops_in_one_line_or_restarts_on_request(
        tmp_path, capsys):
    pytest.importorskip("mujoco")
    out = tmp_path / "g.db"
    assert cli_build(out) == 0
    capsys.readouterr()
    assert cli_build(out, samples="3") == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after "box: preparing ..."
    assert err.startswith("graspline db: error: ")
    assert "box/parallel changed monte_carlo since its grasps were built" in err
    assert "--on-change restart" in err
    assert cli_build(out, "--on-change", "restart", samples="3") == 0
    captured = capsys.readouterr()
    assert "box/parallel: inputs changed, rebuilt from scratch" in captured.err
    assert "2 grasps simulated now, 0 already there" in captured.out
    assert cli_build(out, samples="3") == 0  # same inputs: resumes, nothing to do
    assert "0 grasps simulated now, 2 already there" in capsys.readouterr().out


def test_db_build_resumed_with_the_other_closing_stops_naming_it(tmp_path, capsys):
    pytest.importorskip("mujoco")
    out = tmp_path / "g.db"
    assert cli_build(out, "--closing", "native") == 0
    assert "2 grasps simulated now" in capsys.readouterr().out
    assert cli_build(out) == 2  # python, the default
    assert "box/parallel changed closing since its grasps were built" in capsys.readouterr().err
    assert cli_build(out, "--closing", "native", "--threads", "0") == 2
    assert "--threads must be >= 1, got 0" in capsys.readouterr().err


def test_top_prints_k_ranked_lines(db_path, capsys):
    assert main(["db", "top", str(db_path), "bar", "--hand", "planar_jaw", "-k", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and lines[1].split()[0] == "1"
    qualities = [float(line.split()[2]) for line in lines[1:]]
    assert qualities == sorted(qualities, reverse=True)


def test_unknown_object_and_missing_file_exit_2_with_one_line(db_path, tmp_path, capsys):
    assert main(["db", "top", str(db_path), "mug", "--hand", "planar_jaw"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no object 'mug'" in err and err.count("\n") == 0
    assert main(["db", "info", str(tmp_path / "none.db")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_info_after_a_killed_multi_target_build_shows_each_targets_progress_and_the_kill(
        tmp_path, capsys):
    import signal

    path = tmp_path / "g.db"
    n = interrupt_at(path, "processes", 60, signal.SIGKILL)
    assert main(["db", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{n}/240 grasps of 30 target(s) written" in out
    rows = [line.split() for line in out.splitlines() if "jaw_" in line]
    assert len(rows) == 30
    states = {r[5] for r in rows}
    assert states == {"finished", "stopped"}  # nothing is 'building' once the build is dead
    assert sum(int(r[2].split("/")[0]) for r in rows) == n
    assert all(r[5] == "finished" for r in rows if r[2] == "8/8")
    assert out.strip().splitlines()[-1].split(": ")[-1].startswith("killed")


def test_db_build_takes_built_in_objects_by_name_and_names_an_unknown_one(tmp_path, capsys):
    pytest.importorskip("mujoco")
    assert main(["db", "build", "--objects", "builtin:box,teapot", "--hand", "parallel",
                 "--out", str(tmp_path / "g.db")]) == 2
    err = capsys.readouterr().err
    assert "unknown built-in object(s) ['teapot']" in err and "box" in err
    assert not (tmp_path / "g.db").exists()


def test_db_build_writes_each_objects_surface_sample_and_a_resumed_build_adds_it_to_an_old_file(
        tmp_path, capsys):
    import sqlite3

    import numpy as np

    from scoring import GraspDatabase, GraspDatabaseError

    pytest.importorskip("mujoco")
    out = tmp_path / "g.db"
    assert cli_build(out) == 0
    with GraspDatabase(out) as db:
        points = db.object_points("box")
        grasps = db.grasps("box", "parallel")
    assert points.shape == (2000, 3)
    np.testing.assert_allclose(np.abs(points).max(0), [0.025, 0.04, 0.06])  # on the 5x8x12 cm box
    con = sqlite3.connect(out)  # what a schema-2 build left: no points column
    con.executescript(SCHEMA_2_OBJECTS)
    con.close()
    with GraspDatabase(out) as db, pytest.raises(GraspDatabaseError, match="predates object models"):
        db.object_points("box")
    capsys.readouterr()
    assert cli_build(out) == 0  # the same command: resumes, simulates nothing, adds the sample
    assert "0 grasps simulated now, 2 already there" in capsys.readouterr().out
    with GraspDatabase(out) as db:
        np.testing.assert_array_equal(db.object_points("box"), points)
        again = db.grasps("box", "parallel")
    np.testing.assert_array_equal(again.T_object_hand, grasps.T_object_hand)
    np.testing.assert_array_equal(again.quality, grasps.quality)

