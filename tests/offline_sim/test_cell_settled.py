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


class _RollingCell(SimCell):
    """A cell that lays one can on its side and gives it a push as it lands (the push a
    drop onto the table gives a round object), so that it rolls."""

    def _place(self, objects):
        poses = super()._place(objects)
        lying = np.eye(4)
        lying[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
        lying[:3, 3] = (0.0, 0.0, 0.0355)  # radius 35 mm, half a millimetre of air
        return [lying]

    def gripper_reset(self) -> None:
        super().gripper_reset()
        w = self.world
        dof = w.model.jnt_dofadr[w.model.body_jntadr[w.object_body[0]]]
        w.data.qvel[dof:dof + 3] = (0.05, 0.0, 0.0)  # 50 mm/s across its axis (along y)


def test_a_new_table_waits_until_a_rolling_can_is_at_rest():
    """MuJoCo's contacts have no rolling resistance: a pushed can rolls on. The table is
    laid only once it is at rest, so it is where the camera sees it when the fingers come."""
    settings = SimCellSettings(objects_per_table=(1, 1), builtin=("cylinder",),
                               random_primitives=False, depth_noise=False)
    cell = _RollingCell(settings, seed=0, cache_dir=None)
    at = cell.world.T_world_object(0)[:3, 3].copy()
    assert abs(at[0]) > 0.01  # it rolled while the table settled
    cell.step(int(2.0 / cell.world.model.opt.timestep))  # the time a pick takes to arrive
    moved = np.linalg.norm(cell.world.T_world_object(0)[:3, 3] - at)
    assert moved < 0.002, f"the can rolled {moved * 1e3:.0f} mm after the table was laid"
    np.testing.assert_allclose(cell.settled_poses[0][:3, 3], at, atol=1e-9)
