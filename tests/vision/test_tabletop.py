"""TabletopSegmenter and its RANSAC support plane on analytic ray-cast frames."""
import math

import numpy as np
import pytest

from vision import ObjectMask, TabletopSegmenter, fit_support_plane

from .synth import (Scene, iou, look_at, lying_cylinder, random_scene, render, upright_box,
                    upright_cylinder)

DOWN = look_at((0.0, 0.0, 0.7), (0.0, 0.0, 0.0))
OBLIQUE = look_at((0.45, 0.1, 0.55), (0.0, 0.0, 0.0))


def match(found: list[ObjectMask], instance_ids: np.ndarray, n: int) -> list[float]:
    """Best IoU of each ground-truth object (ids 1..n) with any found mask."""
    return [max((iou(o.mask, instance_ids == k) for o in found), default=0.0)
            for k in range(1, n + 1)]


def test_plane_of_an_empty_table_is_level_at_the_camera_height():
    frame = render(Scene([]), OBLIQUE, noise=True, seed=3)
    plane = fit_support_plane(frame)
    n_base, off_base = plane.in_base(frame.T_base_camera)
    assert math.degrees(math.acos(n_base[2])) < 0.3
    assert off_base == pytest.approx(0.0, abs=0.002)  # the table top is base z = 0
    assert plane.offset_m == pytest.approx(0.55, abs=0.002)  # camera height above it
    assert plane.rms_m < 0.003


def test_plane_fit_is_repeatable_with_a_seed_and_ignores_a_large_box():
    scene = Scene([upright_box(0.0, 0.0, (0.3, 0.25, 0.1))])
    frame = render(scene, DOWN, noise=True, seed=1)
    a, b = fit_support_plane(frame, seed=7), fit_support_plane(frame, seed=7)
    np.testing.assert_array_equal(a.normal, b.normal)
    assert a.offset_m == b.offset_m
    assert a.offset_m == pytest.approx(0.7, abs=0.002)  # the table, not the box top at 0.6


@pytest.mark.parametrize("camera", [DOWN, OBLIQUE], ids=["straight-down", "oblique"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_object_is_found_with_its_true_mask(camera, seed):
    scene = random_scene(3 + 2 * seed, seed)
    frame = render(scene, camera, noise=True, seed=seed)
    found = TabletopSegmenter().segment(frame)
    assert len(found) == len(scene.objects)
    ious = match(found, frame.instance_ids, len(scene.objects))
    assert min(ious) >= 0.9, ious
    for o in found:
        assert o.mask.shape == frame.depth_m.shape and o.mask.dtype == np.bool_
        assert o.label is None and o.backend == "tabletop" and 0.9 < o.confidence <= 1.0
    # largest first, by the area the pixels cover in metres², not their count
    areas = [float(np.sum(frame.depth_m[o.mask & (frame.depth_m > 0)] ** 2)) for o in found]
    assert areas == sorted(areas, reverse=True)
    # the box each mask comes with (the segmenter's, from its crop) is the mask's own
    for o in found:
        rows, cols = np.nonzero(o.mask)
        assert o.box_px == (cols.min(), rows.min(), cols.max() - cols.min() + 1,
                            rows.max() - rows.min() + 1)
        assert ObjectMask(o.mask, None, 1.0, "copy").box_px == o.box_px  # computed alike


@pytest.mark.parametrize("camera", [DOWN, OBLIQUE], ids=["straight-down", "oblique"])
def test_touching_objects_of_different_heights_are_split(camera):
    # A 4 cm box against a 12 cm can: they touch, only the depth jump separates them.
    scene = Scene([upright_box(0.0, 0.0, (0.08, 0.08, 0.04)), upright_cylinder(0.07, 0.0, 0.03, 0.12)])
    frame = render(scene, camera, noise=True, seed=5)
    found = TabletopSegmenter().segment(frame)
    assert len(found) == 2
    assert min(match(found, frame.instance_ids, 2)) >= 0.9


@pytest.mark.parametrize("camera,noise", [(DOWN, False), (OBLIQUE, True)],
                         ids=["straight-down", "oblique, noisy"])
def test_boxes_touching_at_nearly_one_height_are_joined_and_the_finer_cut_parts_them(camera,
                                                                                    noise):
    # Tops 12 mm apart at 0.65 m: under the cut's 13 mm step (2 % of the range), over the
    # finer cut's 10 mm; the taller box's wall between them faces away from both cameras (a
    # wall seen at a slant is a ramp of small steps, which neither cut parts). Straight down
    # the band between the two cuts (10-13 mm) is narrower than the noise lets one frame
    # resolve along a whole edge, so that view is noise-free; the oblique view is farther.
    scene = Scene([upright_box(-0.05, 0.0, (0.05, 0.08, 0.040)),
                   upright_box(0.0, 0.0, (0.05, 0.08, 0.052))])
    frame = render(scene, camera, noise=noise, seed=5)
    seg = TabletopSegmenter()
    assert len(seg.segment(frame)) == 1
    finer = seg.segment_finer(frame)
    assert len(finer) == 2
    assert min(match(finer, frame.instance_ids, 2)) >= 0.9


def test_the_finer_cut_follows_the_cut_when_not_given():
    seg = TabletopSegmenter()
    assert (seg.fine_jump_m, seg.fine_jump_ratio) == pytest.approx((0.008, 0.012))
    lower = TabletopSegmenter(jump_m=0.006, jump_ratio=0.01)  # a cut set finer than 8 mm
    assert (lower.fine_jump_m, lower.fine_jump_ratio) == pytest.approx((0.004, 0.006))


def test_a_backend_without_a_finer_cut_offers_none():
    from vision import Segmenter

    class Whole(Segmenter):
        def _segment(self, frame):
            return [ObjectMask(frame.depth_m > 0, None, 1.0, "whole")]

    frame = render(Scene([upright_box(0.0, 0.0, (0.05, 0.05, 0.05))]), DOWN)
    assert len(Whole().segment(frame)) == 1
    assert Whole().segment_finer(frame) == []


def test_size_limits_drop_too_small_and_too_large_objects():
    scene = Scene([upright_box(-0.1, 0.0, (0.01, 0.01, 0.03)),    # 1 cm² top: too small
                   upright_box(0.05, 0.0, (0.05, 0.05, 0.05)),
                   lying_cylinder(0.0, 0.15, 0.03, 0.2)])
    frame = render(scene, DOWN, seed=0)
    found = TabletopSegmenter().segment(frame)
    assert len(found) == 2
    ids = {int(np.bincount(frame.instance_ids[o.mask]).argmax()) for o in found}
    assert ids == {2, 3}
    found = TabletopSegmenter(max_area_m2=0.004).segment(frame)  # the 6 x 20 cm cylinder goes
    assert len(found) == 1 and np.bincount(frame.instance_ids[found[0].mask]).argmax() == 2


def test_sensor_holes_join_the_object_but_a_view_of_the_table_does_not():
    frame = render(Scene([upright_box(0.0, 0.0, (0.1, 0.1, 0.05))]), DOWN)
    box = frame.instance_ids == 1
    rows, cols = np.nonzero(box)
    r, c = int(rows.mean()), int(cols.mean())
    frame.depth_m[r - 10:r - 2, c - 5:c + 5] = 0.0       # no reading: a sensor hole
    frame.depth_m[r + 2:r + 10, c - 5:c + 5] = 0.7        # the table seen through a hole
    (obj,) = TabletopSegmenter().segment(frame)
    assert obj.mask[r - 10:r - 2, c - 5:c + 5].all()
    assert not obj.mask[r + 2:r + 10, c - 5:c + 5].any()
    assert obj.confidence == pytest.approx(1 - 80 / obj.area_px)


def test_last_plane_is_kept_for_silhouettes():
    seg = TabletopSegmenter()
    assert seg.last_plane is None
    seg.segment(render(Scene([upright_box(0, 0, (0.05, 0.05, 0.05))]), DOWN))
    assert seg.last_plane.offset_m == pytest.approx(0.7, abs=1e-3)


@pytest.mark.parametrize("kwargs,message", [
    (dict(min_height_m=0.0), r"min_height_m must be finite and > 0, got 0.0"),
    (dict(grow_height_m=0.02), r"need grow_height_m <= min_height_m < max_height_m"),
    (dict(min_area_m2=1.0), r"min_area_m2 must be < max_area_m2, got 1.0 and 0.25"),
    (dict(min_plane_fraction=0.0), r"min_plane_fraction must be in \(0, 1\], got 0.0"),
    (dict(min_seed_px=2.5), r"min_seed_px must be an integer >= 1, got 2.5"),
    (dict(jump_m=float("nan")), r"jump_m must be finite and > 0, got nan"),
    (dict(max_tilt_rad=2.0), r"max_tilt_rad must be in \(0, pi/2\] or None, got 2.0"),
    (dict(hole_claim_px=-1), r"hole_claim_px must be an integer >= 0, got -1"),
    (dict(fine_jump_m=0.0), r"fine_jump_m must be finite and > 0, got 0.0"),
    (dict(fine_jump_m=0.02), r"the finer cut's steps must not exceed the cut's, got "
                             r"fine_jump_m 0.02 \(jump_m 0.012\)"),
    (dict(fine_jump_ratio=0.03), r"fine_jump_ratio 0.03 \(jump_ratio 0.02\)"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TabletopSegmenter(**kwargs)


@pytest.mark.parametrize("kwargs,message", [
    (dict(iterations=0), r"iterations must be an integer >= 1, got 0"),
    (dict(stride=1.5), r"stride must be an integer >= 1, got 1.5"),
    (dict(tolerance_m=0.0), r"tolerance_m must be finite and > 0, got 0.0"),
])
def test_bad_plane_fit_settings_are_named(kwargs, message):
    frame = render(Scene([]), DOWN)
    with pytest.raises(ValueError, match=message):
        fit_support_plane(frame, **kwargs)


def test_a_tilted_support_is_found_with_the_tilt_check_off():
    """A ramp at 40 deg: refused as a level support by default, found with max_tilt_rad=None."""
    from .synth import Box, pose
    ramp = Box(pose((0.0, 0.0, 0.0), 0.0, math.radians(40)), (0.5, 0.5, 0.01))
    frame = render(Scene([ramp], table_half=0.0), DOWN, table=False)
    assert fit_support_plane(frame) is None
    plane = fit_support_plane(frame, max_tilt_rad=None)
    n_base, _ = plane.in_base(frame.T_base_camera)
    assert math.degrees(math.acos(abs(n_base[2]))) == pytest.approx(40, abs=0.5)
