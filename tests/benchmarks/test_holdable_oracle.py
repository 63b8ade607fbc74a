"""The physics truth's bookkeeping: which grasps holdable_oracle tries on an object, and how
pool_runs counts the top grasps over the objects some grasp held."""
import json
import math

import numpy as np
import pytest

from benchmarks.holdable_oracle import FINGER_CLEAR_M, grid, oracle_file
from benchmarks.pool_runs import top_grasps

STROKE_M = 0.085


def _can(lying: bool, seed: int = 0):
    """(object, pose) of a wide_can primitive resting on the table (z = 0), its axis along
    the world's y when lying, and (radius, length) in metres."""
    from offline_sim.cell import random_primitive

    obj = random_primitive("wide_can", np.random.default_rng(seed), 600.0)
    ext = np.ptp(obj.visual[0], axis=0)
    T = np.eye(4)
    if lying:  # the can's local z (its axis) onto the world's y
        T[:3, :3] = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]
    verts = obj.visual[0] @ T[:3, :3].T
    T[:3, 3] = -verts.mean(axis=0)
    T[2, 3] = -verts[:, 2].min()
    return obj, T, 0.5 * float(ext[0]), float(ext[2])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_grid_closes_across_a_lying_cans_axis_only_where_its_chord_fits(seed):
    obj, T, r, length = _can(lying=True, seed=seed)
    assert 2 * r > STROKE_M  # a wide can: only a chord high on its section fits
    grasps = grid(obj, T, STROKE_M, insert_m=0.04, n_depths=5, tcp_to_tip_m=0.01)
    assert len(grasps) == 15
    top = 2 * r
    deepest = r - math.sqrt(r * r - (0.5 * (STROKE_M - FINGER_CLEAR_M)) ** 2)
    for depth, along, G in grasps:
        assert abs(G[:3, 0] @ [0.0, 1.0, 0.0]) < 1e-6        # closing across the axis
        assert np.allclose(G[:3, 2], [0.0, 0.0, -1.0])          # straight down
        assert G[2, 3] == pytest.approx(top - depth + 0.01, abs=1e-3)
        assert depth <= deepest + 1e-3                          # the fingers clear the can
        assert abs(along) <= 0.25 * length + 1e-3
    depths = sorted({d for d, _, _ in grasps})
    assert depths[0] == pytest.approx(0.002) and depths[-1] > deepest - 0.004
    assert sorted({round(a, 4) for _, a, _ in grasps}) == pytest.approx(
        [-0.25 * length, 0.0, 0.25 * length], abs=2e-3)


def test_the_grid_is_empty_where_nothing_of_the_object_fits_the_stroke():
    obj, T, r, _ = _can(lying=False)
    assert 2 * r > STROKE_M
    assert grid(obj, T, STROKE_M, insert_m=0.06, n_depths=5, tcp_to_tip_m=0.01) == []


def test_an_object_within_two_millimetres_of_the_stroke_is_tried_where_it_fits_at_all():
    """An upright can a millimetre narrower than the stroke: no part fits the stroke less
    FINGER_CLEAR_M, so the grid closes where it fits the stroke at all (the simulator places
    the jaw exactly: whether the fingers pass it is the physics' to say); a can wider than
    the stroke still has no grid."""
    obj, T, r, _ = _can(lying=False)
    grasps = grid(obj, T, 2 * r + 0.001, insert_m=0.04, n_depths=5, tcp_to_tip_m=0.01)
    assert len(grasps) == 15
    depths = sorted({d for d, _, _ in grasps})  # every depth fits: 2 mm to the fingers' 40
    assert len(depths) == 5 and depths[0] == pytest.approx(0.002) and depths[-1] == \
        pytest.approx(0.04)
    assert grid(obj, T, 2 * r - 0.01, insert_m=0.04, n_depths=5, tcp_to_tip_m=0.01) == []


def _write_run(run, verdicts):
    """A best pass on one table of four objects holdable by width: 0 held by its top grasp,
    1 dropped, 2 and 3 offered no grasp (the loop left the table saying so)."""
    run.mkdir()
    rows = [{"table": 1, "outcome": "success", "success": True},
            {"table": 1, "outcome": "failure", "success": False},
            {"table": 1, "outcome": "no_grasp", "success": None}]
    truth = {"stroke_mm": 85.0, "grasped": [[1, 0], [1, 1], None],
             "tables": {"1": [{"name": f"o{k}", "holdable": True, "on_table": True}
                              for k in range(4)]}}
    (run / "best.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "best_truth.json").write_text(json.dumps(truth))
    oracle_file(run).write_text(json.dumps(verdicts))


def test_the_count_over_what_the_simulator_holds_leaves_out_only_objects_no_grasp_held(tmp_path):
    run = tmp_path / "run"
    _write_run(run, [
        {"table": 1, "index": 1, "name": "o1", "passed": "dropped", "held": 0, "tried": 15},
        {"table": 1, "index": 2, "name": "o2", "passed": "offered none", "held": 3, "tried": 15},
        {"table": 1, "index": 3, "name": "o3", "passed": "offered none", "held": 0, "tried": 0},
    ])
    # by width: 1 of 2 tried, 1 of 4 with those offered none
    assert top_grasps([run]).startswith("1 of 2 (50.0%) | 1 of 4 (25.0%)")
    # the dropped object no grasp held is out; the one some grasp held and the one with no
    # grasp in the grid (not judged) stay, missed
    assert top_grasps([run], physics=True).startswith("1 of 1 (100.0%) | 1 of 3 (33.3%)")


def test_an_object_the_pass_held_on_a_retry_counts_whatever_the_oracle_found(tmp_path):
    """The top grasp dropped object 1, the oracle's grid held it nowhere, and the pass's
    retry held it: it is one the jaw can hold, and its top grasp a miss."""
    run = tmp_path / "run"
    _write_run(run, [
        {"table": 1, "index": 1, "name": "o1", "passed": "dropped", "held": 0, "tried": 15},
        {"table": 1, "index": 2, "name": "o2", "passed": "offered none", "held": 3, "tried": 15},
        {"table": 1, "index": 3, "name": "o3", "passed": "offered none", "held": 0, "tried": 0},
    ])
    rows = [json.loads(line) for line in (run / "best.jsonl").read_text().splitlines()]
    rows.insert(2, {"table": 1, "outcome": "success", "success": True})
    truth = json.loads((run / "best_truth.json").read_text())
    truth["grasped"].insert(2, [1, 1])
    (run / "best.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "best_truth.json").write_text(json.dumps(truth))
    assert top_grasps([run], physics=True).startswith("1 of 2 (50.0%) | 1 of 4 (25.0%)")


def test_the_count_over_what_the_simulator_holds_asks_for_the_oracles_verdicts(tmp_path):
    run = tmp_path / "run"
    _write_run(run, [])
    oracle_file(run).unlink()
    with pytest.raises(SystemExit, match="holdable_oracle"):
        top_grasps([run], physics=True)
