"""SimCamera: ray-cast depth, colour and instance ids, and the D400-like noise model."""
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mujoco")

from drivers.camera import DepthNoise, Intrinsics, SimCamera, intrinsics_from_fov, look_at  # noqa: E402
from offline_sim.objects import ObjectSpec, build_tabletop_scene  # noqa: E402

# librealsense is not safe in two processes at once (an xdist worker crashed when two test
# files played recordings side by side): `make test` runs these files in a process of their own
pytestmark = pytest.mark.realsense


BOX = ObjectSpec("box", "box", (0.06, 0.04, 0.10), rgba=(0.2, 0.8, 0.2, 1.0),
                 place=(0.05, -0.03, 0.4))


def top_down(height_above_table=0.6, intr=None, noise=False, seed=0, objects=(BOX,)):
    scene = build_tabletop_scene(list(objects), seed=3)
    eye = [0.0, 0.0, scene.table_height_m + height_above_table]
    T = look_at(eye, [0.0, 0.0, scene.table_height_m], up=(0, 1, 0))
    cam = scene.camera(intr or intrinsics_from_fov(320, 240), T, noise=noise, seed=seed)
    return scene, cam


def test_straight_down_depth_is_exact_without_noise():
    scene, cam = top_down()
    frame = cam.read()
    box_pix = frame.instance_ids == 1
    assert box_pix.sum() > 200
    # box top at 0.6 - 0.10 m from the camera (its sides, seen in perspective, lie deeper)
    top = np.abs(frame.depth_m[box_pix] - 0.5) < 1e-5
    assert top.mean() > 0.7 and frame.depth_m[box_pix].min() == pytest.approx(0.5, abs=1e-5)
    table = (frame.instance_ids == 0) & (frame.depth_m > 0)
    np.testing.assert_allclose(np.median(frame.depth_m[table]), 0.6, atol=1e-5)


def test_box_appears_where_its_pose_projects():
    intr = Intrinsics(300, 200, 250.0, 260.0, 140.0, 95.0)  # off-centre, non-square pixels
    scene, cam = top_down(intr=intr)
    frame = cam.read()
    centre_world = scene.poses[0][:3, 3] + [0, 0, 0.05]  # centre of the box top
    T_cw = np.linalg.inv(cam.T_world_camera)
    p_cam = T_cw[:3, :3] @ centre_world + T_cw[:3, 3]
    u, v = intr.project(p_cam[None])[0]
    rows, cols = np.nonzero(frame.instance_ids == 1)
    assert cols.min() < u < cols.max() and rows.min() < v < rows.max()
    assert frame.instance_ids[int(round(v)), int(round(u))] == 1
    # deprojecting the box pixels gives points on the box top, in the world
    on_top = (frame.instance_ids == 1) & (np.abs(frame.depth_m - frame.depth_m[frame.instance_ids == 1].min()) < 1e-4)
    pts = intr.deproject(frame.depth_m)[on_top]
    world = pts @ cam.T_world_camera[:3, :3].T + cam.T_world_camera[:3, 3]
    np.testing.assert_allclose(world[:, 2], scene.table_height_m + 0.10, atol=1e-4)


def test_frame_metadata_follows_the_simulation():
    scene, cam = top_down()
    scene.data.time = 1.25
    first, second = cam.read(), cam.read()
    assert (first.seq, second.seq) == (1, 2)
    assert second.stamp_s == 1.25
    np.testing.assert_array_equal(first.T_base_camera, cam.T_world_camera)
    assert first.color.dtype == np.uint8 and first.color.shape == (240, 320, 3)
    # the green box is green in the image
    r, g, b = first.color[first.instance_ids == 1].mean(axis=0)
    assert g > 1.5 * r and g > 1.5 * b


def test_noise_grows_with_distance_squared():
    stds = []
    for h in (0.5, 1.0):
        exact = top_down(height_above_table=h, noise=False, objects=())[1].read().depth_m
        scene, cam = top_down(height_above_table=h, noise=True, objects=())
        d = np.stack([cam.read().depth_m for _ in range(3)])
        table = (d > 0).all(axis=0) & (np.abs(exact - h) < 0.05)
        stds.append(np.std(d[:, table] - exact[table]))
    ratio = stds[1] / stds[0]
    assert 3.0 < ratio < 5.5  # (1.0 / 0.5)^2 = 4
    sigma_1m = 1.0 ** 2 * DepthNoise().subpixel_px / (intrinsics_from_fov(320, 240).fx * 0.05)
    assert stds[1] == pytest.approx(sigma_1m, rel=0.3)


def test_noisy_depth_is_quantised_and_has_holes_at_edges_only_where_expected():
    scene, cam = top_down(noise=True)
    frame = cam.read()
    d = frame.depth_m[frame.depth_m > 0]
    np.testing.assert_allclose(d * 1000, np.round(d * 1000), atol=1e-3)  # 1 mm steps
    holes = frame.depth_m == 0
    exact = top_down(noise=False)[1].read().depth_m
    step = np.zeros_like(holes)
    step[:, 1:] |= np.abs(np.diff(exact, axis=1)) > 0.02
    step[1:, :] |= np.abs(np.diff(exact, axis=0)) > 0.02
    near_edges = np.zeros_like(holes)
    for dr in range(-3, 4):
        for dc in range(-3, 4):
            near_edges |= np.roll(np.roll(step, dr, 0), dc, 1)
    assert holes[near_edges].mean() > 0.3
    assert holes[~near_edges].mean() < 0.01


def test_same_seed_same_noise():
    a = top_down(noise=True, seed=5)[1].read().depth_m
    b = top_down(noise=True, seed=5)[1].read().depth_m
    c = top_down(noise=True, seed=6)[1].read().depth_m
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bad_pose_and_mapping_are_named():
    scene, _ = top_down()
    with pytest.raises(ValueError, match=r"T_world_camera must be a finite 4 x 4"):
        SimCamera(scene.model, scene.data, intrinsics_from_fov(), np.eye(3))
    with pytest.raises(ValueError, match=r"geom_instance must have one entry per geom"):
        SimCamera(scene.model, scene.data, intrinsics_from_fov(), np.eye(4), geom_instance=[1])
    with pytest.raises(ValueError, match=r"eye .* and target must differ"):
        look_at([0, 0, 1], [0, 0, 1])


def test_camera_lifecycle():
    _, cam = top_down()
    with cam:
        cam.read()
    cam.close()
    with pytest.raises(ValueError, match="closed"):
        cam.read()


vec = st.tuples(*[st.floats(-2, 2, allow_nan=False)] * 3)


@settings(max_examples=60, deadline=None)
@given(vec, vec)
def test_look_at_is_a_rotation_looking_at_the_target(eye, target):
    eye, target = np.array(eye), np.array(target)
    if np.linalg.norm(target - eye) < 1e-3:
        return
    T = look_at(eye, target)
    R = T[:3, :3]
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-9)
    assert np.linalg.det(R) == pytest.approx(1.0)
    forward = (target - eye) / np.linalg.norm(target - eye)
    np.testing.assert_allclose(R[:, 2], forward, atol=1e-9)
    assert R[2, 1] <= 1e-9  # image y (down) never points up in the world


def test_importing_cameras_and_scenes_does_not_load_mujoco():
    code = ("import sys, drivers.camera, offline_sim.objects, offline_sim.hands, "
            "offline_sim.dynamics, offline_sim.quality, offline_sim.kinematic, "
            "offline_sim.database, offline_sim.cell; "
            "print('mujoco' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# librealsense's playback sometimes drops a recording's first frames when the machine is
# loaded (seen 2 times in 24 runs under a load of 8, with the camera code unchanged): the
# frames lost are the library's, so a failure is run again, at most twice
@pytest.mark.flaky(reruns=2)
def test_simcamera_frames_round_trip_through_a_realsense_recording(tmp_path):
    # SimCamera -> software_device + recorder -> .db3 -> the RealSense playback code path
    pytest.importorskip("pyrealsense2")
    import mujoco

    from drivers.camera import RealSenseCamera, record_frames

    scene = build_tabletop_scene(n_objects=4, seed=8)
    intr = Intrinsics(320, 240, 280.0, 281.5, 161.3, 118.7)
    cam = scene.camera(intr, look_at([0.05, -0.35, scene.table_height_m + 0.6],
                                     [0.0, 0.0, scene.table_height_m]), noise=True, seed=2)
    frames = []
    for _ in range(5):  # simulation time advances and each frame draws new sensor noise
        frames.append(cam.read())
        for _ in range(20):
            mujoco.mj_step(scene.model, scene.data)
    path = tmp_path / "sim.db3"
    assert record_frames(frames, path, fps=30, depth_units_m=0.001) == 5
    with RealSenseCamera(recording=path) as playback:
        back = list(playback)
    assert len(back) == 5
    got = back[0].intrinsics
    for name in ("width", "height"):
        assert getattr(got, name) == getattr(intr, name)
    for name in ("fx", "fy", "cx", "cy"):
        assert getattr(got, name) == pytest.approx(getattr(intr, name), rel=1e-6)
    for sent, received in zip(frames, back):
        np.testing.assert_array_equal(received.color, sent.color)
        np.testing.assert_array_equal(received.depth_m == 0, sent.depth_m == 0)
        np.testing.assert_allclose(received.depth_m, sent.depth_m, atol=0.0005 + 1e-6)
    assert not np.array_equal(frames[0].depth_m, frames[-1].depth_m)
