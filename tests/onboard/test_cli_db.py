"""`graspline db info` and `db top` on a database built by offline_sim."""
import pytest

pytest.importorskip("scipy")

from offline_sim import build_database  # noqa: E402
from onboard.cli import main  # noqa: E402
from tests.offline_sim.test_build import target  # noqa: E402


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "grasps.db"
    build_database([target(n=12)], path, workers=0, progress=False, command="test build")
    return path


def test_info_lists_objects_hands_counts_and_builds(db_path, capsys):
    assert main(["db", "info", str(db_path)]) == 0
    out = capsys.readouterr().out
    assert "1 object(s), 1 hand(s)" in out
    assert "bar" in out and "planar_jaw" in out and "12 grasps" in out
    assert "finished  (test build)" in out


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
