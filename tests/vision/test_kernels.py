"""The Numba kernels of the tabletop segmenter against plain-numpy references."""
import numpy as np
import pytest

from vision._camera import ray_axes
from vision._kernels import depth_cuts, height_classes

from .synth import INTR, random_scene, render, look_at


def reference_heights(depth, rx, ry, normal, offset, grow_h, min_h, max_h, max_range):
    """(cand, seed) bool: readings in (0, max_range] whose height above the plane lies in
    (grow_h, max_h), and those of them above min_h."""
    with np.errstate(invalid="ignore"):
        valid = (depth > 0) & (depth <= max_range)
        pts = np.stack([rx[None, :] * depth, ry[:, None] * depth, depth], axis=-1)
        h = pts @ normal + offset
        cand = valid & (h > grow_h) & (h < max_h)
    return cand, cand & (h > min_h)


def reference_cuts(depth, cand, jump_m, jump_ratio):
    """bool: candidates farther than a 4-neighbour candidate by more than the jump threshold."""
    cut = np.zeros_like(cand)
    h, w = depth.shape
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        src = (slice(max(0, -dr), h - max(0, dr)), slice(max(0, -dc), w - max(0, dc)))
        dst = (slice(max(0, dr), h - max(0, -dr)), slice(max(0, dc), w - max(0, -dc)))
        z, q = depth[src], depth[dst]
        both = cand[src] & cand[dst]
        cut[src] |= both & (z > q) & (z - q > np.maximum(jump_m, jump_ratio * q))
    return cut


@pytest.fixture(scope="module")
def frame():
    return render(random_scene(7, 11), look_at((0.4, -0.2, 0.5), (0, 0, 0)), noise=True, seed=11)


@pytest.mark.parametrize("normal,offset", [((0.0, -0.6, -0.8), 0.6), ((0.1, 0.2, -0.97), 0.4)])
def test_height_classes_match_the_reference(frame, normal, offset):
    n = np.asarray(normal, np.float64) / np.linalg.norm(normal)
    rx, ry = ray_axes(INTR)
    cand, seed = np.empty((480, 640), np.uint8), np.empty((480, 640), np.uint8)
    height_classes(frame.depth_m, rx, ry, n, offset, 0.004, 0.01, 0.5, 5.0, cand, seed)
    ref_cand, ref_seed = reference_heights(frame.depth_m, rx, ry, n.astype(np.float32), offset,
                                           0.004, 0.01, 0.5, 5.0)
    # float32 products in the reference; a height within rounding of a threshold may differ
    assert np.count_nonzero(cand.view(bool) != ref_cand) <= 2
    assert np.count_nonzero(seed.view(bool) != ref_seed) <= 2


@pytest.mark.parametrize("jump_m,jump_ratio", [(0.012, 0.02), (0.003, 0.0), (0.05, 0.1)])
def test_depth_cuts_match_the_reference(frame, jump_m, jump_ratio):
    rng = np.random.default_rng(0)
    cand = (rng.random(frame.depth_m.shape) < 0.9) & (frame.depth_m > 0)
    cut = np.empty(cand.shape, np.uint8)
    rows, cols = np.empty(cand.size, np.int64), np.empty(cand.size, np.int64)
    n = depth_cuts(frame.depth_m, cand, jump_m, jump_ratio, cut, rows, cols)
    ref = reference_cuts(frame.depth_m, cand, jump_m, jump_ratio)
    np.testing.assert_array_equal(cut.view(bool), ref)
    ref_rows, ref_cols = np.nonzero(ref)
    np.testing.assert_array_equal(rows[:n], ref_rows)
    np.testing.assert_array_equal(cols[:n], ref_cols)
