"""Shared by the database-grasp tests: a small real grasp database built with the CLI, and a
simulated tabletop (offline_sim's cell world, drivers' SimCamera) with the builtin box lying
on its largest face and, optionally, a tall bottle standing beside it. Not a test module."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HAND = "three_finger"
WORKSPACE_XY = np.array([[-0.4, -0.3], [0.4, 0.3]])
# the box's database grasps from above end with the BH8's open fingertips 3.5 mm over the
# table (TCP 20 mm over the box's top, fingers 126 mm long): a margin of 2 mm lets them by
# on noise-free depth; the cell file's default of 5 mm rightly refuses them
TEST_MARGIN_M = 0.002


# P(fc) on a grid of 5 mm and 5 degrees, under the name "coarse": 225 poses per
# candidate against the CLI's coarse grid's 2,541 (2 mm, 2 degrees), a minute less of kinematic
# closing; the tests read P(fc) as stored and ranked, not its resolution
TEST_PFC_GRID = (0.005, math.radians(5.0))


def build_database(path: Path, *, pfc: bool) -> Path:
    """The box's grasps for the three-finger hand, 20 candidates, 3 samples each (with
    P(fc) by TEST_PFC_GRID when pfc), built by ``graspline db build``."""
    import pytest

    from onboard.cli import PFC_GRIDS, main

    args = ["db", "build", "--objects", "builtin:box", "--hand", HAND, "--candidates", "20",
            "--samples", "3", "--workers", "0", "--out", str(path)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(PFC_GRIDS, "coarse", TEST_PFC_GRID)
        assert main(args + ["--pfc", "coarse" if pfc else "off"]) == 0
    return path


@dataclass
class Scene:
    """A rendered tabletop: the world (CellWorld), its frame, the box's mask, the bottle's
    pose and footprint radius (None without a bottle)."""

    world: object
    frame: object
    box_mask: object
    bottle_xy: np.ndarray | None
    bottle_radius_m: float
    bottle_top_m: float


def tabletop(bottle_xy: tuple[float, float] | None = None, *, width_px: int = 640) -> Scene:
    """The box at the origin in its stable pose 0 (its x axis up, 50 mm tall), the bottle
    standing upright at bottle_xy (metres) when given; a noise-free frame from 0.8 m."""
    from drivers.camera import SimCamera, intrinsics_from_fov, look_at
    from offline_sim.cell import build_cell_world
    from offline_sim.hands import parallel_jaw
    from offline_sim.objects import builtin_object
    from vision import ObjectMask

    box = builtin_object("box")
    T_box = box.stable_poses[0].copy()
    T_box[2, 3] += 0.0005
    objects, poses = [box], [T_box]
    radius = top = 0.0
    if bottle_xy is not None:
        bottle = builtin_object("bottle")
        up = int(np.argmax(bottle.stable_poses[:, 2, 3]))
        T_bottle = bottle.stable_poses[up].copy()
        T_bottle[:2, 3] = bottle_xy
        T_bottle[2, 3] += 0.0005
        objects.append(bottle)
        poses.append(T_bottle)
        v = bottle.visual[0] @ T_bottle[:3, :3].T + T_bottle[:3, 3]
        radius = float(np.hypot(v[:, 0] - bottle_xy[0], v[:, 1] - bottle_xy[1]).max())
        top = float(v[:, 2].max())
    world = build_cell_world(objects, poses, parallel_jaw(), colours=np.full((len(objects), 3), 0.5),
                             pad_friction=1.0)
    park = np.diag([1.0, -1.0, -1.0, 1.0])
    park[:3, 3] = (0.0, -0.52, 0.5)  # the arm's hand out of the camera's view
    world.teleport_flange(park)
    intr = intrinsics_from_fov(width_px, width_px * 3 // 4, math.radians(69.0))
    T_base_camera = look_at(np.array([0.0, -0.35, 0.75]), np.zeros(3), up=(0.0, 1.0, 0.0))
    cam = SimCamera(world.model, world.data, intr, T_base_camera, noise=None,
                    geom_instance=world.geom_instance)
    frame = cam.read(None)
    cam.close()
    mask = ObjectMask(frame.instance_ids == 1, "box", 1.0, "ground_truth")
    return Scene(world, frame, mask, None if bottle_xy is None else np.array(bottle_xy, float),
                 radius, top)
