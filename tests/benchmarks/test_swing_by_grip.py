"""The swing term re-scored with a lever limit read from the jaw's grip."""
import json
import math

import pytest

from benchmarks.swing_by_grip import main, score_with_limit

FEATURES = {"tan_score": 0.9, "body_collision": 0.0, "score_contact": 1.0, "score_torque": 0.8,
            "score_tilt": 1.0, "score_palm": 1.0, "lever_m": 0.03, "score_swing": 0.8}


def test_the_limit_as_logged_gives_the_logged_score_and_a_longer_one_raises_it():
    assert score_with_limit(FEATURES, 0.15) == pytest.approx(0.9 * 0.8 * (1 - 0.03 / 0.15))
    assert score_with_limit(FEATURES, 0.30) == pytest.approx(0.9 * 0.8 * (1 - 0.03 / 0.30))
    assert score_with_limit({**FEATURES, "lever_m": 0.2}, 0.15) == 0.0
    assert score_with_limit({**FEATURES, "lever_m": math.nan}, 0.15) == pytest.approx(0.72)


def _run(tmp_path, trials):
    """A run folder whose validate.jsonl holds cylinders of (lever m, Tan's score, held)."""
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"label": "cylinder", "success": ok, "outcome": "success" if ok else "failure",
             "features": {**FEATURES, "lever_m": lever, "tan_score": tan}}
            for lever, tan, ok in trials]
    (run / "validate.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_a_firm_grip_that_holds_far_off_the_middle_pays_and_a_bad_spec_is_named(tmp_path, capsys):
    # held 140 mm off its middle, dropped near it on a poorer grasp: at the 0.15 m limit the
    # held one ranks under the dropped one, at twice the limit (80 N of grip) over it
    run = _run(tmp_path, [(0.14, 0.95, True), (0.01, 0.5, False)])
    main([f"firm:80={run}"])
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("| firm"))
    base, linear = float(row.split("|")[3]), float(row.split("|")[4].split(",")[0])
    assert base == 0.0 and linear == 1.0
    with pytest.raises(SystemExit, match="NAME:GRIP=DIR"):
        main([f"firm={run}"])
