"""SimCellSettings.stand_tall: every object laid in its tallest stable pose that it really
rests in (the tables tilted approaches are measured on), the default unchanged."""
from __future__ import annotations

import dataclasses

import numpy as np

from offline_sim.cell import SimCell, SimCellSettings


def _top_m(cell: SimCell) -> float:
    """Height (m) of the one object's highest point where it rests now."""
    w = cell.world
    T = w.T_world_object(0)
    return float((w.objects[0].visual[0] @ T[:3, :3].T + T[:3, 3])[:, 2].max())


def test_stand_tall_lays_a_bottle_upright_and_the_default_lays_it_as_drawn():
    settings = SimCellSettings(objects_per_table=(1, 1), builtin=("bottle",),
                               random_primitives=False, depth_noise=False)
    tall = [SimCell(dataclasses.replace(settings, stand_tall=True), seed=s, cache_dir=None)
            for s in range(4)]
    height = float(np.ptp(tall[0].world.objects[0].visual[0], axis=0).max())
    # upright on every table: its top stands its longest extent over the table (settled)
    assert all(abs(_top_m(cell) - height) < 0.005 for cell in tall)
    # the default draws its pose by probability: a bottle mostly lies on its side
    drawn = [_top_m(SimCell(settings, seed=s, cache_dir=None)) for s in range(4)]
    assert min(drawn) < height - 0.02
