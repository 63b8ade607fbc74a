"""Tilted approach axes (the approaches section, the approach_search source): the section's
keys are checked, a hand that would go under the support is dropped, and on a tall object in
the simulated cell the source proposes a tilted grasp whose TCP z axis is its approach."""
from __future__ import annotations

import dataclasses
import math

import msgspec
import numpy as np
import pytest

from onboard import (ApproachesConfig, CellFileError, PickingCell, config_hash, parse_cell_file,
                     sim_cell_file)
from onboard.loop import (GRASP_SOURCES, ApproachSearch, StageClock, approach_axes, grasp_sources,
                          hand_clear, hand_corners_tcp, SourceSetup)


@pytest.mark.parametrize("text, key", [
    ("approaches: {tilts_deg: [30, 120]}\n", "approaches.tilts_deg"),
    ("approaches: {tilts_deg: []}\n", "approaches.tilts_deg"),
    ("approaches: {azimuths: 0}\n", "approaches.azimuths"),
    ("approaches: {min_height_m: -0.1}\n", "approaches.min_height_m"),
    ("approaches: {max_tilt_deg: 0}\n", "approaches.max_tilt_deg"),
    ("approaches: {clearance_m: -1}\n", "approaches.clearance_m"),
    ("approaches: {hand_length_m: .nan}\n", "approaches.hand_length_m"),
    ("approaches: {screen_candidates: 0}\n", "approaches.screen_candidates"),
    ("approaches: {full_searches: 0}\n", "approaches.full_searches"),
    ("approaches: {max_closing_slope_deg: 95}\n", "approaches.max_closing_slope_deg"),
    ("approaches: {azimuths: many}\n", "approaches.azimuths"),
    ("approaches: {tilt: 30}\n", "approaches.tilt"),
])
def test_a_bad_approaches_key_is_named_in_the_error(text, key):
    with pytest.raises(CellFileError, match=f"cell.yaml: (unknown )?key '{key}'"):
        parse_cell_file(text, "cell.yaml")


def test_the_approach_source_is_on_only_with_the_section():
    assert grasp_sources(parse_cell_file("", "cell.yaml")) == GRASP_SOURCES
    config = parse_cell_file("approaches: {tilts_deg: [45], azimuths: 4}\n", "cell.yaml")
    assert config.approaches == ApproachesConfig(tilts_deg=[45.0], azimuths=4)
    assert len(grasp_sources(config)) == len(GRASP_SOURCES) + 1
    assert config_hash(parse_cell_file("", "c.yaml")) != config_hash(config)


def test_approach_axes_tilt_from_straight_down_and_stop_at_the_arms_reach():
    axes = approach_axes([30.0, 60.0], 4, max_tilt_deg=45.0)
    assert [(t, phi) for t, phi, _ in axes] == [(30.0, 0.0), (30.0, 90.0), (30.0, 180.0),
                                                 (30.0, 270.0)]
    for t, phi, a in axes:
        assert math.isclose(np.linalg.norm(a), 1.0)
        assert math.isclose(-a[2], math.cos(math.radians(t)))  # tilt from straight down
    assert np.allclose(axes[1][2][:2], [0.0, math.sin(math.radians(30.0))], atol=1e-12)


def _side_grasp(height_m: float) -> np.ndarray:
    """T_base_tcp of a horizontal approach along +x, closing vertically (x axis down), the
    TCP height_m over a support at z = 0."""
    T = np.eye(4)
    T[:3, 0] = (0.0, 0.0, -1.0)   # closing direction: vertical
    T[:3, 2] = (1.0, 0.0, 0.0)    # approach: horizontal
    T[:3, 1] = np.cross(T[:3, 2], T[:3, 0])
    T[:3, 3] = (0.0, 0.0, height_m)
    return T


def test_a_tilted_approach_that_puts_the_palm_under_the_table_is_dropped():
    # the simulated jaw: fingers' outer faces 56.5 mm either side of the TCP along the
    # closing direction, the palm 66.5 mm (it is 20 mm longer than the open fingers)
    kw = dict(open_width_m=0.085, finger_width_m=0.022, finger_thickness_m=0.014,
              finger_length_m=0.06, tcp_to_tip_m=0.0175, hand_length_m=0.05)
    with_palm = hand_corners_tcp(palm_m=(0.042, 0.133), **kw)
    fingers_only = hand_corners_tcp(palm_m=(math.nan, math.nan), **kw)
    up, off = np.array([0.0, 0.0, 1.0]), 0.0
    T = _side_grasp(0.060)
    assert hand_clear(T, fingers_only, 0.1, up, off, clearance_m=0.0)  # the fingers clear
    assert not hand_clear(T, with_palm, 0.1, up, off, clearance_m=0.0)  # the palm does not
    assert hand_clear(_side_grasp(0.070), with_palm, 0.1, up, off, clearance_m=0.0)
    assert not hand_clear(_side_grasp(0.070), with_palm, 0.1, up, off, clearance_m=0.01)
    # straight down the same fingertips 20 mm over the table are clear; tilted 60 degrees
    # about the fingers' axis the lower finger goes under the table
    down = np.eye(4)
    down[:3, :3] = np.diag([1.0, -1.0, -1.0])
    down[:3, 3] = (0.0, 0.0, 0.02 + 0.0175)
    assert hand_clear(down, with_palm, 0.1, up, off, clearance_m=0.005)
    c, s = math.cos(math.radians(60)), math.sin(math.radians(60))
    tilt = np.eye(4)
    tilt[:3, :3] = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    tilted = down.copy()
    tilted[:3, :3] = tilt[:3, :3] @ down[:3, :3]
    assert not hand_clear(tilted, with_palm, 0.1, up, off, clearance_m=0.005)


@pytest.fixture(scope="module")
def bottle_cell(tmp_path_factory):
    """A simulated cell with one upright bottle and the approaches section on."""
    config = sim_cell_file(seed=0, log_dir=str(tmp_path_factory.mktemp("trials")))
    config = msgspec.structs.replace(config, approaches=ApproachesConfig())
    with PickingCell(config, config_hash(config)) as cell:
        sim = cell.devices.truth
        sim.use_settings(dataclasses.replace(sim.settings, builtin=("bottle",),
                                             random_primitives=False, stand_tall=True,
                                             objects_per_table=(1, 1)))
        yield cell


def test_on_an_upright_bottle_the_source_proposes_a_tilted_grasp_along_its_approach(bottle_cell):
    cell = bottle_cell
    source = next(s for s in cell.loop.planner.sources if isinstance(s, ApproachSearch))
    frame = cell.devices.camera.read(1.0)
    masks = cell.loop.segmenter.segment(frame)
    assert len(masks) == 1
    plane = cell.loop.segmenter.last_plane
    assert source.object_height_m(frame, masks[0], plane) > source.settings.min_height_m
    proposal = source.propose(frame, masks, 0, StageClock({}))
    assert proposal is not None and proposal.score > 0.5
    choice, level = source.choose(proposal, frame, masks, StageClock({}), validate=False)
    T = choice.T_base_tcp
    assert choice.source == "approach_search" and level == -1
    tilt = choice.features["approach_tilt_deg"]
    assert tilt in (30.0, 60.0)
    # the TCP's z axis is the approach the silhouette was projected along, tilted from down
    assert np.allclose(T[:3, 2], proposal.sil.approach, atol=1e-9)
    assert math.isclose(-T[2, 2], math.cos(math.radians(tilt)), abs_tol=1e-9)
    # the fingers close across the bottle about horizontally (across the sides the camera saw)
    assert abs(T[2, 0]) <= math.sin(math.radians(source.settings.max_closing_slope_deg)) + 1e-9
    # its hand clears the table at the grasp and the pre-grasp
    n, off = plane.in_base(frame.T_base_camera)
    g = cell.config.gripper
    corners = hand_corners_tcp(open_width_m=g.open_width_m, finger_width_m=g.finger_width_m,
                               finger_thickness_m=g.finger_thickness_m,
                               finger_length_m=g.finger_length_m, tcp_to_tip_m=g.tcp_to_tip_m,
                               palm_m=g.palm_m(), hand_length_m=source.settings.hand_length_m)
    assert hand_clear(T, corners, choice.pregrasp_m, n, off, source.settings.clearance_m)
    # and the planner takes the better of it and the top-down search's grasp (the bottle's
    # neck is a wall over its body: the pads meet it without a lean), whichever that is
    plan = cell.loop.plan()
    assert plan.choice.score >= min(proposal.score, 0.95) - 0.05
    tilted = not np.allclose(plan.choice.T_base_tcp[:3, 2], (0.0, 0.0, -1.0), atol=0.1)
    assert tilted == (plan.choice.source == "approach_search")


def test_every_approach_is_dropped_when_the_hand_must_stay_a_metre_over_the_table(bottle_cell):
    cell = bottle_cell
    source = next(s for s in cell.loop.planner.sources if isinstance(s, ApproachSearch))
    frame = cell.devices.camera.read(1.0)
    masks = cell.loop.segmenter.segment(frame)
    high = ApproachSearch(dataclasses.replace(
        source_setup(cell), config=msgspec.structs.replace(
            cell.config, approaches=ApproachesConfig(clearance_m=1.0))))
    assert high.propose(frame, masks, 0, StageClock({})) is None
    assert source.propose(frame, masks, 0, StageClock({})) is not None


def source_setup(cell) -> SourceSetup:
    """A SourceSetup like the loop's, for a second source on the same cell."""
    loop = cell.loop
    return SourceSetup(loop.config, loop.projection, loop.jaw, np.random.default_rng(0),
                       loop.segmenter, loop.truth, loop.failed)


def _standing_cell(tmp_path, approaches: ApproachesConfig | None) -> PickingCell:
    """A simulated cell of two or three standing objects, with or without the section."""
    config = sim_cell_file(seed=1, log_dir=str(tmp_path / "trials"))
    config = msgspec.structs.replace(config, approaches=approaches)
    cell = PickingCell(config, config_hash(config))
    sim = cell.devices.truth
    sim.use_settings(dataclasses.replace(sim.settings, builtin=("bottle", "cylinder"),
                                         random_primitives=("box",), stand_tall=True,
                                         objects_per_table=(2, 3)))
    return cell


def test_turning_the_section_on_leaves_the_top_down_search_as_it_was(tmp_path):
    # the approach source draws from a random stream of its own: the image search's grasps
    # on the same frames are the same with and without it
    seen = []
    for k, section in enumerate((None, ApproachesConfig())):
        with _standing_cell(tmp_path / str(k), section) as cell:
            grasps = []
            for _ in range(2):
                plan = cell.loop.plan()
                image = cell.loop.planner.sources[0]
                for i in range(len(plan.masks)):
                    p = image.propose(plan.frame, plan.masks, i, StageClock({}))
                    found, j, _ = p.detail
                    grasps.append((i, p.score, float(found.x[j]), float(found.y[j]),
                                   float(found.theta[j])))
            seen.append(grasps)
    assert len(seen[0]) >= 4 and seen[0] == seen[1]
