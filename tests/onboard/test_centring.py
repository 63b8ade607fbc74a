"""The chosen grasp centred on the object as its readings place it, not on the band of
filled sensor holes the segmenter claims beside it (onboard.loop.centred_on_readings)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from onboard.loop import MAX_SHIFT_M, centred_on_readings
from vision import silhouette

from ..vision.synth import Scene, footprint, look_at, render, upright_box
from ..vision.test_silhouette import _with_edge_band

DOWN = look_at((0.0, 0.0, 0.7), (0.0, 0.0, 0.0))
BOX = upright_box(0.0, 0.0, (0.06, 0.04, 0.05))


def _middle_cols(image: np.ndarray) -> float:
    """The middle of an image's set columns (px, pixel centres)."""
    cols = np.nonzero(image.any(axis=0))[0]
    return 0.5 * (cols.min() + cols.max())


def _box_silhouette(band_px: int, side: str = "right", neighbour_at: float | None = None):
    """The box's silhouette from a frame whose mask claims a band of holes on one side, and
    where the box's exact footprint is; a second box at x = neighbour_at (metres) if given."""
    objects = [BOX] + ([upright_box(neighbour_at, 0.0, (0.02, 0.02, 0.06))]
                       if neighbour_at is not None else [])
    frame, mask = _with_edge_band(render(Scene(objects), DOWN), band_px, side)
    obstacles = frame.instance_ids == 2 if neighbour_at is not None else None
    sil = silhouette(frame, mask, obstacles=obstacles)
    return sil, footprint(BOX, sil.T_base_plane, sil.shape, sil.metres_per_px)


@pytest.mark.parametrize("side", ["right", "left"])
def test_a_grasp_centred_on_the_filled_band_moves_onto_the_boxs_middle(side):
    sil, exact = _box_silhouette(3, side)
    proj = sil.gripper_projection(finger_width_m=0.013, open_width_m=0.085)
    x0, y0 = _middle_cols(sil.target), sil.shape[0] / 2.0
    truth_x = _middle_cols(exact)
    assert abs(x0 - truth_x) >= 1.5  # the band's half, 1.75 mm, at 1 mm per pixel
    moved = centred_on_readings(sil, x0, y0, 0.0, proj)
    assert abs(moved.x_px - truth_x) <= 0.75
    assert moved.y_px == pytest.approx(y0)
    # + is towards the right finger (larger columns at theta = 0)
    assert np.sign(moved.shift_m) == (-1.0 if side == "right" else 1.0)
    assert abs(moved.shift_m) <= MAX_SHIFT_M
    # a grasp scored 6 mm off the target's middle comes down 6 mm off the box's middle
    off = centred_on_readings(sil, x0 + 6.0, y0, 0.0, proj)
    assert off.shift_m == pytest.approx(moved.shift_m, abs=0.0005)
    assert abs(off.x_px - (truth_x + 6.0)) <= 0.75


def test_a_grasp_on_a_silhouette_without_a_band_or_without_readings_stays():
    sil, _ = _box_silhouette(0)
    proj = sil.gripper_projection(finger_width_m=0.013, open_width_m=0.085)
    x0, y0 = _middle_cols(sil.target), sil.shape[0] / 2.0
    assert abs(centred_on_readings(sil, x0, y0, 0.0, proj).shift_m) <= 0.0005
    bare = dataclasses.replace(sil, target_read=None)
    assert centred_on_readings(bare, x0 - 3.0, y0, 0.0, proj).shift_m == 0.0


def test_a_grasp_stays_where_moving_it_would_bring_a_pad_down_on_a_neighbour():
    # centred on the band-widened target, the right pad's inner face stands 1-2 mm short of
    # a neighbour 41.5 mm right of the box's middle; moved onto the readings' middle, on it
    sil, _ = _box_silhouette(3, "left", neighbour_at=0.0515)
    proj = sil.gripper_projection(finger_width_m=0.013, open_width_m=0.085)
    x0, y0 = _middle_cols(sil.target), sil.shape[0] / 2.0
    ends = np.rint(x0 + proj.open_width_px / 2.0 + np.array([0.0, 2.0])).astype(int)
    assert not sil.image[int(y0), ends[0]] and sil.image[int(y0), ends[1]]
    assert centred_on_readings(sil, x0, y0, 0.0, proj).shift_m == 0.0
