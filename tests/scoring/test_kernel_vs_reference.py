"""The Numba kernel against the plain-Python reference, value for value."""
import zlib

import numpy as np
import pytest

from scoring import GripperProjection, MeasureParams, prepare_silhouette, score_candidates
from scoring.reference import reference_score
from scoring.shapes import ellipse, polygon, rectangle, ring, wedge

SHAPE = (200, 240)
FEATURES = ("d_t", "r_r", "s_a", "s_f", "score_d_t", "score_r_r", "score_s_a", "score_s_f", "score")


def varied_shapes():
    """Silhouettes of several kinds, each with a few objects (rasterised at odd angles)."""
    c = (120.0, 100.0)
    blob_rng = np.random.default_rng(7)
    t = np.sort(blob_rng.uniform(0, 2 * np.pi, 9))
    radius = blob_rng.uniform(18, 40, 9)
    blob = np.stack([150 + radius * np.cos(t), 70 + radius * np.sin(t)], axis=1)
    return {
        "rectangles": rectangle(SHAPE, c, 50, 90, 0.3) | rectangle(SHAPE, (40, 40), 30, 30),
        "wedge+ellipse": wedge(SHAPE, (80, 100), 30, 60, 90, -0.4) | ellipse(SHAPE, (180, 90), 25, 40, 1.0),
        "ring+bar": ring(SHAPE, (80, 80), 42, 30) | rectangle(SHAPE, (180, 130), 10, 120, 0.7),
        "polygon": polygon(SHAPE, blob) | polygon(SHAPE, np.array([[30, 150], [90, 140], [70, 190], [40, 185]])),
    }


@pytest.mark.parametrize("name", list(varied_shapes()))
@pytest.mark.parametrize("proj", [GripperProjection(15, 100, 15), GripperProjection(9.5, 63.3, 6)],
                         ids=["w15-r100-n15", "w9.5-r63.3-n6"])
def test_kernel_equals_reference_on_random_candidates(name, proj):
    sil = varied_shapes()[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}/{proj.n_lines}".encode()))
    rows, cols = np.nonzero(sil)
    pick = rng.integers(0, rows.size, 80)
    # around object pixels (most are evaluated) plus anywhere in and beyond the image
    spread = proj.open_width_px / 6
    x = np.concatenate([cols[pick] + rng.normal(0, spread, 80), rng.uniform(-40, SHAPE[1] + 40, 8)])
    y = np.concatenate([rows[pick] + rng.normal(0, spread, 80), rng.uniform(-40, SHAPE[0] + 40, 8)])
    theta = rng.uniform(-np.pi, 2 * np.pi, x.size)
    got = score_candidates(sil, x, y, theta, proj)
    n_evaluated = 0
    for k in range(x.size):
        ref = reference_score(sil, x[k], y[k], theta[k], proj)
        assert (got.collision[k], got.missing[k]) == (ref.collision, ref.missing), k
        if ref.collision or ref.missing:
            assert got.score[k] == 0.0 and np.isnan(got.d_t[k])
            continue
        n_evaluated += 1
        for f in FEATURES:
            assert getattr(got, f)[k] == pytest.approx(getattr(ref, f), abs=1e-4), (k, f)
    assert n_evaluated >= 15  # the comparison must reach the full measure


def test_kernel_equals_reference_with_non_default_parameters():
    sil = varied_shapes()["wedge+ellipse"]
    params = MeasureParams(k=0.6, secondary_tol_px=4.0, coarse_step_px=3, d_t_threshold=0.5,
                           min_lever_fraction=0.2, balance_tol_px=1.0, outline_sigma_px=1.5,
                           normal_window=9)
    proj = GripperProjection(12, 80, 9)
    rng = np.random.default_rng(3)
    rows, cols = np.nonzero(sil)
    pick = rng.integers(0, rows.size, 60)
    x, y = cols[pick] + rng.normal(0, 10, 60), rows[pick] + rng.normal(0, 10, 60)
    theta = rng.uniform(0, np.pi, 60)
    got = score_candidates(sil, x, y, theta, proj, params)
    for k in range(x.size):
        ref = reference_score(sil, x[k], y[k], theta[k], proj, params)
        assert (got.collision[k], got.missing[k]) == (ref.collision, ref.missing)
        assert got.score[k] == pytest.approx(ref.score, abs=1e-4)


@pytest.mark.parametrize("sigma_px", [0.4, 1.0, 2.5])
def test_prepared_blur_equals_scipys_separable_gaussian_with_zero_border(sigma_px):
    ndimage = pytest.importorskip("scipy.ndimage", reason="the reference blur is scipy's")

    sil = varied_shapes()["ring+bar"][:90, :120]   # touches the image border: zero padding
    # the blur the outlines are placed with: normalised Gaussian taps of radius max(1, ceil(3σ))
    radius = max(1, int(np.ceil(3 * sigma_px)))
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma_px) ** 2)
    taps /= taps.sum()
    ref = ndimage.correlate1d(sil.astype(np.float64), taps, axis=1, mode="constant", cval=0.0)
    ref = ndimage.correlate1d(ref, taps, axis=0, mode="constant", cval=0.0)
    got = prepare_silhouette(sil, MeasureParams(outline_sigma_px=sigma_px)).blur
    assert got.dtype == np.float32 and got.shape == sil.shape
    # float32 storage: within half an ulp of values in [0, 1]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-7)
