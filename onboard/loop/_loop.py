"""PickingLoop: one picking cell's cycle, orchestrated: plan (Planner), execute (Executor),
write the trial (trial_record, one transaction), each stage timed on one StageClock.

Faults: a capture that fails, a frame with no depth, nothing segmented or nothing graspable
give a NoGrasp and a logged trial; a gripper or arm fault during a pick stops safely (gripper
opened, arm retreated), is logged with the error, and the loop carries on; an arm that
reports FAULTED puts the loop in the "faulted" state, where picks are refused until the
fault is cleared (PickingCell.clear_fault). So does a run of approaches that stopped where the
planning frame showed nothing under the hand (a part hooked on a finger: _unseen_stop.py),
which the simulated cell's operator sees to by itself.
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import time

import numpy as np

from drivers.arm import ArmController, check_tcp_pose
from drivers.camera import Camera, RGBDFrame
from drivers.gripper import Gripper
from drivers.hand import Hand
from scoring import GripperProjection, JawLimits
from vision import ObjectMask, Segmenter

from .._cellfile import CellConfig, jaw_friction
from .._devices import load_calibration_file
from .._trials import TrialRecord
from .._types import GraspChoice, KernelWarmUp, NoGrasp
from ._clock import StageClock
from ._executor import NO_ARM, Executor
from ._image_search import ImageSearch
from ._planner import Planner, grasp_sources
from ._record import trial_images, trial_mode, trial_record
from ._source import FailedGrasps, SourceSetup
from ._truth import NO_TRUTH, CellTruth
from ._types import DatabaseGraspView, Execution, LoopState, Plan
from ._unseen_stop import StopReading, count_stop, read_hand_stop, stop_margin_m
from ._warm import warm_up

log = logging.getLogger("graspline.loop")
PENDING_FRAMES = 8  # best_grasp's frames kept for the controller's reports of a stop (2-3 MB each)


class PickingLoop:
    """One picking cell's loop: its cycles (pick, best_grasp) and re-scoring (score_pose).

    truth : the simulator's ground-truth port (SimulatedTruth); None on hardware (NO_TRUTH).
    mode : "best" (the top grasp) or "validate" (grasps drawn across the score levels).
    seed : of the loop's one random stream (searches and validate-mode draws).
    recogniser : frame, mask -> Recognition, for the database source (the cell file's
    ``database`` section); None: the section's ``recogniser`` (vision.recognise by default).
    hand : the cell's multi-finger hand (gripper None then): the loop plans with the
    database alone (no image search, which plans parallel-jaw grasps) and executes with it.
    Replacing ``config`` or ``mode`` reaches the planner, the executor and the sources.
    """

    def __init__(self, config: CellConfig, *, camera: Camera, segmenter: Segmenter,
                 gripper: Gripper | None, arm: ArmController | None, trial_log, cell_hash: str,
                 truth: CellTruth | None = None, mode: str = "best",
                 seed: int | None = 0, recogniser=None, hand: Hand | None = None) -> None:
        if mode not in ("best", "validate"):
            raise ValueError(f"mode must be 'best' or 'validate', got {mode!r}")
        if hand is not None and config.database is None:
            raise ValueError(f"the cell carries the {hand.name} hand, which plans with a grasp "
                             f"database: the cell file needs a 'database' section")
        self.hand = hand
        self.segmenter, self.arm = segmenter, arm
        self.trial_log = trial_log
        self.cell_hash = cell_hash
        self.truth: CellTruth = NO_TRUTH if truth is None else truth
        self.state = LoopState()
        self.projection, self.jaw = _fingers(config)
        self.home = _down_pose(config.arm.home_m)
        self.place = _down_pose(config.arm.place_m)
        self.failed = FailedGrasps()
        setup = SourceSetup(config, self.projection, self.jaw, np.random.default_rng(seed),
                            segmenter, self.truth, self.failed, recogniser)
        # a multi-finger hand cannot do the image search's parallel-jaw grasps: not built
        sources = [make(setup) for make in grasp_sources(config)
                   if hand is None or make is not ImageSearch]
        self._image_search = next((s for s in sources if isinstance(s, ImageSearch)), None)
        self.planner = Planner(config, camera=camera, segmenter=segmenter, arm=arm,
                               home=self.home, state=self.state, truth=self.truth,
                               sources=sources, mode=mode)
        self.executor = Executor(config, camera=camera, gripper=gripper, arm=arm,
                                 home=self.home, place=self.place, state=self.state,
                                 truth=self.truth, hand=hand)
        # around the hand at an approach's stop, as surely as the hand-eye calibration places
        # a seen point (set at start-up, as the fingers' projection is)
        self.executor.stop_margin_m = self.stop_margin_m = _stop_margin(config)
        self._config = config
        # the frames of the last grasps best_grasp offered, by trial: a controller's stop is
        # read against the frame its grasp was planned on
        self._pending_frames: collections.OrderedDict[
            int, tuple[RGBDFrame, DatabaseGraspView | None]] = collections.OrderedDict()

    @property
    def config(self) -> CellConfig:
        """The cell file the loop runs with."""
        return self._config

    @config.setter
    def config(self, config: CellConfig) -> None:
        # an experiment may change settings between cycles (other scoring, deeper search);
        # the fingers' projection stays the one computed at start-up
        self._config = config
        for part in (self.planner, self.executor, *self.planner.sources):
            part.config = config

    @property
    def mode(self) -> str:
        """"best" (the top grasp) or "validate" (grasps drawn across the score levels)."""
        return self.planner.mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self.planner.mode = mode

    def warm_up(self) -> KernelWarmUp:
        """Compile (or load from numba's cache) every kernel the planning uses, on a small
        synthetic scene, before the first frame: the first cycle then plans as fast as the
        others. It leaves the loop's random stream and state as they were."""
        return warm_up(self.segmenter, self._image_search)

    # ------------------------------------------------------------------ stages
    def plan(self, object_label: str | None = None, timeout_s: float | None = None, *,
             clock: StageClock | None = None) -> Plan:
        """Capture a frame and choose a grasp on it (no motion); a NoGrasp says why not.
        clock : the cycle's StageClock (its stage times and overruns go on to the trial);
        None: a clock of its own."""
        clock = StageClock(self.config.budgets_s) if clock is None else clock
        self.state.activity = "planning"
        try:
            return self.planner.plan(clock, object_label, timeout_s)
        finally:
            self.state.activity = "idle"

    def execute(self, plan: Plan, clock: StageClock) -> Execution:
        """Carry out a planned grasp with the cell's arm; a fault stops it safely."""
        return self.executor.execute(plan, clock)

    # ------------------------------------------------------------------ cycles
    def pick(self, object_label: str | None = None) -> TrialRecord:
        """One whole cycle with graspline's own arm: plan, execute, judge, log; the record.
        A fault that asks for a look at the hand is cleared where the truth's own operator
        sees to it (the simulated cell's); any other fault refuses the pick."""
        if self.state.hand_check and self.truth.see_to_hand():
            self.state.clear_fault()
        if self.state.fault:
            raise RuntimeError(f"the cell is faulted ({self.state.fault}); clear the fault first")
        if self.arm is None:
            raise RuntimeError(NO_ARM)
        clock = StageClock(self.config.budgets_s)
        plan = self.plan(object_label, clock=clock)
        if isinstance(plan.choice, NoGrasp):
            return self._write_trial(plan, None, clock)
        ex = self.execute(plan, clock)
        if ex.success is not True and self.mode == "best":
            self.failed.remember(plan.choice.T_base_tcp)
        return self._write_trial(plan, ex, clock)

    def best_grasp(self, object_label: str | None = None,
                   timeout_s: float | None = None) -> GraspChoice | NoGrasp:
        """Plan only (the controller executes): the choice with its trial id, left pending in
        the log until report_outcome."""
        if self.state.hand_check:  # the controller reported a run of stops on nothing seen
            return NoGrasp(f"the cell is faulted ({self.state.fault})")
        clock = StageClock(self.config.budgets_s)
        plan = self.plan(object_label, timeout_s, clock=clock)
        rec = self._write_trial(plan, None, clock, pending=isinstance(plan.choice, GraspChoice))
        if isinstance(plan.choice, NoGrasp):
            return plan.choice
        self._pending_frames[rec.trial_id] = (plan.frame, plan.view)
        while len(self._pending_frames) > PENDING_FRAMES:
            self._pending_frames.popitem(last=False)
        return dataclasses.replace(plan.choice, trial_id=rec.trial_id, stage_s=clock.stage_s)

    def read_stop(self, trial_id: int, T_stop: np.ndarray) -> StopReading | None:
        """What trial trial_id's frame (one of the last PENDING_FRAMES best_grasp planned)
        shows under the jaw, or a database grasp's hand boxes, at T_stop (4 x 4, base frame),
        where the controller's approach stopped; None for an older or unknown trial, or a
        frame without a camera pose."""
        frame, view = self._pending_frames.get(trial_id, (None, None))
        return read_hand_stop(frame, T_stop, self.config.gripper, view, self.hand is not None,
                              self.stop_margin_m)

    def count_stop(self, reading: StopReading, message: str) -> None:
        """Count an approach's stop (count_stop): a run of arm.unseen_stops_to_check on
        nothing seen faults the loop for a look at the hand."""
        count_stop(self.state, reading, self.config.arm.unseen_stops_to_check, message)

    def segment(self, frame: RGBDFrame, *, finer_cut: bool = False) -> list[ObjectMask]:
        """The segmenter's masks of frame, or with finer_cut its finer cut (segment_finer),
        the masks the planner grasps on where nothing in view had a grasp; a logged grasp
        says which it was planned on (planned_on_finer_cut of its features)."""
        if finer_cut:
            return self.segmenter.segment_finer(frame)
        return self.segmenter.segment(frame)

    def score_pose(self, frame: RGBDFrame, T_base_tcp: np.ndarray, *,
                   finer_cut: bool = False,
                   holes_left_out: bool = False) -> tuple[float, dict[str, float]]:
        """(score, features by name) the cell's scoring gives a straight-down grasp at
        T_base_tcp (base frame) on frame: its target is the segmented object nearest the
        fingertips' point in the camera image, its neighbours obstacles, as in a search;
        finer_cut: on the segmenter's finer cut, as the planner segmented a grasp logged with
        features["finer_cut"]; holes_left_out: on the silhouette drawn from the readings alone,
        as the search scored a grasp logged with features["holes_left_out"]. For re-scoring
        logged trials on their stored frames with other settings (paired ablations) and for
        checking a grasp a controller proposes. ValueError when nothing is segmented."""
        if self._image_search is None:
            raise ValueError(f"score_pose scores parallel-jaw grasps; this cell carries the "
                             f"{self.hand.name} hand")
        T = check_tcp_pose(T_base_tcp, "T_base_tcp")
        masks = self.segment(frame, finer_cut=finer_cut)
        if not masks:
            cut = "the finer cut of " if finer_cut else ""
            raise ValueError(f"score_pose: nothing segmented in {cut}frame {frame.seq}")
        return self._image_search.score_pose(frame, masks, T, holes_left_out=holes_left_out)

    def _write_trial(self, plan: Plan, ex: Execution | None, clock: StageClock, *,
                     pending: bool = False) -> TrialRecord:
        """Write the trial (record and pictures) in one transaction; the record as stored.

        The ``log`` stage is timed from here to the moment the row is written, inside the
        trial log's transaction (images included), so its time and any overrun are in the
        row; only the commit itself falls outside it."""
        t0 = time.perf_counter()
        c = plan.grasp
        trial_id = self.trial_log.begin(object_label=c.object_label if c else "",
                                        cell_hash=self.cell_hash, mode=trial_mode(plan))
        _warn_if_judges_disagree(trial_id, ex)
        rec = trial_record(plan, ex, trial_id=trial_id, started_at_s=time.time(),
                           cell_hash=self.cell_hash, stage_s=clock.stage_s,
                           overruns=clock.overruns, pending=pending)

        def close_log_stage(stored: TrialRecord) -> None:
            over = clock.add("log", time.perf_counter() - t0)
            stored.stage_s = dict(clock.stage_s)
            if over:
                stored.note = "; ".join(n for n in (stored.note, "budget overrun: " + over) if n)

        return self.trial_log.finish(rec, trial_images(plan, ex, self.projection),
                                     before_write=close_log_stage)


def _warn_if_judges_disagree(trial_id: int, ex: Execution | None) -> None:
    """Log a warning when the simulator's verdict differs from the gripper's and the
    after-image's (the simulator's is the one logged)."""
    if ex is not None and ex.truth.lifted is not None and ex.success is not None \
            and ex.truth.lifted != ex.success:
        log.warning("trial %d judged %s by the gripper and after-image, %s by the simulator",
                    trial_id, ex.success, ex.truth.lifted)


def _fingers(config: CellConfig) -> tuple[GripperProjection, JawLimits]:
    """The fingers as the scorer sees them: a gripper calibration file's finger width and
    widest opening where the cell file names one, else the cell file's nominal geometry."""
    g, s = config.gripper, config.scoring
    cal = None if config.calibration.gripper is None else load_calibration_file(
        "gripper", config.calibration.gripper)
    projection = cal.projection(s.metres_per_px, s.n_lines) if cal else \
        GripperProjection(g.finger_width_m / s.metres_per_px,
                          g.open_width_m / s.metres_per_px, s.n_lines)
    jaw = JawLimits(stroke_m=cal.opening_m if cal else g.open_width_m,
                    finger_thickness_m=g.finger_thickness_m,
                    pad_length_m=g.pad_length_m, force_n=g.force_n,
                    friction=jaw_friction(config), finger_length_m=g.finger_length_m,
                    pad_width_m=g.finger_width_m,
                    palm_width_m=g.palm_m()[0], palm_length_m=g.palm_m()[1])
    return projection, jaw


def _stop_margin(config: CellConfig) -> float:
    """The margin around the hand at an approach's stop (metres, stop_margin_m): wider by the
    rms translation residual of the hand-eye calibration the cell file names."""
    path = config.calibration.hand_eye
    rms = None if path is None else load_calibration_file("hand_eye", path).rms_translation_m
    return stop_margin_m(rms)


def _down_pose(xyz) -> np.ndarray:
    """A TCP pose at xyz (metres) pointing straight down (z = -base z, x = base x)."""
    T = np.eye(4)
    T[:3, :3] = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]
    T[:3, 3] = xyz
    return check_tcp_pose(T, "pose")
