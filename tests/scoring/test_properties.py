"""Property tests: the measure is total and bounded on any shape, gripper and candidate."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import GripperProjection, MeasureParams, score_candidates, search_grasps
from scoring.shapes import ellipse, polygon, rectangle


@st.composite
def silhouettes(draw):
    """Random scenes: empty, full, noise, or a few rectangles, ellipses and polygons."""
    h, w = draw(st.integers(1, 80)), draw(st.integers(1, 80))
    kind = draw(st.sampled_from(["empty", "full", "noise", "shapes"]))
    if kind == "empty":
        return np.zeros((h, w), np.uint8)
    if kind == "full":
        return np.ones((h, w), np.bool_)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if kind == "noise":
        return rng.random((h, w)) < draw(st.floats(0.0, 1.0))
    sil = np.zeros((h, w), np.uint8)
    for _ in range(draw(st.integers(1, 4))):
        c = (rng.uniform(0, w), rng.uniform(0, h))
        size = rng.uniform(1, 40, 2)
        pick = rng.integers(3)
        if pick == 0:
            sil |= rectangle((h, w), c, size[0], size[1], rng.uniform(0, np.pi))
        elif pick == 1:
            sil |= ellipse((h, w), c, size[0] / 2, size[1] / 2, rng.uniform(0, np.pi))
        else:
            sil |= polygon((h, w), rng.uniform(-5, max(h, w) + 5, (rng.integers(3, 7), 2)))
    return sil


projections = st.builds(GripperProjection,
                        finger_width_px=st.floats(0.1, 40, allow_nan=False),
                        open_width_px=st.floats(0.1, 150, allow_nan=False),
                        n_lines=st.integers(1, 25))
params = st.builds(MeasureParams, k=st.floats(0, 1), secondary_tol_px=st.floats(0, 10),
                   coarse_step_px=st.integers(0, 15), min_lever_fraction=st.floats(0, 2),
                   balance_tol_px=st.floats(0, 5), outline_sigma_px=st.floats(0.3, 3),
                   normal_window=st.sampled_from([3, 5, 7, 9]))
coords = st.floats(-200, 300, allow_nan=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(silhouettes(), projections, params, st.lists(st.tuples(coords, coords, st.floats(-10, 10)),
                                                      min_size=0, max_size=40))
def test_scores_are_bounded_finite_and_consistent(sil, proj, prm, cands):
    x, y, t = (np.array([c[i] for c in cands], np.float64) for i in range(3))
    s = score_candidates(sil, x, y, t, proj, prm)
    assert len(s) == len(cands)
    assert s.score.dtype == np.float32
    assert np.isfinite(s.score).all()
    assert ((s.score >= 0) & (s.score <= 1)).all()
    for f in (s.score_d_t, s.score_r_r, s.score_s_a, s.score_s_f):
        assert np.isfinite(f).all() and ((f >= 0) & (f <= 1)).all()
    evaluated = ~(s.collision | s.missing)
    assert not (s.collision & s.missing).any()
    for raw in (s.d_t, s.r_r, s.s_a, s.s_f):
        assert np.isfinite(raw[evaluated]).all() and (raw[evaluated] >= 0).all()
        assert np.isnan(raw[~evaluated]).all()
    assert (s.score[~evaluated] == 0).all()
    # eq. 16 on every evaluated candidate: k times the weakest feature score plus (1 - k)
    # times the mean of the other three
    fs = np.stack([s.score_d_t, s.score_r_r, s.score_s_a, s.score_s_f])[:, evaluated]
    lo = fs.min(axis=0)
    expected = prm.k * lo + (1 - prm.k) * (fs.sum(axis=0) - lo) / 3
    np.testing.assert_allclose(s.score[evaluated], expected, atol=1e-5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(silhouettes(), projections, st.integers(1, 5), st.integers(0, 1000))
def test_search_returns_sorted_distinct_grasps_on_any_shape(sil, proj, top_k, seed):
    from scoring import SearchParams

    g = search_grasps(sil, proj, top_k=top_k, seed=seed,
                      settings=SearchParams(batch=128, max_candidates=512, refine_rounds=1))
    assert len(g) <= top_k
    assert (np.diff(g.scores.score) <= 0).all()
    assert ((g.theta >= 0) & (g.theta < np.pi)).all()
