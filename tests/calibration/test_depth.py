"""Depth check on a flat target seen by SimCamera in MuJoCo (its D400 noise model): bias and
noise per distance, the scale correction, a tilted target, and the plane fit (hypothesis)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration import (CalibrationError, DepthSample, depth_check, expected_noise_m, fit_plane,
                         load_depth_correction, mean_depth_sample, measure_flat_target,
                         save_calibration)
from drivers.camera import DepthNoise, RGBDFrame, SimCamera, intrinsics_from_fov, look_at

# librealsense is not safe in two processes at once (an xdist worker crashed when two test
# files played recordings side by side): `make test` runs these files in a process of their own
pytestmark = pytest.mark.realsense


mujoco = pytest.importorskip("mujoco")

WALL = """<mujoco><worldbody>
  <geom name="target" type="box" size="1.5 1.5 0.01" pos="0 0 -0.01" rgba="0.8 0.8 0.8 1"/>
</worldbody></mujoco>"""
INTR = intrinsics_from_fov(320, 240)


@pytest.fixture(scope="module")
def world():
    model = mujoco.MjModel.from_xml_string(WALL)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def _frame(world, eye, target=(0.0, 0.0, 0.0), seed=0) -> tuple[RGBDFrame, np.ndarray]:
    """One noisy frame of the target's top face (z = 0) and the camera's pose in the world."""
    T = look_at(np.asarray(eye, float), np.asarray(target, float), up=(0.0, 1.0, 0.0))
    with SimCamera(*world, INTR, T, noise=DepthNoise(), seed=seed) as cam:
        return cam.read(), T


def test_bias_and_noise_per_distance_match_the_d400_model(world):
    samples = [measure_flat_target(_frame(world, (0, 0, z), seed=i)[0], reference_m=z)
               for i, z in enumerate((0.4, 0.7, 1.0, 1.4))]
    for s in samples:
        assert abs(s.bias_m) < 0.1 * s.expected_noise_m + 2e-4
        assert s.noise_m == pytest.approx(s.expected_noise_m, rel=0.2)
        assert s.n_points > 0.9 * (INTR.width * INTR.height / 9)
    # The model's noise grows with distance squared.
    assert samples[-1].expected_noise_m / samples[0].expected_noise_m > 8
    cal = depth_check(samples)
    assert cal.scale == pytest.approx(1.0, abs=5e-4) and cal.warnings == ()


def test_a_two_percent_depth_scale_error_is_measured_and_corrected(world, tmp_path):
    samples = []
    for i, z in enumerate((0.5, 0.8, 1.2)):
        f, _ = _frame(world, (0, 0, z), seed=i)
        scaled = RGBDFrame(f.color, f.depth_m * np.float32(1.02), f.intrinsics)
        samples.append(measure_flat_target(scaled, reference_m=z))
    assert [s.bias_m for s in samples] == pytest.approx([0.01, 0.016, 0.024], abs=5e-4)
    cal = depth_check(samples)
    assert cal.scale == pytest.approx(1 / 1.02, rel=5e-4)
    assert cal.rms_bias_m > 0.015 and cal.rms_bias_corrected_m < 5e-4
    corrected = cal.correct(np.array([[1.02, 0.0]], np.float32))
    assert corrected[0, 0] == pytest.approx(1.0, abs=5e-4) and corrected[0, 1] == 0.0
    loaded = load_depth_correction(save_calibration(cal, tmp_path / "depth.yaml"))
    assert loaded.scale == cal.scale and len(loaded.samples) == 3


def test_a_tilted_target_is_referenced_by_its_pose(world):
    frame, T_world_camera = _frame(world, (0.25, -0.1, 0.7), target=(0.05, 0.0, 0.0))
    s = measure_flat_target(frame, T_camera_target=np.linalg.inv(T_world_camera))
    assert abs(s.bias_m) < 5e-4
    assert s.reference_m > 0.7


def test_noise_beyond_the_model_is_warned(world):
    f, _ = _frame(world, (0, 0, 0.6))
    rng = np.random.default_rng(1)
    noisy = np.where(f.depth_m > 0, f.depth_m + rng.normal(0, 0.008, f.depth_m.shape), 0)
    s = measure_flat_target(RGBDFrame(f.color, noisy.astype(np.float32), f.intrinsics),
                            reference_m=0.6)
    cal = depth_check([s], correct_scale=False)
    assert len(cal.warnings) == 1 and "more than 2 x the D400 model" in cal.warnings[0]


def test_no_target_in_view_is_a_clear_error(world):
    f, _ = _frame(world, (0, 0, 0.6))
    empty = RGBDFrame(f.color, np.zeros_like(f.depth_m), f.intrinsics)
    with pytest.raises(CalibrationError, match=r"0 points with depth, need 200"):
        measure_flat_target(empty, reference_m=0.6)


def test_expected_noise_follows_z_squared_over_focal_times_baseline():
    m = DepthNoise()
    sigma = 1.0 ** 2 * m.subpixel_px / (600.0 * m.baseline_m)
    assert expected_noise_m(1.0, 600.0) == pytest.approx(math.hypot(sigma, 0.001 / math.sqrt(12)))


@settings(max_examples=60, deadline=None)
@given(tilt=st.floats(0.0, 1.0), azim=st.floats(0, 2 * math.pi), d=st.floats(0.2, 3.0),
       seed=st.integers(0, 1000))
def test_plane_fit_recovers_any_plane_in_front_of_the_camera(tilt, azim, d, seed):
    n = -np.array([math.sin(tilt) * math.cos(azim), math.sin(tilt) * math.sin(azim),
                   math.cos(tilt)])                      # towards the camera
    rng = np.random.default_rng(seed)
    # Points on the plane n.p + d = 0 around its foot point, plus a few outliers.
    a = np.cross(n, [1.0, 0, 0] if abs(n[0]) < 0.9 else [0, 1.0, 0])
    a /= np.linalg.norm(a)
    b = np.cross(n, a)
    uv = rng.uniform(-0.2, 0.2, (500, 2))
    pts = -d * n + uv[:, :1] * a + uv[:, 1:] * b
    pts[:10] += 0.05 * n                                # flying pixels
    fit = fit_plane(pts)
    assert fit.normal @ n > 1 - 1e-9
    assert fit.d == pytest.approx(d, abs=1e-9)
    assert fit.n_points == 490 and fit.rms_m < 1e-9


def test_the_mean_sample_of_one_position_averages_depths_and_adds_noise_in_quadrature():
    a = DepthSample(0.500, 0.502, 0.002, 0.0010, 0.0008, 1000)
    b = DepthSample(0.500, 0.506, 0.006, 0.0020, 0.0009, 1003)
    m = mean_depth_sample([a, b])
    assert (m.reference_m, m.measured_m) == pytest.approx((0.500, 0.504), abs=1e-15)
    assert m.bias_m == pytest.approx(0.004, abs=1e-15)
    assert m.noise_m == pytest.approx(math.sqrt((0.0010 ** 2 + 0.0020 ** 2) / 2), rel=1e-15)
    assert (m.expected_noise_m, m.n_points) == (0.0008, 1001)   # the first's model; floor
    assert mean_depth_sample([a]) == a
    with pytest.raises(CalibrationError, match="no samples"):
        mean_depth_sample([])


def test_the_mean_of_frames_is_the_frames_sample_at_the_same_place(world):
    frames = [_frame(world, (0, 0, 0.7), seed=s)[0] for s in range(4)]
    per_frame = [measure_flat_target(f, reference_m=0.7) for f in frames]
    m = mean_depth_sample(per_frame)
    assert m.reference_m == 0.7
    assert min(s.measured_m for s in per_frame) <= m.measured_m <= max(s.measured_m
                                                                         for s in per_frame)
    assert m.noise_m == pytest.approx(expected_noise_m(0.7, INTR.fx), rel=0.5)


def test_cli_depth_flow_from_recordings_at_two_distances(world, tmp_path, capsys):
    pytest.importorskip("pyrealsense2")
    from drivers.camera import record_frames
    from onboard.cli import main

    args = ["calibrate", "depth"]
    for z in (0.5, 0.9):
        frames = [_frame(world, (0, 0, z), seed=s)[0] for s in range(3)]
        record_frames(frames, tmp_path / f"z{z}.db3")
        args += ["--recording", str(tmp_path / f"z{z}.db3"), "--distance", str(z)]
    assert main([*args, "--frames", "3", "--out", str(tmp_path / "d.yaml")]) == 0
    printed = capsys.readouterr().out
    assert "scale correction" in printed
    cal = load_depth_correction(tmp_path / "d.yaml")
    assert [s.reference_m for s in cal.samples] == [0.5, 0.9]
    assert cal.scale == pytest.approx(1.0, abs=1e-3)
    # Distances that do not match the recordings are refused before anything is read.
    assert main(["calibrate", "depth", "--recording", "a.db3", "--distance", "0.5",
                 "--distance", "0.6", "--out", str(tmp_path / "x.yaml")]) == 2
    assert "1 recordings but 2 distances" in capsys.readouterr().err


def test_cli_depth_flow_with_the_board_as_reference(tmp_path, capsys):
    """The board's pose from the colour image is the reference: colour rendered with known
    intrinsics, depth the exact board plane stretched by 1 %, so the bias is 1 % of depth."""
    pytest.importorskip("pyrealsense2")
    from calibration import CharucoBoardSpec, IntrinsicsCalibration
    from drivers.camera import Intrinsics, record_frames
    from onboard.cli import main

    from .synth import BoardRenderer, board_poses

    W, H = 640, 480
    intr = Intrinsics(W, H, 600.0, 600.0, 319.5, 239.5)
    save_calibration(IntrinsicsCalibration(intr, 0.1, (), ()), tmp_path / "intr.yaml")
    spec = CharucoBoardSpec(9, 6, 0.025, 0.018)
    renderer = BoardRenderer(intr.K, np.zeros(5), W, H)
    x, y = np.meshgrid((np.arange(W) - 319.5) / 600.0, (np.arange(H) - 239.5) / 600.0)
    rays = np.stack([x, y, np.ones((H, W))], axis=-1)
    args = ["calibrate", "depth", "--board-reference", "--intrinsics", str(tmp_path / "intr.yaml"),
            "--squares", "9x6", "--square", "0.025", "--marker", "0.018"]
    for k, T in enumerate(board_poses(spec, 2, seed=4, distance_m=(0.4, 0.8), tilt_deg=20)):
        n, p0 = T[:3, 2], T[:3, 3]
        depth = (n @ p0) / (rays @ n) * 1.01          # z of the board plane along each ray
        frame = RGBDFrame(renderer.render(spec, T, seed=k), depth.astype(np.float32), intr)
        record_frames([frame, frame], tmp_path / f"b{k}.db3")
        args += ["--recording", str(tmp_path / f"b{k}.db3")]
    assert main([*args, "--frames", "2", "--out", str(tmp_path / "d.yaml")]) == 0
    cal = load_depth_correction(tmp_path / "d.yaml")
    # one sample per recording, each at its board's own distance
    assert len(cal.samples) == 2
    assert all(0.35 < s.reference_m < 0.9 for s in cal.samples)
    assert cal.samples[0].reference_m < cal.samples[1].reference_m
    for s in cal.samples:
        assert s.bias_m == pytest.approx(0.01 * s.reference_m, abs=1e-3)
    assert cal.scale == pytest.approx(1 / 1.01, abs=2e-3)
