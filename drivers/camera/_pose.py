"""Camera placement helpers: poses of the optical frame (z forward, x right, y down)."""
from __future__ import annotations

import numpy as np


def look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray = (0.0, 0.0, 1.0)) -> np.ndarray:
    """T_world_camera (4 x 4) of a camera at ``eye`` looking at ``target`` (metres, world frame).

    The optical frame has z along the view direction, x to the image's right and y down, with
    ``up`` showing as up in the image. Looking along ``up`` itself, world x shows as right.
    """
    eye = np.asarray(eye, np.float64)
    forward = np.asarray(target, np.float64) - eye
    norm = np.linalg.norm(forward)
    if not np.isfinite(norm) or norm < 1e-9:
        raise ValueError(f"look_at: eye {eye.tolist()} and target must differ, got {np.asarray(target).tolist()}")
    forward /= norm
    right = np.cross(forward, np.asarray(up, np.float64))
    if np.linalg.norm(right) < 1e-9:  # looking straight along up: pick world x as right
        right = np.cross(np.cross(forward, [1.0, 0.0, 0.0]), forward)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    T = np.eye(4)
    T[:3, :3] = np.stack([right, down, forward], axis=1)
    T[:3, 3] = eye
    return T
