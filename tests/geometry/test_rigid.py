"""geometry: rigid transforms, rotation angles, rotation vectors, quaternions, approach frames."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry import (frame_from_approach, invert, matrix_to_quat, matrix_to_rotvec, pose,
                      pose_difference, pose_from_rvec, quat_to_matrix, rotation_angle,
                      rotvec_to_matrix, tangent_basis, transform_points)

unit = st.floats(-1.0, 1.0, allow_nan=False)
angles = st.floats(-math.pi, math.pi, allow_nan=False)


def _vector(v):
    v = np.asarray(v, np.float64)
    return v if np.linalg.norm(v) > 1e-3 else np.array([0.0, 0.0, 1.0])


@settings(max_examples=100, deadline=None)
@given(st.tuples(unit, unit, unit), angles, st.tuples(unit, unit, unit))
def test_frame_from_approach_is_a_rotation_with_z_along_the_approach(a, roll, p):
    a = _vector(a)
    R = frame_from_approach(a, roll)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)
    np.testing.assert_allclose(R[:, 2], a / np.linalg.norm(a), atol=1e-12)
    T = pose(R, p)
    np.testing.assert_allclose(invert(T) @ T, np.eye(4), atol=1e-12)
    # quaternions round-trip; rolling by delta rotates the frame by |delta| about z
    np.testing.assert_allclose(quat_to_matrix(matrix_to_quat(R)), R, atol=1e-9)
    R2 = frame_from_approach(a, roll + 0.3)
    assert rotation_angle(R.T @ R2) == pytest.approx(0.3, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.tuples(unit, unit, unit), st.floats(0.0, math.pi))
def test_rotation_angle_reads_back_the_angle(axis, angle):
    axis = _vector(axis)
    axis /= np.linalg.norm(axis)
    q = np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])
    assert rotation_angle(quat_to_matrix(q)) == pytest.approx(angle, abs=1e-7)


def test_frame_from_approach_rejects_a_zero_vector():
    with pytest.raises(ValueError, match="approach must be a non-zero 3-vector"):
        frame_from_approach([0.0, 0.0, 0.0], 0.0)


@settings(max_examples=200, deadline=None)
@given(st.tuples(unit, unit, unit), st.floats(0.0, math.pi - 1e-6))
def test_rotation_vector_round_trips_and_matches_opencv(axis, angle):
    cv2 = pytest.importorskip("cv2")
    axis = _vector(axis)
    r = axis / np.linalg.norm(axis) * angle
    R = rotvec_to_matrix(r)
    np.testing.assert_allclose(R, cv2.Rodrigues(r.reshape(3, 1))[0], atol=1e-12)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    back = matrix_to_rotvec(R)
    # near pi the axis sign is free: compare the rotations, and the angle
    np.testing.assert_allclose(rotvec_to_matrix(back), R, atol=1e-9)
    assert np.linalg.norm(back) == pytest.approx(angle, abs=1e-9)


def test_rotation_vector_keeps_its_axis_at_half_a_turn():
    R = rotvec_to_matrix([0.0, math.pi, 0.0])
    np.testing.assert_allclose(np.abs(matrix_to_rotvec(R)), [0.0, math.pi, 0.0], atol=1e-12)


def test_rotation_angle_keeps_its_digits_for_tiny_rotations():
    # the acos of the trace reads 1e-8 rad as 0 (or 1.5e-8): atan2 keeps it
    R = rotvec_to_matrix([1e-8, 0.0, 0.0])
    assert rotation_angle(R) == pytest.approx(1e-8, rel=1e-6)


@settings(max_examples=100, deadline=None)
@given(st.tuples(unit, unit, unit, unit))
def test_quaternion_orders_name_the_same_rotation(q):
    q = np.asarray(q, np.float64)
    if np.linalg.norm(q) < 1e-3:
        q = np.array([1.0, 0.0, 0.0, 0.0])
    R = quat_to_matrix(q)
    np.testing.assert_allclose(quat_to_matrix(q[[1, 2, 3, 0]], scalar_first=False), R, atol=1e-12)
    xyzw = matrix_to_quat(R, scalar_first=False)
    assert xyzw[3] >= 0.0
    np.testing.assert_allclose(xyzw, matrix_to_quat(R)[[1, 2, 3, 0]], atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.tuples(unit, unit, unit), st.floats(0.0, 3.0), st.tuples(unit, unit, unit))
def test_transform_points_and_pose_difference_agree_with_the_matrix(axis, angle, t):
    axis = _vector(axis)
    T = pose_from_rvec(axis / np.linalg.norm(axis) * angle, t)
    pts = np.array([[0.1, -0.2, 0.3], [0.0, 0.0, 0.0]])
    homogeneous = (T @ np.c_[pts, np.ones(2)].T).T[:, :3]
    np.testing.assert_allclose(transform_points(T, pts), homogeneous, atol=1e-12)
    np.testing.assert_allclose(transform_points(invert(T), transform_points(T, pts)), pts,
                               atol=1e-12)
    dist, ang = pose_difference(T, np.eye(4))
    assert dist == pytest.approx(np.linalg.norm(t), abs=1e-12)
    assert ang == pytest.approx(angle, abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(st.tuples(unit, unit, unit))
def test_tangent_basis_is_right_handed_and_orthonormal(n):
    n = _vector(n)
    n = (n / np.linalg.norm(n))[None, :]
    t1, t2 = tangent_basis(n)
    B = np.stack([t1[0], t2[0], n[0]], axis=1)
    np.testing.assert_allclose(B.T @ B, np.eye(3), atol=1e-12)
    assert np.linalg.det(B) == pytest.approx(1.0)
