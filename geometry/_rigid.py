"""Rigid transforms (4 x 4 ``T_a_b``), rotation angles, rotation vectors and quaternions."""
from __future__ import annotations

import math

import numpy as np


def pose(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """T (4, 4) from a rotation R (3, 3) and a translation t (3,), metres."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(R, np.float64).reshape(3, 3)
    T[:3, 3] = np.asarray(t, np.float64).reshape(3)
    return T


def invert(T: np.ndarray) -> np.ndarray:
    """T_b_a (4, 4) from T_a_b, using R^T rather than a general matrix inverse."""
    R = T[:3, :3]
    return pose(R.T, -R.T @ T[:3, 3])


def transform_points(T_a_b: np.ndarray, points_b: np.ndarray) -> np.ndarray:
    """Points (N, 3) in frame a from points (N, 3) in frame b, metres."""
    p = np.asarray(points_b, np.float64).reshape(-1, 3)
    return p @ T_a_b[:3, :3].T + T_a_b[:3, 3]


def rotation_angle(R: np.ndarray) -> float:
    """‖log R‖, the angle of the rotation R (3, 3), radians in [0, pi].

    atan2 of the axis part against the trace part: the plain acos of the trace loses half the
    digits near 0 (a 1e-8 rad rotation reads as 0 or 1.5e-8), and near pi."""
    c = 0.5 * (float(np.trace(R)) - 1.0)
    s = 0.5 * float(np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]))
    return math.atan2(s, max(-1.0, min(1.0, c)))


def pose_difference(T_a: np.ndarray, T_b: np.ndarray) -> tuple[float, float]:
    """(translation distance in metres, rotation angle in radians) between two poses (4, 4)
    expressed in the same frame."""
    return (float(np.linalg.norm(T_a[:3, 3] - T_b[:3, 3])),
            rotation_angle(T_a[:3, :3] @ T_b[:3, :3].T))


def quat_to_matrix(q: np.ndarray, *, scalar_first: bool = True) -> np.ndarray:
    """R (3, 3) of a quaternion, (w, x, y, z) or with ``scalar_first=False`` (x, y, z, w);
    normalised first."""
    q = np.asarray(q, np.float64).reshape(4)
    w, x, y, z = (q if scalar_first else q[[3, 0, 1, 2]]) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def matrix_to_quat(R: np.ndarray, *, scalar_first: bool = True) -> np.ndarray:
    """Unit quaternion of a rotation R (3, 3) with w >= 0 (Shepperd's method), (w, x, y, z) or
    with ``scalar_first=False`` (x, y, z, w)."""
    t = float(np.trace(R))
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        # the largest diagonal entry keeps s away from 0
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1e-300, 1.0 + R[i, i] - R[j, j] - R[k, k]))
        q = [0.0] * 4
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = np.array(q)
    q = q / np.linalg.norm(q) * (1.0 if q[0] >= 0 else -1.0)
    return q if scalar_first else q[[1, 2, 3, 0]]


def rotvec_to_matrix(rvec: np.ndarray) -> np.ndarray:
    """R (3, 3) of a rotation vector (3,): axis times angle, radians (Rodrigues' formula)."""
    r = np.asarray(rvec, np.float64).reshape(3)
    angle = float(np.linalg.norm(r))
    if angle < 1e-12:
        # first order: R = I + [r]x, exact to the float64 epsilon at this size
        return np.eye(3) + _skew(r)
    k = _skew(r / angle)
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def matrix_to_rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) of R (3, 3): axis times angle, radians, angle in [0, pi].

    Through the quaternion, which keeps the axis well defined near pi where the
    antisymmetric part of R vanishes."""
    w, x, y, z = matrix_to_quat(np.asarray(R, np.float64))
    v = np.array([x, y, z])
    s = float(np.linalg.norm(v))
    if s < 1e-15:
        return np.zeros(3)
    return v / s * (2.0 * math.atan2(s, w))


def pose_from_rvec(rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
    """T (4, 4) of an OpenCV (rvec, tvec) pair (radians, metres)."""
    return pose(rotvec_to_matrix(rvec), tvec)


def frame_from_approach(approach: np.ndarray, roll: float) -> np.ndarray:
    """R (3, 3) of a hand frame whose z is ``approach`` (normalised) and whose x is rolled by
    ``roll`` radians about it from a reference axis perpendicular to the approach."""
    z = np.asarray(approach, np.float64)
    n = np.linalg.norm(z)
    if not np.isfinite(n) or n < 1e-12:
        raise ValueError(f"approach must be a non-zero 3-vector, got {z.tolist()}")
    z = z / n
    # reference x: world x projected off z, or world y where z is (nearly) along world x
    ref = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x0 = ref - z * (ref @ z)
    x0 /= np.linalg.norm(x0)
    y0 = np.cross(z, x0)
    x = math.cos(roll) * x0 + math.sin(roll) * y0
    return np.stack([x, np.cross(z, x), z], axis=1)


def tangent_basis(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors t1, t2 (N, 3) per unit normal (N, 3) such that (t1, t2, n) is a
    right-handed orthonormal basis; t1 is n x (world x), or n x (world y) where n is near x."""
    helper = np.where(np.abs(normals[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    t1 = np.cross(normals, helper)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, np.cross(normals, t1)


def _skew(v: np.ndarray) -> np.ndarray:
    """The cross-product matrix [v]x (3, 3) of a 3-vector."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
