"""Rigid-transform helpers: 4 x 4 poses from and to OpenCV's rotation vectors, distances."""
from __future__ import annotations

import math

import numpy as np


def pose(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """4 x 4 transform from a 3 x 3 rotation and a translation (metres)."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(R, np.float64).reshape(3, 3)
    T[:3, 3] = np.asarray(t, np.float64).reshape(3)
    return T


def rotvec_to_matrix(rvec: np.ndarray) -> np.ndarray:
    """3 x 3 rotation of a rotation vector (axis * angle, radians)."""
    import cv2

    return cv2.Rodrigues(np.asarray(rvec, np.float64).reshape(3, 1))[0]


def matrix_to_rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) (axis * angle, radians) of a 3 x 3 rotation."""
    import cv2

    return cv2.Rodrigues(np.asarray(R, np.float64).reshape(3, 3))[0].ravel()


def pose_from_rvec(rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
    """4 x 4 transform of an OpenCV (rvec, tvec) pair (radians, metres)."""
    return pose(rotvec_to_matrix(rvec), tvec)


def quat_xyzw_to_matrix(q: np.ndarray) -> np.ndarray:
    """3 x 3 rotation of a unit quaternion (x, y, z, w); normalised first."""
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def invert(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid 4 x 4 transform."""
    R, t = T[:3, :3], T[:3, 3]
    return pose(R.T, -R.T @ t)


def rotation_angle(R: np.ndarray) -> float:
    """Angle of a 3 x 3 rotation, radians in [0, pi]."""
    c = (np.trace(R) - 1.0) / 2.0
    return math.acos(min(1.0, max(-1.0, c)))


def pose_difference(A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    """(translation distance in metres, rotation angle in radians) between two 4 x 4 poses."""
    return float(np.linalg.norm(A[:3, 3] - B[:3, 3])), rotation_angle(A[:3, :3] @ B[:3, :3].T)
