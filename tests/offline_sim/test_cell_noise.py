"""SimCellSettings.depth_noise: the D400 model by default, exact depth when off, and a model
with one of its parts changed when given (what bench_width --without attributes a bias with)."""
from __future__ import annotations

import dataclasses

import numpy as np

from drivers.camera import DepthNoise
from offline_sim.cell import SimCell, SimCellSettings


def _depth(depth_noise) -> np.ndarray:
    settings = SimCellSettings(objects_per_table=(1, 1), builtin=("box",),
                               random_primitives=False, depth_noise=depth_noise)
    with SimCell(settings, seed=0, cache_dir=None) as cell:
        return cell.camera.read().depth_m


def test_the_cell_camera_reads_through_the_noise_model_it_is_given():
    exact, d400 = _depth(False), _depth(True)
    assert (exact > 0).all() and (d400 == 0).any()  # the D400's holes
    # the D400 as it is, given as a model: the same frame
    np.testing.assert_array_equal(_depth(DepthNoise()), d400)
    # every reading dropped: a model's part reaches the camera
    assert (_depth(dataclasses.replace(DepthNoise(), dropout=1.0)) == 0).all()
