"""Intel RealSense cameras on pyrealsense2: a live device chosen by serial, or the playback of
its recording (.db3; .bag where the installed librealsense still reads it), both through one
pipeline code path. pyrealsense2 is imported when a camera is opened, not with this module."""
from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scoring import check_pose, check_positive

from ._base import Camera
from ._errors import CameraDisconnected, CameraError, CameraTimeout, EndOfRecording
from ._rs import import_pyrealsense2, intrinsics_from_rs
from ._types import Intrinsics, RGBDFrame

# A wait with no timeout (None) is done in slices this long, so reconnects and the end of a
# recording are still noticed.
WAIT_SLICE_S = 0.1
# librealsense 2.59 marks a playback "stopped" when its reader reaches the end of the file, which
# can be before the last framesets have left the syncer: how long to wait for those (a loaded
# machine has been seen to take over 0.3 s to hand one on).
END_GRACE_S = 1.0
REAL_TIME_GRACE_S = 0.5  # plus two frame intervals, in real-time playback


class RealSenseCamera(Camera):
    """A RealSense camera, live or played back from a recording, delivering RGBDFrames.

    Live (recording=None): the camera with the given serial (None: the only one attached)
    streams depth (z16) and colour (rgb8) at width x height pixels and fps; depth is aligned
    to colour by librealsense; the depth scale and the colour intrinsics are read from the
    device. record_to=PATH.db3 also records the streams to that file. A read that times out
    raises CameraTimeout; after reconnect_after consecutive timeouts the pipeline is restarted
    (after a hardware reset of the device if hardware_reset), waiting up to reconnect_wait_s
    seconds for the device to come back, else CameraDisconnected (with timeout None, after
    reconnect_after seconds without a frame). While recording, that
    restart would start the file anew, so it raises CameraDisconnected instead.

    Playback (recording=PATH): the file's depth and colour streams; width, height and fps do
    not apply. real_time=False delivers every frame, as fast as they are read; real_time=True
    plays at the recorded pace and drops frames a slow reader misses. Reading past the last
    frame raises EndOfRecording (and iteration stops there).

    Depth comes in metres (float32; 0 = no reading). Frames carry T_base_camera (4 x 4, the
    camera optical frame in the robot base frame) when given. When the depth and colour
    streams are already registered (same intrinsics, identity extrinsics, as in recordings made
    by record_frames) depth is not re-aligned: librealsense's align would only add rounding
    holes.

    What the camera or recording must state, and the fallbacks: both streams' intrinsics
    (none: CameraError, re-record); the depth-to-colour extrinsics (none: CameraError, unless
    T_color_depth is given: the pose of the depth optical frame in the colour optical frame,
    4 x 4, metres, from a calibration file, which then replaces what the source reports); the
    depth units (none: CameraError, unless depth_units_m is given, metres per z16 unit, e.g.
    0.001 for a D435, 0.0001 for a D405; a source that states other units than depth_units_m
    is a CameraError too, since one of the two is wrong).
    """

    def __init__(self, serial: str | None = None, *, width: int = 640, height: int = 480,
                 fps: int = 30, recording: str | os.PathLike | None = None,
                 real_time: bool = False, record_to: str | os.PathLike | None = None,
                 reconnect_after: int = 3, hardware_reset: bool = False,
                 reconnect_wait_s: float = 10.0, T_base_camera: np.ndarray | None = None,
                 T_color_depth: np.ndarray | None = None,
                 depth_units_m: float | None = None) -> None:
        self._closed = True  # until opened: a failed __init__ leaves nothing to close
        for name, value in (("width", width), ("height", height), ("fps", fps),
                            ("reconnect_after", reconnect_after)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RealSenseCamera: {name} must be an integer >= 1, got {value!r}")
        if not (isinstance(reconnect_wait_s, (int, float)) and math.isfinite(reconnect_wait_s)
                and reconnect_wait_s >= 0):
            raise ValueError(f"RealSenseCamera: reconnect_wait_s must be >= 0 seconds, got "
                             f"{reconnect_wait_s!r}")
        if serial is not None and not isinstance(serial, str):
            raise ValueError(f"RealSenseCamera: serial must be a string, got {serial!r}")
        if record_to is not None and Path(record_to).suffix != ".db3":
            raise ValueError(f"RealSenseCamera: record_to={str(record_to)!r} must end in .db3 "
                             f"(librealsense 2.59 writes only .db3)")
        if recording is not None and (serial is not None or record_to is not None):
            raise ValueError("RealSenseCamera: recording= plays a file; it does not go with "
                             f"serial={serial!r} or record_to={record_to!r}")
        if T_base_camera is not None:
            T_base_camera = _check_rigid(T_base_camera, "T_base_camera")
        if T_color_depth is not None:
            T_color_depth = _check_rigid(T_color_depth, "T_color_depth")
        if depth_units_m is not None:
            check_positive(depth_units_m, "depth_units_m", "RealSenseCamera")
        self._T_base_camera = T_base_camera
        self._T_color_depth = T_color_depth
        self._depth_units_m = None if depth_units_m is None else float(depth_units_m)
        self._reconnect_after = reconnect_after
        self._hardware_reset = hardware_reset
        self._reconnect_wait_s = float(reconnect_wait_s)
        self._recording = None if recording is None else Path(recording)
        self._record_to = None if record_to is None else Path(record_to)
        self._real_time = bool(real_time)
        self._misses = 0
        self._ended = False
        self._last_seq: int | None = None
        self._playback: Any = None

        rs = self._rs = import_pyrealsense2()
        if self._recording is not None:
            self._serial = None
            self._pipeline = rs.pipeline()
            self._config = self._playback_config()
            profile = self._start_playback()
        else:
            self._context = rs.context()
            self._serial = self.choose_serial(serial, self._attached())
            self._pipeline = rs.pipeline(self._context)
            self._config = self._live_config(width, height, fps)
            profile = self._start_live()
        try:
            self._setup_streams(profile)
        except BaseException:
            self._stop_pipeline()
            raise
        self._closed = False

    # -- public properties -------------------------------------------------------------------

    @property
    def intrinsics(self) -> Intrinsics:
        """Intrinsics of the colour stream, which the aligned depth shares (pixels)."""
        return self._intrinsics

    @property
    def depth_scale_m(self) -> float:
        """Metres per raw depth unit, as the device (or the recording) reports it."""
        return self._depth_scale_m

    @property
    def serial(self) -> str | None:
        """Serial number of the live camera; None for a recording."""
        return self._serial

    @property
    def source(self) -> str:
        """What the frames come from, as error messages name it."""
        if self._recording is not None:
            return f"RealSense recording {self._recording}"
        return f"RealSense {self._serial}"

    def __repr__(self) -> str:
        if self._recording is not None:
            return f"RealSenseCamera(recording={str(self._recording)!r})"
        return f"RealSenseCamera({self._serial!r})"

    # -- opening -----------------------------------------------------------------------------

    @staticmethod
    def choose_serial(wanted: str | None, attached: Sequence[tuple[str, str]]) -> str:
        """The serial to open, given the wanted one (None: the only camera) and the attached
        (serial, name) pairs; CameraDisconnected when it is not attached, CameraError when
        several are and none was named."""
        listing = ", ".join(f"{serial} ({name})" for serial, name in attached)
        if not attached:
            raise CameraDisconnected("no RealSense camera is attached (check the USB 3 cable and "
                                     "that rs-enumerate-devices lists it)")
        if wanted is None:
            if len(attached) > 1:
                raise CameraError(f"{len(attached)} RealSense cameras are attached: {listing}; "
                                  f"pass serial= to choose one")
            return attached[0][0]
        if wanted not in [serial for serial, _ in attached]:
            raise CameraDisconnected(f"RealSense camera {wanted} is not attached; attached: "
                                     f"{listing}")
        return wanted

    def _attached(self) -> list[tuple[str, str]]:
        """(serial, name) of every RealSense device attached now."""
        rs = self._rs
        found = []
        for dev in self._context.query_devices():
            try:
                found.append((dev.get_info(rs.camera_info.serial_number),
                              dev.get_info(rs.camera_info.name)))
            except RuntimeError:  # a device that went away while being listed
                continue
        return found

    def _live_config(self, width: int, height: int, fps: int) -> Any:
        rs = self._rs
        config = rs.config()
        config.enable_device(self._serial)
        config.enable_stream(rs.stream.depth, width, height, rs.format.z16, fps)
        config.enable_stream(rs.stream.color, width, height, rs.format.rgb8, fps)
        if self._record_to is not None:
            config.enable_record_to_file(str(self._record_to))
        self._stream_request = f"{width}x{height} at {fps} fps"
        return config

    def _start_live(self) -> Any:
        try:
            return self._pipeline.start(self._config)
        except RuntimeError as exc:
            raise CameraError(f"{self.source}: cannot stream depth z16 + colour rgb8 at "
                              f"{self._stream_request} ({exc})") from exc

    def _playback_config(self) -> Any:
        rs = self._rs
        path = self._recording
        if not path.is_file():
            raise CameraError(f"RealSense recording {path} does not exist"
                              if not path.exists() else f"RealSense recording {path} is not a file")
        if not os.access(path, os.R_OK):
            raise CameraError(f"RealSense recording {path} is not readable (permissions)")
        config = rs.config()
        config.enable_device_from_file(str(path), repeat_playback=False)
        config.enable_stream(rs.stream.depth)
        config.enable_stream(rs.stream.color)
        return config

    def _start_playback(self) -> Any:
        try:
            # Set the pace on the resolved device before starting: set after start, the first
            # frames would already be playing in real time and could be dropped.
            resolved = self._config.resolve(self._pipeline)
            resolved.get_device().as_playback().set_real_time(self._real_time)
            profile = self._pipeline.start(self._config)
        except RuntimeError as exc:
            hint = (" (it needs a depth and a colour stream)"
                    if "resolve requests" in str(exc) else "")
            raise CameraError(f"cannot play RealSense recording {self._recording}{hint}: "
                              f"{exc}") from exc
        self._playback = profile.get_device().as_playback()
        self._playback.set_real_time(self._real_time)
        return profile

    def _setup_streams(self, profile: Any) -> None:
        """Read the depth scale, intrinsics and formats; decide whether depth needs aligning."""
        rs = self._rs
        depth_stream = profile.get_stream(rs.stream.depth)
        color_stream = profile.get_stream(rs.stream.color)
        depth = depth_stream.as_video_stream_profile()
        color = color_stream.as_video_stream_profile()
        if depth.format() != rs.format.z16:
            raise CameraError(f"{self.source}: depth format {depth.format().name} is not "
                              f"supported (z16 is)")
        if color.format().name not in _RGB_ORDER:
            raise CameraError(f"{self.source}: colour format {color.format().name} is not "
                              f"supported ({', '.join(_RGB_ORDER)} are)")
        self._rgb_order = _RGB_ORDER[color.format().name]
        self._frame_interval_s = 1.0 / max(1, color.fps())
        self._depth_scale_m = self._depth_units(profile)
        color_intr = self._stream_intrinsics(color, "colour")
        try:
            self._intrinsics = intrinsics_from_rs(color_intr)
        except ValueError as exc:
            raise CameraError(f"{self.source}: colour intrinsics: {exc}") from exc
        depth_intr = self._stream_intrinsics(depth, "depth")
        extrinsics = self._depth_to_color(depth_stream, color_stream)
        registered = _same_intrinsics(depth_intr, color_intr) and _is_identity(extrinsics)
        self._align = None if registered else rs.align(rs.stream.color)

    def _advice(self) -> str:
        """What to do about a recording or camera that leaves out stream metadata."""
        if self._recording is not None:
            return ("re-record it with `graspline record` (a live camera) or record_frames, which "
                    "store both streams with their metadata")
        return ("the camera's firmware or calibration table may be damaged (check it in the "
                "RealSense Viewer)")

    def _stream_intrinsics(self, stream: Any, name: str) -> Any:
        """The rs.intrinsics of a video stream; CameraError when the source stores none
        (librealsense then reports zeros, or raises)."""
        try:
            intr = stream.get_intrinsics()
        except RuntimeError as exc:
            raise CameraError(f"{self.source}: the {name} stream has no intrinsics ({exc}); "
                              f"{self._advice()}") from exc
        if not (intr.fx > 0 and intr.fy > 0 and intr.width > 0 and intr.height > 0):
            consequence = ("frames have no camera model" if name == "colour"
                           else "depth cannot be aligned to colour")
            raise CameraError(
                f"{self.source}: the {name} stream has no intrinsics (focal length fx={intr.fx:g}, "
                f"fy={intr.fy:g} px, size {intr.width} x {intr.height}), so {consequence}; "
                f"{self._advice()}")
        return intr

    def _depth_to_color(self, depth_stream: Any, color_stream: Any) -> Any:
        """The depth-to-colour rs.extrinsics: T_color_depth when given (registered with
        librealsense, so align uses it), else the source's; CameraError when neither exists."""
        rs = self._rs
        if self._T_color_depth is not None:
            extrinsics = rs.extrinsics()
            # rs.extrinsics: p_color = R p_depth + t, R stored column-major, t in metres
            extrinsics.rotation = self._T_color_depth[:3, :3].ravel(order="F").tolist()
            extrinsics.translation = self._T_color_depth[:3, 3].tolist()
            depth_stream.register_extrinsics_to(color_stream, extrinsics)
            return extrinsics
        try:
            return depth_stream.get_extrinsics_to(color_stream)
        except RuntimeError as exc:  # "Requested extrinsics are not available!"
            raise CameraError(
                f"{self.source}: has no depth-to-colour extrinsics, so depth cannot be put in the "
                f"colour image; {self._advice()}, or pass T_color_depth= (the depth optical frame "
                f"in the colour optical frame, 4 x 4, metres) from a calibration file") from exc

    def _depth_units(self, profile: Any) -> float:
        """Metres per z16 unit: the depth sensor's depth_units option, or depth_units_m when
        the source has none; CameraError when neither is there or they disagree."""
        rs = self._rs
        try:
            sensor = profile.get_device().first_depth_sensor()
        except RuntimeError as exc:
            raise CameraError(f"{self.source}: no depth sensor ({exc}); {self._advice()}") from exc
        stated = None
        if sensor.supports(rs.option.depth_units):
            stated = float(sensor.get_option(rs.option.depth_units))
            if not (math.isfinite(stated) and stated > 0):
                stated = None
        given = self._depth_units_m
        if stated is None and given is None:
            # librealsense would answer 1 mm here, which is 10x off for a D405 (0.1 mm units)
            raise CameraError(
                f"{self.source}: states no depth units (the depth sensor's depth_units option), "
                f"so depth cannot be put in metres; pass depth_units_m= the units of the camera "
                f"it was recorded with (0.001 for a D435 by default, 0.0001 for a D405), or "
                f"{self._advice()}")
        if stated is not None and given is not None and not math.isclose(stated, given, rel_tol=1e-5):
            raise CameraError(f"{self.source}: states depth units of {stated:.6g} m, but "
                              f"depth_units_m={given!r} was passed; leave depth_units_m out to use "
                              f"the source's")
        return stated if stated is not None else given

    # -- reading -----------------------------------------------------------------------------

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        if self._playback is not None:
            return self._read_playback(timeout_s)
        return self._read_live(timeout_s)

    def _read_live(self, timeout_s: float | None) -> RGBDFrame:
        while True:
            try:
                frames = self._wait(WAIT_SLICE_S if timeout_s is None else timeout_s)
            except RuntimeError:  # librealsense raises when the device is lost mid-wait
                self._misses = self._reconnect_after
                frames = None
            if frames is not None:
                self._misses = 0
                return self._to_frame(frames)
            # With no timeout, every empty slice counts towards a reconnect, scaled to a second.
            self._misses += 1 if timeout_s is not None else WAIT_SLICE_S
            restarted = self._misses >= self._reconnect_after
            if restarted:
                self._reconnect()
                self._misses = 0
            if timeout_s is not None:
                note = (f"; restarted the pipeline after {self._reconnect_after} consecutive "
                        f"timeouts" if restarted else "")
                raise CameraTimeout(f"{self.source}: no frame within {timeout_s} s{note}")

    def _read_playback(self, timeout_s: float | None) -> RGBDFrame:
        if self._ended:
            raise EndOfRecording(f"{self.source}: already read to the end")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = WAIT_SLICE_S if deadline is None else deadline - time.monotonic()
            frames = self._wait(min(WAIT_SLICE_S, max(left, 0.001)))
            if frames is None and self._playback_stopped():
                # The reader stops at the file's end while frames may still be on their way.
                # As fast as read, nothing else can make a frame late, so wait the grace out
                # whatever the caller's timeout; in real time the next frame can be a frame
                # interval away or more on a loaded machine, and a caller's shorter timeout is
                # a real timeout.
                if self._real_time:
                    grace = REAL_TIME_GRACE_S + 2.0 * self._frame_interval_s
                    short = deadline is not None and deadline - time.monotonic() < grace
                else:
                    grace, short = END_GRACE_S, False
                frames = self._wait(max(deadline - time.monotonic(), 0.001) if short else grace)
                if frames is None and not short:
                    raise self._end()
            if frames is not None:
                frame = self._to_frame(frames)
                # A frame number going back means the file started over: that is the end too.
                if self._last_seq is not None and frame.seq < self._last_seq:
                    raise self._end()
                self._last_seq = frame.seq
                return frame
            if deadline is not None and time.monotonic() >= deadline:
                raise CameraTimeout(f"{self.source}: no frame within {timeout_s} s (playback "
                                    f"{self._playback.current_status().name})")

    def _playback_stopped(self) -> bool:
        return self._playback.current_status() == self._rs.playback_status.stopped

    def _end(self) -> EndOfRecording:
        self._ended = True
        return EndOfRecording(f"{self.source}: read past the last frame")

    def _wait(self, timeout_s: float) -> Any:
        """The next frameset, or None when none arrived within timeout_s seconds."""
        ok, frames = self._pipeline.try_wait_for_frames(max(1, round(timeout_s * 1000)))
        return frames if ok else None

    def _to_frame(self, frames: Any) -> RGBDFrame:
        """An RGBDFrame (copies; librealsense reuses its buffers) from a depth+colour frameset."""
        if self._align is not None:
            frames = self._align.process(frames)
        depth, color = frames.get_depth_frame(), frames.get_color_frame()
        if not depth or not color:
            raise CameraError(f"{self.source}: a frameset came without "
                              f"{'depth' if not depth else 'colour'}")
        depth_m = np.asanyarray(depth.get_data()).astype(np.float32)
        depth_m *= np.float32(self._depth_scale_m)  # 0 (no reading) stays 0
        # Fancy indexing copies, and puts the channels in RGB order.
        rgb = np.asanyarray(color.get_data())[..., self._rgb_order].astype(np.uint8, copy=False)
        return RGBDFrame(color=rgb, depth_m=depth_m, intrinsics=self._intrinsics,
                         T_base_camera=None if self._T_base_camera is None
                         else self._T_base_camera.copy(),
                         stamp_s=color.get_timestamp() / 1000.0, seq=int(color.get_frame_number()))

    # -- reconnecting and closing ------------------------------------------------------------

    def _reconnect(self) -> None:
        """Restart the live pipeline (after a hardware reset if asked); CameraDisconnected when
        the device does not come back within reconnect_wait_s."""
        if self._record_to is not None:
            raise CameraDisconnected(
                f"{self.source}: {self._reconnect_after} consecutive timeouts while recording to "
                f"{self._record_to}; not restarting, which would start the file anew (it holds "
                f"the frames before the fault)")
        self._stop_pipeline()
        if self._hardware_reset:
            self._reset_device()
        deadline = time.monotonic() + self._reconnect_wait_s
        while self._serial not in [s for s, _ in self._attached()]:
            if time.monotonic() >= deadline:
                raise CameraDisconnected(
                    f"{self.source} is gone: not attached within {self._reconnect_wait_s} s after "
                    f"{self._reconnect_after} consecutive timeouts (attached: "
                    f"{', '.join(s for s, _ in self._attached()) or 'none'})")
            time.sleep(0.2)
        try:
            self._pipeline.start(self._config)
        except RuntimeError as exc:
            raise CameraDisconnected(f"{self.source}: restarting the pipeline failed: {exc}") \
                from exc

    def _reset_device(self) -> None:
        """Hardware-reset the device and wait (up to reconnect_wait_s) for it to drop off."""
        rs = self._rs
        for dev in self._context.query_devices():
            if dev.get_info(rs.camera_info.serial_number) == self._serial:
                try:
                    dev.hardware_reset()
                except RuntimeError:  # already gone: the wait for it below decides
                    return
                break
        deadline = time.monotonic() + self._reconnect_wait_s
        while self._serial in [s for s, _ in self._attached()] and time.monotonic() < deadline:
            time.sleep(0.2)

    def _stop_pipeline(self) -> None:
        try:
            self._pipeline.stop()
        except RuntimeError:  # not started (or already stopped)
            pass

    def _close(self) -> None:
        self._stop_pipeline()
        self._playback = None


# Colour formats we take, by rs.format name: the channel order that gives RGB.
_RGB_ORDER = {"rgb8": [0, 1, 2], "bgr8": [2, 1, 0], "rgba8": [0, 1, 2], "bgra8": [2, 1, 0]}


def _same_intrinsics(a: Any, b: Any) -> bool:
    return (a.width, a.height, a.fx, a.fy, a.ppx, a.ppy, a.model, list(a.coeffs)) == \
           (b.width, b.height, b.fx, b.fy, b.ppx, b.ppy, b.model, list(b.coeffs))


def _check_rigid(T: object, name: str) -> np.ndarray:
    """T as a float64 4 x 4 rigid transform; ValueError naming it otherwise."""
    return check_pose(T, f"RealSenseCamera: {name}")


def _is_identity(extrinsics: Any) -> bool:
    return (np.allclose(extrinsics.rotation, np.eye(3).ravel(), rtol=0, atol=1e-9)
            and np.allclose(extrinsics.translation, 0.0, rtol=0, atol=1e-9))
