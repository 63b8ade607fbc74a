"""read_stop's geometry on a camera looking straight down at a flat table with one block on it:
what lies under the jaw's fingers and palm at a stop pose, whatever the pose's place and yaw."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.camera import Intrinsics, RGBDFrame
from onboard import GripperConfig
from onboard.loop import read_stop
from onboard.loop import (STOP_ABOVE_TIP_M, STOP_MARGIN_M, HandVolume, jaw_boxes, read_stop_boxes,
                          stop_margin_m)

CAMERA_M = 0.75
W, H, F = 320, 240, 250.0  # 1.8 mm a pixel on the table
GRIPPER = GripperConfig()  # the 2F-85's geometry: 85 mm open, 14 mm finger bodies
BLOCK = (0.10, 0.0, 0.025, 0.03)  # a block's centre x, y, half side and height (m)
TALL = (0.10, 0.0, 0.025, 0.15)  # a tall block: its shadow hides the table beyond it


def _frame(block: tuple[float, float, float, float] = BLOCK) -> RGBDFrame:
    """The table (z = 0) under a camera 0.75 m up looking straight down, with the block."""
    intr = Intrinsics(W, H, F, F, W / 2, H / 2)
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])  # optical z down, x along base x
    T[2, 3] = CAMERA_M
    v, u = np.mgrid[0:H, 0:W]
    bx, by, half, height = block
    top = CAMERA_M - height  # the pixel's ray meets the block's top at this depth
    x, y = (u - W / 2) / F * top, -(v - H / 2) / F * top
    on_block = (np.abs(x - bx) < half) & (np.abs(y - by) < half)
    depth = np.where(on_block, CAMERA_M - height, CAMERA_M).astype(np.float32)
    return RGBDFrame(np.zeros((H, W, 3), np.uint8), depth, intr, T)


FRAME = _frame()
TALL_FRAME = _frame(TALL)


def _stop(x: float, y: float, yaw: float, tip_z: float) -> np.ndarray:
    """A straight-down TCP pose with its fingertips' middle at (x, y, tip_z), yawed."""
    c, s = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = (x, y, tip_z + GRIPPER.tcp_to_tip_m)  # the tips tcp_to_tip_m down its z
    return T


@settings(max_examples=60, deadline=None)
@given(x=st.floats(-0.25, -0.05), y=st.floats(-0.12, 0.12), yaw=st.floats(-math.pi, math.pi),
       tip_z=st.floats(STOP_ABOVE_TIP_M + 0.002, 0.15))
def test_over_the_bare_table_any_stop_reads_unseen_and_its_clearance_is_the_tips_height(
        x, y, yaw, tip_z):
    r = read_stop(FRAME, _stop(x, y, yaw, tip_z), GRIPPER)
    assert r is not None and r.unseen
    assert abs(r.clearance_m - tip_z) < 1e-4


@settings(max_examples=60, deadline=None)
@given(yaw=st.floats(-math.pi, math.pi), side=st.sampled_from([-1.0, 1.0]),
       below=st.floats(-0.02, STOP_ABOVE_TIP_M - 0.001))
def test_a_finger_over_the_block_at_or_under_its_top_reads_seen(yaw, side, below):
    bx, by, _, height = BLOCK
    # the TCP set so that one finger's middle is over the block's middle
    reach = side * (0.5 * GRIPPER.open_width_m + 0.5 * GRIPPER.finger_thickness_m)
    x, y = bx - reach * math.cos(yaw), by - reach * math.sin(yaw)
    r = read_stop(FRAME, _stop(x, y, yaw, height + below), GRIPPER)
    assert r is not None and not r.unseen


@settings(max_examples=60, deadline=None)
@given(gap=st.floats(-0.004, 0.02), dy=st.floats(-0.01, 0.01))
def test_the_grasped_block_counts_only_within_the_margin_of_a_fingers_inner_face(gap, dy):
    bx, by, half, height = BLOCK
    # the right finger's inner face gap metres outside the block's right side, the fingertips
    # 20 mm down its sides: the block lies between the fingers, the grasp's own object
    x = bx + half + gap - 0.5 * GRIPPER.open_width_m
    r = read_stop(FRAME, _stop(x, by + dy, 0.0, height - 0.02), GRIPPER)
    pixel = CAMERA_M / F
    if gap < STOP_MARGIN_M - 2 * pixel:
        assert not r.unseen
    elif gap > STOP_MARGIN_M + 2 * pixel:
        assert r.unseen


@settings(max_examples=60, deadline=None)
@given(rms=st.floats(0.015, 0.03), share=st.floats(0.0, 1.0))
def test_a_hand_eye_residual_widens_the_margin_a_seen_surface_counts_within(rms, share):
    bx, by, half, height = BLOCK
    pixel = CAMERA_M / F  # 3 mm: residuals of several pixels, for room between the margins
    # the block's side between the default margin and the widened one from a finger's face
    gap = STOP_MARGIN_M + 2 * pixel + share * (rms - 4 * pixel)
    x = bx + half + gap - 0.5 * GRIPPER.open_width_m
    T = _stop(x, by, 0.0, height - 0.02)
    assert read_stop(FRAME, T, GRIPPER).unseen
    assert not read_stop(FRAME, T, GRIPPER, stop_margin_m(rms)).unseen


def test_the_jaws_boxes_are_the_database_filters_parallel_jaw_footprints_and_faces():
    centre, half = jaw_boxes(GRIPPER)
    volume = HandVolume.for_hand("parallel")
    lo, hi = centre - half, centre + half
    vlo, vhi = volume.centre - volume.half, volume.centre + volume.half
    order = np.lexsort((lo[:, 0], lo[:, 2]))
    vorder = np.lexsort((vlo[:, 0], vlo[:, 2]))
    np.testing.assert_allclose(lo[order, :2], vlo[vorder, :2], atol=1e-9)
    np.testing.assert_allclose(hi[order], vhi[vorder], atol=1e-9)  # footprints, lower faces


@settings(max_examples=40, deadline=None)
@given(x=st.floats(-0.25, -0.15), y=st.floats(-0.05, 0.05), yaw=st.floats(-math.pi, math.pi),
       lift=st.floats(STOP_ABOVE_TIP_M + 0.002, 0.1))
def test_a_multi_finger_hands_boxes_over_the_bare_table_read_unseen_at_their_lowest_face(
        x, y, yaw, lift):
    volume = HandVolume.for_hand("three_finger")
    lowest = float(np.max(volume.centre[:, 2] + volume.half[:, 2]))  # along the approach
    T = _stop(x, y, yaw, 0.0)
    T[2, 3] = lift + lowest  # the lowest face lift metres over the table
    r = read_stop_boxes(FRAME, T, volume.centre, volume.half)
    assert r is not None and r.unseen
    assert abs(r.clearance_m - lift) < 1e-4


def test_a_multi_finger_hands_finger_on_the_block_reads_seen():
    volume = HandVolume.for_hand("three_finger")
    bx, by, _, height = BLOCK
    k = int(np.argmax(volume.centre[:, 2] + volume.half[:, 2]))  # a finger's box
    T = _stop(0.0, 0.0, 0.0, 0.0)
    face = volume.centre[k, 2] + volume.half[k, 2]
    # that box's middle over the block's, its lower face at the block's top
    T[:2, 3] = (bx - volume.centre[k, 0], by + volume.centre[k, 1])
    T[2, 3] = height + face
    r = read_stop_boxes(FRAME, T, volume.centre, volume.half)
    assert r is not None and not r.unseen


def _part_at(x: float, y: float, face_z: float) -> np.ndarray:
    """A straight-down TCP pose whose one-box hand (PART) has its lower face's middle at
    (x, y, face_z)."""
    T = _stop(x, y, 0.0, 0.0)
    T[:3, 3] = (x, y, face_z + 2.0 * PART[1][0, 2])
    return T


PART = (np.array([[0.0, 0.0, -0.01]]), np.array([[0.005, 0.005, 0.01]]))  # 10 mm, 20 mm deep


@settings(max_examples=60, deadline=None)
@given(x=st.floats(0.142, 0.146), y=st.floats(-0.015, 0.015), face_z=st.floats(0.005, 0.035))
def test_a_part_stopped_in_a_tall_blocks_shadow_reads_hidden_points_and_over_its_top_none(
        x, y, face_z):
    bx, _, half, height = TALL
    # the part's footprint and margin clear the block (nothing seen under it), and the camera's
    # ray to its lower face's near edge passes through the block's top (x scaled to the top's
    # height), two pixels in
    assert x - 0.01 > bx + half + 2 * CAMERA_M / F
    assert (x - 0.005) * (CAMERA_M - height) / (CAMERA_M - face_z) < bx + half - 2 * CAMERA_M / F
    r = read_stop_boxes(TALL_FRAME, _part_at(x, y, face_z), *PART)
    assert r is not None and r.seen_points == 0 and r.hidden_points > 0
    assert r.unseen and "behind a surface the camera saw" in r.text()
    # the same part over the block's top height: the camera saw the air it stopped in
    lifted = read_stop_boxes(TALL_FRAME, _part_at(x, y, height + 0.01), *PART)
    assert lifted is not None and lifted.unseen and lifted.hidden_points == 0
    assert "behind" not in lifted.text()


def test_a_part_in_the_shadow_of_pixels_with_no_reading_reads_no_hidden_points():
    bx, _, half, height = TALL
    frame = _frame(TALL)
    frame.depth_m[frame.depth_m < CAMERA_M - 0.01] = 0.0  # the block's top read as a hole
    r = read_stop_boxes(frame, _part_at(0.14, 0.0, 0.01), *PART)
    assert r is not None and r.unseen and r.hidden_points == 0
