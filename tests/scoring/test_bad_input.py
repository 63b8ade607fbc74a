"""Bad input raises ValueError naming the argument and the offending value."""
import numpy as np
import pytest

from scoring import GripperProjection, MeasureParams, SearchParams, score_candidates, search_grasps

SIL = np.zeros((20, 20), np.uint8)
PROJ = GripperProjection(5, 10, 3)
ONE = np.array([5.0])


@pytest.mark.parametrize("sil,message", [
    (np.zeros((0, 0), np.uint8), r"silhouette must not be empty, got shape \(0, 0\)"),
    (np.zeros((0, 5), np.uint8), r"silhouette must not be empty"),
    (np.zeros((4, 4, 3), np.uint8), r"silhouette must be a 2-D array, got shape \(4, 4, 3\)"),
    (np.zeros(4, np.uint8), r"silhouette must be a 2-D array, got shape \(4,\)"),
    (np.zeros((4, 4), np.float64), r"silhouette must have dtype bool or uint8, got float64"),
    (np.zeros((4, 4), np.int32), r"silhouette must have dtype bool or uint8, got int32"),
    ([[0, 1], [1, 0]], r"silhouette must be a numpy array, got list"),
])
def test_bad_silhouette_is_named(sil, message):
    with pytest.raises(ValueError, match=message):
        score_candidates(sil, ONE, ONE, ONE, PROJ)


@pytest.mark.parametrize("kwargs,message", [
    (dict(finger_width_px=0, open_width_px=10, n_lines=3), r"finger_width_px must be finite and > 0, got 0"),
    (dict(finger_width_px=-2.5, open_width_px=10, n_lines=3), r"finger_width_px .* got -2.5"),
    (dict(finger_width_px=5, open_width_px=0.0, n_lines=3), r"open_width_px must be finite and > 0, got 0.0"),
    (dict(finger_width_px=5, open_width_px=float("nan"), n_lines=3), r"open_width_px .* got nan"),
    (dict(finger_width_px=5, open_width_px=float("inf"), n_lines=3), r"open_width_px .* got inf"),
    (dict(finger_width_px=5, open_width_px=10, n_lines=0), r"n_lines must be an integer >= 1, got 0"),
    (dict(finger_width_px=5, open_width_px=10, n_lines=-3), r"n_lines .* got -3"),
    (dict(finger_width_px=5, open_width_px=10, n_lines=2.5), r"n_lines .* got 2.5"),
    (dict(finger_width_px="5", open_width_px=10, n_lines=3), r"finger_width_px must be a number, got '5'"),
])
def test_bad_gripper_projection_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GripperProjection(**kwargs)


def test_arrays_of_different_lengths_are_named():
    with pytest.raises(ValueError, match=r"y and x must have the same length, got 2 and 1"):
        score_candidates(SIL, ONE, np.array([1.0, 2.0]), ONE, PROJ)
    with pytest.raises(ValueError, match=r"theta and x must have the same length, got 3 and 1"):
        score_candidates(SIL, ONE, ONE, np.zeros(3), PROJ)


@pytest.mark.parametrize("name,index", [("x", 0), ("y", 2), ("theta", 1)])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_coordinates_are_named(name, index, bad):
    arrays = {"x": np.full(3, 5.0), "y": np.full(3, 5.0), "theta": np.zeros(3)}
    arrays[name][index] = bad
    with pytest.raises(ValueError, match=rf"{name}\[{index}\] must be finite, got {bad}"):
        score_candidates(SIL, arrays["x"], arrays["y"], arrays["theta"], PROJ)


def test_two_dimensional_coordinates_are_rejected():
    with pytest.raises(ValueError, match=r"x must be 1-D, got shape \(2, 2\)"):
        score_candidates(SIL, np.zeros((2, 2)), ONE, ONE, PROJ)


def test_non_numeric_coordinates_are_rejected():
    with pytest.raises(ValueError, match=r"x must be an array of numbers"):
        score_candidates(SIL, ["a"], ONE, ONE, PROJ)


@pytest.mark.parametrize("kwargs,message", [
    (dict(k=1.5), r"k must be in \[0, 1\], got 1.5"),
    (dict(d_t_threshold=0), r"d_t_threshold must be finite and > 0, got 0"),
    (dict(normal_window=6), r"normal_window must be an odd integer >= 3, got 6"),
    (dict(secondary_tol_px=-1.0), r"secondary_tol_px must be finite and >= 0, got -1.0"),
    (dict(s_f_knee_fraction=0.6), r"s_f_knee_fraction must be < s_f_zero_fraction"),
    (dict(coarse_step_px=-2), r"coarse_step_px must be an integer >= 0, got -2"),
])
def test_bad_measure_params_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MeasureParams(**kwargs)


def test_wrong_types_for_projection_and_params_are_named():
    with pytest.raises(ValueError, match=r"projection must be a GripperProjection, got dict"):
        score_candidates(SIL, ONE, ONE, ONE, {"w": 5})
    with pytest.raises(ValueError, match=r"params must be a MeasureParams, got int"):
        score_candidates(SIL, ONE, ONE, ONE, PROJ, 3)


def test_bad_search_arguments_are_named():
    with pytest.raises(ValueError, match=r"top_k must be an integer >= 1, got 0"):
        search_grasps(SIL, PROJ, top_k=0)
    with pytest.raises(ValueError, match=r"batch must be an integer >= 1, got 0"):
        SearchParams(batch=0)
    with pytest.raises(ValueError, match=r"quality_threshold must be in \[0, 1\], got 1.2"):
        SearchParams(quality_threshold=1.2)
    with pytest.raises(ValueError, match=r"target must have the silhouette's shape \(20, 20\), got \(5, 5\)"):
        search_grasps(SIL, PROJ, target=np.ones((5, 5), bool))


def test_empty_batch_is_fine():
    s = score_candidates(SIL, np.array([]), np.array([]), np.array([]), PROJ)
    assert len(s) == 0 and s.score.dtype == np.float32
