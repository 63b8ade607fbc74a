"""The picking loop's seams, on a hardware-shaped cell without the simulator: the null
ground-truth port, the grasp sources the planner asks, and the pure trial-record builder.

The cell: a camera that plays back synthetic depth frames of a box on a table (seen straight
down from 0.6 m), the real tabletop segmenter, the kinematic SimGripper, and an arm that
reaches every pose at once (drivers' ArmController with instant moves)."""
from __future__ import annotations

import copy
import pickle
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.arm import ArmController, MoveResult, MoveStatus
from drivers.camera import Camera, Intrinsics, RGBDFrame
from drivers.gripper import SimGripper
from onboard import Execution, GraspChoice, NoGrasp, PickingLoop, TrialLog, parse_cell_file
from onboard.loop import (GRASP_SOURCES, NO_TRUTH, GraspSource, GraspTruth, ImageSearch,
                          NoTruth, Proposal, trial_record)
from vision import make_segmenter

K = Intrinsics(320, 240, 300.0, 300.0, 160.0, 120.0)
T_BASE_CAMERA = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.6],
                          [0.0, 0.0, 0.0, 1.0]])  # 0.6 m above the table, looking down
BOX_WIDTH_M = 0.04  # across x; 60 mm along y, 50 mm tall


def table_depth(box: bool) -> np.ndarray:
    """(240, 320) float32 depth (m) of the table, with the box at its centre when box."""
    v, u = np.mgrid[0:K.height, 0:K.width]
    depth = np.full((K.height, K.width), 0.6, np.float32)
    if box:
        x = (u - K.cx) / K.fx * 0.55
        y = -(v - K.cy) / K.fy * 0.55
        depth[(np.abs(x) < BOX_WIDTH_M / 2) & (np.abs(y) < 0.03)] = 0.55
    return depth


class PlaybackCamera(Camera):
    """Plays back depth images in order, the last one for ever; grey colour."""

    def __init__(self, depths: list[np.ndarray]) -> None:
        self.depths = depths
        self.reads = 0

    @property
    def intrinsics(self) -> Intrinsics:
        return K

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        depth = self.depths[min(self.reads, len(self.depths) - 1)]
        self.reads += 1
        return RGBDFrame(np.full((K.height, K.width, 3), 128, np.uint8), depth, K,
                         T_BASE_CAMERA, seq=self.reads)

    def _close(self) -> None:
        pass


class InstantArm(ArmController):
    """An arm that reaches every commanded pose at once."""

    name = "instant"

    def __init__(self, T_base_tcp: np.ndarray) -> None:
        self._T = T_base_tcp.copy()

    @property
    def T_base_tcp(self) -> np.ndarray:
        return self._T.copy()

    def _go(self, T_goal: np.ndarray, speed_mps: float) -> MoveResult:
        self._T = T_goal.copy()
        return MoveResult(MoveStatus.REACHED, T_goal.copy(), 0.0, "")

    _move_free = _move_linear = _go


def hardware_loop(tmp_path, depths: list[np.ndarray], truth=None,
                  camera: Camera | None = None, cell_text: str = "") -> PickingLoop:
    """A PickingLoop on the hardware-shaped cell (no truth port given unless truth; the cell
    file cell_text), logging to tmp_path; its camera plays back depths, or is camera."""
    config = parse_cell_file(cell_text, "cell.yaml")
    home = np.eye(4)
    home[:3, :3] = np.diag([1.0, -1.0, -1.0])
    home[:3, 3] = config.arm.home_m
    gripper = SimGripper(object_width_m=BOX_WIDTH_M)
    gripper.activate()
    return PickingLoop(config, camera=camera or PlaybackCamera(depths),
                       segmenter=make_segmenter("tabletop"), gripper=gripper,
                       arm=InstantArm(home), trial_log=TrialLog(tmp_path / "log"),
                       cell_hash="hardware", truth=truth)


def test_a_hardware_cell_picks_through_the_null_truth_port(tmp_path, monkeypatch):
    """No simulator: the loop takes the null port, the gripper and the after-image judge the
    pick, and holding the lifted object is a sleep of arm.hold_s."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    loop = hardware_loop(tmp_path, [table_depth(True), table_depth(True), table_depth(False)])
    assert loop.truth is NO_TRUTH
    rec = loop.pick()
    assert rec.outcome == "success" and rec.success is True, (rec.outcome, rec.error)
    assert rec.outcome_source == "gripper+image"
    assert rec.object_detected is True and rec.gripper_width_m == pytest.approx(BOX_WIDTH_M)
    assert rec.truth_movement_m is None and rec.truth_movement_rad is None
    assert slept == [loop.config.arm.hold_s]
    assert loop.trial_log.get(rec.trial_id).outcome == "success"


def test_a_hardware_cell_judges_an_object_still_in_its_place_a_failure(tmp_path, monkeypatch):
    """The gripper reports an object, but the after-lift image shows the box where it stood."""
    monkeypatch.setattr(time, "sleep", lambda s: None)
    loop = hardware_loop(tmp_path, [table_depth(True)])
    rec = loop.pick()
    assert rec.object_detected is True
    assert rec.outcome == "failure" and rec.outcome_source == "gripper+image"
    assert "still in its place" in rec.note


class RecordingSource:
    """A grasp source that proposes a fixed score on every object and records what it was
    asked; its choice is the image search's pose under its own name."""

    name = "recording"

    def __init__(self, score: float, config) -> None:
        self.score, self.config = score, config
        self.asked: list[int] = []

    def propose(self, frame, masks, i, clock) -> Proposal:
        self.asked.append(i)
        return Proposal(self.score, i, self)

    def choose(self, proposal, frame, masks, clock, *, validate):
        T = np.eye(4)
        T[:3, :3] = np.diag([1.0, -1.0, -1.0])
        return GraspChoice(-1, "by recording", T, 0.1, 0.085, 40.0, proposal.score, {},
                           self.name, 0.0, 0.0, 0.0, 1, stage_s=clock.stage_s), -1


def test_the_planner_asks_every_grasp_source_and_takes_the_best_proposal(tmp_path):
    loop = hardware_loop(tmp_path, [table_depth(True)])
    sources = loop.planner.sources
    assert [type(s) for s in sources] == list(GRASP_SOURCES) and ImageSearch in GRASP_SOURCES
    assert all(isinstance(s, GraspSource) for s in sources)
    extra = RecordingSource(1.0, loop.config)
    sources.append(extra)
    plan = loop.plan()
    # both sources were asked about the one object; the higher proposal won
    assert extra.asked == [0] and "search" in plan.choice.stage_s
    assert plan.choice.source == "recording" and plan.mask_index == 0
    extra.score = 0.0
    plan = loop.plan()
    assert extra.asked == [0, 0]
    assert plan.choice.source == "image_search" and plan.choice.score > 0.5
    # a replaced cell file reaches every source the planner asks
    loop.config = parse_cell_file("scoring: {top_k: 7}\n", "cell.yaml")
    assert all(s.config.scoring.top_k == 7 for s in sources)


def test_a_source_with_only_below_is_asked_only_where_the_sources_before_it_found_less(
        tmp_path):
    loop = hardware_loop(tmp_path, [table_depth(True)])
    first, later = RecordingSource(0.97, loop.config), RecordingSource(0.99, loop.config)
    later.only_below = 0.95  # as the tilted approaches' source: worth asking under 0.95 only
    loop.planner.sources[:] = [first, later]
    plan = loop.plan()
    assert first.asked == [0] and later.asked == [] and plan.choice.score == 0.97
    first.score = 0.9
    plan = loop.plan()
    assert later.asked == [0] and plan.choice.score == 0.99


def _fields(rec) -> dict:
    """A record's fields, arrays as lists (for ==)."""
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(rec).items()}


def test_the_trial_record_is_a_pure_function_of_plan_and_execution(tmp_path):
    """Same plan and execution, same record; neither input is changed by building it; the
    simulator's verdict, where there is one, is the record's outcome."""
    loop = hardware_loop(tmp_path, [table_depth(True)])
    plan = loop.plan()
    assert isinstance(plan.choice, GraspChoice)
    T_before = np.eye(4)
    T_after = T_before.copy()
    T_after[:3, 3] += (0.002, 0.0, 0.0)
    ex = Execution("success", True, "holding at 40.0 mm", 0.04, True, after_close=plan.frame,
                   truth=GraspTruth(0.002, 0.0, (T_before, T_after), lifted=False))
    before = pickle.dumps((plan, ex))
    kw = dict(trial_id=7, started_at_s=123.0, cell_hash="h", stage_s={"capture": 0.01},
              overruns=["search 9 ms > 1 ms"])
    first = trial_record(plan, ex, **kw)
    second = trial_record(copy.deepcopy(plan), copy.deepcopy(ex), **kw)
    assert _fields(first) == _fields(second)
    assert pickle.dumps((plan, ex)) == before, "building the record changed its inputs"
    assert first.trial_id == 7 and first.started_at_s == 123.0 and first.cell_hash == "h"
    assert (first.outcome, first.success, first.outcome_source) == ("failure", False, "simulator")
    assert first.note == "budget overrun: search 9 ms > 1 ms"
    assert first.features == plan.choice.features and first.features is not plan.choice.features
    nothing = trial_record(plan, None, **kw, pending=True)
    assert (nothing.outcome, nothing.success, nothing.gripper_status) == ("pending", None, "")


def joined_depth(small_box: bool) -> np.ndarray:
    """(240, 320) float32 depth (m): a 40 x 60 mm box 20 mm tall at the centre (across x by
    y), and touching its +x side a plate 100 x 70 mm, 10 mm thick: the 10 mm step between
    their tops is under the segmenter's cut, so they are one mask; the box only when
    small_box. (The plate reaches past the box's ends: a jaw closing along y on the plate
    meets the plate's sides first, wherever the pixels of its fingers' band fall.)"""
    v, u = np.mgrid[0:K.height, 0:K.width]
    depth = np.full((K.height, K.width), 0.6, np.float32)
    x = (u - K.cx) / K.fx * 0.59
    y = -(v - K.cy) / K.fy * 0.59
    depth[(x >= BOX_WIDTH_M / 2) & (x < BOX_WIDTH_M / 2 + 0.1) & (np.abs(y) < 0.035)] = 0.59
    if small_box:
        depth[(np.abs(x) < BOX_WIDTH_M / 2) & (np.abs(y) < 0.03)] = 0.58
    return depth


def _joined_frame():
    """(frame, joined mask, x): joined_depth's box and plate as one mask on a calibrated
    frame, and each pixel's x on the box's top plane (m)."""
    from vision import ObjectMask

    depth = joined_depth(True)
    frame = RGBDFrame(np.full((K.height, K.width, 3), 128, np.uint8), depth, K, T_BASE_CAMERA)
    joined = ObjectMask(depth < 0.595, "joined", 1.0, "test")
    v, u = np.mgrid[0:K.height, 0:K.width]
    return frame, joined, (u - K.cx) / K.fx * 0.59


def test_jaw_region_keeps_the_part_of_a_joined_mask_between_the_fingers():
    """A grasp across the box of a mask that joins it to a plate: the region is the box's
    pixels under the fingers' band, none of the plate's; without a camera pose it is the
    whole mask."""
    from onboard.loop import jaw_region

    frame, joined, x = _joined_frame()
    T = np.eye(4)
    T[:3, :3] = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])  # closing along y
    T[:3, 3] = (0.0, 0.0, 0.005)  # fingertips 15 mm under the box's top
    region = jaw_region(frame, joined, T, 0.085, 0.022, insertion_m=0.015)
    assert region is not joined and region.label == "joined"
    assert region.mask.sum() > 100
    assert not np.any(region.mask & (x > BOX_WIDTH_M / 2 + 0.002))  # none of the plate
    assert np.all(np.abs(x[region.mask]) < 0.011 + 0.004)  # within the finger's width
    uncalibrated = RGBDFrame(frame.color, frame.depth_m, K, None)
    assert jaw_region(uncalibrated, joined, T, 0.085, 0.022) is joined


def test_a_wide_jaw_closing_across_the_box_watches_the_box_not_the_plate_its_opening_spans():
    """A 140 mm jaw closing across the box's 40 mm, the plate joined to its side in one mask:
    the band the open fingers sweep holds more plate than box, the band of what they close
    on (the grasp's section with CLOSING_MARGIN_M either side) holds box only."""
    from onboard.loop import CLOSING_MARGIN_M, closing_band_m, jaw_region

    frame, joined, x = _joined_frame()
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])  # closing along x, across the box
    T[:3, 3] = (0.0, 0.0, 0.005)
    opening = jaw_region(frame, joined, T, 0.14, 0.022, insertion_m=0.015)
    plate = opening.mask & (x > BOX_WIDTH_M / 2)
    assert plate.sum() > (opening.mask & ~plate).sum()  # the opening's band: mostly plate
    band = closing_band_m({"section_m": BOX_WIDTH_M}, 0.14)
    assert band == pytest.approx(BOX_WIDTH_M + 2 * CLOSING_MARGIN_M)
    closing = jaw_region(frame, joined, T, band, 0.022, insertion_m=0.015)
    assert closing.mask.sum() > 100
    assert np.all(x[closing.mask] < BOX_WIDTH_M / 2 + CLOSING_MARGIN_M + 0.004)
    assert (closing.mask & (x > BOX_WIDTH_M / 2)).sum() < 0.2 * closing.mask.sum()
    # no section (a database grasp, or no depth reading at the contacts): the opening
    assert closing_band_m({}, 0.14) == 0.14 and closing_band_m(None, 0.085) == 0.085
    assert closing_band_m({"section_m": float("nan")}, 0.14) == 0.14
    assert closing_band_m({"section_m": 0.3}, 0.14) == 0.14  # never past the opening


def test_a_box_lifted_off_a_joined_mask_is_judged_where_the_jaw_closed(tmp_path, monkeypatch):
    """The segmenter joins the box to the plate it touches; the grasp is across the box, the
    after-lift image shows the plate still there and the box gone: a success (judged on the
    whole mask it read "still in its place")."""
    monkeypatch.setattr(time, "sleep", lambda s: None)
    loop = hardware_loop(tmp_path, [joined_depth(True), joined_depth(True), joined_depth(False)])
    rec = loop.pick()
    assert len(loop.planner.last_asked) == 1  # one mask: box and plate joined
    assert abs(rec.T_base_tcp[0, 3]) < BOX_WIDTH_M / 2 and abs(rec.T_base_tcp[1, 0]) > 0.99
    assert rec.outcome_source == "gripper+image" and rec.object_detected is True
    assert rec.outcome == "success" and rec.success is True, (rec.outcome, rec.note, rec.error)
    assert "still in its place" not in rec.note


class WatchedMasks(NoTruth):
    """The null port, keeping every mask the loop asks it to watch, and naming a mask as a
    simulator's truth does: by the object under most of its pixels (the box or the plate of
    joined_depth)."""

    def __init__(self) -> None:
        self.watched: list = []

    def watch(self, frame, mask):
        self.watched.append(mask)
        return super().watch(frame, mask)

    def object_name(self, frame, mask):
        v, u = np.nonzero(mask.mask)
        x = (u - K.cx) / K.fx * 0.59
        return "box" if np.mean(np.abs(x) < BOX_WIDTH_M / 2) > 0.5 else "plate"


def test_the_truth_watches_and_names_the_part_of_a_joined_mask_the_jaw_closes_on(
        tmp_path, monkeypatch):
    """The simulator's truth is asked about the box the jaw closes on, not the whole mask
    that joins it to the plate (whose larger part, the plate, it would watch), and the
    trial is logged under the box's name."""
    monkeypatch.setattr(time, "sleep", lambda s: None)
    truth = WatchedMasks()
    loop = hardware_loop(tmp_path, [joined_depth(True), joined_depth(True), joined_depth(False)],
                         truth=truth)
    rec = loop.pick()
    (watched,) = truth.watched
    v, u = np.nonzero(watched.mask)
    x = (u - K.cx) / K.fx * 0.59
    assert len(x) > 100 and np.all(x < BOX_WIDTH_M / 2 + 0.002), "the plate's pixels watched"
    # the whole mask is mostly plate: the trial is named by what the jaw closed on
    from vision import ObjectMask
    whole = ObjectMask(joined_depth(True) < 0.595, "", 1.0, "test")
    assert truth.object_name(None, whole) == "plate"
    assert rec.object_label == "box"


@settings(max_examples=60, deadline=None)
@given(x=st.floats(-0.15, 0.15), y=st.floats(-0.1, 0.1), theta=st.floats(0.0, np.pi),
       width=st.floats(0.0, 0.14), finger=st.floats(0.005, 0.04), insertion=st.floats(0.0, 0.05))
def test_jaw_region_is_a_part_of_the_mask_or_the_whole_of_it(x, y, theta, width, finger,
                                                              insertion):
    """Wherever the jaw is: the region lies inside the mask, and is either the whole mask or
    at least MIN_REGION_PX of its pixels."""
    from onboard.loop import MIN_REGION_PX, jaw_region
    from vision import ObjectMask

    depth = joined_depth(True)
    frame = RGBDFrame(np.full((K.height, K.width, 3), 128, np.uint8), depth, K, T_BASE_CAMERA)
    joined = ObjectMask(depth < 0.595, "joined", 1.0, "test")
    c, s = np.cos(theta), np.sin(theta)
    T = np.eye(4)
    T[:3, :3] = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
    T[:3, 3] = (x, y, 0.005)
    region = jaw_region(frame, joined, T, width, finger, insertion)
    assert not np.any(region.mask & ~joined.mask)
    assert region is joined or region.mask.sum() >= MIN_REGION_PX


def cut_box_depth() -> np.ndarray:
    """(240, 320) float32 depth (m): a box 800 mm across x, 70 mm along y and 50 mm tall whose
    near side runs past the image's bottom border (its ends past the left and right ones):
    38 mm of it along y are in view, narrower than the 85 mm stroke, its true 70 mm too."""
    v, u = np.mgrid[0:K.height, 0:K.width]
    depth = np.full((K.height, K.width), 0.6, np.float32)
    x = (u - K.cx) / K.fx * 0.55
    y = -(v - K.cy) / K.fy * 0.55
    depth[(np.abs(x) < 0.4) & (y > -0.25) & (y < -0.18)] = 0.55
    return depth


def test_a_box_cut_off_by_the_image_border_gets_no_grasp_across_the_cut(tmp_path):
    """The box runs past the bottom of the image: across the cut its seen part is 38 mm, a
    grasp Tan's measure alone takes (the far finger would land past the view, on the box's
    unseen part). The loop plans none and says the object runs past the edge of the view."""
    loop = hardware_loop(tmp_path, [cut_box_depth()])
    plan = loop.plan()
    assert isinstance(plan.choice, NoGrasp), plan.choice
    assert "runs past the edge of the camera's view" in plan.choice.reason


def test_the_overlay_draws_the_plane_past_the_view_apart_from_what_was_seen(tmp_path,
                                                                           monkeypatch):
    """A box 40 mm across x, cut off by the image's bottom border along y: the jaw closes
    across x, beside the cut. The trial's overlay draws the plane past the view (an obstacle
    to the score) pale blue, and the box grey."""
    from onboard._overlay import UNSEEN_BGR

    monkeypatch.setattr(time, "sleep", lambda s: None)
    v, u = np.mgrid[0:K.height, 0:K.width]
    depth = np.full((K.height, K.width), 0.6, np.float32)
    x = (u - K.cx) / K.fx * 0.55
    y = -(v - K.cy) / K.fy * 0.55
    depth[(np.abs(x) < BOX_WIDTH_M / 2) & (y > -0.25) & (y < -0.18)] = 0.55
    loop = hardware_loop(tmp_path, [depth])
    rec = loop.pick()
    assert abs(rec.T_base_tcp[0, 0]) > 0.99, "the jaw closes across x"
    overlay = loop.trial_log.image(rec.trial_id, "overlay")
    pale = np.all(overlay == UNSEEN_BGR, axis=2)
    grey = np.all(overlay == 170, axis=2)
    assert pale.sum() > 1000 and grey.sum() > 1000


class ColourCamera(PlaybackCamera):
    """Plays back one depth image with its colour image."""

    def __init__(self, depth: np.ndarray, colour: np.ndarray) -> None:
        super().__init__([depth])
        self.colour = colour

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        frame = super()._read(timeout_s)
        return RGBDFrame(self.colour, frame.depth_m, K, T_BASE_CAMERA, seq=frame.seq)


def box_with_holes_beside(half_width_m: float, holes_m: float, *,
                          lying_can: bool = False) -> ColourCamera:
    """A red box 2 x half_width_m across x and 120 mm along y, 50 mm tall (or with
    lying_can a can of that radius lying along y), on a grey table 0.6 m under the camera,
    with a band holes_m wide beside its +x side where the sensor read nothing (the D400
    loses such a band beside a depth step; there it sees the table's colour)."""
    v, u = np.mgrid[0:K.height, 0:K.width]
    x = (u - K.cx) / K.fx * 0.55
    y = -(v - K.cy) / K.fy * 0.55
    depth = np.full((K.height, K.width), 0.6, np.float32)
    box = (np.abs(x) < half_width_m) & (np.abs(y) < 0.06)
    if lying_can:
        r = half_width_m
        depth[box] = 0.6 - r - np.sqrt(np.clip(r * r - x[box] ** 2, 0.0, None))
    else:
        depth[box] = 0.55
    depth[(x >= half_width_m) & (x < half_width_m + holes_m) & (np.abs(y) < 0.06)] = 0.0
    colour = np.full((K.height, K.width, 3), 128, np.uint8)
    colour[box] = (40, 40, 200)
    return ColourCamera(depth, colour)


def test_a_box_that_fits_the_stroke_is_grasped_across_with_the_sensors_holes_beside_it(
        tmp_path):
    """A box 82 mm across in the 85 mm stroke (120 mm the other way), with a band of the
    sensor's holes beside it that the segmenter claims (filled with the box's depth, its
    silhouette is 90 mm across: no grasp across it clears the fingers): its sides are walls,
    so the band lies outside it and it is searched on its readings alone too. It is grasped
    across its 82 mm, centred on the box, the trial marked holes_left_out, and a replay
    re-scores it on that silhouette."""
    from onboard.loop import planned_on_readings, pose_as_scored

    loop = hardware_loop(tmp_path, [], camera=box_with_holes_beside(0.041, 0.008))
    plan = loop.plan()
    choice = plan.choice
    assert not isinstance(choice, NoGrasp), choice.reason
    assert abs(choice.T_base_tcp[0, 0]) > 0.99, "the jaw closes across x"
    assert planned_on_readings(choice.features)
    # the box's middle is the camera's (x = 0), whichever way the base frame runs
    assert abs(choice.T_base_tcp[0, 3] - T_BASE_CAMERA[0, 3]) < 0.002
    assert choice.score >= loop.config.scoring.min_score
    T = pose_as_scored(choice.T_base_tcp, choice.features)
    assert loop.score_pose(plan.frame, T, holes_left_out=True)[0] == \
        pytest.approx(choice.score, abs=1e-6)
    assert loop.score_pose(plan.frame, T)[0] < loop.config.scoring.min_score  # the band's


def test_a_grasp_on_the_readings_alone_is_scaled_by_the_fingers_room_beside_them(tmp_path):
    """A box 84 mm across in the 85 mm stroke with the band of holes beside it, searched on
    its readings alone: nothing keeps the open fingers off its walls but their room beside
    the readings, here under one camera pixel at the box (0.55 m / 300 px = 1.83 mm), so the
    score is that share of its own, the trial logs the room and the factor, and a replay
    scores it the same."""
    from onboard.loop import pose_as_scored

    loop = hardware_loop(tmp_path, [], camera=box_with_holes_beside(0.042, 0.008))
    plan = loop.plan()
    choice = plan.choice
    assert not isinstance(choice, NoGrasp), choice.reason
    f = choice.features
    pixel_m = 0.55 / 300.0
    assert 0.0 < f["readings_clearance_m"] < pixel_m
    assert f["score_clearance"] == pytest.approx(f["readings_clearance_m"] / pixel_m, rel=1e-3)
    # the search's own score for it, before the room, is its features' product
    unscaled = f["tan_score"] * f["score_contact"] * f["score_torque"] * f["score_tilt"] \
        * f["score_palm"] * f["score_swing"]
    assert choice.score == pytest.approx(unscaled * f["score_clearance"], rel=1e-3)
    T = pose_as_scored(choice.T_base_tcp, f)
    score, replayed = loop.score_pose(plan.frame, T, holes_left_out=True)
    assert score == pytest.approx(choice.score, abs=1e-6)
    assert replayed["score_clearance"] == pytest.approx(f["score_clearance"])
    # a validate draw on that silhouette is scaled by its own room the same way
    loop.mode = "validate"
    for _ in range(3):
        drawn = loop.plan().choice
        d = drawn.features
        if "score_clearance" in d and d.get("holes_left_out"):
            unscaled = d["tan_score"] * d["score_contact"] * d["score_torque"] \
                * d["score_tilt"] * d["score_palm"] * d["score_swing"]
            assert drawn.score == pytest.approx(unscaled * d["score_clearance"], rel=1e-3,
                                                abs=1e-6)
            assert d["score_clearance"] == pytest.approx(
                min(1.0, max(0.0, d["readings_clearance_m"] / pixel_m)), rel=1e-3)
            break
    else:
        pytest.fail("no validate draw on the readings alone carried the fingers' room")


def test_beside_a_lying_can_the_sensors_holes_stay_and_are_named_in_the_message(tmp_path):
    """A can 82 mm across lying in the 85 mm stroke with the same band beside it: its side
    bulges out under its crest, where the band stands for the part the camera loses, so
    band_beside_walls is False for it (True for the box), widened_text names the holes with
    both widths, and the loop's no-grasp message carries them."""
    from onboard.loop import band_beside_walls
    from onboard.loop._image_search import widened_text  # private: the message's text
    from scoring import JawLimits
    from vision import ProjectedObject

    jaw = JawLimits(stroke_m=0.085)
    for lying_can, walls in ((True, False), (False, True)):
        frame = box_with_holes_beside(0.041, 0.008, lying_can=lying_can).read()
        mask = max(make_segmenter("tabletop").segment(frame), key=lambda m: int(m.mask.sum()))
        projected = ProjectedObject(frame, mask)
        sil = projected.at(0.045)
        assert band_beside_walls(projected, sil, jaw) is walls
        assert "82 mm without the sensor's holes at its edge" in widened_text(sil, jaw)
        assert "stroke or wider" in widened_text(sil, jaw)
    loop = hardware_loop(tmp_path, [], camera=box_with_holes_beside(0.041, 0.008,
                                                                    lying_can=True))
    plan = loop.plan()
    assert isinstance(plan.choice, NoGrasp), plan.choice
    assert "82 mm without the sensor's holes at its edge" in plan.choice.reason


def test_a_box_wider_than_the_stroke_as_read_is_not_blamed_on_the_holes(tmp_path):
    """Read 90 mm across, the box is wider than the stroke, the band of holes beside it
    aside: the message says so, and not that the holes are why."""
    loop = hardware_loop(tmp_path, [], camera=box_with_holes_beside(0.045, 0.008))
    plan = loop.plan()
    assert isinstance(plan.choice, NoGrasp), plan.choice
    assert "wider than the jaw's 85 mm stroke" in plan.choice.reason
    assert "sensor's holes" not in plan.choice.reason


def test_the_holes_are_named_only_where_the_readings_alone_fit_the_stroke():
    """widened_text names the holes where the filled target is as wide as the stroke or
    wider and the readings alone are narrower; neither where the readings are as wide too,
    nor where the stroke clears the filled target."""
    import dataclasses

    from onboard.loop._image_search import widened_text  # private: the message's text
    from scoring import JawLimits
    from vision import silhouette

    frame = box_with_holes_beside(0.041, 0.008).read()
    mask = max(make_segmenter("tabletop").segment(frame), key=lambda m: int(m.mask.sum()))
    sil = silhouette(frame, mask, insertion_depth_m=0.02)
    assert "82 mm without the sensor's holes" in widened_text(sil, JawLimits(stroke_m=0.085))
    as_read = dataclasses.replace(sil, target_read=sil.target)
    assert widened_text(as_read, JawLimits(stroke_m=0.085)) == ""
    assert widened_text(sil, JawLimits(stroke_m=0.1)) == ""


def box_and_tall_block(block_near_m: float) -> np.ndarray:
    """(240, 320) float32 depth (m): the 40 x 60 mm box at the table's centre, 50 mm tall,
    and a block 150 mm tall, 40 mm across x and 60 mm along y, its near side block_near_m
    from the box's middle along +x."""
    v, u = np.mgrid[0:K.height, 0:K.width]
    depth = table_depth(True)
    x = (u - K.cx) / K.fx * 0.45
    y = -(v - K.cy) / K.fy * 0.45
    depth[(x >= block_near_m) & (x < block_near_m + 0.04) & (np.abs(y) < 0.03)] = 0.45
    return depth


FRANKA_PALM = ("gripper: {open_width_m: 0.080, palm_width_m: 0.063, palm_length_m: 0.204}\n")


def test_a_long_palm_sees_a_tall_block_past_the_open_fingers_reach(tmp_path):
    """The Franka hand's palm is 204 mm along the closing direction, longer than the border a
    silhouette kept round its object for the open fingers (60 % of the 80 mm opening and 20
    mm: 68 mm). A block 150 mm tall standing 95 mm from a 40 mm box's middle lies under the
    palm's end when the jaw closes across the box, and it lay outside that border: the grasp
    across scored clear and the palm came down on the block. The border now reaches as far
    as the palm's check: the grasp across the box's 40 mm has its palm on the block, and the
    loop closes along the box's 60 mm instead."""
    loop = hardware_loop(tmp_path, [box_and_tall_block(0.095)], cell_text=FRANKA_PALM)
    plan = loop.plan()
    assert not isinstance(plan.choice, NoGrasp), plan.choice.reason
    T = plan.choice.T_base_tcp
    assert abs(T[1, 0]) > 0.99, "the jaw closes along y, its palm clear of the block"
    across = T.copy()
    across[:3, :2] = np.array([[1.0, 0.0], [0.0, -1.0], [0.0, 0.0]])  # closing along x
    across[:2, 3] = T_BASE_CAMERA[:2, 3]  # at the box's middle
    score, feats = loop.score_pose(plan.frame, across)
    assert feats["body_collision"] == 1.0 and score == 0.0  # the palm lands on the block
    # further off, past the palm's end, the block leaves the grasp across the box clear
    far = hardware_loop(tmp_path / "far", [box_and_tall_block(0.13)], cell_text=FRANKA_PALM)
    score, feats = far.score_pose(far.plan().frame, across)
    assert feats["body_collision"] == 0.0 and score > 0.9
