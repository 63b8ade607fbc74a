"""librealsense recordings written by tests with pyrealsense2 directly (a software_device and its
recorder), not through drivers.camera's writer: a test can leave a piece of metadata out of the
file, or give the depth stream intrinsics of its own (an unregistered pair, as a camera's depth
sensor delivers it), which ``record_frames`` never writes."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from drivers.camera import Intrinsics

IDENTITY = np.eye(4)


def rs_intrinsics(rs: Any, intr: Intrinsics) -> Any:
    """Our intrinsics as an rs.intrinsics, field by field (librealsense keeps float32)."""
    out = rs.intrinsics()
    out.width, out.height = intr.width, intr.height
    out.fx, out.fy, out.ppx, out.ppy = intr.fx, intr.fy, intr.cx, intr.cy
    out.model = getattr(rs.distortion, intr.model)
    out.coeffs = list(intr.coeffs)
    return out


def write_recording(rs: Any, path: Path, pairs: Iterable[tuple[np.ndarray, np.ndarray]], *,
                    color_intr: Intrinsics | None, depth_intr: Intrinsics | None,
                    T_color_depth: np.ndarray | None = IDENTITY,
                    depth_units_m: float | None = 0.001, fps: int = 30) -> Path:
    """A two-sensor software_device recording of (rgb8 (H, W, 3), z16 (h, w)) pairs, the
    streams sized as the first pair. None leaves that piece out of the file: a stream's
    intrinsics, the depth-to-colour extrinsics, the depth sensor's depth_units option (and the
    frames' units)."""
    pairs = list(pairs)
    device = rs.software_device()
    device.register_info(rs.camera_info.name, "test software camera")
    depth_sensor, color_sensor = device.add_sensor("Stereo Module"), device.add_sensor("RGB Camera")

    def stream(kind, uid, fmt, bpp, shape, intr):
        vs = rs.video_stream()
        vs.type, vs.index, vs.uid = kind, 0, uid
        vs.width, vs.height, vs.fps, vs.bpp, vs.fmt = shape[1], shape[0], fps, bpp, fmt
        if intr is not None:
            vs.intrinsics = rs_intrinsics(rs, intr)
        return vs

    color0, depth0 = pairs[0]
    depth_profile = depth_sensor.add_video_stream(
        stream(rs.stream.depth, 0, rs.format.z16, 2, depth0.shape, depth_intr), True)
    color_profile = color_sensor.add_video_stream(
        stream(rs.stream.color, 1, rs.format.rgb8, 3, color0.shape, color_intr), True)
    if depth_units_m is not None:
        depth_sensor.add_read_only_option(rs.option.depth_units, depth_units_m)
    if T_color_depth is not None:
        e = rs.extrinsics()
        e.rotation = T_color_depth[:3, :3].ravel(order="F").tolist()
        e.translation = T_color_depth[:3, 3].tolist()
        depth_profile.register_extrinsics_to(color_profile, e)
    recorder = rs.recorder(str(path), device)
    sensors = ((depth_sensor, depth_profile), (color_sensor, color_profile))
    for sensor, profile in sensors:
        sensor.open(profile)
        sensor.start(lambda frame: None)
    for k, (color, z16) in enumerate(pairs):
        for sensor, profile, pixels, bpp in ((depth_sensor, depth_profile, z16, 2),
                                             (color_sensor, color_profile, color, 3)):
            sf = rs.software_video_frame()
            sf.pixels, sf.stride, sf.bpp = np.ascontiguousarray(pixels), pixels.shape[1] * bpp, bpp
            sf.timestamp, sf.frame_number = k * 1000.0 / fps, k
            sf.domain = rs.timestamp_domain.hardware_clock
            sf.profile = profile.as_video_stream_profile()
            if bpp == 2 and depth_units_m is not None:
                sf.depth_units = depth_units_m
            sensor.on_video_frame(sf)
    for sensor, _ in sensors:
        sensor.stop()
        sensor.close()
    del recorder  # the file is complete once the recorder is gone
    return path
