"""Frame and intrinsics types shared by every camera, real or simulated."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scoring import check_pose, check_positive

# librealsense's distortion models (rs.distortion members), by the names Intrinsics.model uses.
DISTORTION_MODELS = ("none", "brown_conrady", "inverse_brown_conrady", "modified_brown_conrady",
                     "kannala_brandt4", "ftheta")


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics of an image, pixels; distortion as librealsense names it.

    model : one of DISTORTION_MODELS (librealsense's names); coeffs : its five coefficients.
    """

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    model: str = "none"
    coeffs: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"Intrinsics: {name} must be an integer >= 1, got {v!r}")
        for name in ("fx", "fy"):
            check_positive(getattr(self, name), name, "Intrinsics")
        for name in ("cx", "cy"):
            if not np.isfinite(getattr(self, name)):
                raise ValueError(f"Intrinsics: {name} must be finite, got {getattr(self, name)!r}")
        if len(self.coeffs) != 5:
            raise ValueError(f"Intrinsics: coeffs must have 5 values, got {len(self.coeffs)}")

    @property
    def K(self) -> np.ndarray:
        """3 x 3 camera matrix."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def deproject(self, depth_m: np.ndarray) -> np.ndarray:
        """(H, W, 3) float32 points in the camera frame (metres) of a depth image; NaN where
        the depth has no reading (0 or NaN). Distortion is ignored (aligned RealSense depth
        and simulated frames have none)."""
        if depth_m.shape != (self.height, self.width):
            raise ValueError(f"depth_m must have shape {(self.height, self.width)} for these "
                             f"intrinsics, got {depth_m.shape}")
        z = np.where(depth_m > 0, depth_m, np.nan).astype(np.float32)
        v, u = np.mgrid[0:self.height, 0:self.width].astype(np.float32)
        return np.stack([(u - self.cx) / self.fx * z, (v - self.cy) / self.fy * z, z], axis=-1)

    def deproject_pixels(self, u: np.ndarray, v: np.ndarray, depth_m: np.ndarray | float
                         ) -> np.ndarray:
        """(..., 3) float64 points in the camera frame (metres) of pixels (u = column, v = row,
        any shape) at depth ``depth_m`` (the same shape, or one value); distortion ignored."""
        u = np.asarray(u, np.float64)
        v = np.asarray(v, np.float64)
        z = np.broadcast_to(np.asarray(depth_m, np.float64), u.shape)
        return np.stack([(u - self.cx) / self.fx * z, (v - self.cy) / self.fy * z, z], axis=-1)

    def project(self, points: np.ndarray) -> np.ndarray:
        """(N, 2) pixel coordinates (u = column, v = row) of (N, 3) camera-frame points, metres."""
        p = np.asarray(points, np.float64).reshape(-1, 3)
        return np.stack([self.fx * p[:, 0] / p[:, 2] + self.cx,
                         self.fy * p[:, 1] / p[:, 2] + self.cy], axis=1)


@dataclass
class RGBDFrame:
    """One colour + depth capture, depth aligned to colour.

    color : (H, W, 3) uint8 RGB. depth_m : (H, W) float32 metres along the optical axis, 0 or
    NaN = no reading. intrinsics : of both images. T_base_camera : 4 x 4 pose of the camera
    optical frame in the robot base frame, or None when not calibrated. stamp_s : capture time,
    seconds (device clock for RealSense, simulation time for SimCamera). seq : frame number.
    instance_ids : (H, W) int32 ground-truth object ids (0 = none), simulated frames only.
    """

    color: np.ndarray
    depth_m: np.ndarray
    intrinsics: Intrinsics
    T_base_camera: np.ndarray | None = None
    stamp_s: float = 0.0
    seq: int = 0
    instance_ids: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        h, w = self.intrinsics.height, self.intrinsics.width
        if not isinstance(self.color, np.ndarray) or self.color.shape != (h, w, 3) \
                or self.color.dtype != np.uint8:
            raise ValueError(f"RGBDFrame: color must be a ({h}, {w}, 3) uint8 array, got "
                             f"{getattr(self.color, 'shape', None)} {getattr(self.color, 'dtype', '')}")
        if not isinstance(self.depth_m, np.ndarray) or self.depth_m.shape != (h, w):
            raise ValueError(f"RGBDFrame: depth_m must be a ({h}, {w}) array, got "
                             f"{getattr(self.depth_m, 'shape', None)}")
        if self.depth_m.dtype != np.float32:
            self.depth_m = self.depth_m.astype(np.float32)
        if self.T_base_camera is not None:
            self.T_base_camera = check_pose(self.T_base_camera, "RGBDFrame: T_base_camera")
        if self.instance_ids is not None and self.instance_ids.shape != (h, w):
            raise ValueError(f"RGBDFrame: instance_ids must be ({h}, {w}), got "
                             f"{self.instance_ids.shape}")
