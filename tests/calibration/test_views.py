"""Board views: which views of a stream are new, and where the board's plane is in the image."""
from __future__ import annotations

import numpy as np
import pytest

from calibration import BoardDetector, BoardView, CharucoBoardSpec, board_hull_mask, is_new_view

from .synth import BoardRenderer, board_poses

GRID = np.array([[u, v] for v in (100.0, 140.0, 180.0) for u in (200.0, 240.0, 280.0)])


def _view(corners_px, ids=None) -> BoardView:
    corners = np.asarray(corners_px, np.float64)
    ids = np.arange(len(corners), dtype=np.int32) if ids is None else np.asarray(ids, np.int32)
    return BoardView("v", corners, ids, np.zeros((len(corners), 3)))


def test_a_view_is_new_only_if_it_moved_from_every_kept_view():
    a, b, c = _view(GRID), _view(GRID + [30.0, 0.0]), _view(GRID + [0.0, 50.0])
    assert is_new_view(a, [], 40.0)
    assert not is_new_view(b, [a], 40.0)          # 30 px on average: the same view
    assert is_new_view(c, [a], 40.0)              # 50 px
    assert is_new_view(c, [a, b], 40.0)           # sqrt(30² + 50²) from b
    assert not is_new_view(c, [a, b, _view(GRID + [0.0, 60.0])], 40.0)
    assert is_new_view(b, [a], 30.0)              # at least min_motion_px is enough


def test_a_view_sharing_no_corner_with_the_kept_ones_is_new():
    assert is_new_view(_view(GRID, ids=np.arange(9) + 20), [_view(GRID)], 1e6)


def test_the_hull_mask_is_the_corners_convex_hull_in_whole_pixels():
    # a rectangle's corners (truncated: 10.9 -> 10) and one inside, which changes nothing
    view = _view([[10.9, 20.0], [50.0, 20.0], [50.0, 40.7], [10.0, 40.0], [30.0, 30.0]])
    mask = board_hull_mask(view, 60, 80)
    assert mask.shape == (60, 80) and mask.dtype == bool
    expected = np.zeros((60, 80), bool)
    expected[20:41, 10:51] = True                 # the border pixels belong to the hull
    np.testing.assert_array_equal(mask, expected)


def test_the_hull_mask_of_a_detected_board_covers_its_corners_and_little_else():
    import cv2

    W, H = 640, 480
    K = np.array([[600.0, 0, 319.5], [0, 600.0, 239.5], [0, 0, 1]])
    spec = CharucoBoardSpec(9, 6, 0.025, 0.018)
    T = board_poses(spec, 1, seed=3, tilt_deg=20)[0]
    view = BoardDetector(spec).detect(BoardRenderer(K, np.zeros(5), W, H).render(spec, T))
    assert view is not None
    mask = board_hull_mask(view, H, W)
    u, v = view.corners_px.astype(int).T
    assert mask[v, u].all()
    # its area is the corners' polygon's, give or take the one-pixel border
    hull = cv2.convexHull(view.corners_px.astype(np.float32))
    assert mask.sum() == pytest.approx(cv2.contourArea(hull),
                                       abs=cv2.arcLength(hull, closed=True) + 4)


@pytest.mark.parametrize("shape", [(1, 1), (480, 640)])
def test_a_hull_outside_the_image_gives_an_empty_mask(shape):
    mask = board_hull_mask(_view(GRID + [1000.0, 1000.0]), *shape)
    assert mask.shape == shape and not mask.any()
