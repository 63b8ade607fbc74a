"""Calibration of a picking cell: the printable ChArUco board, camera intrinsics, hand-eye
(eye-in-hand and eye-to-hand), the depth check, and the gripper's width and force maps; each
result a versioned YAML file that the cell file points at (see README, "Calibration")."""
from ._board import PAPERS_MM, CharucoBoardSpec, write_board
from ._errors import CalibrationError, CalibrationFileError, DegeneratePosesWarning
from ._intrinsics import (IntrinsicsCalibration, IntrinsicsComparison, board_pose,
                          calibrate_intrinsics, compare_intrinsics, reprojection_rms_px)
from ._views import BoardDetector, BoardView, coverage_map, coverage_text, mean_displacement_px

__all__ = [
    "PAPERS_MM",
    "BoardDetector",
    "BoardView",
    "CalibrationError",
    "CalibrationFileError",
    "CharucoBoardSpec",
    "DegeneratePosesWarning",
    "IntrinsicsCalibration",
    "IntrinsicsComparison",
    "board_pose",
    "calibrate_intrinsics",
    "compare_intrinsics",
    "coverage_map",
    "coverage_text",
    "mean_displacement_px",
    "reprojection_rms_px",
    "write_board",
]
