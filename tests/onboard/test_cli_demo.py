"""``graspline demo`` end to end, as ``make run`` runs it: the simulated cell, the trials, the
report (a crash in the report's last step once slipped past every unit test); and the live
progress line that ``demo`` and ``run`` print per trial."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from onboard import KernelWarmUp, TrialRecord

pytest.importorskip("mujoco")
pytest.importorskip("matplotlib")

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def test_demo_runs_its_trials_and_writes_the_report(tmp_path, capsys):
    from onboard.cli import main

    assert main(["demo", "--trials", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    page = tmp_path / "report" / "index.html"
    assert page.is_file() and f"report: {page}" in out
    assert "2 trial(s): " in out
    # the kernels were made ready before the first trial, and the console said so
    assert "kernels loaded from cache in " in out or "compiling kernels ... done in " in out
    assert out.index("kernels") < out.index("2 trial(s): ")
    logs = list(tmp_path.glob("trials-*/trials.sqlite"))
    assert len(logs) == 1


class _NoGraspCell:
    """A cell whose every pick finds no grasp, with the loop's message: what `run` shows of a
    trial does not depend on how the trial went."""

    def __init__(self, errors, log_dir):
        self.config = SimpleNamespace(log_dir=str(log_dir))
        self._records = iter(TrialRecord(trial_id=k + 1, started_at_s=0.0, object_label="mug",
                                         outcome="no_grasp", error=e)
                             for k, e in enumerate(errors))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def pick_record(self):
        return next(self._records)

    def warm_up(self):
        return KernelWarmUp(0.5, 17, 0, 17)


@pytest.mark.parametrize("error, shown", [
    ("no grasp scores at least 0.2 on the 1 object(s) in view (best 0.00; the object is 109 mm "
     "across at its narrowest, wider than the jaw's 85 mm stroke)",
     "no grasp (the object is 109 mm across at its narrowest, wider than the jaw's 85 mm "
     "stroke)"),
    ("nothing segmented in view", "no grasp (nothing segmented in view)"),
    ("x" * 200, "no grasp (" + "x" * 77 + "...)"),
])
def test_the_live_line_says_why_there_was_no_grasp_not_the_preamble(tmp_path, monkeypatch,
                                                                     capsys, error, shown):
    import onboard
    from onboard.cli import main

    cell_file = tmp_path / "cell.yaml"
    cell_file.write_text("arm: {kind: sim}\nlog_dir: log\n")
    monkeypatch.setattr(onboard, "open_picking_cell",
                        lambda path, mode: _NoGraspCell([error], tmp_path / "log"))
    assert main(["run", "--config", str(cell_file)]) == 0
    out = capsys.readouterr().out
    assert f"#1 mug score - {shown}; success -" in out
    assert "scores at least" not in out
    assert "1 trial(s): 0 of 0 grasps held" in out


@pytest.mark.parametrize("args, error", [
    (("--db-samples", "3"), "--db-samples applies to a multi-finger --hand only (the jaw plans "
                            "without a grasp database)"),
    (("--hand", "three_finger", "--db-candidates", "0"), "--db-candidates must be >= 1, got 0"),
], ids=["size without a hand", "no candidates"])
def test_a_misplaced_or_bad_database_size_is_one_line_before_anything_is_built(
        tmp_path, capsys, args, error):
    from onboard.cli import main

    cache, out = tmp_path / "cache", tmp_path / "out"
    assert main(["demo", "--cache", str(cache), "--out", str(out), *args]) == 2
    assert capsys.readouterr().err == f"graspline demo: error: {error}\n"
    assert not cache.exists() and not out.exists()


def test_the_help_states_the_demo_databases_own_size_as_the_default(capsys):
    from offline_sim.database import DEMO_CANDIDATES, DEMO_SAMPLES
    from onboard.cli import main

    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"resting pose in the hand's database (default {DEMO_CANDIDATES};" in text
    assert f"rank its quality (default {DEMO_SAMPLES};" in text
