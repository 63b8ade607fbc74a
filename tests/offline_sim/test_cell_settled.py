"""SimCell.settled_poses: where a new table's objects came to rest, which the benchmarks'
truth reads (an object laid against another is pushed away as the table settles, so its
laid pose says nothing about where it is)."""
from __future__ import annotations

import numpy as np

from offline_sim.cell import SimCell, SimCellSettings


class _StackedCell(SimCell):
    """A cell that lays its second box half into its first (the rejection sampler's fallback
    when no free spot is found), so that the table's physics must push them apart."""

    def _place(self, objects):
        poses = super()._place(objects)
        second = poses[0].copy()
        second[0, 3] += 0.02
        return [poses[0], second]


def _laid_xyz(cell: SimCell, k: int) -> np.ndarray:
    """Object k's position as laid (the model's initial pose), metres."""
    w = cell.world
    return w.model.qpos0[w.object_qposadr[k]:w.object_qposadr[k] + 3]


def test_settled_poses_are_where_the_objects_came_to_rest_not_where_they_were_laid():
    settings = SimCellSettings(objects_per_table=(2, 2), builtin=("box",),
                               random_primitives=False, depth_noise=False)
    cell = _StackedCell(settings, seed=0, cache_dir=None)
    settled = cell.settled_poses
    assert len(settled) == 2
    for k in range(2):  # nothing moved since the table settled
        np.testing.assert_allclose(settled[k], cell.world.T_world_object(k), atol=1e-9)
    # two boxes laid into each other cannot both rest where they were laid
    moved = [np.linalg.norm(settled[k][:3, 3] - _laid_xyz(cell, k)) for k in range(2)]
    assert max(moved) > 0.02
    assert cell.settled_on_table == [True, True]  # pushed apart, both still on the table
    cell.new_table()  # a new table replaces them
    assert len(cell.settled_poses) == 2
    assert not np.allclose(cell.settled_poses[0], settled[0])


class _OverTheEdgeCell(SimCell):
    """A cell that lays its second box beside the table, over the floor."""

    def _place(self, objects):
        poses = super()._place(objects)
        beside = poses[1].copy()
        beside[:3, 3] = (1.5, 0.0, 0.1)
        return [poses[0], beside]


def test_an_object_that_fell_off_as_the_table_settled_is_not_on_it():
    settings = SimCellSettings(objects_per_table=(2, 2), builtin=("box",),
                               random_primitives=False, depth_noise=False)
    cell = _OverTheEdgeCell(settings, seed=0, cache_dir=None)
    assert cell.settled_on_table == [True, False]
    assert cell.settled_poses[1][2, 3] < -0.2  # falling to the floor


def test_a_parked_object_is_off_the_table_at_rest_and_the_others_stay():
    settings = SimCellSettings(objects_per_table=(2, 2), builtin=("box",),
                               random_primitives=False, depth_noise=False)
    cell = SimCell(settings, seed=0, cache_dir=None)
    stays = cell.world.T_world_object(1)
    cell.park(0)
    assert cell.world.on_table() == [1]
    cell.step(50)  # at rest where it was put, the other untouched
    assert cell.world.on_table() == [1]
    np.testing.assert_allclose(cell.world.T_world_object(1), stays, atol=1e-4)
    cell.close()
