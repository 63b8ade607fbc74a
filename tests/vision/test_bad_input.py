"""Bad frames give an empty result and a logged reason, or a ValueError that names the fault;
never a crash."""
import logging

import numpy as np
import pytest

from drivers.camera import Intrinsics, RGBDFrame
from vision import TabletopSegmenter, silhouette

from .synth import Box, Scene, look_at, pose, render, upright_box

DOWN = look_at((0.0, 0.0, 0.7), (0.0, 0.0, 0.0))
INTR = Intrinsics(160, 120, 150.0, 150.0, 79.5, 59.5)


def frame_with_depth(depth, T=DOWN) -> RGBDFrame:
    return RGBDFrame(color=np.zeros((120, 160, 3), np.uint8), depth_m=depth, intrinsics=INTR,
                     T_base_camera=T)


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf, -1.0], ids=["zero", "nan", "inf", "negative"])
def test_frame_without_depth_readings_gives_no_objects_and_says_why(fill, caplog):
    frame = frame_with_depth(np.full((120, 160), fill, np.float32))
    with caplog.at_level(logging.INFO, logger="vision"):
        assert TabletopSegmenter().segment(frame) == []
    assert "no depth readings (all zero or NaN)" in caplog.text


def test_mostly_nan_depth_gives_no_objects(caplog):
    frame = render(Scene([upright_box(0, 0, (0.05, 0.05, 0.05))]), DOWN, intr=INTR)
    frame.depth_m[np.random.default_rng(0).random((120, 160)) < 0.995] = np.nan
    with caplog.at_level(logging.INFO, logger="vision"):
        assert TabletopSegmenter().segment(frame) == []
    assert "no support plane" in caplog.text


def test_no_table_in_view_gives_no_objects(caplog):
    """Depth of a cluttered bin wall: no plane holds a fifth of the readings."""
    depth = np.random.default_rng(1).uniform(0.4, 1.5, (120, 160)).astype(np.float32)
    with caplog.at_level(logging.INFO, logger="vision"):
        assert TabletopSegmenter().segment(frame_with_depth(depth)) == []
    assert "no support plane in view" in caplog.text


def test_a_wall_is_not_a_table():
    """A camera looking level at a vertical wall: a perfect plane, but not a support."""
    eye = look_at((0.0, 0.0, 0.3), (1.0, 0.0, 0.3))
    wall = Scene([Box(pose((1.0, 0.0, 0.3)), (0.05, 1.5, 1.5))], table_half=0.0)
    frame = render(wall, eye, intr=INTR, table=False)
    assert (frame.depth_m > 0).all()
    assert TabletopSegmenter().segment(frame) == []


def test_empty_table_gives_no_objects(caplog):
    frame = render(Scene([]), DOWN, intr=INTR, noise=True)
    with caplog.at_level(logging.INFO, logger="vision"):
        assert TabletopSegmenter().segment(frame) == []
    assert "nothing higher than 0.010 m above the support" in caplog.text


def test_colour_and_depth_of_different_sizes_are_rejected_with_their_shapes():
    with pytest.raises(ValueError, match=r"depth_m must be a \(120, 160\) array, got \(60, 80\)"):
        RGBDFrame(color=np.zeros((120, 160, 3), np.uint8), depth_m=np.zeros((60, 80), np.float32),
                  intrinsics=INTR)
    frame = frame_with_depth(np.zeros((120, 160), np.float32))
    frame.color = np.zeros((60, 80, 3), np.uint8)  # swapped in after the frame was made
    with pytest.raises(ValueError, match=r"colour \(60, 80, 3\) and depth \(120, 160\) must be "
                                         r"\(120, 160, 3\) and \(120, 160\)"):
        TabletopSegmenter().segment(frame)
    with pytest.raises(ValueError, match=r"colour \(60, 80, 3\)"):
        silhouette(frame, np.ones((120, 160), bool))


def test_something_that_is_not_a_frame_is_named():
    with pytest.raises(ValueError, match=r"frame must be a drivers.camera.RGBDFrame, got ndarray"):
        TabletopSegmenter().segment(np.zeros((120, 160)))


@pytest.fixture(scope="module")
def box_frame():
    return render(Scene([upright_box(0, 0, (0.05, 0.05, 0.05))]), DOWN, intr=INTR)


@pytest.mark.parametrize("kwargs,message", [
    (dict(approach=(0.0, 0.0, 0.0)), r"approach must not be zero"),
    (dict(approach=(0.0, 1.0)), r"approach must be a finite 3-vector"),
    (dict(approach=(0.0, np.nan, 1.0)), r"approach must be a finite 3-vector"),
    (dict(insertion_depth_m=-0.01), r"insertion_depth_m must be finite and >= 0, got -0.01"),
    (dict(metres_per_px=0.0), r"metres_per_px must be finite and > 0, got 0.0"),
    (dict(margin_m=float("inf")), r"margin_m must be finite and >= 0, got inf"),
    (dict(obstacles=np.zeros((10, 10), bool)),
     r"obstacles must have shape \(120, 160\), got \(10, 10\)"),
    (dict(x_axis=(0.0, 0.0, 0.0)), r"x_axis must not be zero"),
])
def test_bad_silhouette_arguments_are_named(box_frame, kwargs, message):
    with pytest.raises(ValueError, match=message):
        silhouette(box_frame, box_frame.instance_ids == 1, **kwargs)


def test_silhouette_of_a_mask_without_readings_is_refused(box_frame):
    mask = box_frame.instance_ids == 1
    frame = frame_with_depth(np.where(mask, 0.0, box_frame.depth_m).astype(np.float32))
    with pytest.raises(ValueError, match=r"mask has no pixel with a depth reading \(\d+ pixels\)"):
        silhouette(frame, mask)
    with pytest.raises(ValueError, match=r"mask has no pixel with a depth reading \(0 pixels\)"):
        silhouette(frame, np.zeros((120, 160), bool))


def test_silhouette_needs_the_camera_pose(box_frame):
    frame = frame_with_depth(box_frame.depth_m, T=None)
    with pytest.raises(ValueError, match=r"T_base_camera is None: a silhouette needs the camera pose"):
        silhouette(frame, box_frame.instance_ids == 1)


@pytest.mark.parametrize("mask,message", [
    (np.zeros((120, 160), np.uint8), r"mask must have dtype bool, got uint8"),
    (np.zeros((60, 80), bool), r"mask must have shape \(120, 160\), got \(60, 80\)"),
])
def test_bad_masks_are_named(box_frame, mask, message):
    with pytest.raises(ValueError, match=message):
        silhouette(box_frame, mask)
