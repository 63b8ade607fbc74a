"""scoring.shapes: the analytic silhouettes the tests and benchmarks draw, rasterised by the
pixel-centre rule (a pixel is object when its centre is inside the outline or on it)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.shapes import ellipse, polygon, rectangle, ring, rotate_points, wedge

SHAPE = (200, 240)


def test_axis_aligned_rectangle_with_corners_on_pixel_centres_includes_its_outline():
    sil = rectangle(SHAPE, (100, 80), 40, 20)  # corners at columns 80..120, rows 70..90
    rows, cols = np.nonzero(sil)
    assert (cols.min(), cols.max(), rows.min(), rows.max()) == (80, 120, 70, 90)
    assert sil.sum() == 41 * 21 and sil.dtype == np.uint8


def test_half_pixel_rectangle_holds_exactly_its_area():
    # corners between pixel centres: every pixel is wholly in or out
    assert rectangle(SHAPE, (100.5, 80.5), 40, 20).sum() == 40 * 20


@settings(max_examples=40, deadline=None)
@given(w=st.floats(8, 80), h=st.floats(8, 80), angle=st.floats(0, math.pi),
       cx=st.floats(90, 150), cy=st.floats(80, 120))
def test_rotated_rectangle_area_is_its_area_within_its_perimeter(w, h, angle, cx, cy):
    n = int(rectangle(SHAPE, (cx, cy), w, h, angle).sum())
    # pixel-centre sampling errs by at most about half the perimeter in pixels
    assert abs(n - w * h) <= (w + h) + 4, (n, w * h)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 3), a=st.floats(5, 60), b=st.floats(5, 60), angle=st.floats(0, math.pi))
def test_quarter_turns_about_a_pixel_centre_turn_the_image(k, a, b, angle):
    # rotating the outline by 90° about a pixel centre maps pixel centres onto pixel centres
    c = (100.0, 100.0)
    base = ellipse((201, 201), c, a, b, angle)
    turned = ellipse((201, 201), c, a, b, angle + k * math.pi / 2)
    # image axes: x right, y down; +90° takes (x, y) -> (-y, x) about the centre = np.rot90 by -1
    assert np.array_equal(turned, np.rot90(base, -k))


def test_ring_and_wedge_and_polygon_cover_what_they_should():
    r = ring(SHAPE, (120, 100), 40, 25)
    assert r[100, 120] == 0 and r[100, 120 + 32] == 1 and r[100, 120 + 41] == 0
    assert abs(int(r.sum()) - math.pi * (40 ** 2 - 25 ** 2)) < 2 * math.pi * 65
    wd = wedge(SHAPE, (120, 100), 20, 60, 40)
    assert wd[80, 120 - 10] == 1 and wd[80, 120 - 12] == 0   # top row: 20 wide
    assert wd[120, 120 - 30] == 1 and wd[120, 120 - 32] == 0  # bottom row: 60 wide
    tri = polygon(SHAPE, np.array([[10, 10], [50, 10], [10, 50]]))
    assert tri.sum() == sum(41 - i for i in range(41))  # pixels on and under the hypotenuse


def test_rotate_points_turns_x_towards_y():
    p = rotate_points(np.array([[1.0, 0.0]]), (0.0, 0.0), math.pi / 2)
    assert np.allclose(p, [[0.0, 1.0]])


@pytest.mark.parametrize("points", [np.zeros((2, 2)), np.zeros((4, 3)), [[0, 0], [1, np.nan], [2, 0]]])
def test_polygon_rejects_what_is_not_an_outline(points):
    with pytest.raises(ValueError, match=r"polygon: points must be \(N >= 3, 2\) finite"):
        polygon(SHAPE, np.asarray(points, float))
