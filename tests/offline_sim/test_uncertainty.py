"""Pose uncertainty: half-normal errors, Kim's early discard, Weisz & Allen's grid."""
import math

import numpy as np
import pytest

pytest.importorskip("scipy")

from offline_sim.quality import (MonteCarloSettings, PoseErrorModel, TrialMeasures,  # noqa: E402
                                 evaluate_under_uncertainty, grid_transforms, pfc_grid,
                                 probability_of_force_closure, sample_pose_errors)


def test_pose_errors_have_the_expected_half_normal_magnitudes():
    T = sample_pose_errors(20000, PoseErrorModel(0.005, math.radians(5)), seed=1)
    shift = np.linalg.norm(T[:, :3, 3], axis=1)
    angle = np.arccos(np.clip((np.trace(T[:, :3, :3], axis1=1, axis2=2) - 1) / 2, -1, 1))
    assert shift.mean() == pytest.approx(0.005, rel=0.03)
    assert math.degrees(angle.mean()) == pytest.approx(5.0, rel=0.03)
    R = T[:, :3, :3]
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape), atol=1e-9)


def test_pose_errors_are_seeded():
    np.testing.assert_array_equal(sample_pose_errors(5, seed=3), sample_pose_errors(5, seed=3))
    assert not np.array_equal(sample_pose_errors(5, seed=3), sample_pose_errors(5, seed=4))


class CountingTrial:
    """A grasp that succeeds while the pose error stays under a limit; counts its calls."""

    def __init__(self, limit_m: float, nominal_b: float = 1.0):
        self.limit_m, self.nominal_b, self.calls = limit_m, nominal_b, 0

    def __call__(self, T):
        self.calls += 1
        if T is None:
            return TrialMeasures(b=self.nominal_b, c=1.0, a=0.2)
        ok = np.linalg.norm(T[:3, 3]) < self.limit_m
        return TrialMeasures(b=1.0 if ok else 0.0, c=0.9 if ok else 0.0, a=0.1 if ok else 0.0)


def test_robust_grasp_runs_every_sample():
    trial = CountingTrial(limit_m=1.0)
    r = evaluate_under_uncertainty(trial)
    assert (r.samples_run, r.discarded_early, trial.calls) == (100, False, 101)
    assert r.success_rate == 1.0 and r.c_mean == pytest.approx(0.9) and r.a_mean == pytest.approx(0.1)


def test_failed_nominal_grasp_is_discarded_after_one_trial():
    trial = CountingTrial(limit_m=1.0, nominal_b=0.0)
    r = evaluate_under_uncertainty(trial)
    assert (r.samples_run, r.discarded_early, trial.calls, r.trials_saved) == (0, True, 1, 100)


def test_fragile_grasp_is_discarded_after_ten_samples():
    trial = CountingTrial(limit_m=0.004)  # fails on about half the 5-mm errors
    r = evaluate_under_uncertainty(trial)
    assert r.discarded_early and r.samples_run == 10 and trial.calls == 11
    assert r.success_rate < 0.9
    full = evaluate_under_uncertainty(CountingTrial(0.004), MonteCarloSettings(early_discard=False))
    assert full.samples_run == 100 and not full.discarded_early
    assert abs(full.success_rate - 0.5) < 0.2


def test_weisz_grid_has_18081_poses_spanning_the_ranges():
    g = pfc_grid()
    assert g.shape == (18081, 3)
    assert g[:, 0].min() == pytest.approx(-0.01) and g[:, 1].max() == pytest.approx(0.01)
    assert math.degrees(g[:, 2].max()) == pytest.approx(20.0)
    assert len(np.unique(np.round(g, 9), axis=0)) == 18081


def test_grid_turns_about_the_contact_centroid():
    centre = np.array([0.1, 0.2, 0.3])
    T = grid_transforms(np.array([[0.0, 0.0, 0.3], [0.002, -0.001, 0.0]]), centre)
    np.testing.assert_allclose(T[0][:3, :3] @ centre + T[0][:3, 3], centre, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(T[1][:3, 3]), math.hypot(0.002, 0.001))
    assert T[1][2, 3] == pytest.approx(0.0)  # shifts stay in the plane


def test_probability_of_force_closure_counts_epsilon_above_delta():
    assert probability_of_force_closure(np.array([0.0, 0.0005, 0.002, 0.3])) == 0.5
    with pytest.raises(ValueError, match="must not be empty"):
        probability_of_force_closure(np.array([]))
