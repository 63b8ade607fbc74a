"""Pixel rays and depth validity of a pinhole camera, cached per intrinsics."""
from __future__ import annotations

import functools

import numpy as np

from drivers.camera import Intrinsics


@functools.lru_cache(maxsize=8)
def ray_axes(intr: Intrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Normalised image coordinates: (W,) (u - cx) / fx and (H,) (v - cy) / fy, float32.

    A camera-frame point of pixel (v, u) at depth z is z * (rx[u], ry[v], 1).
    """
    rx = ((np.arange(intr.width, dtype=np.float64) - intr.cx) / intr.fx).astype(np.float32)
    ry = ((np.arange(intr.height, dtype=np.float64) - intr.cy) / intr.fy).astype(np.float32)
    return rx, ry


def valid_depth(depth_m: np.ndarray, max_range_m: float) -> np.ndarray:
    """(H, W) bool: pixels with a reading (finite, > 0) no farther than max_range_m."""
    with np.errstate(invalid="ignore"):
        return (depth_m > 0) & (depth_m <= max_range_m)  # NaN compares False
