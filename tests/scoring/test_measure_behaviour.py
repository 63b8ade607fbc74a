"""Behaviour of the image-space measure on shapes whose answer is known from geometry."""
import math

import numpy as np
import pytest

from scoring import GripperProjection, MeasureParams, grasp_region_profile, score_candidates
from scoring.shapes import grasp_in_frame, rectangle, rotate_points, wedge, ellipse

SHAPE = (240, 320)
CENTRE = (160.0, 120.0)
PROJ = GripperProjection(finger_width_px=15, open_width_px=100, n_lines=15)


def score_one(sil, x, y, theta, proj=PROJ, params=None):
    return score_candidates(sil, np.array([x]), np.array([y]), np.array([theta]), proj, params)


def test_centred_grasp_across_rectangle_scores_at_least_095():
    sil = rectangle(SHAPE, CENTRE, 60, 120)
    s = score_one(sil, *CENTRE, 0.0)
    assert not s.collision[0] and not s.missing[0]
    assert s.score[0] >= 0.95
    assert s.d_t[0] == pytest.approx(0.0, abs=1e-3)
    assert s.r_r[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("offset", [-15.0, -7.5, 3.0, 12.25])
def test_off_centre_grasp_has_geometric_translation_ratio(offset):
    # The object travels |offset| towards the gripper centre: D_t = 2 |offset| / r (eq. 9).
    sil = rectangle(SHAPE, CENTRE, 60, 120)
    s = score_one(sil, CENTRE[0] + offset, CENTRE[1], 0.0)
    assert s.d_t[0] == pytest.approx(2 * abs(offset) / PROJ.open_width_px, abs=2e-3)
    assert s.score_d_t[0] == pytest.approx(1 - s.d_t[0], abs=1e-6)


def test_grasp_region_profile_places_outline_on_pixel_edges():
    sil = np.zeros((100, 100), np.uint8)
    sil[20:80, 30:70] = 1  # columns 30..69: outline at 29.5 and 69.5
    g = grasp_region_profile(sil, [50.0], [50.0], [0.0], GripperProjection(15, 100, 3))
    np.testing.assert_allclose(g[0, 0], -20.5, atol=1e-3)
    np.testing.assert_allclose(g[0, 1], 19.5, atol=1e-3)


def test_primary_contacts_and_width_are_reported_in_pixels():
    sil = np.zeros((100, 120), np.uint8)
    sil[20:80, 40:100] = 1  # columns 40..99: outlines at 39.5 and 99.5
    s = score_candidates(sil, np.array([70.0, 70.0]), np.array([50.0, 5.0]), np.zeros(2),
                         GripperProjection(15, 100, 15))
    assert s.width_px[0] == pytest.approx(60.0, abs=1e-3)
    assert tuple(s.contact_left[0]) == (40.0, 43.0)  # first line, Δw = -7.5: row 42.5 -> 43
    assert tuple(s.contact_right[0]) == (99.0, 43.0)
    assert np.isnan(s.contact_left[1]).all() and np.isnan(s.width_px[1])  # missed


def test_grasp_narrower_than_object_collides_and_scores_zero():
    sil = rectangle(SHAPE, CENTRE, 120, 60)
    s = score_one(sil, *CENTRE, 0.0)
    assert s.collision[0] and not s.missing[0]
    assert s.score[0] == 0.0
    assert np.isnan(s.d_t[0])


def test_grasp_beside_object_misses_and_scores_zero():
    sil = rectangle(SHAPE, CENTRE, 40, 40)
    s = score_one(sil, CENTRE[0], CENTRE[1] + 60, 0.0)  # lines pass below the object
    assert s.missing[0] and not s.collision[0]
    assert s.score[0] == 0.0


@pytest.mark.parametrize("alpha_deg", [20.0, 30.0, 45.0])
@pytest.mark.parametrize("shift", [0.0, 0.31, 0.77])
def test_thin_bar_held_across_diagonal_rotates_by_its_angle(alpha_deg, shift):
    # A bar crossing the jaws at alpha from the finger plates: the couple of the two primary
    # contacts turns it until its edges lie flat on the plates, i.e. by alpha (eq. 10).
    alpha = math.radians(alpha_deg)
    centre = (CENTRE[0] + shift, CENTRE[1] + 0.37 * shift)
    sil = rectangle(SHAPE, centre, 14, 260, angle_rad=alpha)
    s = score_one(sil, *centre, 0.0)
    assert not s.collision[0] and not s.missing[0]
    assert math.degrees(s.r_r[0]) == pytest.approx(alpha_deg, abs=3.0)


def test_wedge_faces_slip_and_score_below_rectangle():
    slope = math.atan2((70 - 40) / 2, 120)  # each face leans ~7.1 degrees
    sil_w = wedge(SHAPE, CENTRE, 40, 70, 120)
    sil_r = rectangle(SHAPE, CENTRE, 55, 120)
    s_w = score_one(sil_w, *CENTRE, 0.0)
    s_r = score_one(sil_r, *CENTRE, 0.0)
    assert s_w.s_a[0] > 0.0
    assert s_w.s_a[0] == pytest.approx(slope, abs=math.radians(2.5))
    assert s_w.score[0] < s_r.score[0] - 0.05


def test_slanted_contacts_on_both_sides_share_polarity():
    # Both faces lean the same way in the gripper frame's y, so both are slippery.
    sil = wedge(SHAPE, CENTRE, 30, 80, 120)
    s = score_one(sil, *CENTRE, 0.0)
    assert s.s_a[0] == pytest.approx(math.atan2(25, 120), abs=math.radians(2.5))


def test_force_zone_offset_scores_grasp_at_object_end_lower():
    sil = rectangle(SHAPE, CENTRE, 50, 60)  # rows 90..150
    centred = score_one(sil, *CENTRE, 0.0)
    at_end = score_one(sil, CENTRE[0], CENTRE[1] + 32, 0.0)  # most of the fingers overhang
    assert centred.s_f[0] == pytest.approx(0.0, abs=1e-6)
    assert at_end.s_f[0] > PROJ.finger_width_px / 4
    assert at_end.score[0] < centred.score[0]


CASES = [
    ("rectangle", lambda a: rectangle(SHAPE, CENTRE, 60, 110, a), [(0, 0, 0.0), (8, -20, 0.0), (0, 30, 0.15)]),
    ("wedge", lambda a: wedge(SHAPE, CENTRE, 40, 70, 110, a), [(0, 0, 0.0), (-5, 20, 0.1)]),
    ("ellipse", lambda a: ellipse(SHAPE, CENTRE, 35, 60, a), [(0, 0, 0.0), (0, 10, 0.0), (4, 0, 0.0)]),
]


@pytest.mark.parametrize("name,draw,grasps", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("angle_deg", [17.0, 33.0, 61.0, 90.0, 148.0])
def test_rotating_image_and_grasp_together_keeps_score(name, draw, grasps, angle_deg):
    angle = math.radians(angle_deg)
    upright, turned = draw(0.0), draw(angle)
    for dx, dy, theta in grasps:
        s0 = score_one(upright, CENTRE[0] + dx, CENTRE[1] + dy, theta)
        s1 = score_one(turned, *grasp_in_frame(CENTRE, angle, dx, dy, theta))
        assert s0.collision[0] == s1.collision[0] and s0.missing[0] == s1.missing[0]
        assert abs(float(s0.score[0]) - float(s1.score[0])) <= 0.05, (dx, dy, theta)


def test_grasp_and_its_half_turn_twin_score_the_same():
    sil = wedge(SHAPE, CENTRE, 40, 70, 110)
    x, y, t = np.array([150.0, 171.0]), np.array([120.0, 100.0]), np.array([0.1, -0.2])
    a = score_candidates(sil, x, y, t, PROJ)
    b = score_candidates(sil, x, y, t + np.pi, PROJ)
    np.testing.assert_allclose(a.score, b.score, atol=1e-5)


def test_paper_weights_combine_worst_feature_and_mean_of_others():
    sil = wedge(SHAPE, CENTRE, 40, 70, 110)
    s = score_one(sil, CENTRE[0] + 6, CENTRE[1] + 10, 0.1)
    f = np.array([s.score_d_t[0], s.score_r_r[0], s.score_s_a[0], s.score_s_f[0]], np.float64)
    expected = 0.9 * f.min() + 0.1 * (f.sum() - f.min()) / 3  # eq. 16, k = 0.9
    assert s.score[0] == pytest.approx(expected, abs=1e-6)


def test_parameters_change_the_measure():
    sil = rectangle(SHAPE, CENTRE, 60, 120)
    default = score_one(sil, CENTRE[0] + 10, CENTRE[1], 0.0)
    strict = score_one(sil, CENTRE[0] + 10, CENTRE[1], 0.0,
                       params=MeasureParams(d_t_threshold=0.25))
    assert strict.score_d_t[0] == pytest.approx(1 - 0.2 / 0.25, abs=1e-3)
    assert strict.score[0] < default.score[0]


def test_single_grasp_line_is_supported():
    sil = rectangle(SHAPE, CENTRE, 60, 120)
    s = score_one(sil, *CENTRE, 0.0, proj=GripperProjection(10, 100, 1))
    assert s.score[0] >= 0.95 and s.r_r[0] == 0.0
