"""RealSenseCamera and record_frames with the real pyrealsense2: frames generated with numpy go
through a software_device and the recorder into a .db3 file, and come back through the same
pipeline code path a live camera uses. No camera is attached where these run."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from drivers.camera import (CameraDisconnected, CameraError, CameraTimeout, EndOfRecording,
                            RealSenseCamera, record_frames)
from tests.drivers.camera_frames import (tabletop_depth, tabletop_frame, tabletop_frames,
                                         tabletop_intrinsics)
from tests.drivers.rs_recordings import write_recording

# librealsense is not safe in two processes at once (an xdist worker crashed when two test
# files played recordings side by side): `make test` runs these files in a process of their own
pytestmark = pytest.mark.realsense


# The graspline command line, run by the interpreter of the tests (the console script's code).
RUN_CLI = "import sys, onboard.cli as c; sys.exit(c.main(sys.argv[1:]))"
DISTORTED = tabletop_intrinsics(model="brown_conrady", coeffs=(0.125, -0.0625, 0.0, 0.0, 0.03125))


@pytest.fixture
def rs():
    return pytest.importorskip("pyrealsense2")


@pytest.fixture
def no_camera(rs):
    if rs.context().query_devices().size() > 0:
        pytest.skip("a RealSense camera is attached; this test needs none")


def _record(tmp_path: Path, frames, name: str = "scene.db3", **options) -> Path:
    path = tmp_path / name
    assert record_frames(frames, path, **options) == len(frames)
    return path


# -- the round trip ----------------------------------------------------------------------------

# librealsense's playback sometimes drops a recording's first frames when the machine is
# loaded (seen 2 times in 24 runs under a load of 8, with the camera code unchanged): the
# frames lost are the library's, so a failure is run again, at most twice
@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("depth_units_m", [0.001, 0.0001])
def test_depth_colour_intrinsics_and_order_round_trip(rs, tmp_path, depth_units_m):
    frames = tabletop_frames(6, DISTORTED)
    T = np.eye(4)
    T[:3, 3] = (0.4, -0.1, 0.9)
    path = _record(tmp_path, frames, depth_units_m=depth_units_m)

    with RealSenseCamera(recording=path, T_base_camera=T) as cam:
        assert cam.intrinsics == DISTORTED
        assert cam.depth_scale_m == pytest.approx(depth_units_m, rel=1e-6)
        got = list(cam)

    assert len(got) == len(frames)
    for k, (sent, back) in enumerate(zip(frames, got)):
        assert back.seq == k and back.stamp_s == pytest.approx(k / 30, abs=1e-6)
        assert back.intrinsics == DISTORTED
        assert back.color.dtype == np.uint8 and np.array_equal(back.color, sent.color)
        assert back.depth_m.dtype == np.float32
        expected = np.nan_to_num(sent.depth_m, nan=0.0)
        # Rounding to depth units costs half a unit; float32 metres add a little.
        assert np.abs(back.depth_m - expected).max() <= 0.5 * depth_units_m + 1e-6
        assert np.array_equal(back.depth_m == 0, expected == 0)  # no reading stays no reading
        assert np.array_equal(back.T_base_camera, T)


def test_intrinsics_come_back_at_float32_precision(rs, tmp_path):
    intr = tabletop_intrinsics()
    odd = type(intr)(width=intr.width, height=intr.height, fx=141.123, fy=139.987, cx=80.31,
                     cy=59.07, model="inverse_brown_conrady", coeffs=(0.1, 0.2, 0.3, 0.4, 0.5))
    with RealSenseCamera(recording=_record(tmp_path, tabletop_frames(1, odd))) as cam:
        back = cam.intrinsics
    assert back.model == "inverse_brown_conrady"
    got = np.array([back.fx, back.fy, back.cx, back.cy, *back.coeffs])
    sent = np.array([odd.fx, odd.fy, odd.cx, odd.cy, *odd.coeffs])
    assert np.array_equal(got, sent.astype(np.float32).astype(np.float64))


def test_unregistered_depth_is_aligned_to_colour(rs, tmp_path):
    # A camera's depth sensor has its own intrinsics: here half the colour resolution. The
    # public writer takes registered frames only, so the test writes the file with
    # pyrealsense2's software device itself.
    color_intr, depth_intr = tabletop_intrinsics(160, 120), tabletop_intrinsics(80, 60)
    table_units = np.rint(tabletop_depth(depth_intr, np.zeros((60, 80))) / 0.001)
    color = tabletop_frame(0, color_intr).color
    path = tmp_path / "unregistered.db3"
    write_recording(rs, path, [(color, table_units.astype(np.uint16))] * 2,
                    color_intr=color_intr, depth_intr=depth_intr)

    with RealSenseCamera(recording=path) as cam:
        frames = list(cam)
    assert len(frames) == 2
    table = tabletop_depth(color_intr, np.zeros((120, 160)))
    for frame in frames:
        assert frame.depth_m.shape == (120, 160) and frame.intrinsics == color_intr
        seen = frame.depth_m > 0
        assert seen.mean() > 0.95
        # One depth pixel covers two colour rows of a sloping table: about 2 mm of slope.
        assert np.abs(frame.depth_m[seen] - table[seen]).max() < 0.003


# -- the end of a recording, pacing and timeouts -----------------------------------------------

# the same librealsense frame drop as above (seen once in a fresh-clone CI run, 2026-11-25):
# the first reads then end early; a failure is run again, at most twice
@pytest.mark.flaky(reruns=2)
def test_reading_past_the_end_raises_end_of_recording(rs, tmp_path):
    path = _record(tmp_path, tabletop_frames(3))
    with RealSenseCamera(recording=path) as cam:
        assert [cam.read(timeout_s=2.0).seq for _ in range(3)] == [0, 1, 2]
        t0 = time.monotonic()
        with pytest.raises(EndOfRecording, match="scene.db3"):
            cam.read(timeout_s=30.0)
        assert time.monotonic() - t0 < 5.0  # the end is noticed, not waited out
        with pytest.raises(EndOfRecording):
            cam.read(timeout_s=None)
        assert list(cam) == []


# librealsense's playback sometimes drops a recording's first frames when the machine is
# loaded (seen 2 times in 24 runs under a load of 8, with the camera code unchanged): the
# frames lost are the library's, so a failure is run again, at most twice
@pytest.mark.flaky(reruns=2)
def test_iteration_stops_at_the_end(rs, tmp_path):
    path = _record(tmp_path, tabletop_frames(4))
    with RealSenseCamera(recording=path) as cam:
        assert [f.seq for f in cam] == [0, 1, 2, 3]


# librealsense's playback sometimes drops a recording's first frames when the machine is
# loaded (seen 2 times in 24 runs under a load of 8, with the camera code unchanged): the
# frames lost are the library's, so a failure is run again, at most twice
@pytest.mark.flaky(reruns=2)
def test_real_time_false_reads_every_frame_of_a_slow_reader(rs, tmp_path):
    frames = tabletop_frames(8)
    path = _record(tmp_path, frames)
    got = []
    with RealSenseCamera(recording=path, real_time=False) as cam:
        for frame in cam:
            got.append(frame)
            time.sleep(0.05)  # slower than the 30 fps recorded
    assert [f.seq for f in got] == list(range(8))
    assert all(np.array_equal(a.color, b.color) for a, b in zip(frames, got))


def test_a_late_frame_is_a_timeout_naming_the_file(rs, tmp_path):
    # Recorded in real time at 2 fps and played in real time: frames are 0.5 s apart.
    # Eight frames: with three, the reader reaches the file's end while the second is still
    # due, and librealsense 2.59 sometimes drops the rest (seen on a loaded machine).
    path = _record(tmp_path, tabletop_frames(8, fps=2), fps=2, pace=True)
    with RealSenseCamera(recording=path, real_time=True) as cam:
        first = cam.read(timeout_s=2.0)
        with pytest.raises(CameraTimeout, match=r"scene\.db3: no frame within 0\.2 s"):
            cam.read(timeout_s=0.2)
        assert cam.read(timeout_s=2.0).seq > first.seq


# -- bad input -----------------------------------------------------------------------------------

def test_missing_recording_names_the_path(rs, tmp_path):
    path = tmp_path / "nowhere.db3"
    with pytest.raises(CameraError, match=f"{path} does not exist"):
        RealSenseCamera(recording=path)


def test_unreadable_recording_names_the_path(rs, tmp_path):
    path = tmp_path / "garbage.db3"
    path.write_bytes(b"not a recording" * 10)
    with pytest.raises(CameraError, match=f"cannot play RealSense recording {path}"):
        RealSenseCamera(recording=path)


def test_recording_with_colour_and_depth_of_different_sizes_is_rejected(rs, tmp_path):
    frames = tabletop_frames(3)
    frames[1].depth_m = frames[1].depth_m[::2, ::2]  # RGBDFrame checks only when built
    path = tmp_path / "bad.db3"
    with pytest.raises(ValueError, match=r"frame 1: depth_m has shape \(60, 80\) but color has "
                                         r"\(120, 160, 3\); depth must be aligned to colour"):
        record_frames(frames, path)
    assert not path.exists()  # no half-written recording is left behind


@pytest.mark.parametrize("change, message", [
    (lambda fs: fs.__setitem__(2, tabletop_frame(2, tabletop_intrinsics(80, 60))),
     r"frame 2 has intrinsics .* but frame 0 has"),
    (lambda fs: setattr(fs[0], "depth_m", fs[0].depth_m + 70.0),
     r"frame 0: depth .* m is beyond the 65.535 m a z16 image holds with depth_units_m=0.001"),
    (lambda fs: fs[1].depth_m.__setitem__((5, 5), -0.2), r"frame 1: depth_m has negative"),
    (lambda fs: setattr(fs[0], "color", fs[0].color.astype(np.float32)),
     r"frame 0: color must be a \(120, 160, 3\) uint8 RGB image"),
    (lambda fs: fs.clear(), r"no frames to write"),
])
def test_record_frames_rejects_bad_frames(rs, tmp_path, change, message):
    frames = tabletop_frames(3)
    change(frames)
    path = tmp_path / "bad.db3"
    with pytest.raises(ValueError, match=message):
        record_frames(frames, path)
    assert not path.exists()


@pytest.mark.parametrize("name, options, message", [
    ("scene.bag", {}, r"must end in \.db3"),
    ("missing/scene.db3", {}, r"folder .*missing of .* does not exist"),
    ("scene.db3", {"fps": 0}, r"fps must be an integer >= 1, got 0"),
    ("scene.db3", {"depth_units_m": 0.0}, r"depth_units_m must be finite and > 0, got 0.0"),
])
def test_record_frames_rejects_bad_options(tmp_path, name, options, message):
    with pytest.raises(ValueError, match=message):
        record_frames(tabletop_frames(1), tmp_path / name, **options)


def test_camera_rejects_bad_options(tmp_path):
    with pytest.raises(ValueError, match="reconnect_after must be an integer >= 1, got 0"):
        RealSenseCamera(reconnect_after=0)
    with pytest.raises(ValueError, match="does not go with serial='123'"):
        RealSenseCamera("123", recording=tmp_path / "x.db3")
    with pytest.raises(ValueError, match=r"T_base_camera must be a finite 4 x 4 array, got "
                                         r"shape \(3, 3\)"):
        RealSenseCamera(recording=tmp_path / "x.db3", T_base_camera=np.eye(3))
    with pytest.raises(ValueError, match=r"record_to='live.bag' must end in \.db3"):
        RealSenseCamera(record_to="live.bag")


def test_close_is_safe_twice_and_a_closed_camera_refuses_reads(rs, tmp_path):
    cam = RealSenseCamera(recording=_record(tmp_path, tabletop_frames(2)))
    cam.close()
    cam.close()
    with pytest.raises(ValueError, match="is closed"):
        cam.read()


# -- live cameras (none attached here) -----------------------------------------------------------

def test_live_camera_without_a_device_is_a_clear_error(no_camera):
    with pytest.raises(CameraDisconnected, match="no RealSense camera is attached"):
        RealSenseCamera()
    with pytest.raises(CameraDisconnected, match="no RealSense camera is attached"):
        RealSenseCamera("012345678901")


def test_wrong_serial_lists_the_attached_cameras():
    attached = [("111", "Intel RealSense D435"), ("222", "Intel RealSense D405")]
    with pytest.raises(CameraDisconnected, match=r"camera 333 is not attached; attached: "
                                                 r"111 \(Intel RealSense D435\), 222"):
        RealSenseCamera.choose_serial("333", attached)
    with pytest.raises(CameraError, match="2 RealSense cameras are attached: .*pass serial="):
        RealSenseCamera.choose_serial(None, attached)
    assert RealSenseCamera.choose_serial("222", attached) == "222"
    assert RealSenseCamera.choose_serial(None, attached[:1]) == "111"


# -- imports and the command line ----------------------------------------------------------------

def test_importing_the_camera_package_does_not_load_pyrealsense2():
    code = ("import sys, drivers.camera, onboard.cli; onboard.cli.build_parser(); "
            "print('pyrealsense2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_record_without_a_camera_exits_2_with_one_line(no_camera, tmp_path):
    out = tmp_path / "live.db3"
    proc = subprocess.run([sys.executable, "-c", RUN_CLI, "record", str(out), "--seconds", "1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == ("graspline record: error: no RealSense camera is attached (check the "
                           "USB 3 cable and that rs-enumerate-devices lists it)\n")
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["out.bag", "--seconds", "1"], "must be a .db3 file"),
    (["out.db3", "--seconds", "0"], "--seconds must be > 0, got 0.0"),
    (["nowhere/out.db3", "--seconds", "1"], "does not exist"),
])
def test_cli_record_refuses_bad_arguments(tmp_path, capsys, monkeypatch, args, message):
    import onboard.cli as cli

    monkeypatch.chdir(tmp_path)
    assert cli.main(["record", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_record_will_not_replace_a_recording(tmp_path, capsys):
    import onboard.cli as cli

    out = tmp_path / "kept.db3"
    out.write_bytes(b"x")
    assert cli.main(["record", str(out), "--seconds", "1"]) == 2
    assert "exists: choose another name or pass --force" in capsys.readouterr().err
    assert out.read_bytes() == b"x"
