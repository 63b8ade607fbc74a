"""graspline's depth terms on Tan's score: finger bodies, the height of the side the pads meet,
the torque about the grasp axis, and the objects the jaw cannot hold at all."""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import (DepthParams, DepthView, GripperProjection, JawLimits, contact_full_m,
                     mean_patch_radius_m, narrowest_width_m, physical_terms, score_candidates,
                     search_grasps, swing_score)
from scoring._physical import PALM_GRAZE_FACTOR as GRAZE  # private: the palm's factor
from scoring.shapes import ellipse, rectangle

M = 0.001  # metres per pixel
SHAPE = (240, 320)
SCRATCH = (np.empty(32), np.empty(32))  # _side_lean's sample buffers
# a 2F-85-like jaw at 1 mm/px: 22 mm fingers, 85 mm stroke
PROJ = GripperProjection(22, 85, 11)
JAW = JawLimits(stroke_m=0.085, finger_thickness_m=0.014, pad_length_m=0.035, force_n=40.0,
                friction=1.0)


def heights(mask: np.ndarray, h_m: float) -> np.ndarray:
    """A height map: h_m above the fingertips on the mask, NaN elsewhere."""
    return np.where(mask, h_m, np.nan).astype(np.float32)


def across_box(n: int = 1):
    """n grasps across the 40-px side of a 60 x 40 box centred at (150, 110)."""
    return np.full(n, 150.0), np.full(n, 110.0), np.full(n, math.pi / 2)


def test_tan2024_is_the_kernels_score_unchanged_and_graspline_without_depth_equals_it():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    x, y, t = np.random.default_rng(0).uniform([100, 70, 0], [200, 150, math.pi], (200, 3)).T
    tan = score_candidates(box, x, y, t, PROJ, measure="tan2024")
    plain = score_candidates(box, x, y, t, PROJ)
    np.testing.assert_array_equal(tan.score, plain.score)
    np.testing.assert_array_equal(tan.score, tan.tan_score)
    deep = score_candidates(box, x, y, t, PROJ, measure="tan2024", jaw=JAW,
                            depth=DepthView(heights(box, 0.02), M))
    np.testing.assert_array_equal(deep.score, tan.score)  # tan2024 ignores the depth
    assert np.isnan(deep.contact_height_m).all()


def test_unknown_measure_is_refused_by_name():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    with pytest.raises(ValueError, match="measure must be one of .*'tan2020'"):
        score_candidates(box, *across_box(), PROJ, measure="tan2020")


def test_a_neighbour_behind_a_finger_zeroes_the_grasp_though_the_pads_are_clear():
    """The open pad's line end is clear (Tan scores it high) but the finger's 14 mm body
    behind it lands on a neighbour 6 px further out: no grasp. 20 px further out: fine."""
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    x, y, t = across_box()
    for gap_px, blocked in ((6, True), (20, False)):
        # the neighbour's near edge gap_px beyond the open finger (open width 85 px)
        edge = 110.0 + 42.5 + gap_px
        image = box | rectangle(SHAPE, (150.0, edge + 15.0), 60, 30)
        sc = score_candidates(image, x, y, t, PROJ, target=box, jaw=JAW,
                              depth=DepthView(heights(image, 0.03), M))
        assert sc.tan_score[0] > 0.9
        assert bool(sc.body_collision[0]) is blocked
        assert bool(sc.score[0] == 0.0) is blocked


def test_a_tall_part_between_the_fingers_stops_the_palm():
    """A cap standing 80 mm above the fingertips in the middle of the box (an upright
    bottle's, above a grasp on its shoulder) is under the palm of 60 mm fingers: no grasp.
    At 40 mm the fingers are long enough; without a palm check (finger length inf) the same
    cap passes."""

    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    cap = ellipse(SHAPE, (150.0, 110.0), 8, 8)
    x, y, t = across_box()
    for cap_m, jaw, blocked in ((0.08, JAW, True), (0.04, JAW, False),
                                (0.08, dataclasses.replace(JAW, finger_length_m=math.inf), False)):
        h = np.where(cap, cap_m, np.where(box, 0.02, np.nan)).astype(np.float32)
        sc = score_candidates(box, x, y, t, PROJ, target=box, jaw=jaw, depth=DepthView(h, M))
        assert sc.tan_score[0] > 0.9
        assert bool(sc.body_collision[0]) is blocked, (cap_m, jaw.finger_length_m)
        assert bool(sc.score[0] == 0.0) is blocked


def test_contact_height_ramps_from_min_to_full_contact():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    p = DepthParams(min_contact_m=0.003, full_contact_m=0.012)
    taped = dataclasses.replace(JAW, friction=p.contact_friction_ref)
    got = []
    for h in (0.002, 0.0075, 0.02):
        sc = score_candidates(box, *across_box(), PROJ, jaw=taped,
                              depth=DepthView(heights(box, h), M), depth_params=p)
        assert sc.contact_height_m[0] == pytest.approx(h, abs=1e-6)
        got.append(float(sc.score_contact[0]))
        assert sc.score[0] == pytest.approx(sc.tan_score[0] * got[-1], rel=1e-5)
    assert got == pytest.approx([0.0, 0.5, 1.0], abs=1e-6)


@pytest.mark.parametrize("friction, pad_m, full_m", [
    (0.5, 0.035, 0.012), (1.0, 0.035, 0.0075), (1.0, 0.020, 0.0075), (0.25, 0.020, 0.020)])
def test_contact_ramp_eases_with_the_pads_friction_up_to_the_pad_length(friction, pad_m, full_m):
    """Rubber pads (μ 1.0) hold on a shallow contact as often as on a deep one, taped pads
    (μ 0.5) less often: the ramp's span scales by 0.5 / μ, and ends at the pad's length."""
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    jaw = dataclasses.replace(JAW, friction=friction, pad_length_m=pad_m)
    assert contact_full_m(jaw) == pytest.approx(full_m)
    half = 0.5 * (DepthParams().min_contact_m + full_m)
    got = [float(score_candidates(box, *across_box(), PROJ, jaw=jaw,
                                  depth=DepthView(heights(box, h), M)).score_contact[0])
           for h in (half, full_m + 1e-4)]
    assert got == pytest.approx([0.5, 1.0], abs=0.02)


def test_contact_height_is_the_lower_side_and_capped_at_the_pad_length():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    hm = heights(box, 0.08)
    hm[110:, :] = np.where(box[110:, :], 0.006, np.nan)  # one side of the grasp is low
    sc = score_candidates(box, *across_box(), PROJ, jaw=JAW, depth=DepthView(hm, M))
    assert sc.contact_height_m[0] == pytest.approx(0.006, abs=1e-6)
    sc = score_candidates(box, *across_box(), PROJ, jaw=JAW, depth=DepthView(heights(box, 0.08), M))
    assert sc.contact_height_m[0] == pytest.approx(JAW.pad_length_m)


def test_torque_ratio_is_weight_times_lever_over_two_pads_torsional_friction():
    """A grasp 30 mm from the mass centre of a 0.4 kg bar 30 mm tall: τ = M g d against
    τ_max = 2 μ F r̄, r̄ the mean radius of the 30 x 22 mm pad/side overlap; the same grasp
    through the centre has no torque."""
    bar = rectangle(SHAPE, (160.0, 120.0), 200, 30)
    view = DepthView(heights(bar, 0.03), M, centre_of_mass_px=(160.0, 120.0), mass_kg=0.4)
    x, y, t = np.array([190.0, 160.0]), np.array([120.0, 120.0]), np.full(2, math.pi / 2)
    sc = score_candidates(bar, x, y, t, PROJ, jaw=JAW, depth=view)
    tau_max = 2 * 1.0 * 40.0 * float(mean_patch_radius_m(np.array([0.03]), 0.022)[0])
    assert sc.lever_m[0] == pytest.approx(0.030, abs=0.0011)
    assert sc.torque_ratio[0] == pytest.approx(0.4 * 9.81 * sc.lever_m[0] / tau_max, rel=1e-5)
    assert sc.score_torque[0] == pytest.approx(max(0.0, 1 - sc.torque_ratio[0]), abs=1e-6)
    assert sc.lever_m[1] < 0.0011 and sc.score_torque[1] > 0.95
    assert sc.score[0] < sc.score[1]


def test_swing_term_falls_with_the_lever_whatever_the_mass():
    """A grasp d off the mass centre scores 1 - d / swing_lever_m on the swing term, light or
    heavy (the object turns in point contacts whatever it weighs), 1 through the centre and
    where the mass centre is unknown; the score carries it."""
    bar = rectangle(SHAPE, (160.0, 120.0), 200, 30)
    x, y, t = np.array([200.0, 160.0]), np.array([120.0, 120.0]), np.full(2, math.pi / 2)
    got = []
    for mass in (0.02, 0.4):
        view = DepthView(heights(bar, 0.03), M, centre_of_mass_px=(160.0, 120.0), mass_kg=mass)
        sc = score_candidates(bar, x, y, t, PROJ, jaw=JAW, depth=view)
        want = 1.0 - float(sc.lever_m[0]) / DepthParams().swing_lever_m
        assert swing_score(float(sc.lever_m[0])) == pytest.approx(want)
        assert sc.lever_m[0] == pytest.approx(0.040, abs=0.0011)
        assert sc.score_swing[0] == pytest.approx(want, abs=1e-6)
        assert sc.score_swing[1] > 0.99
        factor = sc.score_contact * sc.score_torque * sc.score_tilt * sc.score_palm
        assert sc.score[0] == pytest.approx(sc.tan_score[0] * factor[0] * want, rel=1e-5)
        got.append(float(sc.score_swing[0]))
    assert got[0] == pytest.approx(got[1], abs=1e-6)
    far = dataclasses.replace(DepthParams(), swing_lever_m=0.03)  # 40 mm off: past it
    sc = score_candidates(bar, x, y, t, PROJ, jaw=JAW, depth_params=far,
                          depth=DepthView(heights(bar, 0.03), M, centre_of_mass_px=(160.0, 120.0),
                                          mass_kg=0.02))
    assert sc.score_swing[0] == 0.0 and sc.score[0] == 0.0
    unknown = score_candidates(bar, x, y, t, PROJ, jaw=JAW, depth=DepthView(heights(bar, 0.03), M))
    assert np.all(unknown.score_swing == 1.0)


def test_torque_term_reads_the_pad_width_and_the_contact_height():
    """The torsional friction is the pads' overlap with the side: narrower pads (13 mm
    against 22) or a lower side (10 mm against 30) leave less of it, so the same off-centre
    grasp of the same bar has a larger torque ratio and a lower torque score."""
    bar = rectangle(SHAPE, (160.0, 120.0), 200, 30)
    x, y, t = np.array([190.0]), np.array([120.0]), np.array([math.pi / 2])

    def ratio(jaw: JawLimits, h_m: float) -> float:
        view = DepthView(heights(bar, h_m), M, centre_of_mass_px=(160.0, 120.0), mass_kg=0.4)
        return float(score_candidates(bar, x, y, t, PROJ, jaw=jaw, depth=view).torque_ratio[0])

    r = lambda h, w: float(mean_patch_radius_m(np.array([h]), w)[0])  # noqa: E731
    narrow = dataclasses.replace(JAW, pad_width_m=0.013)
    assert ratio(narrow, 0.03) > 1.1 * ratio(JAW, 0.03)
    assert ratio(narrow, 0.03) / ratio(JAW, 0.03) == pytest.approx(r(0.03, 0.022) / r(0.03, 0.013),
                                                                   rel=1e-5)
    assert ratio(JAW, 0.01) > 1.5 * ratio(JAW, 0.03)
    # a side taller than the pad is met over the pad's length only
    assert ratio(JAW, 0.08) == pytest.approx(ratio(JAW, JAW.pad_length_m), rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.001, 0.1), st.floats(0.001, 0.1), st.floats(1.1, 3.0))
def test_mean_patch_radius_is_symmetric_grows_with_each_side_and_matches_sampling(h, w, k):
    """The overlap's mean radius: the same for h x w and w x h, larger when either side
    grows, between a quarter (a thin strip) and a half of the diagonal, and equal to the mean
    distance from the centre over a sampled grid."""
    r = float(mean_patch_radius_m(np.array([h]), w)[0])
    assert r == pytest.approx(float(mean_patch_radius_m(np.array([w]), h)[0]), rel=1e-9)
    assert float(mean_patch_radius_m(np.array([k * h]), w)[0]) > r
    assert float(mean_patch_radius_m(np.array([h]), k * w)[0]) > r
    diag = math.hypot(h, w)
    assert diag / 4 - 1e-12 <= r <= diag / 2
    n = 201
    u = (np.arange(n) + 0.5) / n - 0.5
    X, Y = np.meshgrid(u * h, u * w)
    assert r == pytest.approx(float(np.hypot(X, Y).mean()), rel=2e-3)


def test_mean_patch_radius_of_a_square_and_of_no_contact():
    """A square of side s: 0.3826 s (the textbook value); no height: NaN (no torque term)."""
    assert float(mean_patch_radius_m(np.array([0.02]), 0.02)[0]) == pytest.approx(0.3826 * 0.02,
                                                                                    rel=1e-3)
    assert np.isnan(mean_patch_radius_m(np.array([0.0, np.nan]), 0.02)).all()


def test_jaw_limits_refuse_a_non_positive_pad_width():
    with pytest.raises(ValueError, match="JawLimits: pad_width_m must be finite and > 0, got 0"):
        JawLimits(pad_width_m=0.0)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, math.pi), st.floats(-20.0, 20.0))
def test_the_depth_terms_do_not_depend_on_which_finger_is_left(theta, offset):
    """θ and θ + π are the same grasp: the depth terms must agree on them."""
    bar = rectangle(SHAPE, (160.0, 120.0), 120, 36, angle_rad=0.3)
    image = bar | ellipse(SHAPE, (160.0, 178.0), 20, 12)
    view = DepthView(heights(image, 0.015), M, centre_of_mass_px=(150.0, 118.0), mass_kg=0.3)
    x = np.array([160.0 + offset] * 2)
    y = np.array([120.0 - 0.3 * offset] * 2)
    t = np.array([theta, theta + math.pi])
    sc = score_candidates(image, x, y, t, PROJ, target=bar, jaw=JAW, depth=view)
    assert sc.body_collision[0] == sc.body_collision[1]
    if sc.evaluated.all():
        np.testing.assert_allclose(sc.lever_m[0], sc.lever_m[1], atol=2e-3)


def test_a_can_wider_than_the_stroke_gets_no_grasp_and_says_why():
    """A 102 mm can seen from above against an 85 mm stroke: Tan's measure offers rim
    pinches; graspline's search offers nothing and names the width."""
    can = ellipse(SHAPE, (160.0, 120.0), 51, 51)
    tan = search_grasps(can, PROJ, target=can, top_k=3, measure="tan2024", seed=0)
    assert len(tan) and tan.scores.score[0] > 0.2
    g = search_grasps(can, PROJ, target=can, top_k=3, seed=0, jaw=JAW,
                      depth=DepthView(heights(can, 0.03), M))
    assert len(g) == 0 and "103 mm across" in g.no_grasp and "85 mm stroke" in g.no_grasp
    small = ellipse(SHAPE, (160.0, 120.0), 33, 33)
    g = search_grasps(small, PROJ, target=small, top_k=3, seed=0, jaw=JAW,
                      depth=DepthView(heights(small, 0.03), M))
    assert len(g) and g.no_grasp == "" and g.scores.score[0] > 0.9


def test_an_object_heavier_than_the_pads_friction_gets_no_grasp():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    heavy = DepthView(heights(box, 0.03), M, centre_of_mass_px=(150.0, 110.0), mass_kg=9.0)
    g = search_grasps(box, PROJ, target=box, seed=0, jaw=JAW, depth=heavy)
    assert len(g) == 0 and "9.00 kg" in g.no_grasp and "80 N" in g.no_grasp
    light = DepthView(heights(box, 0.03), M, centre_of_mass_px=(150.0, 110.0), mass_kg=1.0)
    assert len(search_grasps(box, PROJ, target=box, seed=0, jaw=JAW, depth=light))


def test_narrowest_width_is_the_minimum_feret_diameter():
    bar = rectangle(SHAPE, (160.0, 120.0), 150, 30, angle_rad=0.5)
    assert narrowest_width_m(bar, M) == pytest.approx(0.030, abs=0.0015)
    assert narrowest_width_m(np.zeros(SHAPE, bool), M) == math.inf


def test_score_candidates_names_the_target_among_several():
    """Two boxes side by side: a grasp centred on the second one scores for it, and scores 0
    (missing) when the first one is the target."""
    a = rectangle(SHAPE, (100.0, 110.0), 40, 40)
    b = rectangle(SHAPE, (220.0, 110.0), 40, 40)
    image = a | b
    x, y, t = np.array([220.0]), np.array([110.0]), np.array([math.pi / 2])
    assert score_candidates(image, x, y, t, PROJ, target=b).score[0] > 0.9
    sc = score_candidates(image, x, y, t, PROJ, target=a)
    assert sc.score[0] == 0.0 and sc.missing[0]
    with pytest.raises(ValueError, match="target must have the silhouette's shape"):
        score_candidates(image, x, y, t, PROJ, target=a[:10])


def test_bad_depth_inputs_are_named():
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    with pytest.raises(ValueError, match="depth.height_m must have the silhouette's shape"):
        score_candidates(box, *across_box(), PROJ, depth=DepthView(np.zeros((5, 5)), M))
    with pytest.raises(ValueError, match="JawLimits: force_n must be finite and > 0, got -1"):
        JawLimits(force_n=-1)
    with pytest.raises(ValueError, match="min_contact_m must be < full_contact_m"):
        DepthParams(min_contact_m=0.02, full_contact_m=0.01)
    with pytest.raises(ValueError, match="mass_kg must be >= 0 or NaN"):
        DepthView(np.zeros((5, 5)), M, mass_kg=-2.0)


@pytest.mark.parametrize("bad", [0.0, -0.06, float("nan"), True, "6 cm"])
def test_jaw_limits_refuse_a_finger_length_that_is_not_a_positive_number(bad):
    with pytest.raises(ValueError, match=r"JawLimits: finger_length_m must be"):
        dataclasses.replace(JAW, finger_length_m=bad)


@pytest.mark.parametrize("edge_px, height_m, palm_width_m, palm_factor", [
    (19, 0.08, 0.05, 0.0),         # 6 mm under a 50 mm palm (half 25 mm): it lands
    (30, 0.08, 0.05, 1.0),         # a gap wider than the palm: it passes beside
    (24, 0.08, 0.05, GRAZE),       # 1 mm under it, within the outline's bias: a graze
    (27, 0.08, 0.05, GRAZE),       # 2 mm beside it, within the bias: the outline may run
                                   # narrow (seed 100's Franka hand landed on one 2.2 mm out)
    (28, 0.08, 0.05, 1.0),         # 3 mm beside it, beyond the bias: clear
    (19, 0.03, 0.05, 1.0),         # lower than the 60 mm fingers: the palm stays above it
    (19, 0.08, math.nan, 1.0),     # no palm width: the palm is the fingers' band, clear
])
def test_a_palm_wider_than_the_fingers_lands_on_a_tall_neighbour_beside_them(
        edge_px, height_m, palm_width_m, palm_factor):
    """A 20 px bar grasped across (fingers 22 px wide, centred on it) beside a neighbour
    standing height_m above the fingertips whose near edge is edge_px from the grasp's
    centre line, outside the fingers' band: a palm wider than the fingers lands on it when
    it is taller than the fingers are long and under the palm by more than the silhouette's
    outline bias (a lying mug's body beside a grasp on its handle), and may land on it when
    it is under the palm or beside it by less (the outline may run narrow as well as wide):
    a graze halves the score (16 of 31 such grasps held)."""
    bar = rectangle(SHAPE, (150.0, 110.0), 20, 40)
    neighbour = rectangle(SHAPE, (150.0 + edge_px + 15.0, 110.0), 30, 100)
    image = bar | neighbour
    h = np.where(neighbour, height_m, np.where(bar, 0.02, np.nan)).astype(np.float32)
    jaw = dataclasses.replace(JAW, palm_width_m=palm_width_m)
    sc = score_candidates(image, *across_box(), PROJ, target=bar, jaw=jaw, depth=DepthView(h, M))
    clear = score_candidates(image, *across_box(), PROJ, target=bar,
                             jaw=dataclasses.replace(JAW, palm_width_m=math.nan),
                             depth=DepthView(h, M))
    assert sc.tan_score[0] > 0.9
    assert bool(sc.body_collision[0]) is (palm_factor == 0.0), (edge_px, height_m, palm_width_m)
    assert float(sc.score_palm[0]) == (1.0 if palm_factor == 0.0 else palm_factor)
    assert float(sc.score[0]) == pytest.approx(palm_factor * float(clear.score[0]), abs=1e-6)


@pytest.mark.parametrize("edge_px, palm_factor", [(24, GRAZE), (22, 0.0), (27, GRAZE),
                                                   (28, 1.0)])
def test_a_thin_rim_under_the_palms_edge_is_read_wherever_it_lies(edge_px, palm_factor):
    """A neighbour's rim one pixel wide (a mug's wall seen from above), 80 mm above the
    fingertips, edge_px from the grasp's centre line beside a 50 mm palm (25 px each way):
    1 px under the palm's side or 2 px beside it (within the outline's 2.5 mm bias either
    way) it is a graze, 3 px under it it lands, 3 px beside it it is clear. Every pixel of
    the palm is read: a rim between a sampled grid's lines is no less under the palm."""
    bar = rectangle(SHAPE, (150.0, 110.0), 20, 40)
    rim = rectangle(SHAPE, (150.0 + edge_px, 110.0), 1, 100)
    image = bar | rim
    h = np.where(rim, 0.08, np.where(bar, 0.02, np.nan)).astype(np.float32)
    jaw = dataclasses.replace(JAW, palm_width_m=0.05)
    sc = score_candidates(image, *across_box(), PROJ, target=bar, jaw=jaw, depth=DepthView(h, M))
    assert sc.tan_score[0] > 0.9
    assert bool(sc.body_collision[0]) is (palm_factor == 0.0), edge_px
    assert float(sc.score_palm[0]) == (1.0 if palm_factor == 0.0 else palm_factor), edge_px


def test_a_palm_width_that_is_not_positive_is_refused_by_name():
    with pytest.raises(ValueError, match="palm_width_m"):
        JawLimits(palm_width_m=-0.03)


def test_a_palm_longer_than_the_open_fingers_lands_on_a_tall_neighbour_beyond_them():
    """A neighbour 80 mm tall just beyond a finger's back (along the closing direction,
    outside the finger bodies' band) is under a 140 mm palm (70 mm each way) but not under a
    120 mm one or the default palm, the open fingers with their bodies."""
    bar = rectangle(SHAPE, (150.0, 110.0), 20, 40)
    neighbour = rectangle(SHAPE, (150.0, 172.0 + 15.0), 20, 30)   # near edge 62 px out
    image = bar | neighbour
    h = np.where(neighbour, 0.08, np.where(bar, 0.02, np.nan)).astype(np.float32)
    for length_m, blocked in ((math.nan, False), (0.14, True), (0.12, False)):
        jaw = dataclasses.replace(JAW, palm_width_m=0.03, palm_length_m=length_m)
        sc = score_candidates(image, *across_box(), PROJ, target=bar, jaw=jaw,
                              depth=DepthView(h, M))
        assert sc.tan_score[0] > 0.9
        assert bool(sc.body_collision[0]) is blocked, length_m


@pytest.mark.parametrize("hole_px, fits", [(16, False), (32, True)])
def test_a_finger_descends_into_a_hole_only_when_the_hole_is_wider_than_the_finger(hole_px, fits):
    """A 100 x 60 plate with a 26 px long slot hole_px wide; the grasp puts its left finger
    (22 px wide, its 14 mm body behind it) into the slot and pinches the wall between the slot
    and the plate's right edge. A slot narrower than the finger is no place to descend: the
    finger lands on the plate (score 0); a wide enough one takes it, body and all."""
    plate = rectangle(SHAPE, (150.0, 110.0), 100, 60)
    slot = rectangle(SHAPE, (117.0, 110.0), 26, hole_px)
    target = plate & ~slot
    x, y, t = np.array([165.0]), np.array([110.0]), np.array([0.0])  # closing along the rows
    sc = score_candidates(target, x, y, t, PROJ, target=target, jaw=JAW,
                          depth=DepthView(heights(target, 0.02), M))
    assert bool(sc.score[0] > 0.3) is fits, (hole_px, float(sc.score[0]))
    if fits:
        assert not sc.body_collision[0] and not sc.collision[0]
        assert sc.width_px[0] == pytest.approx(70.0, abs=1.5)  # slot edge (130) to plate edge (200)
    else:
        assert sc.score[0] == 0.0 and (sc.collision[0] or sc.body_collision[0])
@pytest.mark.parametrize("radius_px, rise_px", [(20, -5), (20, 0), (20, 5), (20, 10), (60, 6),
                                                (8, 3)])
def test_the_side_lean_is_the_arcs_normal_at_the_fingertips_whatever_its_radius(radius_px,
                                                                               rise_px):
    """Heights of a circular side rising inwards of a contact that lies rise_px above the
    section's widest point: the fitted lean is asin(rise / r) (0 at or under the widest
    point); a wall leans 0 (a side only a few millimetres high cannot be told from an arc's
    top: the contact-height term scores it). (The private kernel against its closed form.)"""
    from scoring._depth_kernel import _side_lean  # private kernel, compared with its closed form

    offsets = np.arange(-5.0, 6.0)
    chord = math.sqrt(radius_px ** 2 - rise_px ** 2)
    h = np.full((30, 200), np.nan, np.float32)
    for col in range(200):
        x = col - 10
        if 0 <= x <= 2 * chord:
            h[:, col] = (math.sqrt(max(radius_px ** 2 - (chord - x) ** 2, 0)) - rise_px) * M
    lean = _side_lean(h, 10.0, 15.0, 1.0, 0.0, offsets, 15.0, 2.0, M, *SCRATCH)
    want = max(0.0, math.asin(rise_px / radius_px))
    assert math.degrees(lean) == pytest.approx(math.degrees(want), abs=0.5)
    for wall_m in (0.012, 0.02, 0.05):
        h[:, 10:190] = wall_m
        assert _side_lean(h, 9.5, 15.0, 1.0, 0.0, offsets, 15.0, 2.0, M, *SCRATCH) == 0.0


@settings(max_examples=40, deadline=None)
@given(radius_px=st.floats(12.0, 60.0), rise_frac=st.floats(-0.6, 0.6))
def test_a_grasps_contact_arcs_place_a_round_sections_centre_from_either_side(radius_px,
                                                                              rise_frac):
    """A lying cylinder's section (radius r) whose widest point lies rise under the
    fingertips' plane (negative: above it), pinched across: at both contacts the fitted
    arc's centre lies -rise above the plane within a tenth of r and half the rise (15 px of
    arc pin its normal better than its radius: a banana's 18 mm section is placed within
    2 mm at its widest point), in the direction of the true centre, sqrt(r² - rise²)
    inwards, within 6°."""
    from scoring import contact_arcs

    rise = rise_frac * radius_px
    chord = math.sqrt(radius_px ** 2 - rise ** 2)
    h = np.full((40, 200), np.nan, np.float32)
    cols = np.arange(200) - 30.0
    inside = (cols >= 0) & (cols <= 2 * chord)
    z = np.sqrt(np.maximum(radius_px ** 2 - (chord - cols) ** 2, 0.0)) - rise
    h[:, inside] = (z[inside] * M).astype(np.float32)
    arcs = contact_arcs(DepthView(h, M), PROJ, np.array([30.0, 20.0]),
                        np.array([30.0 + 2 * chord, 20.0]), 0.0, 2 * chord)
    for arc in arcs:
        tol_px = 0.1 * radius_px + 0.5 * abs(rise)
        assert arc.centre_above_m == pytest.approx(-rise * M, abs=tol_px * M)
        seen = math.atan2(arc.centre_above_m, arc.inward_m)
        assert math.degrees(seen) == pytest.approx(math.degrees(math.atan2(-rise, chord)), abs=6.0)


def test_a_side_whose_heights_are_no_arc_gives_no_lean_from_its_profile():
    """Heights that jump about (a cluttered side, a hole) fit no arc: NaN (the undercut alone
    then says the lean); fewer than three heights seen: NaN."""
    from scoring._depth_kernel import _side_lean  # private kernel

    offsets = np.arange(-5.0, 6.0)
    h = np.full((30, 60), np.nan, np.float32)
    h[:, 10:50] = np.where(np.arange(40) % 2, 0.02, 0.001)
    assert math.isnan(_side_lean(h, 9.5, 15.0, 1.0, 0.0, offsets, 15.0, 2.0, M, *SCRATCH))
    h[:] = np.nan
    h[:, 10:12] = 0.01
    assert math.isnan(_side_lean(h, 9.5, 15.0, 1.0, 0.0, offsets, 15.0, 2.0, M, *SCRATCH))


@pytest.mark.parametrize("beyond_px", [1, 2, 6])
def test_a_wall_reads_no_lean_whatever_the_footprint_beyond_it(beyond_px):
    # the pads meet a vertical side (the heights inwards are a wall): the footprint a pixel or
    # two beyond it is the outline's noise, 6 mm beyond it a step to a wider base (a box on a
    # wider one, a bottle's neck over its body, a bracket's web over its flange); no lean
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    foot = rectangle(SHAPE, (150.0, 110.0), 60 + 2 * beyond_px, 40 + 2 * beyond_px)
    sc = score_candidates(box, *across_box(), PROJ, jaw=JAW,
                          depth=DepthView(heights(box, 0.03), M, footprint=foot))
    assert sc.contact_tilt_rad[0] == 0.0 and sc.score_tilt[0] == 1.0


@pytest.mark.parametrize("beyond_px, leans", [(1, False), (2, False), (6, True)])
def test_where_the_heights_fit_no_arc_the_undercut_says_the_lean(beyond_px, leans):
    # heights that jump about along the closing line fit neither an arc nor a wall: the
    # footprint running on beyond the contact, read as a circular section, says the lean
    # (not the outline's noise of a pixel or two)
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    foot = rectangle(SHAPE, (150.0, 110.0), 60 + 2 * beyond_px, 40 + 2 * beyond_px)
    rows = np.arange(SHAPE[0])[:, None]
    h = np.where(box, np.where(rows % 2, 0.03, 0.012), np.nan).astype(np.float32)
    sc = score_candidates(box, *across_box(), PROJ, jaw=JAW,
                          depth=DepthView(h, M, footprint=foot))
    assert (sc.contact_tilt_rad[0] > 0.1) == leans
    assert (sc.score_tilt[0] < 1.0) == leans


def test_torque_term_reads_only_the_part_of_the_pad_that_meets_the_side():
    """A grasp at the end of a bar, its 22 mm pads hanging 6 mm past the bar's end, presses
    the side over 16 mm of their width: the torsional friction is that overlap's, so its
    torque ratio per metre of lever is the narrower patch's, not the whole pad's as at the
    bar's middle."""
    bar = rectangle(SHAPE, (160.0, 120.0), 200, 30)  # columns 60-259
    view = DepthView(heights(bar, 0.03), M, centre_of_mass_px=(160.0, 120.0), mass_kg=0.4)
    x, y, t = np.array([190.0, 255.0]), np.array([120.0, 120.0]), np.full(2, math.pi / 2)
    sc = score_candidates(bar, x, y, t, PROJ, jaw=JAW, depth=view)
    per_lever = sc.torque_ratio / sc.lever_m
    r = lambda w: float(mean_patch_radius_m(np.array([0.03]), w)[0])  # noqa: E731
    # the lines 2.2 px apart from 11 px left of the centre to 4.4 px right of it meet the
    # bar (columns up to 259.5): a band 15.4 px wide plus one line's share, 17.6 mm
    assert per_lever[1] / per_lever[0] == pytest.approx(r(0.022) / r(0.0176), rel=1e-4)
    assert sc.score_torque[1] < sc.score_torque[0]


@pytest.mark.parametrize("rows_beyond, wedge, section_m", [((70, 170), True, 0.100),
                                                           ((81, 170), False, 0.078)])
def test_a_section_wider_than_the_stroke_under_part_of_the_pad_is_a_wedge_pinch(rows_beyond,
                                                                                wedge, section_m):
    """A lying can 100 mm across seen from above: the 78 mm chord above the fingertips runs
    to column 219, its full section (the footprint) only to column 209, as where a can's
    end is seen cut at a slant. Pinched across at column 214, the pad's middle line meets
    the chord alone, but the lines of its 22 mm width over the body meet it above a section
    wider than the 85 mm stroke, beyond both contacts: a wedge pinch, scored 0. Where the
    footprint under those lines runs on beyond one contact only (a mug's handle), there is
    no such section."""
    chord = rectangle(SHAPE, (160.0, 120.0), 120, 78)  # columns 100-219, rows 81-158
    foot = chord.copy()
    foot[rows_beyond[0]:rows_beyond[1], 100:210] = True
    view = DepthView(heights(chord, 0.02), M, footprint=foot)
    x, y, t = np.array([150.0, 214.0]), np.array([120.0, 120.0]), np.full(2, math.pi / 2)
    sc = score_candidates(chord, x, y, t, PROJ, jaw=JAW, depth=view)
    assert sc.tan_score[1] > 0.5
    assert bool(sc.score[1] == 0.0) is wedge and bool(sc.score_tilt[1] == 0.0) is wedge
    assert sc.section_m[1] == pytest.approx(section_m, abs=0.0015)
    # in the can's middle the pad's middle line itself runs over the body (or the handle)
    assert bool(sc.score_tilt[0] == 0.0) is wedge


@pytest.mark.parametrize("palm_width_m", [math.nan, 0.05])
def test_each_candidates_depth_terms_are_its_own_whatever_batch_it_is_scored_in(palm_width_m):
    # the depth kernel reads and writes a batch's evaluated candidates by index among the
    # collided and missed ones: each candidate's terms (a wide palm's hits included) are the
    # ones it gets scored alone, and a candidate not evaluated keeps no terms
    bar = rectangle(SHAPE, (150.0, 110.0), 20, 40)
    can = ellipse(SHAPE, (90.0, 120.0), 18, 25)
    neighbour = rectangle(SHAPE, (150.0 + 34.0, 110.0), 30, 100)
    image = bar | can | neighbour
    h = np.where(neighbour, 0.08, np.where(bar, 0.02, np.where(can, 0.015, np.nan)))
    view = DepthView(h.astype(np.float32), M, (150.0, 110.0), 0.3, image)
    jaw = dataclasses.replace(JAW, palm_width_m=palm_width_m)
    rng = np.random.default_rng(3)
    x, y = rng.uniform(60, 220, 400), rng.uniform(70, 170, 400)
    t = rng.uniform(0, math.pi, 400)
    batch = score_candidates(image, x, y, t, PROJ, jaw=jaw, depth=view)
    ev = np.flatnonzero(batch.evaluated)
    assert 40 < ev.size < 360 and batch.body_collision[ev].any() and batch.score[ev].any()
    fields = ("score", "body_collision", "contact_height_m", "contact_tilt_rad", "section_m",
              "lever_m", "torque_ratio", "score_contact", "score_torque", "score_tilt",
              "score_swing")
    for k in ev[::7]:
        alone = score_candidates(image, x[k:k + 1], y[k:k + 1], t[k:k + 1], PROJ, jaw=jaw,
                                 depth=view)
        for name in fields:
            np.testing.assert_array_equal(getattr(batch, name)[k], getattr(alone, name)[0],
                                          err_msg=f"{name} of candidate {k}")
    rest = np.setdiff1d(np.arange(400), ev)
    assert not batch.body_collision[rest].any() and np.isnan(batch.contact_height_m[rest]).all()


@pytest.mark.parametrize("bad, message", [
    (dict(contact_left=np.zeros((3, 2))), "contact_left must have shape \\(N, 2\\) with N = 4"),
    (dict(contact_right=np.zeros(4)), "contact_right must have shape \\(N, 2\\)"),
    (dict(width_px=np.zeros(5)), "width_px must have shape \\(N,\\) with N = 4"),
    (dict(x=np.zeros(3)), "x and y must have the same length|y and x"),
    (dict(theta=[0.0, np.nan, 0.0, 0.0]), "theta\\[1\\] must be finite"),
    (dict(line_offsets_px=[]), "line_offsets_px must be finite and not empty"),
    (dict(open_width_px=0.0), "open_width_px"),
])
def test_physical_terms_refuses_arrays_that_do_not_match_by_name(bad, message):
    # the kernel reads every array at each candidate's index: a short one is refused, not read
    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    args = dict(image=box, x=np.full(4, 150.0), y=np.full(4, 110.0), theta=np.zeros(4),
                contact_left=np.full((4, 2), 120.0), contact_right=np.full((4, 2), 180.0),
                width_px=np.full(4, 60.0), open_width_px=85.0,
                line_offsets_px=PROJ.line_offsets_px(), jaw=JAW,
                view=DepthView(heights(box, 0.03), M), params=DepthParams())
    physical_terms(**args)  # as given: fine
    with pytest.raises(ValueError, match=message):
        physical_terms(**{**args, **bad})


def _sloping_on(lean_deg: float | None, step_m: float = 0.0, beyond_px: int = 10):
    """A 60 x 40 box 20 mm above the fingertips (a cap over a shoulder: its heights rise as a
    wall) whose footprint runs on beyond_px past it, the surface out there falling from
    step_m under the fingertips' plane by 1 / tan(lean) metres a metre outwards (lean None:
    flat, a ledge step_m under the plane); the box mask, its footprint and those heights."""
    from scipy.ndimage import distance_transform_edt

    box = rectangle(SHAPE, (150.0, 110.0), 60, 40)
    foot = rectangle(SHAPE, (150.0, 110.0), 60 + 2 * beyond_px, 40 + 2 * beyond_px)
    out_m = distance_transform_edt(box == 0) * M  # rectangle() is uint8
    fall = 0.0 if lean_deg is None else 1.0 / math.tan(math.radians(lean_deg))
    below = np.where(box, 0.02, -step_m - out_m * fall)
    return box, foot, np.where(foot, below, np.nan).astype(np.float32)


@pytest.mark.parametrize("lean_deg", [5.0, 12.0, 30.0, 45.0])
def test_a_side_sloping_on_under_the_fingertips_leans_the_pad_edges_contact(lean_deg):
    """An upright bottle's cap over a sloping shoulder, the fingertips where the shoulder
    crosses their plane: the cap rises as a wall, but the pads' lower edges press the
    shoulder (the simulated mustard bottle's pads met it leaning 28-31° and it slid out at
    μ 0.5). The lean read from the surface under the plane is the shoulder's, within 2°,
    and with taped pads (a 26.6° cone: 1 up to 6.6°, 0 from 21.6°) a 30° shoulder scores 0,
    a 12° one about 0.6 and a 5° one 1."""
    box, foot, below = _sloping_on(lean_deg)
    taped = dataclasses.replace(JAW, friction=0.5)
    sc = score_candidates(box, *across_box(), PROJ, jaw=taped,
                          depth=DepthView(heights(box, 0.02), M, footprint=foot,
                                          footprint_height_m=below))
    assert math.degrees(sc.contact_tilt_rad[0]) == pytest.approx(lean_deg, abs=2.0)
    expected = {5.0: 1.0, 12.0: (21.57 - 12.0) / 15.0, 30.0: 0.0, 45.0: 0.0}[lean_deg]
    assert sc.score_tilt[0] == pytest.approx(expected, abs=0.01)
    without = score_candidates(box, *across_box(), PROJ, jaw=taped,
                               depth=DepthView(heights(box, 0.02), M, footprint=foot))
    assert without.contact_tilt_rad[0] == 0.0  # the wall alone: no lean


@pytest.mark.parametrize("lean_deg, step_m, why", [
    (30.0, 0.012, "a shoulder 12 mm under the fingertips: the pads pass above it"),
    (None, 0.002, "a ledge 2 mm under them: flat, the pads pass over it"),
    (30.0, -0.010, "the target runs on 10 mm above the plane out there: no side under the pad"),
])
def test_a_surface_under_the_fingertips_the_pad_does_not_press_is_no_lean(lean_deg, step_m, why):
    box, foot, below = _sloping_on(lean_deg, step_m)
    sc = score_candidates(box, *across_box(), PROJ, jaw=dataclasses.replace(JAW, friction=0.5),
                          depth=DepthView(heights(box, 0.02), M, footprint=foot,
                                          footprint_height_m=below))
    assert sc.contact_tilt_rad[0] == 0.0 and sc.score_tilt[0] == 1.0, why


@pytest.mark.parametrize("lean_deg, beyond_px, no_side", [
    (None, 30, True),   # level with the fingertips under the finger's whole depth (16 px)
    (30.0, 30, False),  # a side falling away under the pad: its lean, not a top
    (None, 10, False),  # level for less than the finger's depth: passed over, as before
])
def test_a_surface_level_with_the_fingertips_under_the_whole_finger_is_no_side(
        lean_deg, beyond_px, no_side):
    """Where the footprint runs on beyond a contact under the finger's whole depth (its
    thickness and margin, 16 px here) and stays within 4 mm of the fingertips' plane there,
    the finger's lower end comes down on it and the pad's face squeezes no side (the lying
    cans wider than the stroke that the Franka hand's and the 2F-85's pads met on the
    slant: the jaw closed on nothing or rolled them, 0 held of 28 on the rubber Franka
    hand): tilt 90°, score 0."""
    box, foot, below = _sloping_on(lean_deg, 0.001, beyond_px)
    sc = score_candidates(box, *across_box(), PROJ, jaw=JAW,
                          depth=DepthView(heights(box, 0.02), M, footprint=foot,
                                          footprint_height_m=below))
    # (the 100 mm section of the footprint is also a wedge pinch for an 85 mm stroke: the
    # tilt, not the score, tells the two rules apart)
    expected = 90.0 if no_side else (lean_deg or 0.0)
    assert math.degrees(sc.contact_tilt_rad[0]) == pytest.approx(expected, abs=2.0)
    assert sc.score_tilt[0] == 0.0 or not no_side


@settings(max_examples=60, deadline=None)
@given(lean_deg=st.floats(15.0, 55.0), reach_mm=st.floats(-2.0, 2.0),
       cx=st.integers(20, 40), cy=st.integers(20, 40), angle=st.floats(0.0, 2 * math.pi))
def test_the_lean_under_the_plane_is_the_slopes_wherever_it_reaches_the_plane(
        lean_deg, reach_mm, cx, cy, angle):
    """Property: a plane surface falling away from contact pixel (cx, cy) in direction angle
    at lean_deg from the vertical, reaching the fingertips' plane within 2 mm of the contact,
    reads as lean_deg (within 2°: the samples are whole pixels); moved 8 mm further under
    the plane it reads 0 (a step). Leans from 15°, where the tilt factor starts to fall
    with taped pads: under that a pixel's rounding moves a steep side by millimetres."""
    from scoring._depth_kernel import _below_lean  # private kernel, against its geometry

    ux, uy = math.cos(angle), math.sin(angle)
    rows, cols = np.mgrid[0:64, 0:64]
    out_m = ((cols - cx) * ux + (rows - cy) * uy) * M  # distance outwards from the contact
    fall = 1.0 / math.tan(math.radians(lean_deg))
    offsets = np.array([-6.0, -2.0, 2.0, 6.0])
    for extra_m, expected in ((0.0, lean_deg), (0.008, 0.0)):
        below = (-(reach_mm * 1e-3 + extra_m) - out_m * fall).astype(np.float32)
        lean = _below_lean(below, float(cx), float(cy), ux, uy, offsets, 5.0, M, 0.004,
                           math.radians(60.0))
        assert math.degrees(lean) == pytest.approx(expected, abs=2.0)


def test_one_line_seeing_past_the_shoulder_to_the_body_far_below_leaves_its_lean():
    """A shoulder leaning 24° under the fingertips' plane, one of the finger's lines reading a
    pixel 97 mm under it two pixels out (it sees past the shoulder's edge to the body below,
    as on the taped short pads' upright mustard bottle of seed 30, which slid out at 0.70):
    the lean still reads the shoulder's, within 2° (each step's depth is the lines' median)."""
    from scoring._depth_kernel import _below_lean  # private kernel, against its geometry

    cx = cy = 30
    rows, cols = np.mgrid[0:64, 0:64]
    out_m = (cols - cx) * M  # outwards along +x from the contact
    below = (-out_m / math.tan(math.radians(24.0))).astype(np.float32)
    offsets = np.array([-6.0, -2.0, 2.0, 6.0])
    clean = _below_lean(below, float(cx), float(cy), 1.0, 0.0, offsets, 5.0, M, 0.004,
                        math.radians(60.0))
    below[cy + 6, cx + 2] = -0.097  # the outermost line, two pixels out
    mixed = _below_lean(below, float(cx), float(cy), 1.0, 0.0, offsets, 5.0, M, 0.004,
                        math.radians(60.0))
    assert math.degrees(clean) == pytest.approx(24.0, abs=2.0)
    assert math.degrees(mixed) == pytest.approx(24.0, abs=2.0)
