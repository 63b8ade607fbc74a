"""The antipodal sampler: its pairs lie in the friction cone and within the opening, it is
seeded, and the search built on it reaches the planning loop's best score."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import (GripperProjection, SearchParams, antipodal_candidates, prepare_silhouette,
                     search_grasps)
from scoring.shapes import ellipse, rectangle, wedge

SHAPE = (200, 240)
PROJ = GripperProjection(15, 80, 15)


def _shape(kind: int, a: float, b: float, angle: float) -> np.ndarray:
    centre = (120.0, 100.0)
    if kind == 0:
        return rectangle(SHAPE, centre, a, b, angle)
    if kind == 1:
        return ellipse(SHAPE, centre, a / 2, b / 2, angle)
    return wedge(SHAPE, centre, 0.5 * a, a, b, angle)


@settings(max_examples=25, deadline=None)
@given(kind=st.integers(0, 2), a=st.floats(12.0, 110.0), b=st.floats(12.0, 110.0),
       angle=st.floats(0.0, math.pi), friction=st.floats(0.2, 1.5),
       seed=st.integers(0, 2**31 - 1))
def test_every_pair_is_in_the_friction_cone_and_within_the_opening(kind, a, b, angle,
                                                                     friction, seed):
    sil = _shape(kind, a, b, angle)
    prep = prepare_silhouette(sil)
    p = antipodal_candidates(prep, PROJ, friction=friction, max_candidates=300, seed=seed)
    assert len(p) <= 300
    d = p.contact_b - p.contact_a
    dist = np.hypot(d[:, 0], d[:, 1])
    assert np.all(dist <= PROJ.open_width_px + 1e-9) and np.all(dist >= 2.0 - 1e-9)
    u = d / dist[:, None]
    cos_cone = math.cos(math.atan(friction)) - 1e-9
    for c, sign in ((p.contact_a, -1.0), (p.contact_b, 1.0)):
        cols, rows = c[:, 0].astype(int), c[:, 1].astype(int)
        assert np.all(sil[rows, cols] != 0)  # on the object, its boundary (normal defined)
        n = np.stack([prep.normal_col[rows, cols], prep.normal_row[rows, cols]], axis=1)
        assert np.all(sign * np.sum(n * u, axis=1) >= cos_cone)
    np.testing.assert_allclose(p.x, 0.5 * (p.contact_a[:, 0] + p.contact_b[:, 0]))
    np.testing.assert_allclose(p.y, 0.5 * (p.contact_a[:, 1] + p.contact_b[:, 1]))
    assert np.all((p.theta >= 0.0) & (p.theta < math.pi))
    # even entries close along the pair, odd ones along the bisector of the inward normals
    even = np.arange(len(p)) % 2 == 0
    np.testing.assert_allclose(np.cos(p.theta[even]) * dist[even], d[even, 0], atol=1e-9)
    np.testing.assert_allclose(np.sin(p.theta[even]) * dist[even], d[even, 1], atol=1e-9)
    na, nb = (np.stack([prep.normal_col[c[:, 1].astype(int), c[:, 0].astype(int)],
                        prep.normal_row[c[:, 1].astype(int), c[:, 0].astype(int)]], axis=1)
              for c in (p.contact_a, p.contact_b))
    bis = (nb - na)[~even]
    closing = np.stack([np.cos(p.theta[~even]), np.sin(p.theta[~even])], axis=1)
    # parallel or anti-parallel (θ is taken modulo π)
    cross = closing[:, 0] * bis[:, 1] - closing[:, 1] * bis[:, 0]
    np.testing.assert_allclose(cross / np.hypot(bis[:, 0], bis[:, 1]), 0.0, atol=1e-9)


def test_a_box_wider_than_the_opening_one_way_gives_pairs_across_its_narrow_side_only():
    sil = rectangle(SHAPE, (120.0, 100.0), 120, 40)   # 120 px > the 80 px opening
    p = antipodal_candidates(sil, PROJ, friction=0.3, seed=0)
    assert len(p) > 50
    # closing across the 40 px height: θ near π/2 (the pair's line within the 0.3 cone,
    # the normals' bisector square to the long faces)
    assert np.all(np.abs(p.theta - math.pi / 2) < math.radians(20))
    assert np.median(np.abs(p.theta[1::2] - math.pi / 2)) < math.radians(3)


def test_pairs_stay_on_the_target_when_neighbours_are_in_the_silhouette():
    target = rectangle(SHAPE, (80.0, 100.0), 40, 40).astype(bool)
    sil = target | rectangle(SHAPE, (170.0, 100.0), 40, 40).astype(bool)
    p = antipodal_candidates(sil, PROJ, target=target, seed=0)
    assert len(p) > 0
    for c in (p.contact_a, p.contact_b):
        assert np.all(target[c[:, 1].astype(int), c[:, 0].astype(int)])


def test_same_seed_same_pairs_other_seed_other_subset():
    sil = ellipse(SHAPE, (120.0, 100.0), 35, 25, 0.4)
    a = antipodal_candidates(sil, PROJ, max_candidates=100, seed=7)
    b = antipodal_candidates(sil, PROJ, max_candidates=100, seed=7)
    c = antipodal_candidates(sil, PROJ, max_candidates=100, seed=8)
    assert len(a) == 100
    np.testing.assert_array_equal(a.contact_a, b.contact_a)
    np.testing.assert_array_equal(a.theta, b.theta)
    assert not np.array_equal(a.contact_a, c.contact_a)


def test_antipodal_search_reaches_the_planning_loops_best_score_with_fewer_candidates():
    anti = SearchParams(sampler="antipodal")
    for sil in (rectangle(SHAPE, (120.0, 100.0), 60, 40, 0.3),
                wedge(SHAPE, (120.0, 100.0), 40, 70, 110),
                ellipse(SHAPE, (120.0, 100.0), 45, 30, 0.5)):
        tan = search_grasps(sil, PROJ, top_k=5, seed=1)
        a = search_grasps(sil, PROJ, top_k=5, seed=1, settings=anti)
        b = search_grasps(sil, PROJ, top_k=5, seed=1, settings=anti)
        assert a.scores.score[0] >= tan.scores.score[0] - 0.02
        assert a.n_scored < tan.n_scored or tan.n_scored <= 4096
        np.testing.assert_array_equal(a.x, b.x)   # same seed, same grasps
        np.testing.assert_array_equal(a.scores.score, b.scores.score)


def test_antipodal_search_falls_back_to_the_global_rounds_without_pairs():
    # a lone pixel has no normal (its neighbourhood is symmetric), so no pair: the search
    # still runs, with Tan's global rounds
    sil = np.zeros(SHAPE, np.uint8)
    sil[100, 100] = 1
    g = search_grasps(sil, PROJ, top_k=1, seed=0, settings=SearchParams(sampler="antipodal",
                                                                       max_candidates=2048))
    assert g.n_scored >= 2048   # the global round ran


@pytest.mark.parametrize("bad", [{"sampler": "dexnet"}, {"antipodal_candidates": 0},
                                 {"antipodal_refine": 1.5}, {"antipodal_cone_rad": 1.6},
                                 {"antipodal_refine_rounds": -1}])
def test_bad_sampler_settings_name_the_value(bad):
    with pytest.raises(ValueError, match=str(list(bad)[0])):
        SearchParams(**bad)


def test_bad_friction_names_the_value():
    with pytest.raises(ValueError, match="friction must be a finite number > 0, got -1"):
        antipodal_candidates(rectangle(SHAPE, (120.0, 100.0), 40, 40), PROJ, friction=-1.0)
