"""Hand-eye from synthetic poses with noise, in both setups; degenerate pose sets warned; robot
poses read from CSV (rotation vector or quaternion)."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration import (CalibrationError, DegeneratePosesWarning, calibrate_hand_eye,
                         parse_robot_pose, pose_set_warnings, read_robot_poses)
from geometry import invert, pose_difference, pose_from_rvec, rotvec_to_matrix

T_TCP_CAMERA = pose_from_rvec([0.05, -0.08, 1.55], [0.032, -0.061, 0.045])
T_BASE_BOARD = pose_from_rvec([math.pi, 0.0, 0.2], [0.55, 0.05, 0.0])
T_BASE_CAMERA = pose_from_rvec([2.4, 0.6, -0.3], [1.1, -0.3, 0.8])
T_TCP_BOARD = pose_from_rvec([0.0, 0.0, 0.3], [0.0, 0.0, 0.06])


def _robot_poses(n: int, rng, *, tilt_deg: float = 30.0, axis=None) -> list[np.ndarray]:
    """Flange poses around a home pose above the table, tilted up to tilt_deg."""
    home = pose_from_rvec([math.pi, 0, 0], [0.5, 0.0, 0.45])
    out = []
    for _ in range(n):
        ax = rng.normal(size=3) if axis is None else np.asarray(axis, float)
        ax /= np.linalg.norm(ax)
        out.append(home @ pose_from_rvec(ax * math.radians(rng.uniform(-tilt_deg, tilt_deg)),
                                         rng.uniform(-0.08, 0.08, 3)))
    return out


def _noisy(T: np.ndarray, rng, t_m: float, r_deg: float) -> np.ndarray:
    return T @ pose_from_rvec(rng.normal(0, math.radians(r_deg), 3), rng.normal(0, t_m, 3))


def _pairs(setup: str, n: int, seed: int, t_noise=0.0003, r_noise=0.05):
    """Robot poses and board poses with noise on both: Gaussian per axis, the robot's
    0.2 mm / 0.02 deg, the board's (as solvePnP gives it on a 20 cm board) t_noise metres and
    r_noise degrees."""
    rng = np.random.default_rng(seed)
    robot = _robot_poses(n, rng)
    if setup == "eye_in_hand":
        board = [invert(T_TCP_CAMERA) @ invert(A) @ T_BASE_BOARD for A in robot]
    else:
        board = [invert(T_BASE_CAMERA) @ A @ T_TCP_BOARD for A in robot]
    return ([_noisy(A, rng, 0.0002, 0.02) for A in robot],
            [_noisy(B, rng, t_noise, r_noise) for B in board])


@pytest.mark.parametrize("setup,truth", [("eye_in_hand", T_TCP_CAMERA),
                                         ("eye_to_hand", T_BASE_CAMERA)])
def test_hand_eye_recovers_the_camera_within_2_mm_and_half_a_degree(setup, truth):
    robot, board = _pairs(setup, 25, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneratePosesWarning)   # a good set warns nothing
        cal = calibrate_hand_eye(robot, board, setup=setup)
    dt, dr = pose_difference(cal.T, truth)
    assert dt < 0.002 and math.degrees(dr) < 0.5
    # Residuals reflect the noise put in, not zero.
    assert 0.0002 < cal.rms_translation_m < 0.003
    assert cal.method == "refined" and [m.method for m in cal.methods][-1] == "refined"
    assert len(cal.methods) == 8 and cal.method_spread_m < 0.004
    fixed = T_BASE_BOARD if setup == "eye_in_hand" else T_TCP_BOARD
    assert pose_difference(cal.T_fixed, fixed)[0] < 0.002


def test_the_setups_expose_their_own_transform_only():
    robot, board = _pairs("eye_to_hand", 10, seed=2)
    cal = calibrate_hand_eye(robot, board, setup="eye_to_hand")
    assert np.array_equal(cal.T_base_camera, cal.T)
    with pytest.raises(AttributeError, match="eye-to-hand calibration"):
        cal.T_tcp_camera


def test_rotations_about_one_axis_only_are_warned_as_degenerate():
    rng = np.random.default_rng(3)
    robot = _robot_poses(12, rng, axis=[0, 0, 1])
    board = [invert(T_TCP_CAMERA) @ invert(A) @ T_BASE_BOARD for A in robot]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegeneratePosesWarning)
        calibrate_hand_eye(robot, board)
    notes = [str(w.message) for w in caught if w.category is DegeneratePosesWarning]
    # Also some methods fail or disagree on such a set; the cause is named among them.
    # The axis named is the flange's z, either sign.
    assert any(re.search(r"nearly all about one axis \(\[-?0\.0, -?0\.0, -?1\.0\]", n)
               for n in notes), notes


def test_few_poses_and_little_rotation_are_warned():
    rng = np.random.default_rng(4)
    notes = pose_set_warnings(_robot_poses(4, rng, tilt_deg=3.0))
    assert any("only 4 poses" in n for n in notes)
    assert any("rotates at most" in n for n in notes)
    assert pose_set_warnings(_robot_poses(12, rng)) == []


def test_too_few_or_mismatched_pairs_are_refused():
    rng = np.random.default_rng(5)
    robot = _robot_poses(3, rng)
    with pytest.raises(CalibrationError, match="3 robot poses and 2 board poses"):
        calibrate_hand_eye(robot, robot[:2])
    with pytest.raises(CalibrationError, match="at least 3 pose pairs, got 2"):
        calibrate_hand_eye(robot[:2], robot[:2])
    with pytest.raises(ValueError, match=r"robot pose 1 \(T_base_tcp\) must be a rigid "
                                         r"transform"):
        calibrate_hand_eye([robot[0], 2 * robot[1], robot[2]], robot)


def test_methods_that_disagree_are_warned():
    robot, board = _pairs("eye_in_hand", 8, seed=6, t_noise=0.02, r_noise=3.0)
    with pytest.warns(DegeneratePosesWarning, match="methods disagree"):
        calibrate_hand_eye(robot, board)


def _csv(rows, header):
    return header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"


@settings(max_examples=40, deadline=None)
@given(rv=st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
       t=st.lists(st.floats(-2.0, 2.0), min_size=3, max_size=3))
def test_robot_poses_read_the_same_as_rotation_vector_or_quaternion(tmp_path_factory, rv, t):
    folder = tmp_path_factory.mktemp("poses")
    R = rotvec_to_matrix(rv)
    angle = np.linalg.norm(rv)
    axis = np.asarray(rv) / angle if angle > 0 else np.array([1.0, 0, 0])
    q = [*(axis * math.sin(angle / 2)), math.cos(angle / 2)]
    a = folder / "a.csv"
    a.write_text(_csv([["v0.png", *t, *rv]], "image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad"))
    b = folder / "b.csv"
    b.write_text(_csv([["v0.png", *t, *q]], "image,x_m,y_m,z_m,qx,qy,qz,qw"))
    pa, pb = read_robot_poses(a)[0], read_robot_poses(b)[0]
    assert pa.image == "v0.png"
    np.testing.assert_allclose(pa.T_base_tcp, pb.T_base_tcp, atol=1e-9)
    np.testing.assert_allclose(pa.T_base_tcp[:3, :3], R, atol=1e-12)
    np.testing.assert_allclose(pa.T_base_tcp[:3, 3], t)


def test_bad_pose_files_name_the_line_and_column(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text(_csv([["a.png", 0.1, 0.2, 0.3, 0, 0, 0], ["b.png", 0.1, "x", 0.3, 0, 0, 0]],
                      "image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad"))
    with pytest.raises(CalibrationError, match=r"p.csv, line 3: column y_m must be a number, "
                                               r"got 'x'"):
        read_robot_poses(p)
    p.write_text(_csv([["a.png", 0.1, 0.2, 0.3]], "image,x_m,y_m,z_m"))
    with pytest.raises(CalibrationError, match=r"header lacks column\(s\) rx_rad, ry_rad, "
                                               r"rz_rad"):
        read_robot_poses(p)
    p.write_text(_csv([["a.png", 0, 0, 0, 0, 0, 0, 2]], "image,x_m,y_m,z_m,qx,qy,qz,qw"))
    with pytest.raises(CalibrationError, match="not unit length"):
        read_robot_poses(p)


def test_a_typed_pose_is_the_pose_the_poses_file_gives_for_the_same_numbers(tmp_path):
    typed = "0.512, -0.104 0.433 3.1 0.2 -0.05"      # commas or spaces, as a pendant shows it
    p = tmp_path / "p.csv"
    p.write_text(_csv([["a.png", 0.512, -0.104, 0.433, 3.1, 0.2, -0.05]],
                      "image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad"))
    T = parse_robot_pose(typed)
    assert T.shape == (4, 4) and T.dtype == np.float64
    np.testing.assert_array_equal(T, read_robot_poses(p)[0].T_base_tcp)
    np.testing.assert_array_equal(T[:3, 3], [0.512, -0.104, 0.433])
    np.testing.assert_allclose(T[:3, :3], rotvec_to_matrix([3.1, 0.2, -0.05]), atol=0)


@pytest.mark.parametrize("text, why", [("0.5 0.1 oops", "not six numbers"),
                                       ("0.5 0.1 0.2 0 0", "5 numbers, need six"),
                                       ("0.5 0.1 0.2 0 0 0 1", "7 numbers, need six"),
                                       ("0.5 0.1 nan 0 0 0", "finite"),
                                       ("", "0 numbers")])
def test_a_typed_pose_that_is_not_six_finite_numbers_is_refused_saying_why(text, why):
    with pytest.raises(CalibrationError, match=why):
        parse_robot_pose(text)


def test_refinement_from_a_start_5_mm_and_1_degree_off_reaches_the_same_optimum():
    from calibration import hand_eye_residuals, refine

    robot, board = _pairs("eye_in_hand", 15, seed=8, t_noise=0.0005, r_noise=0.1)
    X0 = calibrate_hand_eye(robot, board, methods=("park",), refined=False).T
    Z0 = hand_eye_residuals("eye_in_hand", robot, board, X0)[2]
    X, Z = refine("eye_in_hand", robot, board, X0, Z0)
    off = pose_from_rvec([0, math.radians(1.0), 0], [0.005, 0, 0])
    X2, Z2 = refine("eye_in_hand", robot, board, X0 @ off, Z0 @ off)
    assert pose_difference(X2, X)[0] < 1e-6 and pose_difference(X2, X)[1] < 1e-6
    assert pose_difference(Z2, Z)[0] < 1e-6
    # ... and the optimum is not the start.
    assert pose_difference(X, X0)[0] > 1e-5
