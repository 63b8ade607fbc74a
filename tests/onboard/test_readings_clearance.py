"""The fingers' room beside an object's readings (onboard/loop/_readings_clearance.py): how far
the nearer open finger lies from the outline it meets, and the score factor it gives."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.camera import Intrinsics, RGBDFrame
from onboard.loop import camera_pixel_m, clearance_factor, finger_room_px, scale_by_room
from scoring import GripperProjection, Scores
from vision import ObjectMask


def _one(x: float, y: float, theta: float, half_w: float, shift: float) -> Scores:
    """Scores of one candidate at (x, y) closing along theta whose contacts' pixels lie
    half_w either side of a point shift along the closing direction from the centre."""
    sc = Scores.empty(1)
    u = np.array([math.cos(theta), math.sin(theta)])
    mid = np.array([x, y]) + shift * u
    sc.contact_left[0] = mid - half_w * u
    sc.contact_right[0] = mid + half_w * u
    sc.score[0] = 0.9
    return sc


@settings(max_examples=60, deadline=None)
@given(theta=st.floats(0.0, math.pi), half_w=st.floats(5.0, 40.0),
       shift=st.floats(-3.0, 3.0), x=st.floats(50.0, 150.0), y=st.floats(50.0, 150.0))
def test_the_nearer_finger_s_room_is_the_opening_less_the_section_and_the_offset(
        theta, half_w, shift, x, y):
    proj = GripperProjection(finger_width_px=20.0, open_width_px=85.0, n_lines=5)
    sc = _one(x, y, theta, half_w, shift)
    room = finger_room_px(sc, np.array([x]), np.array([y]), np.array([theta]), proj)[0]
    # the contacts' pixels are half a pixel inside the outline the finger meets
    assert room == pytest.approx(42.5 - half_w - abs(shift) - 0.5, abs=1e-3)


def test_a_finger_a_camera_pixel_or_more_from_the_readings_keeps_its_score():
    f = clearance_factor(np.array([0.0, 0.0005, 0.0015, 0.003, -0.001, math.nan]), 0.0015)
    assert f == pytest.approx([0.0, 1 / 3, 1.0, 1.0, 0.0, 1.0])
    # a pixel not known (no reading) leaves the scores as they were
    assert clearance_factor(np.array([0.0005]), math.nan) == pytest.approx([1.0])


def test_scaling_by_the_room_scales_the_scores_in_place_and_returns_the_room_in_metres():
    proj = GripperProjection(finger_width_px=20.0, open_width_px=85.0, n_lines=5)
    sc = _one(100.0, 100.0, 0.3, 41.0, 0.0)  # room 42.5 - 41 - 0.5 = 1 px
    room = scale_by_room(sc, np.array([100.0]), np.array([100.0]), np.array([0.3]), proj,
                         0.001, 0.002)
    assert room == pytest.approx([0.001])
    assert sc.score[0] == pytest.approx(0.45)


def test_a_camera_pixel_at_the_object_is_its_readings_depth_over_the_focal_length():
    k = Intrinsics(64, 48, 300.0, 300.0, 32.0, 24.0)
    depth = np.full((48, 64), 0.7, np.float32)
    depth[10:20, 10:20] = 0.6
    depth[10, 10] = 0.0  # a hole in the mask reads nothing
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    frame = RGBDFrame(np.zeros((48, 64, 3), np.uint8), depth, k, np.eye(4), seq=0)
    om = ObjectMask(mask, "box", 1.0, "test")
    assert camera_pixel_m(frame, om) == pytest.approx(0.6 / 300.0)
    assert math.isnan(camera_pixel_m(frame, ObjectMask(np.zeros((48, 64), bool), "box", 1.0, "test")))
