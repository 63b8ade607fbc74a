"""Cameras: the RGB-D frame type and the Camera interface (real devices and simulation).

Heavy libraries (pyrealsense2, mujoco) are imported only inside the camera that uses them:
RealSenseCamera and record_frames load pyrealsense2 when called, not when imported.
"""
from ._base import Camera
from ._errors import CameraDisconnected, CameraError, CameraTimeout, EndOfRecording
from ._pose import look_at
from ._realsense import RealSenseCamera
from ._recording import record_frames
from ._sim import DepthNoise, SimCamera, intrinsics_from_fov
from ._types import DISTORTION_MODELS, Intrinsics, RGBDFrame

__all__ = [
    "Camera",
    "CameraDisconnected",
    "CameraError",
    "CameraTimeout",
    "DISTORTION_MODELS",
    "DepthNoise",
    "EndOfRecording",
    "Intrinsics",
    "RGBDFrame",
    "RealSenseCamera",
    "SimCamera",
    "intrinsics_from_fov",
    "look_at",
    "record_frames",
]
