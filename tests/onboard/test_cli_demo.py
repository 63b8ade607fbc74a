"""``graspline demo`` end to end, as ``make run`` runs it: the simulated cell, the trials, the
report (a crash in the report's last step once slipped past every unit test)."""
from __future__ import annotations

import pytest

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
    logs = list(tmp_path.glob("trials-*/trials.sqlite"))
    assert len(logs) == 1


def test_the_live_line_says_why_there_was_no_grasp_not_the_preamble():
    from onboard._cli_demo import _short_reason

    msg = ("no grasp scores at least 0.2 on the 1 object(s) in view (best 0.00; the object is "
           "109 mm across at its narrowest, wider than the jaw's 85 mm stroke)")
    assert _short_reason(msg) == ("the object is 109 mm across at its narrowest, wider than the "
                                  "jaw's 85 mm stroke")
    assert _short_reason("nothing segmented in view") == "nothing segmented in view"
    assert len(_short_reason("x" * 200)) == 80
