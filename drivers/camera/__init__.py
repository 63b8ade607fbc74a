"""Cameras: the RGB-D frame type and the Camera interface (real devices and simulation).

Heavy libraries (pyrealsense2, mujoco) are imported only inside the camera that uses them:
RealSenseCamera and record_frames load pyrealsense2 when called, not when imported.
"""
from ._base import Camera
from ._errors import CameraDisconnected, CameraError, CameraTimeout, EndOfRecording
from ._realsense import RealSenseCamera
from ._recording import record_frames
from ._types import Intrinsics, RGBDFrame

__all__ = [
    "Camera",
    "CameraDisconnected",
    "CameraError",
    "CameraTimeout",
    "EndOfRecording",
    "Intrinsics",
    "RGBDFrame",
    "RealSenseCamera",
    "record_frames",
]
