"""Rigid-transform helpers for the grasp simulation: 4x4 ``T_a_b`` arrays, MuJoCo quaternions (w, x, y, z)."""
from __future__ import annotations

import math

import numpy as np


def pose(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """T (4, 4) from a rotation R (3, 3) and a translation p (3,), metres."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def invert(T: np.ndarray) -> np.ndarray:
    """T_b_a from T_a_b (4, 4) without a general matrix inverse."""
    R = T[:3, :3]
    return pose(R.T, -R.T @ T[:3, 3])


def rotation_angle(R: np.ndarray) -> float:
    """‖log R‖, the angle of the rotation R (3, 3) in radians, in [0, pi] (Kim eq. 3, δR)."""
    c = 0.5 * (float(np.trace(R)) - 1.0)
    # the trace form loses precision near 0 and pi; use atan2 of the axis part for the small side
    s = 0.5 * float(np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]))
    return math.atan2(s, max(-1.0, min(1.0, c)))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """R (3, 3) from a quaternion (w, x, y, z), normalised first."""
    w, x, y, z = np.asarray(q, np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z), w >= 0, of a rotation R (3, 3) (Shepperd's method)."""
    t = float(np.trace(R))
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1e-300, 1.0 + R[i, i] - R[j, j] - R[k, k]))
        q = [0.0] * 4
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q) * (1.0 if q[0] >= 0 else -1.0)


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
