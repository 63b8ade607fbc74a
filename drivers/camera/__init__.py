"""Cameras: the RGB-D frame type and the Camera interface (real devices and simulation).

Heavy libraries (pyrealsense2, mujoco) are imported only inside the camera that uses them.
"""
from ._base import Camera
from ._errors import CameraDisconnected, CameraError, CameraTimeout, EndOfRecording
from ._pose import look_at
from ._sim import DepthNoise, SimCamera, intrinsics_from_fov
from ._types import Intrinsics, RGBDFrame

__all__ = [
    "Camera",
    "CameraDisconnected",
    "CameraError",
    "CameraTimeout",
    "DepthNoise",
    "EndOfRecording",
    "Intrinsics",
    "RGBDFrame",
    "SimCamera",
    "intrinsics_from_fov",
    "look_at",
]
