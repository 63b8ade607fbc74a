"""The kernels read without bounds tests only where every read is known to lie in the image.

Tan's kernel (``_box_inside``), the tilt profile (``_grid_inside``) and the finger bodies
(``_bodies_inside``) each decide from the corners of their samples' grid; these tests
enumerate every sample, computed as the kernel computes it, and hold the decision to it in
both directions: a wrong True reads outside the image, a wrong False only costs time.
"""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import GripperProjection
from scoring._depth_kernel import _bodies_inside, _grid_inside  # private: the fast paths' tests
from scoring._kernel import _box_inside

ROWS, COLS = 60, 80
coords = st.tuples(st.floats(-30, COLS + 30), st.floats(-30, ROWS + 30))
angles = st.floats(-math.pi, 2 * math.pi)


def _inside(col: np.ndarray, row: np.ndarray) -> bool:
    """Whether every (col, row) (pixel + 0.5, before the floor) rounds to a pixel of the image."""
    c, r = np.floor(col), np.floor(row)
    return bool(np.all((c >= 0) & (c < COLS) & (r >= 0) & (r < ROWS)))


@settings(max_examples=300, deadline=None)
@given(coords, angles, st.floats(2.0, 40.0), st.floats(10.0, 90.0), st.integers(1, 15))
def test_tan_kernel_skips_bounds_tests_exactly_when_every_search_sample_is_inside(
        xy, theta, finger_px, open_px, n_lines):
    x, y = xy
    dw = GripperProjection(finger_px, open_px, n_lines).line_offsets_px()
    c, s = math.cos(theta), math.sin(theta)
    half_r = 0.5 * open_px
    n_samples = int(math.floor(open_px)) + 1
    cols, rows = [], []
    for d in dw:  # as _line_centre and _search_side compute each sample
        lx, ly = x - d * s, y + d * c
        for ux, uy in ((-c, -s), (c, s)):
            ex, ey = lx + half_r * ux, ly + half_r * uy
            for j in range(n_samples):
                cols.append(ex - j * ux + 0.5)
                rows.append(ey - j * uy + 0.5)
    want = _inside(np.array(cols), np.array(rows))
    assert _box_inside(ROWS, COLS, x, y, c, s, dw[0], dw[-1], half_r, n_samples) == want


@settings(max_examples=300, deadline=None)
@given(coords, angles, st.integers(0, 25), st.lists(st.floats(-12, 12), min_size=1, max_size=8))
def test_tilt_profile_skips_bounds_tests_exactly_when_every_profile_sample_is_inside(
        xy, theta, n, offsets):
    cx, cy = xy
    ux, uy = math.cos(theta), math.sin(theta)
    lines = np.unique(np.asarray(offsets))  # the kernel's lines ascend (np.unique)
    cols = [cx + k * ux - off * uy + 0.5 for k in range(1, n + 1) for off in lines]
    rows = [cy + k * uy + off * ux + 0.5 for k in range(1, n + 1) for off in lines]
    want = n >= 1 and _inside(np.array(cols), np.array(rows))
    got = n >= 1 and _grid_inside(ROWS, COLS, cx, cy, ux, uy, n, lines[0], lines[-1])
    assert got == want


@settings(max_examples=300, deadline=None)
@given(coords, angles, st.floats(2.0, 30.0), st.floats(5.0, 45.0), st.floats(1.0, 20.0),
       st.integers(1, 15))
def test_finger_bodies_skip_bounds_tests_exactly_when_every_body_sample_is_inside(
        xy, theta, finger_px, half_r, body_px, n_lines):
    x, y = xy
    c, s = math.cos(theta), math.sin(theta)
    offsets = GripperProjection(finger_px, 2 * half_r, n_lines).line_offsets_px()
    across = np.unique(np.append(np.arange(0, n_lines, 2), n_lines - 1)).astype(np.int64)
    along = np.append(np.arange(1.0, body_px, 2), body_px)
    cols, rows = [], []
    for i in across:  # as _bodies_land computes each sample
        bx, by = x - offsets[i] * s, y + offsets[i] * c
        for j in along:
            d = half_r + j
            cols += [bx + d * c + 0.5, bx - d * c + 0.5]
            rows += [by + d * s + 0.5, by - d * s + 0.5]
    want = _inside(np.array(cols), np.array(rows))
    assert _bodies_inside(ROWS, COLS, x, y, c, s, offsets, across, along, half_r) == want
