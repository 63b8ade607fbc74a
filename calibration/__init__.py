"""Calibration of a picking cell: the printable ChArUco board, camera intrinsics, hand-eye
(eye-in-hand and eye-to-hand), the depth check, and the gripper's width and force maps; each
result a versioned YAML file that the cell file points at (see docs/calibration.md).

The loaders (load_intrinsics, load_hand_eye, load_depth_correction, load_gripper_map) are what
the onboard loop calls; they need only numpy, OpenCV and PyYAML. Fitting the gripper map needs
scipy and the board sheet matplotlib (the ``calib`` extra).
"""
from ._board import PAPERS_MM, CharucoBoardSpec, write_board
from ._depth import (DepthCalibration, DepthSample, PlaneFit, depth_check, expected_noise_m,
                     fit_plane, mean_depth_sample, measure_flat_target)
from ._errors import CalibrationError, CalibrationFileError, DegeneratePosesWarning
from ._files import (VERSION, load_calibration, load_depth_correction, load_gripper_map,
                     load_hand_eye, load_intrinsics, save_calibration)
from ._gripper import (GripperCalibration, fit_gripper_map, fit_monotonic,
                       gripper_driver_options, measure_gauge_blocks, read_gripper_points)
from ._handeye import (HandEyeCalibration, MethodResult, calibrate_hand_eye,
                       hand_eye_residuals, pose_set_warnings, refine)
from ._intrinsics import (IntrinsicsCalibration, IntrinsicsComparison, board_pose,
                          calibrate_intrinsics, compare_intrinsics, reprojection_rms_px)
from ._poses import RobotPose, parse_robot_pose, read_robot_poses
from ._views import (BoardDetector, BoardView, board_hull_mask, coverage_map, coverage_text,
                     is_new_view, mean_displacement_px)

__all__ = [
    "PAPERS_MM",
    "VERSION",
    "BoardDetector",
    "BoardView",
    "CalibrationError",
    "CalibrationFileError",
    "CharucoBoardSpec",
    "DegeneratePosesWarning",
    "DepthCalibration",
    "DepthSample",
    "GripperCalibration",
    "HandEyeCalibration",
    "IntrinsicsCalibration",
    "IntrinsicsComparison",
    "MethodResult",
    "PlaneFit",
    "RobotPose",
    "board_hull_mask",
    "board_pose",
    "calibrate_hand_eye",
    "calibrate_intrinsics",
    "compare_intrinsics",
    "coverage_map",
    "coverage_text",
    "depth_check",
    "expected_noise_m",
    "fit_gripper_map",
    "fit_monotonic",
    "fit_plane",
    "gripper_driver_options",
    "hand_eye_residuals",
    "is_new_view",
    "load_calibration",
    "load_depth_correction",
    "load_gripper_map",
    "load_hand_eye",
    "load_intrinsics",
    "mean_depth_sample",
    "mean_displacement_px",
    "measure_flat_target",
    "measure_gauge_blocks",
    "parse_robot_pose",
    "pose_set_warnings",
    "read_gripper_points",
    "read_robot_poses",
    "refine",
    "reprojection_rms_px",
    "save_calibration",
    "write_board",
]
