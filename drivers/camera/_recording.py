"""Writing RGB-D frames (simulated or generated) into a librealsense recording, through
pyrealsense2's software_device and recorder, so RealSenseCamera can play them back."""
from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from scoring import check_positive

from ._rs import import_pyrealsense2, intrinsics_to_rs
from ._types import Intrinsics, RGBDFrame

Z16_MAX = 65535  # largest depth a z16 pixel holds, in depth units


def record_frames(frames: Iterable[RGBDFrame], path: str | os.PathLike, *, fps: int = 30,
                  depth_units_m: float = 0.001, pace: bool = False) -> int:
    """Write frames to a librealsense .db3 recording; returns how many were written.

    Depth is stored as z16 in units of depth_units_m metres (rounded; NaN, inf and 0 become 0 =
    no reading), colour as rgb8, both with the frames' intrinsics (the streams are registered:
    same intrinsics, identity extrinsics). Frame i gets frame number i and device timestamp
    i / fps seconds: the frames' own stamp_s, seq, T_base_camera and instance_ids are not stored,
    because librealsense pairs depth with colour by timestamp against the stream fps and
    mis-pairs irregular stamps. pace=True writes in real time (frame i at i / fps seconds), so a
    real-time playback runs at fps; otherwise frames are written as fast as they come.
    An existing file at path is replaced; on an error no file is left behind.
    """
    path = _check_path(path)
    if isinstance(fps, bool) or not isinstance(fps, int) or fps < 1:
        raise ValueError(f"record_frames: fps must be an integer >= 1, got {fps!r}")
    check_positive(depth_units_m, "depth_units_m", "record_frames")
    it = iter(frames)
    first = next(it, None)
    if first is None:
        raise ValueError(f"record_frames: no frames to write to {path}")
    intrinsics = _check_frame(first, 0, first.intrinsics)
    items = ((frame.color, _depth_z16(frame.depth_m, i, depth_units_m))
             for i, frame in enumerate(_checked(first, it, intrinsics)))
    return _write_recording(path, items, intrinsics, intrinsics, fps=fps,
                            depth_units_m=depth_units_m, pace=pace)


def _checked(first: RGBDFrame, rest: Iterable[RGBDFrame],
             intrinsics: Intrinsics) -> Iterator[RGBDFrame]:
    """The frames, each checked as it comes (the first one already was)."""
    yield first
    for i, frame in enumerate(rest, 1):
        _check_frame(frame, i, intrinsics)
        yield frame


def _check_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    if path.suffix != ".db3":
        raise ValueError(f"record_frames: {path} must end in .db3 (librealsense 2.59 writes "
                         f"only ROS2 .db3 recordings)")
    if not path.parent.is_dir():
        raise ValueError(f"record_frames: folder {path.parent} of {path} does not exist")
    return path


def _check_frame(frame: RGBDFrame, index: int, intrinsics: Intrinsics) -> Intrinsics:
    """The frame's intrinsics, after checking it against the recording's (those of frame 0)."""
    if frame.intrinsics != intrinsics:
        raise ValueError(f"record_frames: frame {index} has intrinsics {frame.intrinsics}, but "
                         f"frame 0 has {intrinsics}; a recording holds one stream profile")
    h, w = intrinsics.height, intrinsics.width
    color, depth = np.asarray(frame.color), np.asarray(frame.depth_m)
    if color.shape != (h, w, 3) or color.dtype != np.uint8:
        raise ValueError(f"record_frames: frame {index}: color must be a ({h}, {w}, 3) uint8 RGB "
                         f"image as its intrinsics say, got {color.shape} {color.dtype}")
    if depth.shape != (h, w):
        raise ValueError(f"record_frames: frame {index}: depth_m has shape {depth.shape} but color "
                         f"has ({h}, {w}, 3); depth must be aligned to colour, at the same size")
    return intrinsics


def _depth_z16(depth_m: np.ndarray, index: int, depth_units_m: float) -> np.ndarray:
    """(H, W) uint16 depth units of a depth image in metres; no reading (0, NaN, inf) -> 0."""
    d = np.asarray(depth_m, np.float64)
    if (d < 0).any():
        raise ValueError(f"record_frames: frame {index}: depth_m has negative values (min "
                         f"{np.nanmin(d):.4g} m)")
    d = np.where(np.isfinite(d), d, 0.0)
    units = np.rint(d / depth_units_m)
    if units.size and units.max() > Z16_MAX:
        raise ValueError(f"record_frames: frame {index}: depth {d.max():.4g} m is beyond the "
                         f"{Z16_MAX * depth_units_m:g} m a z16 image holds with depth_units_m="
                         f"{depth_units_m}; use larger depth units")
    return units.astype(np.uint16)


def _write_recording(path: Path, items: Iterable[tuple[np.ndarray, np.ndarray]],
                     color_intrinsics: Intrinsics, depth_intrinsics: Intrinsics, *, fps: int,
                     depth_units_m: float, pace: bool) -> int:
    """Write (rgb8 colour, z16 depth) pairs as a two-sensor software device's recording.

    The depth stream may have its own intrinsics (an unregistered pair, as a camera's depth
    sensor delivers it; identity extrinsics); record_frames always passes the colour ones.
    """
    rs = import_pyrealsense2()
    device = rs.software_device()
    device.register_info(rs.camera_info.name, "graspline software camera")
    # Two sensors as on a D400, so playback sees the depth scale on a depth sensor.
    depth_sensor = device.add_sensor("Stereo Module")
    color_sensor = device.add_sensor("RGB Camera")
    depth_profile = depth_sensor.add_video_stream(
        _video_stream(rs, rs.stream.depth, 0, rs.format.z16, 2, depth_intrinsics, fps), True)
    color_profile = color_sensor.add_video_stream(
        _video_stream(rs, rs.stream.color, 1, rs.format.rgb8, 3, color_intrinsics, fps), True)
    depth_sensor.add_read_only_option(rs.option.depth_units, depth_units_m)
    identity = rs.extrinsics()
    identity.rotation = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    identity.translation = [0.0, 0.0, 0.0]
    depth_profile.register_extrinsics_to(color_profile, identity)

    try:
        recorder = rs.recorder(str(path), device)
    except RuntimeError as exc:
        raise OSError(f"record_frames: cannot write RealSense recording {path}: {exc}") from exc
    sensors = ((depth_sensor, depth_profile), (color_sensor, color_profile))
    count = 0
    try:
        for sensor, profile in sensors:
            sensor.open(profile)
            # The recorder sees frames on their way to a started sensor's callback.
            sensor.start(lambda frame: None)
        t0 = time.monotonic()
        for color, depth in items:
            if pace:
                time.sleep(max(0.0, t0 + count / fps - time.monotonic()))
            stamp_ms = count * 1000.0 / fps
            _push(rs, depth_sensor, depth_profile, depth, 2, stamp_ms, count, depth_units_m)
            _push(rs, color_sensor, color_profile, color, 3, stamp_ms, count, None)
            count += 1
    except BaseException:
        _close(sensors)
        del recorder  # the file is written out when the recorder goes, then removed
        path.unlink(missing_ok=True)
        raise
    _close(sensors)
    del recorder
    return count


def _video_stream(rs, stream, uid: int, fmt, bpp: int, intrinsics: Intrinsics, fps: int):
    vs = rs.video_stream()
    vs.type, vs.index, vs.uid = stream, 0, uid
    vs.width, vs.height, vs.fps = intrinsics.width, intrinsics.height, fps
    vs.bpp, vs.fmt = bpp, fmt
    vs.intrinsics = intrinsics_to_rs(rs, intrinsics)
    return vs


def _push(rs, sensor, profile, pixels: np.ndarray, bpp: int, stamp_ms: float, number: int,
          depth_units_m: float | None) -> None:
    frame = rs.software_video_frame()
    frame.pixels = np.ascontiguousarray(pixels)  # copied by pyrealsense2
    frame.stride = pixels.shape[1] * bpp
    frame.bpp = bpp
    frame.timestamp = stamp_ms
    frame.domain = rs.timestamp_domain.hardware_clock
    frame.frame_number = number
    frame.profile = profile.as_video_stream_profile()
    if depth_units_m is not None:
        frame.depth_units = depth_units_m
    sensor.on_video_frame(frame)


def _close(sensors) -> None:
    for sensor, _ in sensors:
        try:
            sensor.stop()
            sensor.close()
        except RuntimeError:  # never opened or started: nothing to release
            pass
