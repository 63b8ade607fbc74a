"""The ablation tools rescore logged trials with the swing term: logged where a trial has it,
read from its logged lever where the log is older than the term."""
import json

import pytest

from benchmarks.ablation_by_jaw import LEAVE_ONE_OUT, load_run
from benchmarks.bench_cell import ABLATIONS, depth_factor, swing_factor
from scoring import DepthParams

OLD = {"tan_score": 0.9, "body_collision": 0.0, "score_contact": 1.0, "score_torque": 0.8,
       "score_tilt": 1.0, "score_palm": 1.0, "lever_m": 0.06}


def test_an_old_log_without_the_swing_term_gets_it_from_its_lever():
    want = 1.0 - 0.06 / DepthParams().swing_lever_m
    assert swing_factor(OLD) == pytest.approx(want)
    assert depth_factor(OLD) == pytest.approx(0.8 * want)
    assert swing_factor({**OLD, "score_swing": 0.25}) == 0.25  # a logged term wins
    assert swing_factor({k: v for k, v in OLD.items() if k != "lever_m"}) == 1.0
    assert swing_factor({**OLD, "lever_m": 1.0}) == 0.0


def test_the_ablation_rows_add_and_take_out_the_swing_term(tmp_path):
    rows = [{"label": "banana", "success": False, "features": OLD},
            {"label": "box", "success": True, "features": {**OLD, "lever_m": 0.0}}]
    (tmp_path / "validate.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    run = load_run("r", tmp_path)
    f = run.features[0]
    row = dict(ABLATIONS)["+ swing about the grasp axis (held off the mass centre)"]
    assert row(f) == pytest.approx(0.9 * swing_factor(OLD))
    without = dict(LEAVE_ONE_OUT)["graspline - swing about the grasp axis"]
    assert without(f) == pytest.approx(0.9 * 0.8)
    assert dict(LEAVE_ONE_OUT)["graspline (every term)"](f) == pytest.approx(
        0.9 * 0.8 * swing_factor(OLD))
