"""Rigid transforms and rotations, the one place graspline writes them.

A transform is a 4 x 4 float64 array ``T_a_b``: the pose of frame b in frame a (it maps points
in b to points in a), metres. Rotations are 3 x 3 matrices; angles are radians. Quaternions
are (w, x, y, z) by default (MuJoCo's order), (x, y, z, w) with ``scalar_first=False`` (ROS's).
numpy only: this package imports nothing else of graspline's and sits under every package.
"""
from ._rigid import (frame_from_approach, invert, matrix_to_quat, matrix_to_rotvec, pose,
                     pose_difference, pose_from_rvec, quat_to_matrix, rotation_angle,
                     rotvec_to_matrix, tangent_basis, transform_points)

__all__ = [
    "pose", "invert", "transform_points", "pose_difference", "rotation_angle",
    "rotvec_to_matrix", "matrix_to_rotvec", "pose_from_rvec", "quat_to_matrix",
    "matrix_to_quat", "frame_from_approach", "tangent_basis",
]
