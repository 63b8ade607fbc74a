"""The shared argument checkers: a positive number, a rotation, a pose; their messages name the
argument and the value, rigid transforms pass and anything else is refused."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import check_pose, check_positive, check_rotation


@pytest.mark.parametrize("value, kw, needle", [
    (0.0, {}, r"^width_m must be finite and > 0, got 0.0$"),
    (-1, {"where": "Thing"}, r"^Thing: width_m must be finite and > 0, got -1$"),
    (float("nan"), {}, r"width_m must be finite and > 0, got nan"),
    (math.inf, {"allow_zero": True}, r"width_m must be finite and >= 0, got inf"),
    ("5", {}, r"^width_m must be a number, got '5'$"),
    (True, {}, r"width_m must be a number, got True"),
    (float("nan"), {"allow_inf": True}, r"width_m must be a number and > 0, got nan"),
    (-math.inf, {"allow_inf": True}, r"width_m must be a number and > 0, got -inf"),
    (True, {"allow_inf": True}, r"width_m must be a number, got True"),
])
def test_check_positive_names_the_argument_and_value(value, kw, needle):
    with pytest.raises(ValueError, match=needle):
        check_positive(value, "width_m", **kw)


def test_check_positive_returns_a_float_and_allows_zero_only_when_asked():
    assert check_positive(np.int64(3), "n") == 3.0 and type(check_positive(2, "n")) is float
    assert check_positive(0, "gap_m", allow_zero=True) == 0.0
    assert check_positive(math.inf, "length_m", allow_inf=True) == math.inf


@st.composite
def rotations(draw):
    """A rotation from a normalised random quaternion."""
    q = np.array(draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4)))
    if np.linalg.norm(q) < 1e-3:
        q = np.array([1.0, 0.0, 0.0, 0.0])
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


@settings(max_examples=50, deadline=None)
@given(rotations(), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_rotations_and_rigid_transforms_pass_unchanged(R, p):
    np.testing.assert_array_equal(check_rotation(R, "R"), R)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    np.testing.assert_array_equal(check_pose(T, "T_a_b"), T)


@settings(max_examples=50, deadline=None)
@given(rotations(), st.sampled_from([np.diag([1.0, 1.0, -1.0]), 1.01 * np.eye(3),
                                     np.array([[1.0, 0.01, 0], [0, 1, 0], [0, 0, 1]])]))
def test_reflections_and_non_orthonormal_bases_are_refused(R, bad):
    with pytest.raises(ValueError, match=r"R_table_object must be a \(3, 3\) rotation matrix"):
        check_rotation(R @ bad, "R_table_object")
    T = np.eye(4)
    T[:3, :3] = R @ bad
    with pytest.raises(ValueError, match=r"T_base_tcp must be a rigid transform"):
        check_pose(T, "T_base_tcp")


def test_pose_shape_and_last_row_are_checked():
    with pytest.raises(ValueError, match=r"T_object_hand must be a finite 4 x 4 array, got shape \(3, 3\)"):
        check_pose(np.eye(3), "T_object_hand")
    T = np.eye(4)
    T[0, 3] = np.nan
    with pytest.raises(ValueError, match="must be a finite 4 x 4 array"):
        check_pose(T, "T")
    T = np.eye(4)
    T[3, 0] = 0.5
    with pytest.raises(ValueError, match="last row 0 0 0 1"):
        check_pose(T, "T")
