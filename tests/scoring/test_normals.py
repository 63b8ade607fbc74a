"""Boundary normals of binary silhouettes (Tan eqs. 6-8)."""
import math

import numpy as np
import pytest

from scoring import contact_normal, disc_weights, normal_field
from scoring.reference import reference_normal
from scoring.shapes import ellipse, rectangle


def test_disc_weights_are_circular_and_symmetric():
    w = disc_weights(7)
    assert w.shape == (7, 7)
    np.testing.assert_allclose(w, w.T)
    np.testing.assert_allclose(w, w[::-1, ::-1])
    assert w[0, 0] == 0.0 and w[3, 3] == 1.0 and w[3, 0] == pytest.approx(0.5)


@pytest.mark.parametrize("side,expected", [("left", (-1.0, 0.0)), ("right", (1.0, 0.0)),
                                           ("top", (0.0, -1.0)), ("bottom", (0.0, 1.0))])
def test_straight_edge_normal_points_straight_out(side, expected):
    sil = np.zeros((40, 40), np.uint8)
    sil[10:30, 10:30] = 1
    row, col = {"left": (20, 10), "right": (20, 29), "top": (10, 20), "bottom": (29, 20)}[side]
    np.testing.assert_allclose(contact_normal(sil, row, col, disc_weights(7)), expected, atol=1e-12)


def test_disc_boundary_normals_are_radial():
    sil = ellipse((200, 200), (100.3, 99.6), 60, 60)
    nx, ny = normal_field(sil)
    rows, cols = np.nonzero((nx != 0) | (ny != 0))
    radial = np.arctan2(rows - 99.6, cols - 100.3)
    error = np.angle(np.exp(1j * (np.arctan2(ny[rows, cols], nx[rows, cols]) - radial)))
    assert rows.size > 300
    assert np.degrees(np.abs(error)).max() < 15.0  # pixel staircases: a few degrees of scatter
    assert np.degrees(np.abs(error)).mean() < 5.0
    assert abs(np.degrees(error.mean())) < 0.5  # scatter, no bias


def test_isolated_pixel_has_no_normal():
    sil = np.zeros((9, 9), np.uint8)
    sil[4, 4] = 1
    assert contact_normal(sil, 4, 4, disc_weights(7)) == (0.0, 0.0)


def test_pixels_beyond_the_image_count_as_vacant():
    sil = np.ones((10, 10), np.uint8)
    nx, ny = contact_normal(sil, 5, 0, disc_weights(7))  # on the left border
    assert nx == pytest.approx(-1.0) and ny == pytest.approx(0.0, abs=1e-12)


def test_normal_field_is_zero_inside_and_outside_and_matches_reference_on_boundary():
    sil = rectangle((60, 80), (40.2, 30.7), 30, 20, 0.5)
    nx, ny = normal_field(sil)
    has_normal = (nx != 0) | (ny != 0)
    # the boundary: object pixels with a vacant 8-neighbour
    padded = np.pad(sil, 1)
    vacant_near = np.zeros_like(sil, bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            vacant_near |= padded[1 + dr:61 + dr, 1 + dc:81 + dc] == 0
    boundary = sil.astype(bool) & vacant_near
    inside = sil.astype(bool) & ~vacant_near
    assert boundary.sum() > 80 and inside.sum() > 300   # a 30 x 20 px rotated rectangle
    assert not nx[sil == 0].any() and not ny[sil == 0].any()
    assert not nx[inside].any() and not ny[inside].any()
    # every boundary pixel has a normal, of unit length and equal to the reference's
    np.testing.assert_array_equal(has_normal, boundary)
    for r, c in zip(*np.nonzero(boundary)):
        np.testing.assert_allclose((nx[r, c], ny[r, c]), reference_normal(sil, r, c), atol=1e-12)
        assert math.hypot(nx[r, c], ny[r, c]) == pytest.approx(1.0)
