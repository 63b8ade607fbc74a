"""The scene-level budget (scoring.scene_budget) and the antipodal search (scoring.search) on
the simulated cell: objects asked in order of promise, the asking stopped at the first
good-enough grasp, a named target still found; the promise order from the masks' cues."""
from __future__ import annotations

import dataclasses

import msgspec
import numpy as np
import pytest

from drivers.camera import RGBDFrame, intrinsics_from_fov
from vision import ObjectMask, Segmenter

pytest.importorskip("mujoco")

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


class TruthLabelled(Segmenter):
    """The cell's segmenter with each mask labelled by the simulator's object under it (what
    a learned segmenter's labels are on hardware), so that a plan can name its target."""

    def __init__(self, inner: Segmenter, truth) -> None:
        self.inner, self.truth, self.name = inner, truth, inner.name

    @property
    def last_plane(self):
        return self.inner.last_plane

    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        return [dataclasses.replace(m, label=self.truth.object_name(frame, m))
                for m in self.inner.segment(frame)]


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    from onboard import PickingCell, SimConfig, config_hash, sim_cell_file

    config = sim_cell_file(seed=0, log_dir=str(tmp_path_factory.mktemp("log")))
    config = msgspec.structs.replace(
        config, sim=msgspec.structs.replace(config.sim, objects_per_table=[5, 5]),
        scoring=msgspec.structs.replace(config.scoring, search="antipodal", scene_budget=True))
    assert isinstance(config.sim, SimConfig)
    c = PickingCell(config, config_hash(config))
    planner = c.loop.planner
    planner.segmenter = TruthLabelled(planner.segmenter, c.loop.truth)
    yield c
    c.close()


def _with(cell, **scoring):
    cfg = cell.loop.config
    cell.loop.config = msgspec.structs.replace(cfg, scoring=msgspec.structs.replace(cfg.scoring,
                                                                                    **scoring))


def test_the_budget_stops_at_the_first_good_enough_grasp_and_searches_fewer_objects(cell):
    from onboard import GraspChoice
    from onboard.loop import SCENE_GOOD_ENOUGH

    _with(cell, scene_budget=True)
    plan = cell.loop.plan()
    asked = list(cell.loop.planner.last_asked)
    assert isinstance(plan.choice, GraspChoice) and len(plan.masks) >= 3
    assert plan.choice.score >= SCENE_GOOD_ENOUGH
    assert len(asked) < len(plan.masks)          # stopped before the last object
    assert plan.mask_index == asked[-1]          # on the grasp that was good enough
    _with(cell, scene_budget=False)
    full = cell.loop.plan()
    assert sorted(cell.loop.planner.last_asked) == list(range(len(full.masks)))
    # without the budget the scene's best is searched for: at least as good, within noise
    assert full.choice.score >= plan.choice.score - 0.02
    _with(cell, scene_budget=True)


def test_a_named_target_is_found_under_the_budget_and_only_it_is_searched(cell):
    from onboard import GraspChoice

    from onboard.loop import promise_order

    _with(cell, scene_budget=True)
    frame = cell.devices.camera.read()
    masks = cell.loop.planner.segmenter.segment(frame)
    labels = [m.label for m in masks]
    # the object the budget would search last: the least promising one
    last = promise_order(frame, masks, list(range(len(masks))),
                         cell.loop.config.gripper.open_width_m)[-1]
    name = masks[last].label
    assert name is not None and labels.count(name) == 1, labels
    plan = cell.loop.plan(name)
    asked = cell.loop.planner.last_asked
    assert [plan.masks[i].label for i in asked] == [name]
    if isinstance(plan.choice, GraspChoice):
        assert plan.choice.object_label == name
    else:   # the jaw cannot hold it: the NoGrasp says so for the one object in question
        assert "1 object(s)" in plan.choice.reason


def _frame(depth: np.ndarray) -> RGBDFrame:
    h, w = depth.shape
    return RGBDFrame(color=np.zeros((h, w, 3), np.uint8), depth_m=depth.astype(np.float32),
                     intrinsics=intrinsics_from_fov(w, h, np.radians(69.0)), T_base_camera=None,
                     stamp_s=0.0, seq=0)


def _mask(shape, r0, r1, c0, c1) -> ObjectMask:
    m = np.zeros(shape, bool)
    m[r0:r1, c0:c1] = True
    return ObjectMask(mask=m, label=None, confidence=1.0, backend="test")


def test_promise_order_puts_a_clear_narrow_object_first_and_one_wider_than_the_stroke_last():
    from onboard.loop import promise_order, promises

    shape = (240, 320)
    frame = _frame(np.full(shape, 0.5))         # 0.5 m away: about 2.2 mm a pixel
    wide = _mask(shape, 20, 120, 10, 120)        # 100 x 110 px: ~ 220 mm across
    crowded = _mask(shape, 150, 170, 150, 170)   # 20 px, a neighbour 2 px away
    neighbour = _mask(shape, 150, 170, 172, 192)
    clear = _mask(shape, 150, 170, 280, 300)     # 20 px, 88 px from anything
    masks = [wide, crowded, neighbour, clear]
    cues = {p.index: p for p in promises(frame, masks, [0, 1, 3])}
    assert cues[0].narrow_m > 0.2 and 0.03 < cues[1].narrow_m < 0.06
    assert cues[3].clear_m > cues[1].clear_m
    assert promise_order(frame, masks, [0, 1, 3], stroke_m=0.085) == [3, 1, 0]


def test_validate_mode_asks_every_object_under_the_budget(cell):
    _with(cell, scene_budget=True)
    cell.loop.mode = "validate"
    try:
        plan = cell.loop.plan()
        assert sorted(cell.loop.planner.last_asked) == list(range(len(plan.masks)))
    finally:
        cell.loop.mode = "best"
