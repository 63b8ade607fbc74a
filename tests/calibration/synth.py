"""Synthetic board views with known truth: a ChArUco board rendered through a pinhole camera
with Brown-Conrady distortion at known poses, and poses that look at the board."""
from __future__ import annotations

import numpy as np

from calibration import CharucoBoardSpec
from drivers.camera import look_at

SUPERSAMPLE = 2      # render at 2 x the size, then average down (anti-aliasing)


class BoardRenderer:
    """Renders a board seen by one camera (K, Brown-Conrady dist, width x height pixels).

    Each output pixel's ray is found once by undistorting its position (supersampled);
    a render intersects the rays with the board plane and looks them up in a fine raster of
    the board, averages down, and adds Gaussian grey noise. White around the board.
    """

    def __init__(self, K: np.ndarray, dist: np.ndarray, width: int, height: int) -> None:
        import cv2

        s = SUPERSAMPLE
        self.width, self.height = width, height
        # Pixel centres of the supersampled image, in the original pixel grid.
        v, u = np.mgrid[0:height * s, 0:width * s].astype(np.float64)
        uv = np.stack([(u + 0.5) / s - 0.5, (v + 0.5) / s - 0.5], axis=-1).reshape(-1, 1, 2)
        xy = cv2.undistortPointsIter(uv, K, dist, None, None,
                                     (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-9))
        self._rays = np.concatenate([xy.reshape(-1, 2), np.ones((xy.shape[0], 1))], axis=1)

    def render(self, spec: CharucoBoardSpec, T_camera_board: np.ndarray, *,
               noise_grey: float = 2.0, seed: int = 0) -> np.ndarray:
        """(H, W, 3) uint8 RGB image of the board at T_camera_board."""
        import cv2

        s, h, w = SUPERSAMPLE, self.height, self.width
        px_per_m = 8000.0   # the board raster: 8 px per mm, finer than any image pixel here
        texture = spec.image(px_per_m)
        R, t = T_camera_board[:3, :3], T_camera_board[:3, 3]
        origin = -R.T @ t                      # camera centre in the board frame
        d = self._rays @ R                     # ray directions in the board frame (R^T r)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = -origin[2] / d[:, 2]
        valid = lam > 0
        map_x = np.where(valid, (origin[0] + lam * d[:, 0]) * px_per_m - 0.5, -10)
        map_y = np.where(valid, (origin[1] + lam * d[:, 1]) * px_per_m - 0.5, -10)
        big = cv2.remap(texture, map_x.astype(np.float32).reshape(h * s, w * s),
                        map_y.astype(np.float32).reshape(h * s, w * s), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=255)
        img = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float64)
        img += np.random.default_rng(seed).normal(0.0, noise_grey, img.shape)
        grey = np.clip(img + 0.5, 0, 255).astype(np.uint8)
        return np.repeat(grey[..., None], 3, axis=2)


def board_poses(spec: CharucoBoardSpec, n: int, *, seed: int = 0, distance_m=(0.35, 0.6),
                tilt_deg: float = 35.0, shift_m: float = 0.08) -> list[np.ndarray]:
    """n poses T_camera_board of a camera looking at the board from its front, at distances
    in distance_m, tilted up to tilt_deg and aimed up to shift_m off the board's centre."""
    rng = np.random.default_rng(seed)
    w, h = spec.size_m
    centre = np.array([w / 2, h / 2, 0.0])
    poses = []
    for _ in range(n):
        dist = rng.uniform(*distance_m)
        tilt = np.radians(rng.uniform(0.0, tilt_deg))
        azim = rng.uniform(0, 2 * np.pi)
        # The camera sits on the board's front side (negative z: z points into the board).
        view = np.array([np.sin(tilt) * np.cos(azim), np.sin(tilt) * np.sin(azim), -np.cos(tilt)])
        target = centre + np.array([rng.uniform(-shift_m, shift_m),
                                    rng.uniform(-shift_m, shift_m), 0.0])
        T_board_camera = look_at(target + dist * view, target, up=(0.0, -1.0, 0.0))
        # Roll about the optical axis, so the board's rows are not always horizontal.
        roll = rng.uniform(-0.4, 0.4)
        Rz = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0],
                       [0, 0, 1]])
        T_board_camera[:3, :3] = T_board_camera[:3, :3] @ Rz
        poses.append(np.linalg.inv(T_board_camera))
    return poses
