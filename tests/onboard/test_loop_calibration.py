"""The gripper calibration file the cell file names sets the fingers the loop scores with."""
from __future__ import annotations

import pytest

from calibration import GripperCalibration, save_calibration
from onboard import PickingLoop, load_cell_file

CELL = ("gripper: {model: barrett, port: /dev/ttyUSB0, finger_width_m: 0.022, "
        "open_width_m: 0.16}\nscoring: {metres_per_px: 0.001, n_lines: 9}\nlog_dir: log\n")


def _loop(tmp_path, text):
    (tmp_path / "cell.yaml").write_text(text)
    config, digest = load_cell_file(tmp_path / "cell.yaml")
    # the loop's geometry is set when it is built; no device is used before a cycle runs
    return PickingLoop(config, camera=None, segmenter=None, gripper=None, arm=None,
                       trial_log=None, cell_hash=digest)


def test_a_gripper_calibration_sets_the_projection_and_stroke_the_loop_scores_with(tmp_path):
    nominal = _loop(tmp_path, CELL)
    assert nominal.projection.finger_width_px == pytest.approx(22.0)
    assert nominal.projection.open_width_px == pytest.approx(160.0)
    assert nominal.jaw.stroke_m == pytest.approx(0.16)
    # measured: wider fingers (30 mm) and a narrower widest opening (155 mm) than the cell
    # file's nominal geometry
    save_calibration(GripperCalibration("barrett", (0.0, 8000.0, 17800.0), (0.155, 0.09, 0.0),
                                        0.030), tmp_path / "gripper.yaml")
    calibrated = _loop(tmp_path, CELL + "calibration: {gripper: gripper.yaml}\n")
    assert calibrated.projection.finger_width_px == pytest.approx(30.0)
    assert calibrated.projection.open_width_px == pytest.approx(155.0)
    assert calibrated.projection.n_lines == 9
    assert calibrated.jaw.stroke_m == pytest.approx(0.155)
    # the rest of the jaw is the cell file's
    assert calibrated.jaw.pad_length_m == nominal.jaw.pad_length_m
    assert calibrated.jaw.force_n == nominal.jaw.force_n


def test_a_hand_eye_residual_widens_the_margin_the_loop_reads_an_approach_stop_with(tmp_path):
    import numpy as np

    from calibration import HandEyeCalibration
    from onboard.loop import STOP_MARGIN_M

    assert _loop(tmp_path, CELL).stop_margin_m == pytest.approx(STOP_MARGIN_M)
    T = np.eye(4)
    T[:3, 3] = (0.0, 0.0, 0.75)
    save_calibration(HandEyeCalibration("eye_to_hand", T, np.eye(4), "park", 0.004, 0.002,
                                        0.007, 0.004, 0.001, 0.001, 12), tmp_path / "he.yaml")
    loop = _loop(tmp_path, CELL + "calibration: {hand_eye: he.yaml}\n")
    assert loop.stop_margin_m == pytest.approx(STOP_MARGIN_M + 0.004)
    assert loop.executor.stop_margin_m == loop.stop_margin_m
