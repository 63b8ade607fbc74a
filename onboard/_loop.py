"""The picking loop: capture -> segment -> silhouettes -> search and score -> choose -> arm and
gripper -> after-image -> outcome -> log, each stage timed against its budget.

The loop knows interfaces only (Camera, Segmenter, Gripper, ArmController, TrialLog); the
cell file names the implementations (onboard._devices builds them). The endpoint and the CLI
drive the same PickingLoop; neither holds logic of its own.

Faults: a capture that fails, a frame with no depth, nothing segmented or nothing graspable
give a NoGrasp and a logged trial; a gripper or arm fault during a pick stops safely (gripper
opened, arm retreated), is logged with the error, and the loop carries on; an arm that
reports FAULTED puts the loop in the "faulted" state, where picks are refused until
``clear_fault``.
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from drivers.arm import ArmController, MoveResult, MoveStatus, check_tcp_pose
from drivers.camera import Camera, CameraError, RGBDFrame
from drivers.gripper import Gripper, GripperError
from scoring import (GripperProjection, JawLimits, SearchParams, prepare_silhouette,
                     score_candidates, search_grasps)
from vision import ObjectMask, Segmenter, Silhouette, neighbours, silhouette, touching

from ._cellfile import CellConfig
from ._devices import _calibration
from ._movement import MovementError, object_movement, pose_movement
from ._trials import TrialImages, TrialRecord
from ._types import CellStatus, GraspChoice, NoGrasp

# the loop's second, deeper search runs only when the first found no grasp scoring this much:
# it doubles the search time, and above this the first grasp is already at the top level
DEEPER_SEARCH_BELOW = 0.95
log = logging.getLogger("graspline.loop")

LEVELS = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0 + 1e-9])  # the five score levels (Tan Fig. 8)
HAND_INSTANCE = 1000  # instance id of the gripper's own pixels in simulated frames
VALIDATE_CANDIDATES = 4000  # random candidates scored per object when drawing across levels
NO_ARM = ("this cell has no arm of graspline's (arm.kind: none): the robot controller moves the "
          "arm; use best_grasp, grip and release")


@dataclass
class Plan:
    """What the planning stages produced for one frame: the choice (or why none), the frame,
    the masks, the chosen object's silhouette and mask index, and the stage times."""

    choice: GraspChoice | NoGrasp
    frame: RGBDFrame | None = None
    masks: list[ObjectMask] = field(default_factory=list)
    sil: Silhouette | None = None
    mask_index: int = -1
    level: int = -1
    support: object | None = None   # the support plane of the frame (vision.SupportPlane)


@dataclass
class Execution:
    """What happened when the arm and gripper carried out a grasp."""

    outcome: str                  # "success", "failure", "error"
    success: bool | None
    gripper_status: str = ""
    gripper_width_m: float | None = None
    object_detected: bool | None = None
    after_close: RGBDFrame | None = None
    after_lift: RGBDFrame | None = None
    truth_movement_m: float | None = None
    truth_movement_rad: float | None = None
    truth_lifted: bool | None = None
    error: str | None = None
    judge_note: str = ""
    truth_poses: tuple | None = None   # the object's pose before and after closing (simulator)


class StageClock:
    """Times named stages (seconds) and reports those over their budget: each overrun is
    logged as a warning when it happens and kept in ``overruns`` for the trial's note. One
    clock serves a whole cycle, planning and execution alike."""

    def __init__(self, budgets_s: dict[str, float]) -> None:
        self.budgets_s = budgets_s
        self.stage_s: dict[str, float] = {}
        self.overruns: list[str] = []

    @contextmanager
    def stage(self, name: str):
        """Time the body as stage ``name``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, dt: float) -> str | None:
        """Count dt seconds to stage ``name``; the overrun's text when dt is over its budget."""
        self.stage_s[name] = self.stage_s.get(name, 0.0) + dt
        budget = self.budgets_s.get(name)
        if budget is None or dt <= budget:
            return None
        text = f"{name} {dt * 1e3:.0f} ms > {budget * 1e3:.0f} ms"
        self.overruns.append(text)
        log.warning("stage %s overran its budget: %.1f ms > %.1f ms", name, dt * 1e3,
                    budget * 1e3)
        return text


class PickingLoop:
    """One picking cell's loop; implements the endpoint's PickingService.

    truth : the simulated cell (ground truth of object poses) or None on hardware.
    mode : "best" (the top grasp) or "validate" (grasps drawn across the score levels).
    """

    def __init__(self, config: CellConfig, *, camera: Camera, segmenter: Segmenter,
                 gripper: Gripper, arm: ArmController | None, trial_log, cell_hash: str,
                 truth=None, mode: str = "best", seed: int | None = 0) -> None:
        if mode not in ("best", "validate"):
            raise ValueError(f"mode must be 'best' or 'validate', got {mode!r}")
        self.config = config
        self.camera, self.segmenter, self.gripper, self.arm = camera, segmenter, gripper, arm
        self.trial_log = trial_log
        self.cell_hash = cell_hash
        self.truth = truth
        self.mode = mode
        self._rng = np.random.default_rng(seed)
        self.state = "idle"
        self.fault: str | None = None
        g, s = config.gripper, config.scoring
        # the fingers as the scorer sees them: a gripper calibration file's finger width and
        # widest opening where the cell file names one, else the cell file's nominal geometry
        cal = None if config.calibration.gripper is None else _calibration(
            "gripper", config.calibration.gripper)
        self.projection = cal.projection(s.metres_per_px, s.n_lines) if cal else \
            GripperProjection(g.finger_width_m / s.metres_per_px,
                              g.open_width_m / s.metres_per_px, s.n_lines)
        self.jaw = JawLimits(stroke_m=cal.opening_m if cal else g.open_width_m,
                             finger_thickness_m=g.finger_thickness_m,
                             pad_length_m=g.pad_length_m, force_n=g.force_n,
                             friction=g.pad_friction, finger_length_m=g.finger_length_m)
        self.home = _down_pose(config.arm.home_m)
        self.place = _down_pose(config.arm.place_m)
        self.robot_poses: list[tuple[np.ndarray, str | None]] = []
        self._failed: collections.deque = collections.deque(maxlen=5)
        # how the last cycle ended, for the simulated cell's operator: True nothing holdable
        # in view, False a grasp chosen, None neither (a camera fault, nothing segmented)
        self._nothing_holdable: bool | None = None

    # ------------------------------------------------------------------ planning
    def plan(self, object_label: str | None = None, timeout_s: float | None = None, *,
             clock: StageClock | None = None) -> Plan:
        """Capture a frame and choose a grasp on it (no motion); a NoGrasp says why not.
        clock : the cycle's StageClock (its stage times and overruns go on to the trial);
        None: a clock of its own."""
        clock = StageClock(self.config.budgets_s) if clock is None else clock
        self.state = "planning"
        try:
            return self._plan(clock, object_label, timeout_s)
        finally:
            self.state = "faulted" if self.fault else "idle"

    def _plan(self, clock: StageClock, object_label: str | None, timeout_s: float | None) -> Plan:
        if self.truth is not None:
            # the simulated cell re-lays an empty or stuck table, or one with nothing holdable
            self.truth.start_cycle(no_grasp=self._nothing_holdable)
        self._nothing_holdable = None
        self._clear_view()
        with clock.stage("capture"):
            frame, why = self._capture(timeout_s)
        if frame is None:
            return Plan(NoGrasp(why, clock.stage_s))
        if not np.any(np.isfinite(frame.depth_m) & (frame.depth_m > 0)):
            return Plan(NoGrasp("the frame has no depth (every pixel reads 0)", clock.stage_s), frame)
        with clock.stage("segment"):
            try:
                masks = self.segmenter.segment(frame)
            except (ValueError, RuntimeError) as exc:
                return Plan(NoGrasp(f"segmentation failed: {exc}", clock.stage_s), frame)
        if object_label is not None:
            masks_for = [i for i, m in enumerate(masks) if m.label == object_label]
            if not masks_for:
                return Plan(NoGrasp(f"no object labelled {object_label!r} in view "
                                    f"({len(masks)} object(s) segmented)", clock.stage_s), frame, masks)
        else:
            masks_for = list(range(len(masks)))
        if not masks:
            return Plan(NoGrasp("nothing segmented in view", clock.stage_s), frame, masks)
        best, unholdable = None, []
        for i in masks_for:
            found = self._search_object(frame, masks, i, clock)
            if isinstance(found, str):
                unholdable.append(found)
            elif found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is None or best[0] < self.config.scoring.min_score:
            score = 0.0 if best is None else best[0]
            why = "".join(f"; {u}" for u in unholdable)
            if best is not None:
                why = _limit_text(best[3].scores, best[4]) + why
            self._nothing_holdable = True
            return Plan(NoGrasp(f"no grasp scores at least {self.config.scoring.min_score:g} on "
                                f"the {len(masks_for)} object(s) in view (best {score:.2f}{why})",
                                clock.stage_s), frame, masks)
        with clock.stage("choose"):
            plan = self._choose(frame, masks, best, clock)
        self._nothing_holdable = False
        return plan

    def _clear_view(self) -> None:
        """Send graspline's arm home before a capture when it is elsewhere (a stopped pick
        can leave the hand over the table, where the segmenter took it for an object)."""
        if self.arm is None or self.fault:
            return
        if np.linalg.norm(self.arm.T_base_tcp[:3, 3] - self.home[:3, 3]) > 0.01:
            r = self.arm.move(self.home, self.config.arm.speed_mps)
            if not r.reached:
                log.error("could not send the arm home before the capture: %s", r.message)

    def _capture(self, timeout_s: float | None) -> tuple[RGBDFrame | None, str]:
        """A frame, or (None, why) after the configured retries."""
        cfg = self.config.camera
        why = ""
        for attempt in range(cfg.retries + 1):
            try:
                return self.camera.read(timeout_s or cfg.timeout_s), ""
            except CameraError as exc:
                why = f"camera: {exc}"
                log.warning("capture attempt %d failed: %s", attempt + 1, exc)
        return None, why

    def _silhouette(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                    insertion_m: float | None = None) -> Silhouette:
        """Object i's silhouette for a straight-down approach with the fingertips insertion_m
        past its top (default scoring.insertion_depth_m), its neighbours as obstacles (and,
        with scoring.join_touching, those touching it in its mass and mass centre)."""
        s = self.config.scoring
        depth_m = s.insertion_depth_m if insertion_m is None else insertion_m
        others = neighbours(masks, i)
        attached = touching(masks, i) if s.join_touching else None
        plane = getattr(self.segmenter, "last_plane", None)
        return silhouette(frame, masks[i], approach=(0.0, 0.0, -1.0),
                          insertion_depth_m=depth_m, metres_per_px=s.metres_per_px,
                          margin_m=0.6 * self.config.gripper.open_width_m + 0.02,
                          obstacles=others, support=plane, clearance_m=s.clearance_m,
                          attached=attached,
                          attached_max_width_m=self.config.gripper.open_width_m)

    def _insertions(self) -> list[float]:
        """The fingertip depths past an object's top that a search tries, metres: the
        configured one, then the deeper one when it is deeper."""
        s = self.config.scoring
        return [s.insertion_depth_m] + ([s.deep_insertion_m]
                                        if s.deep_insertion_m > s.insertion_depth_m else [])

    def _depth_view(self, frame: RGBDFrame, mask: ObjectMask, sil: Silhouette):
        """The depth terms' view of a target: its mass from the cell file's masses_kg by
        label when known, else its seen volume times the configured density."""
        s = self.config.scoring
        label = mask.label or self._truth_name(frame, mask)
        return sil.depth_view(mass_kg=s.masses_kg.get(label) if label else None,
                              density_kg_m3=s.density_kg_m3)

    def _measure_kw(self, frame: RGBDFrame, mask: ObjectMask, sil: Silhouette) -> dict:
        """The measure's keyword arguments for score_candidates and search_grasps."""
        measure = self.config.scoring.measure
        if measure != "graspline" or sil.height_m is None:
            return {"measure": measure}
        return {"measure": measure, "jaw": self.jaw, "depth": self._depth_view(frame, mask, sil)}

    def _search_object(self, frame, masks, i, clock):
        """(best score, mask index, silhouette, GraspSet, index) for object i over the
        insertion depths (_insertions); None when it has no silhouette or grasp; a string
        saying why when the jaw cannot hold it at all (at the first depth: a deeper section
        too wide for the stroke only leaves the shallower grasps). A deeper search runs only
        while the best grasp so far scores under DEEPER_SEARCH_BELOW."""
        best, seen = None, []
        for k, insertion in enumerate(self._insertions()):
            if best is not None and best[0] >= DEEPER_SEARCH_BELOW:
                break  # a top-level grasp already: a deeper one could gain little (README)
            with clock.stage("silhouette"):
                try:
                    sil = self._silhouette(frame, masks, i, insertion)
                except ValueError as exc:
                    log.info("object %d: no silhouette (%s)", i, exc)
                    return best
            if not sil.target.any():
                return best
            if any(abs(sil.insertion_depth_m - d) < 1e-4 for d in seen):
                continue  # the support stopped the fingertips where a shallower search did
            seen.append(sil.insertion_depth_m)
            with clock.stage("search"):
                found = search_grasps(sil.image, self.projection, target=sil.target,
                                      top_k=self.config.scoring.top_k, settings=SearchParams(),
                                      seed=int(self._rng.integers(2**31)),
                                      **self._measure_kw(frame, masks[i], sil))
            if found.no_grasp:
                if k == 0:
                    return found.no_grasp
                continue
            if len(found) == 0:
                continue
            j = self._first_untried(sil, found)
            if j is not None and (best is None or float(found.scores.score[j]) > best[0]):
                best = (float(found.scores.score[j]), i, sil, found, j)
        return best

    def _choose(self, frame, masks, best, clock) -> Plan:
        """The grasp to execute: the top one, or in validate mode one drawn across levels."""
        score, i, sil, found, j0 = best
        level = -1
        x, y, t = float(found.x[j0]), float(found.y[j0]), float(found.theta[j0])
        feats = _features(found.scores, j0)
        n = int(found.n_scored)
        kw = self._measure_kw(frame, masks[i], sil)
        if self.mode == "validate":
            x, y, t, score, feats, level, extra = self._draw_across_levels(sil, found, kw)
            n += extra
        if "depth" in kw and math.isfinite(kw["depth"].mass_kg):
            feats["mass_kg"] = kw["depth"].mass_kg  # the mass the torque term assumed
        feats["insertion_m"] = sil.insertion_depth_m  # the fingertips' depth past the top
        g = self.config.gripper
        T = sil.tcp_pose(x, y, t, tcp_to_tip_m=g.tcp_to_tip_m)
        label = masks[i].label or self._truth_name(frame, masks[i]) or f"object@{x:.0f},{y:.0f}"
        choice = GraspChoice(trial_id=-1, object_label=label, T_base_tcp=T,
                             pregrasp_m=self.config.arm.pregrasp_m, width_m=g.open_width_m,
                             force_n=g.force_n, score=score, features=feats,
                             source="image_search", x_px=x, y_px=y, theta_rad=t, n_candidates=n,
                             stage_s=clock.stage_s)
        return Plan(choice, frame, masks, sil, i, level, getattr(self.segmenter, "last_plane", None))

    def _truth_name(self, frame: RGBDFrame, mask: ObjectMask) -> str | None:
        """The simulated object's name under a mask (the simulated cell only): what a
        learned segmenter's label would be on hardware."""
        if self.truth is None:
            return None
        k = _truth_index(Plan(NoGrasp(""), frame, [mask], mask_index=0))
        return None if k is None else self.truth.object_name(k)

    def _first_untried(self, sil: Silhouette, found) -> int | None:
        """Index of the best grasp in ``found`` that is not one of the last failed grasps
        (within 10 mm and 15 degrees): a cell must not retry a grasp that just failed."""
        if not self._failed:
            return 0
        T = sil.tcp_poses(found.x, found.y, found.theta)
        for j in range(len(found)):
            near = any(np.linalg.norm(T[j, :2, 3] - p[:2]) < 0.010
                       and abs(float(T[j, :3, 0] @ d)) > math.cos(math.radians(15)) for p, d in self._failed)
            if not near:
                return j
        return None

    def _remember_failure(self, T_base_tcp: np.ndarray) -> None:
        """Keep a failed grasp's position and closing direction for the next cycles."""
        self._failed.append((T_base_tcp[:3, 3].copy(), T_base_tcp[:3, 0].copy()))

    def _draw_across_levels(self, sil: Silhouette, found, measure_kw: dict):
        """A candidate from a score level drawn uniformly among the levels that have one
        (Tan et al.'s validation: grasps across the score range, not the best only)."""
        prep = prepare_silhouette(sil.image)
        ys, xs = np.nonzero(sil.target)
        r = self.projection.open_width_px / 2
        rng = self._rng
        k = VALIDATE_CANDIDATES
        cx = rng.uniform(xs.min() - r, xs.max() + r, k)
        cy = rng.uniform(ys.min() - r, ys.max() + r, k)
        ct = rng.uniform(0.0, math.pi, k)
        sc = score_candidates(prep, cx, cy, ct, self.projection, target=sil.target, **measure_kw)
        # the search's best grasps belong to the pool too: the top level is often rare
        px = np.concatenate([found.x, cx])
        py = np.concatenate([found.y, cy])
        pt = np.concatenate([found.theta, ct])
        ps = np.concatenate([found.scores.score, sc.score])
        lvl = np.clip(np.searchsorted(LEVELS, ps, side="right") - 1, 0, 4)
        levels = np.unique(lvl)
        pick_level = int(rng.choice(levels))
        j = int(rng.choice(np.flatnonzero(lvl == pick_level)))
        if j < len(found.x):
            feats = _features(found.scores, j)
        else:
            feats = _features(sc, j - len(found.x))
        return (float(px[j]), float(py[j]), float(pt[j]), float(ps[j]), feats, pick_level, k)

    # ---------------------------------------------------------------- execution
    def execute(self, plan: Plan, clock: StageClock) -> Execution:
        """Carry out a planned grasp: open, approach, close, after-image, lift, hold, judge,
        place; on any fault stop safely (open, retreat) and report it."""
        c = plan.choice
        assert isinstance(c, GraspChoice)
        arm, grip, cfg = self.arm, self.gripper, self.config
        if arm is None:
            raise RuntimeError(NO_ARM)
        k_truth = _truth_index(plan) if self.truth is not None else None
        T_before = self.truth.world.T_world_object(k_truth) if k_truth is not None else None
        try:
            self.state = "moving"
            with clock.stage("approach"):
                grip.open(cfg.gripper.speed_mps * 1.5 if cfg.gripper.speed_mps * 1.5 <= grip.spec.speed.high
                          else grip.spec.speed.high, timeout_s=cfg.gripper.timeout_s)
                moved = arm.approach(c.T_base_tcp, c.pregrasp_m, speed_mps=cfg.arm.speed_mps,
                                     approach_speed_mps=cfg.arm.approach_speed_mps)
            if not moved.reached:
                return self._abort(moved, "approach")
            self.state = "gripping"
            with clock.stage("grip"):
                res = grip.grasp(0.0, cfg.gripper.speed_mps, cfg.gripper.force_n,
                                 timeout_s=cfg.gripper.timeout_s)
            ex = Execution("failure", False, _gripper_text(res.status), res.width_m,
                           res.object_detected)
            if T_before is not None:
                T_after = self.truth.world.T_world_object(k_truth)
                ex.truth_poses = (T_before, T_after)
                mv = pose_movement(T_before, T_after, c.T_base_tcp[:3, 0])
                ex.truth_movement_m, ex.truth_movement_rad = mv.translation_m, mv.rotation_rad
            with clock.stage("after_image"):
                ex.after_close = self._try_capture()
            self.state = "moving"
            with clock.stage("lift"):
                lifted = arm.lift(cfg.arm.lift_m, speed_mps=cfg.arm.approach_speed_mps * 2)
                self._hold(cfg.arm.hold_s)
                st = grip.status()
            if not lifted.reached:
                return self._abort(lifted, "lift", ex)
            ex.object_detected = st.object_detected
            ex.gripper_status, ex.gripper_width_m = _gripper_text(st), st.width_m
            if k_truth is not None:
                z = self.truth.world.T_world_object(k_truth)[2, 3]
                ex.truth_lifted = bool(z > T_before[2, 3] + 0.5 * cfg.arm.lift_m)
            with clock.stage("place"):
                self._place()
            with clock.stage("after_image"):
                ex.after_lift = self._try_capture()
            cleared = self._region_cleared(plan, ex.after_lift)
            ex.success = bool(st.object_detected) and cleared is not False
            if st.object_detected and cleared is False:
                ex.judge_note = "the gripper held something, but the object is still in its place"
            ex.outcome = "success" if ex.success else "failure"
            return ex
        except GripperError as exc:
            return self._safe_stop(f"gripper: {exc}")
        finally:
            self.state = "faulted" if self.fault else "idle"

    def _region_cleared(self, plan: Plan, after: RGBDFrame | None) -> bool | None:
        """Whether the after-image shows the support where the object stood (it left), from
        the share of the object's former pixels now within 5 mm of the support plane; None
        without an after-image or a support plane."""
        plane = plan.support
        if after is None or plane is None or plan.mask_index < 0:
            return None
        mask = plan.masks[plan.mask_index].mask
        z = after.depth_m
        ok = mask & np.isfinite(z) & (z > 0)
        if ok.sum() < 20:
            return None
        v, u = np.nonzero(ok)
        pts = after.intrinsics.deproject_pixels(u, v, z[v, u])
        return bool(np.mean(plane.height_m(pts) < 0.005) > 0.7)

    def _hold(self, seconds: float) -> None:
        """Hold still for ``seconds`` (on the simulated cell, the world steps meanwhile)."""
        if self.truth is not None:
            self.truth.step(int(seconds / self.truth.world.model.opt.timestep))
        else:
            time.sleep(seconds)

    def _place(self) -> None:
        """Over the bin, open, back home."""
        r = self.arm.move(self.place, self.config.arm.speed_mps)
        self.gripper.open(timeout_s=self.config.gripper.timeout_s)
        if r.reached:
            self.arm.move(self.home, self.config.arm.speed_mps)

    def _try_capture(self) -> RGBDFrame | None:
        """A frame, or None if the camera fails now (the trial is judged without it)."""
        try:
            return self.camera.read(self.config.camera.timeout_s)
        except CameraError as exc:
            log.warning("after-image failed: %s", exc)
            return None

    def _abort(self, moved: MoveResult, what: str, ex: Execution | None = None) -> Execution:
        """An arm motion did not reach: record why, and make the cell safe."""
        if moved.status is MoveStatus.FAULTED:
            self.fault = f"arm faulted during {what}: {moved.message}"
        out = self._safe_stop(f"arm {moved.status.value} during {what}: {moved.message}")
        if ex is not None:
            out.truth_movement_m, out.truth_movement_rad = ex.truth_movement_m, ex.truth_movement_rad
            out.after_close = ex.after_close
        if moved.status is not MoveStatus.FAULTED:  # the grasp was tried and did not hold
            out.outcome, out.success = "failure", False
        return out

    def _safe_stop(self, why: str) -> Execution:
        """Open the gripper and retreat the arm, as far as each still answers."""
        log.error("stopping the pick safely: %s", why)
        try:
            self.gripper.open(timeout_s=self.config.gripper.timeout_s)
        except GripperError as exc:
            log.error("could not open the gripper: %s", exc)
        if self.arm is not None and self.fault is None:
            r = self.arm.retreat(self.config.arm.pregrasp_m, self.config.arm.approach_speed_mps)
            if r.reached:
                self.arm.move(self.home, self.config.arm.speed_mps)
        return Execution("error", None, error=why)

    # ------------------------------------------------------------------ cycles
    def pick(self, object_label: str | None = None) -> TrialRecord:
        """One whole cycle with graspline's own arm: plan, execute, judge, log; the record."""
        if self.fault:
            raise RuntimeError(f"the cell is faulted ({self.fault}); clear the fault first")
        if self.arm is None:
            raise RuntimeError(NO_ARM)
        clock = StageClock(self.config.budgets_s)
        plan = self.plan(object_label, clock=clock)
        if isinstance(plan.choice, NoGrasp):
            return self._log(plan, None, clock)
        ex = self.execute(plan, clock)
        if ex.success is not True and self.mode == "best":
            self._remember_failure(plan.choice.T_base_tcp)
        return self._log(plan, ex, clock)

    def score_pose(self, frame: RGBDFrame, T_base_tcp: np.ndarray) -> tuple[float, dict[str, float]]:
        """(score, features by name) the cell's scoring gives a straight-down grasp at
        T_base_tcp (base frame) on frame: its target is the segmented object nearest the
        fingertips' point in the camera image, its neighbours obstacles, as in a search. For
        re-scoring logged trials on their stored frames with other settings (paired ablations)
        and for checking a grasp a controller proposes. ValueError when nothing is segmented."""
        T = check_tcp_pose(T_base_tcp, "T_base_tcp")
        masks = self.segmenter.segment(frame)
        if not masks:
            raise ValueError(f"score_pose: nothing segmented in frame {frame.seq}")
        tip = T[:3, 3] + self.config.gripper.tcp_to_tip_m * T[:3, 2]
        i = _nearest_mask(frame, masks, tip)
        # the search's silhouette whose fingertip plane the pose's fingertips lie in
        sils = [self._silhouette(frame, masks, i, d) for d in self._insertions()]
        sil = min(sils, key=lambda v: abs(float(v.T_base_plane[:3, 2]
                                                @ (tip - v.T_base_plane[:3, 3]))))
        x, y, t = sil.grasp_of(T, angle_tol_rad=1e-3)
        kw = self._measure_kw(frame, masks[i], sil)
        scores = score_candidates(sil.image, np.array([x]), np.array([y]), np.array([t]),
                                  self.projection, target=sil.target, **kw)
        feats = _features(scores, 0)
        if "depth" in kw and math.isfinite(kw["depth"].mass_kg):
            feats["mass_kg"] = kw["depth"].mass_kg
        return float(scores.score[0]), feats

    def best_grasp(self, object_label: str | None = None,
                   timeout_s: float | None = None) -> GraspChoice | NoGrasp:
        """Plan only (the controller executes): the choice with its trial id, left pending in
        the log until report_outcome."""
        clock = StageClock(self.config.budgets_s)
        plan = self.plan(object_label, timeout_s, clock=clock)
        rec = self._log(plan, None, clock, pending=isinstance(plan.choice, GraspChoice))
        if isinstance(plan.choice, NoGrasp):
            return plan.choice
        return dataclasses.replace(plan.choice, trial_id=rec.trial_id, stage_s=clock.stage_s)

    def move(self, T_base_tcp: np.ndarray, speed_mps: float | None = None) -> MoveResult:
        """Move graspline's arm (refused when the controller owns the arm)."""
        if self.arm is None:
            raise RuntimeError("this cell has no arm of graspline's (arm.kind: none)")
        self.state = "moving"
        try:
            r = self.arm.move(T_base_tcp, speed_mps or self.config.arm.speed_mps)
        finally:
            self.state = "idle"
        if r.status is MoveStatus.FAULTED:
            self.fault = f"arm faulted: {r.message}"
        return r

    def grip(self, width_m: float | None = None, force_n: float | None = None,
             speed_mps: float | None = None):
        """Close the gripper towards width_m (default fully) with force_n; its GraspResult."""
        g = self.config.gripper
        return self.gripper.grasp(0.0 if width_m is None else width_m, speed_mps or g.speed_mps,
                                  force_n or g.force_n, timeout_s=g.timeout_s)

    def release(self, width_m: float | None = None, speed_mps: float | None = None):
        """Open the gripper (to width_m, default fully); its GraspResult."""
        g = self.config.gripper
        if width_m is None:
            return self.gripper.open(speed_mps or g.speed_mps, timeout_s=g.timeout_s)
        return self.gripper.grasp(width_m, speed_mps or g.speed_mps, timeout_s=g.timeout_s)

    def report_outcome(self, trial_id: int, success: bool, note: str | None = None,
                       source: str = "controller"):
        """Close a pending trial with the outcome the controller or operator saw."""
        return self.trial_log.report_outcome(trial_id, success, note=note, source=source)

    def record_robot_pose(self, T_base_tcp: np.ndarray, label: str | None = None) -> int:
        """Keep a robot pose the controller reports (hand-eye calibration); its index."""
        self.robot_poses.append((check_tcp_pose(T_base_tcp, "T_base_tcp"), label))
        return len(self.robot_poses) - 1

    def clear_fault(self) -> None:
        """Leave the faulted state (after the operator has seen to the arm)."""
        self.fault = None
        self.state = "idle"

    def _log(self, plan: Plan, ex: Execution | None, clock: StageClock, *,
             pending: bool = False) -> TrialRecord:
        """Write the trial (record and pictures) in one transaction; the record as stored.

        The ``log`` stage is timed from here to the moment the row is written, inside the
        trial log's transaction (images included), so its time and any overrun are in the
        row; only the commit itself falls outside it."""
        c = plan.choice
        g = c if isinstance(c, GraspChoice) else None
        t0 = time.perf_counter()
        mode = "validate" if plan.level >= 0 else "best"
        trial_id = self.trial_log.begin(object_label=g.object_label if g else "",
                                        cell_hash=self.cell_hash, mode=mode)
        if ex is None:
            outcome, success, source = ("pending" if pending else "no_grasp"), None, "gripper+image"
        else:
            outcome, success = ex.outcome, ex.success
            source = "gripper+image"
            if ex.truth_lifted is not None and ex.success is not None:
                if ex.truth_lifted != ex.success:
                    log.warning("trial %d judged %s by the gripper and after-image, %s by "
                                "the simulator", trial_id, ex.success, ex.truth_lifted)
                success, source = ex.truth_lifted, "simulator"
                outcome = "success" if success else "failure"
        mv, centroid = self._image_movement(plan, ex)
        if ex is not None and ex.truth_poses is not None and centroid is not None:
            # the simulator's measure at the image estimate's point, so both compare alike
            t = pose_movement(*ex.truth_poses, plan.choice.T_base_tcp[:3, 0],
                              point_base=centroid)
            ex.truth_movement_m, ex.truth_movement_rad = t.translation_m, t.rotation_rad
        notes = ["budget overrun: " + o for o in clock.overruns]
        if ex is not None and ex.judge_note:
            notes.append(ex.judge_note)
        rec = TrialRecord(
            trial_id=trial_id, started_at_s=time.time(), cell_hash=self.cell_hash,
            object_label=g.object_label if g else "", mode=mode,
            n_candidates=g.n_candidates if g else 0, score=g.score if g else None,
            features=dict(g.features) if g else {}, source=g.source if g else "",
            x_px=g.x_px if g else None, y_px=g.y_px if g else None,
            theta_rad=g.theta_rad if g else None, T_base_tcp=g.T_base_tcp if g else None,
            width_m=g.width_m if g else None, force_n=g.force_n if g else None,
            stage_s=dict(clock.stage_s),
            gripper_status=ex.gripper_status if ex else "",
            gripper_width_m=ex.gripper_width_m if ex else None,
            object_detected=ex.object_detected if ex else None,
            outcome=outcome, success=success, outcome_source=source,
            movement_m=mv[0], movement_rad=mv[1],
            truth_movement_m=ex.truth_movement_m if ex else None,
            truth_movement_rad=ex.truth_movement_rad if ex else None,
            note="; ".join(notes),
            error=(ex.error or "") if ex else ("" if g else c.reason))

        def close_log_stage(stored: TrialRecord) -> None:
            over = clock.add("log", time.perf_counter() - t0)
            stored.stage_s = dict(clock.stage_s)
            if over:
                stored.note = "; ".join(n for n in (stored.note, "budget overrun: " + over) if n)

        return self.trial_log.finish(rec, _images(plan, ex, self.projection),
                                     before_write=close_log_stage)

    def _image_movement(self, plan: Plan, ex: Execution | None):
        """((translation m, rotation rad), centroid (3,) base frame) of the object's movement
        while the fingers closed, from the before and after-close depth (Tan et al.'s
        measure); ((None, None), None) where it cannot be estimated."""
        c = plan.choice
        if not isinstance(c, GraspChoice) or ex is None or ex.after_close is None:
            return (None, None), None
        after = ex.after_close
        exclude = None if after.instance_ids is None else after.instance_ids >= HAND_INSTANCE
        try:
            mv = object_movement(plan.masks[plan.mask_index].mask, plan.frame.depth_m,
                                 after.depth_m, plan.frame.intrinsics, plan.frame.T_base_camera,
                                 c.T_base_tcp[:3, 0], exclude_after=exclude)
        except MovementError as exc:
            log.info("no image estimate of the object's movement: %s", exc)
            return (None, None), None
        return (mv.translation_m, mv.rotation_rad), mv.centroid_base

    # ------------------------------------------------------------- the service
    def status(self) -> CellStatus:
        """State, devices and the number of trials logged."""
        cam = getattr(self.camera, "state", lambda: "open")()
        try:
            st = self.gripper.status()
            grip = f"faulted: {st.fault_message}" if st.faulted else (
                "holding" if st.object_detected else f"open {st.width_m * 1e3:.0f} mm")
        except GripperError as exc:
            grip = f"error: {exc}"
        arm = "none (the controller moves it)" if self.arm is None else self.arm.state()
        return CellStatus(self.state if not self.fault else "faulted", cam, grip, arm,
                          self.trial_log.count())


def _images(plan: Plan, ex: Execution | None, projection: GripperProjection) -> TrialImages:
    """The trial's pictures: before and after-close colour and depth (Tan et al.'s BA images),
    the silhouette and the chosen grasp drawn over it."""
    from ._overlay import draw_grasps

    out = TrialImages()
    if plan.frame is not None:
        out.before_color, out.before_depth_m = plan.frame.color, plan.frame.depth_m
    if ex is not None and ex.after_close is not None:
        out.after_color, out.after_depth_m = ex.after_close.color, ex.after_close.depth_m
    c = plan.choice
    if plan.sil is not None and isinstance(c, GraspChoice):
        out.silhouette = plan.sil.image
        out.overlay = draw_grasps(plan.sil.image, np.array([c.x_px]), np.array([c.y_px]),
                                  np.array([c.theta_rad]), np.array([c.score]), projection,
                                  scale=2)
    return out


def _nearest_mask(frame: RGBDFrame, masks: list[ObjectMask], point_base: np.ndarray) -> int:
    """Index of the mask nearest (in camera pixels) to a base-frame point's image."""
    T_cb = np.linalg.inv(frame.T_base_camera)
    p = T_cb[:3, :3] @ point_base + T_cb[:3, 3]
    k = frame.intrinsics
    u, v = k.fx * p[0] / p[2] + k.cx, k.fy * p[1] / p[2] + k.cy
    dist = []
    for m in masks:
        rows, cols = np.nonzero(m.mask)
        dist.append(float(np.min(np.hypot(cols - u, rows - v))) if rows.size else math.inf)
    return int(np.argmin(dist))


def _features(scores, j: int) -> dict[str, float]:
    """The raw features and feature scores of candidate j, by name."""
    names = ("d_t", "r_r", "s_a", "s_f", "score_d_t", "score_r_r", "score_s_a", "score_s_f",
             "tan_score", "contact_height_m", "contact_tilt_rad", "section_m", "lever_m", "torque_ratio", "score_contact",
             "score_torque", "score_tilt", "body_collision")
    out = {n: float(getattr(scores, n)[j]) for n in names}
    out["r_r_rad"], out["s_a_rad"], out["s_f_px"] = out.pop("r_r"), out.pop("s_a"), out.pop("s_f")
    out["width_px"] = float(scores.width_px[j])
    out["collision"] = float(scores.collision[j])
    out["missing"] = float(scores.missing[j])
    # a colliding or missing candidate has no features (NaN): leave them out
    return {k: v for k, v in out.items() if math.isfinite(v)}


def _limit_text(scores, j: int) -> str:
    """What holds a candidate's score down, when a depth term does: ', Tan 0.95, held down
    by the contact tilt (0.12)'; empty when Tan's score is itself the limit."""
    terms = {"the finger bodies (they land on something)": 0.0 if scores.body_collision[j] else 1.0,
             "the pads' contact height": scores.score_contact[j],
             "the torque about the grasp axis": scores.score_torque[j],
             "the contact tilt (or a pinch above a section wider than the stroke)":
                 scores.score_tilt[j]}
    terms = {k: float(v) for k, v in terms.items() if math.isfinite(v)}
    if not terms or min(terms.values()) >= 0.999:
        return ""
    name = min(terms, key=terms.get)
    return f", Tan {float(scores.tan_score[j]):.2f}, held down by {name} ({terms[name]:.2f})"


def _gripper_text(st) -> str:
    """A short text of a GripperStatus."""
    if st.faulted:
        return f"fault {st.fault_code:#x}: {st.fault_message}"
    return f"{'holding' if st.object_detected else 'empty'} at {st.width_m * 1e3:.1f} mm"


def _truth_index(plan: Plan) -> int | None:
    """0-based index of the simulated object under the chosen mask (the frame's ground-truth
    instance ids, simulated frames only), or None."""
    ids = None if plan.frame is None else plan.frame.instance_ids
    if ids is None or plan.mask_index < 0:
        return None
    under = ids[plan.masks[plan.mask_index].mask]
    under = under[(under > 0) & (under < HAND_INSTANCE)]
    if under.size == 0:
        return None
    return int(np.bincount(under).argmax()) - 1


def _down_pose(xyz) -> np.ndarray:
    """A TCP pose at xyz (metres) pointing straight down (z = -base z, x = base x)."""
    T = np.eye(4)
    T[:3, :3] = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]
    T[:3, 3] = xyz
    return check_tcp_pose(T, "pose")
