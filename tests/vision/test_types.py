"""ObjectMask and Silhouette: validation, and the pixel/angle <-> gripper pose mapping."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scoring import GripperProjection
from vision import ObjectMask, Silhouette


def random_pose(rng: np.random.Generator) -> np.ndarray:
    """A random rigid transform (rotation from a normalised quaternion, translation < 1 m)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = rng.uniform(-1, 1, 3)
    return T


def make_silhouette(T=None, m=0.001, shape=(50, 80)) -> Silhouette:
    """An empty silhouette on plane pose T (default: identity)."""
    img = np.zeros(shape, bool)
    return Silhouette(image=img, target=img.copy(), metres_per_px=m,
                      T_base_plane=np.eye(4) if T is None else T, grasp_height_m=0.0,
                      insertion_depth_m=0.02)


def test_object_mask_keeps_its_fields_and_counts_pixels():
    mask = np.zeros((4, 5), bool)
    mask[1:3, 2:4] = True
    om = ObjectMask(mask=mask, label="can", confidence=0.75, backend="tabletop")
    assert (om.label, om.confidence, om.backend, om.area_px) == ("can", 0.75, "tabletop", 4)
    assert isinstance(om.confidence, float)


@pytest.mark.parametrize("kwargs,message", [
    (dict(mask=np.zeros((4, 4), np.uint8)), r"ObjectMask.mask must have dtype bool, got uint8"),
    (dict(mask=np.zeros(4, bool)), r"ObjectMask.mask must be a 2-D array, got shape \(4,\)"),
    (dict(mask=[[True]]), r"ObjectMask.mask must be a numpy array, got list"),
    (dict(confidence=1.5), r"confidence must be in \[0, 1\], got 1.5"),
    (dict(confidence=float("nan")), r"confidence must be in \[0, 1\], got nan"),
])
def test_bad_object_mask_is_named(kwargs, message):
    args = dict(mask=np.zeros((4, 4), bool), label=None, confidence=0.5, backend="x") | kwargs
    with pytest.raises(ValueError, match=message):
        ObjectMask(**args)


@pytest.mark.parametrize("kwargs,message", [
    (dict(metres_per_px=0.0), r"metres_per_px must be finite and > 0, got 0.0"),
    (dict(T_base_plane=np.eye(3)), r"T_base_plane must be a finite 4 x 4 array, got shape \(3, 3\)"),
    (dict(T_base_plane=np.diag([1.0, 1.0, -1.0, 1.0])), r"T_base_plane must be a rigid transform"),
    (dict(T_base_plane=np.diag([2.0, 1.0, 1.0, 1.0])), r"rotation error 3.00e\+00"),
    (dict(target=np.zeros((3, 3), bool)), r"Silhouette.target must have shape \(5, 6\), got \(3, 3\)"),
    (dict(image=np.zeros((5, 6), np.float32)), r"Silhouette.image must have dtype bool, got float32"),
])
def test_bad_silhouette_is_named(kwargs, message):
    args = dict(image=np.zeros((5, 6), bool), target=np.zeros((5, 6), bool), metres_per_px=0.001,
                T_base_plane=np.eye(4), grasp_height_m=0.0, insertion_depth_m=0.0) | kwargs
    with pytest.raises(ValueError, match=message):
        Silhouette(**args)


def test_pixel_centres_map_to_the_plane_grid():
    T = np.eye(4)
    T[:3, 3] = (0.1, 0.2, 0.3)
    sil = make_silhouette(T, m=0.002)
    p = sil.points_m([0, 10, 0], [0, 0, 5])
    np.testing.assert_allclose(p, [[0.1, 0.2, 0.3], [0.12, 0.2, 0.3], [0.1, 0.21, 0.3]])


def test_tcp_axes_follow_the_closing_direction_and_approach():
    # A plane looking straight down (z = -base z), image x along base x, y along -base y.
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    sil = make_silhouette(T)
    pose = sil.tcp_pose(20, 10, math.pi / 2, tcp_to_tip_m=0.1)
    # θ = 90°: closing along the image's +y = base -y; z down; TCP 10 cm above the tips.
    np.testing.assert_allclose(pose[:3, 0], [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(pose[:3, 2], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(pose[:3, 1], np.cross(pose[:3, 2], pose[:3, 0]), atol=1e-12)
    np.testing.assert_allclose(pose[:3, 3], [0.02, -0.01, 0.1], atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), x=st.floats(-50, 500), y=st.floats(-50, 500),
       theta=st.floats(0, 2 * math.pi, exclude_max=True), m=st.floats(1e-4, 0.01),
       offset=st.floats(-0.2, 0.2))
def test_pixel_angle_to_pose_and_back_is_identity(seed, x, y, theta, m, offset):
    sil = make_silhouette(random_pose(np.random.default_rng(seed)), m=m)
    pose = sil.tcp_pose(x, y, theta, tcp_to_tip_m=offset)
    assert np.allclose(pose[:3, :3].T @ pose[:3, :3], np.eye(3), atol=1e-9)
    assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)
    np.testing.assert_allclose(pose[:3, 2], sil.approach, atol=1e-12)
    x2, y2, t2 = sil.grasp_of(pose)  # any TCP depth along the approach maps to the same pixel
    assert x2 == pytest.approx(x, abs=1e-6 * max(1.0, 1.0 / m))
    assert y2 == pytest.approx(y, abs=1e-6 * max(1.0, 1.0 / m))
    assert math.cos(t2 - theta) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), x=st.floats(0, 300), y=st.floats(0, 300),
       theta=st.floats(0, math.pi), r=st.floats(5, 100))
def test_fingers_of_a_pose_project_back_onto_the_grasp_line(seed, x, y, theta, r):
    """The fingertips ±r/2 along the TCP's x axis land on the image line through (x, y) at θ."""
    m = 0.001
    sil = make_silhouette(random_pose(np.random.default_rng(seed)), m=m)
    pose = sil.tcp_pose(x, y, theta)
    R, o = sil.T_base_plane[:3, :3], sil.T_base_plane[:3, 3]
    for side in (-1, 1):
        tip = pose[:3, 3] + side * (r / 2) * m * pose[:3, 0]
        q = R.T @ (tip - o) / m
        np.testing.assert_allclose(q[:2], [x + side * r / 2 * math.cos(theta),
                                           y + side * r / 2 * math.sin(theta)], atol=1e-6)
        assert abs(q[2]) < 1e-6


def test_grasp_of_rejects_a_tilted_tcp():
    sil = make_silhouette()
    pose = sil.tcp_pose(3, 4, 0.3)
    c, s = math.cos(0.1), math.sin(0.1)
    pose[:3, :3] = pose[:3, :3] @ np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    with pytest.raises(ValueError, match=r"z axis must be the silhouette's approach, got 5.73 deg"):
        sil.grasp_of(pose)


def test_gripper_projection_is_in_image_pixels():
    sil = make_silhouette(m=0.0005)
    proj = sil.gripper_projection(0.013, 0.085)
    assert proj == GripperProjection(finger_width_px=26.0, open_width_px=170.0, n_lines=26)
    assert sil.gripper_projection(0.013, 0.085, n_lines=5).n_lines == 5
    with pytest.raises(ValueError, match=r"open_width_m must be finite and > 0, got -0.1"):
        sil.gripper_projection(0.013, -0.1)


def test_non_finite_grasp_coordinates_are_rejected():
    with pytest.raises(ValueError, match=r"x_px, y_px and theta must be finite"):
        make_silhouette().tcp_poses([1.0, np.nan], [1.0, 2.0], [0.0, 0.0])
