"""Deterministic RGB-D frames of a tabletop scene, computed in closed form with numpy.

A camera looks down at a table 0.8 m away, tilted by 10 degrees about the camera x axis; a box
(5 cm tall) and a cylinder (8 cm tall) stand on it and slide along the table from frame to
frame, so every frame differs. Only the tops of the objects are modelled (their footprints in
the image are a rectangle and a disc): enough to tell frames and objects apart, not a renderer.
The leftmost columns have no depth reading (0), as a D400's invalid-depth band, and one pixel
is NaN.
"""
from __future__ import annotations

import math

import numpy as np

from drivers.camera import Intrinsics, RGBDFrame

TABLE_DISTANCE_M = 0.8
TILT_RAD = math.radians(10.0)
NO_DEPTH_COLUMNS = 4
TABLE_RGB = (150, 120, 90)
BOX_RGB = (200, 30, 30)
CYLINDER_RGB = (30, 160, 200)


def tabletop_intrinsics(width: int = 160, height: int = 120, *, model: str = "none",
                        coeffs: tuple[float, ...] = (0.0,) * 5) -> Intrinsics:
    """Pinhole intrinsics (pixels) whose values float32 holds exactly, so they round-trip."""
    return Intrinsics(width=width, height=height, fx=0.875 * width, fy=0.875 * width + 0.5,
                      cx=(width - 1) / 2, cy=(height - 1) / 2 + 0.25, model=model,
                      coeffs=tuple(coeffs))


def tabletop_depth(intrinsics: Intrinsics, height_m: np.ndarray) -> np.ndarray:
    """(H, W) float32 depth in metres of points height_m (H, W) above the tilted table."""
    v = np.arange(intrinsics.height, dtype=np.float64)[:, None]
    ray_y = (v - intrinsics.cy) / intrinsics.fy
    # Plane n . X = -(d - height) with n = (0, -sin t, -cos t) and X = z * (x, ray_y, 1).
    denom = math.sin(TILT_RAD) * ray_y + math.cos(TILT_RAD)
    return ((TABLE_DISTANCE_M - height_m) / denom).astype(np.float32)


def tabletop_frame(k: int, intrinsics: Intrinsics, *, seed: int = 0, fps: int = 30) -> RGBDFrame:
    """Frame k of the scene: the objects have slid k pixels along the image rows."""
    h, w = intrinsics.height, intrinsics.width
    v, u = np.mgrid[0:h, 0:w]
    height_m = np.zeros((h, w))
    rng = np.random.default_rng(seed)
    # The table has a fixed texture, so colour checks see every pixel, not flat patches.
    color = np.clip(np.array(TABLE_RGB) + rng.integers(-12, 13, (h, w, 3)), 0, 255).astype(np.uint8)

    box = ((u >= w // 8 + k) & (u < w // 8 + k + w // 5)
           & (v >= h // 4) & (v < h // 4 + h // 4))
    height_m[box] = 0.05
    color[box] = BOX_RGB
    cu, cv, r = w * 0.65 - k, h * 0.6, min(w, h) * 0.15
    cylinder = (u - cu) ** 2 + (v - cv) ** 2 <= r ** 2
    height_m[cylinder] = 0.08
    color[cylinder] = CYLINDER_RGB

    depth = tabletop_depth(intrinsics, height_m)
    depth[:, :NO_DEPTH_COLUMNS] = 0.0
    depth[h // 2, w // 2] = np.nan
    return RGBDFrame(color=color, depth_m=depth, intrinsics=intrinsics, stamp_s=k / fps, seq=k)


def tabletop_frames(n: int, intrinsics: Intrinsics | None = None, *, seed: int = 0,
                    fps: int = 30) -> list[RGBDFrame]:
    """n consecutive frames of the scene (default intrinsics: 160 x 120 pixels)."""
    intrinsics = intrinsics or tabletop_intrinsics()
    return [tabletop_frame(k, intrinsics, seed=seed, fps=fps) for k in range(n)]
