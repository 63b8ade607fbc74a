"""Execution: a planned grasp carried out (open, approach, close, after-image, lift, hold,
judge, place) and, on any fault, a safe stop (gripper or hand opened, arm retreated).

On a cell with a multi-finger hand (its grasps come from the database) the sequence runs
with the hand: open, preshape, approach, torque-limited close, after-image,
lift, hold, judge by the hand's object_detected and the region-cleared check, place, open."""
from __future__ import annotations

import dataclasses
import logging

import numpy as np

from drivers.arm import ArmController, MoveResult, MoveStatus
from drivers.camera import Camera, CameraError, RGBDFrame
from drivers.gripper import Gripper, GripperError
from drivers.hand import Hand, HandError, HandStatus
from vision import ObjectMask

from .._cellfile import CellConfig
from .._types import GraspChoice
from ._clock import StageClock
from ._jaw_region import closing_band_m, jaw_region
from ._truth import CellTruth, GraspTruth
from ._types import Execution, LoopState, Plan
from ._unseen_stop import STOP_MARGIN_M, StopReading, count_stop, read_hand_stop

NO_ARM = ("this cell has no arm of graspline's (arm.kind: none): the robot controller moves the "
          "arm; use best_grasp, grip and release")
log = logging.getLogger("graspline.loop")


class Executor:
    """Plan -> Execution with the cell's arm, gripper (or multi-finger hand) and camera;
    home and place are the TCP poses (base frame) the arm goes back to and drops the object
    at. gripper : None on a cell with a hand instead; hand : the multi-finger hand, or None."""

    def __init__(self, config: CellConfig, *, camera: Camera, gripper: Gripper | None,
                 arm: ArmController | None, home: np.ndarray, place: np.ndarray,
                 state: LoopState, truth: CellTruth, hand: Hand | None = None) -> None:
        self.config = config
        self.camera, self.gripper, self.arm = camera, gripper, arm
        self.hand = hand
        self.home, self.place = home, place
        self.state = state
        self.truth = truth
        self.stop_margin_m = STOP_MARGIN_M  # around the hand at a stop (the loop sets the cell's)

    def execute(self, plan: Plan, clock: StageClock) -> Execution:
        """Carry out a planned grasp: open, approach, close, after-image, lift, hold, judge,
        place; on any fault stop safely (open, retreat) and report it."""
        c = plan.choice
        assert isinstance(c, GraspChoice)
        arm, grip, cfg = self.arm, self.gripper, self.config
        if arm is None:
            raise RuntimeError(NO_ARM)
        if self.hand is not None:
            return self._execute_hand(plan, c, clock)
        if grip is None:
            raise RuntimeError("this loop was built without a gripper or a hand: it can plan, "
                               "not execute")
        # what the jaw closes on: the part of the mask between its fingers (a joined mask's
        # other objects stay where they are when this one is lifted)
        region = jaw_region(plan.frame, plan.chosen_mask, c.T_base_tcp,
                            closing_band_m(c.features, c.width_m),
                            cfg.gripper.finger_width_m, c.features.get("insertion_m", 0.0))
        watch = self.truth.watch(plan.frame, region)
        try:
            self.state.activity = "moving"
            with clock.stage("approach"):
                # opening half again as fast as closing, within the gripper's top speed
                fast = cfg.gripper.speed_mps * 1.5
                grip.open(fast if fast <= grip.spec.speed.high else grip.spec.speed.high,
                          timeout_s=cfg.gripper.timeout_s)
                moved = arm.approach(c.T_base_tcp, c.pregrasp_m, speed_mps=cfg.arm.speed_mps,
                                     approach_speed_mps=cfg.arm.approach_speed_mps)
            if not moved.reached:
                return self._abort(moved, "approach", unseen=self._read_stop(plan, moved))
            self.state.unseen_stops = 0
            self.state.activity = "gripping"
            with clock.stage("grip"):
                res = grip.grasp(0.0, cfg.gripper.speed_mps, cfg.gripper.force_n,
                                 timeout_s=cfg.gripper.timeout_s)
            ex = Execution("failure", False, gripper_text(res.status), res.width_m,
                           res.object_detected)
            ex.truth = watch.closed(c.T_base_tcp[:3, 0])

            def read() -> tuple[bool, str, float | None]:
                st = grip.status()
                return st.object_detected, gripper_text(st), st.width_m

            return self._lift_and_judge(plan, ex, watch, clock, read, "gripper", region)
        except GripperError as exc:
            return self._safe_stop(f"gripper: {exc}")
        finally:
            self.state.activity = "idle"

    def _execute_hand(self, plan: Plan, c: GraspChoice, clock: StageClock) -> Execution:
        """A database grasp with the multi-finger hand: open, preshape, approach, close
        (torque-limited, until stalled), after-image, lift, hold, judge, place, open."""
        arm, hand, cfg = self.arm, self.hand, self.config
        timeout = cfg.gripper.timeout_s
        watch = self.truth.watch(plan.frame, plan.chosen_mask)
        try:
            self.state.activity = "moving"
            with clock.stage("approach"):
                hand.open(timeout_s=timeout)
                if c.preshape is not None and len(c.preshape):  # a hand with preshape joints
                    hand.preshape(np.asarray(c.preshape, np.float64), timeout_s=timeout)
                moved = arm.approach(c.T_base_tcp, c.pregrasp_m, speed_mps=cfg.arm.speed_mps,
                                     approach_speed_mps=cfg.arm.approach_speed_mps)
            if not moved.reached:
                return self._abort(moved, "approach", unseen=self._read_stop(plan, moved))
            self.state.unseen_stops = 0
            self.state.activity = "gripping"
            with clock.stage("grip"):
                closed = hand.close(timeout_s=timeout)
            ex = Execution("failure", False, hand_text(closed), None, closed.object_detected)
            # the hand has no closing direction; the TCP's x stands for it in the truth
            ex.truth = watch.closed(c.T_base_tcp[:3, 0])

            def read() -> tuple[bool, str, float | None]:
                st = hand.status()
                return st.object_detected, hand_text(st), None

            return self._lift_and_judge(plan, ex, watch, clock, read, "hand",
                                        plan.chosen_mask)
        except HandError as exc:
            return self._safe_stop(f"hand: {exc}")
        finally:
            self.state.activity = "idle"

    def _lift_and_judge(self, plan: Plan, ex: Execution, watch, clock: StageClock,
                        read, device: str, region: ObjectMask | None) -> Execution:
        """After the fingers closed: the after-close image, lift, hold, the device's status
        read back (``read() -> (object detected, status text, width in metres or None)``),
        place, the after-lift image, and the verdict (region: the pixels where the grasped
        object stood); ``device`` names it in the note."""
        cfg = self.config
        with clock.stage("after_image"):
            ex.after_close = self._try_capture()
        self.state.activity = "moving"
        with clock.stage("lift"):
            lifted = self.arm.lift(cfg.arm.lift_m, speed_mps=cfg.arm.approach_speed_mps * 2)
            self.truth.hold(cfg.arm.hold_s)
            detected, text, width_m = read()
        if not lifted.reached:
            return self._abort(lifted, "lift", ex)
        ex.object_detected = detected
        ex.gripper_status = text
        if width_m is not None:
            ex.gripper_width_m = width_m
        ex.truth = dataclasses.replace(ex.truth, lifted=watch.lifted(cfg.arm.lift_m))
        with clock.stage("place"):
            self._place()
        with clock.stage("after_image"):
            ex.after_lift = self._try_capture()
        cleared = self._region_cleared(plan, ex.after_lift, region)
        ex.success = bool(detected) and cleared is not False
        if detected and cleared is False:
            ex.judge_note = f"the {device} held something, but the object is still in its place"
        ex.outcome = "success" if ex.success else "failure"
        return ex

    def _region_cleared(self, plan: Plan, after: RGBDFrame | None,
                        region: ObjectMask | None) -> bool | None:
        """Whether the after-image shows the support where the object stood (it left), from
        the share of region's pixels (where the grasped object stood) now within 5 mm of the
        support plane; None without an after-image, a support plane or a region."""
        plane = plan.support
        if after is None or plane is None or region is None:
            return None
        mask = region.mask
        z = after.depth_m
        ok = mask & np.isfinite(z) & (z > 0)
        if ok.sum() < 20:
            return None
        v, u = np.nonzero(ok)
        pts = after.intrinsics.deproject_pixels(u, v, z[v, u])
        return bool(np.mean(plane.height_m(pts) < 0.005) > 0.7)

    def _place(self) -> None:
        """Over the bin, open, back home."""
        r = self.arm.move(self.place, self.config.arm.speed_mps)
        self._open()
        if r.reached:
            self.arm.move(self.home, self.config.arm.speed_mps)

    def _open(self) -> None:
        """Open the gripper and the hand, whichever the cell has."""
        if self.gripper is not None:
            self.gripper.open(timeout_s=self.config.gripper.timeout_s)
        if self.hand is not None:
            self.hand.open(timeout_s=self.config.gripper.timeout_s)

    def _try_capture(self) -> RGBDFrame | None:
        """A frame, or None if the camera fails now (the trial is judged without it)."""
        try:
            return self.camera.read(self.config.camera.timeout_s)
        except CameraError as exc:
            log.warning("after-image failed: %s", exc)
            return None

    def _read_stop(self, plan: Plan, moved: MoveResult) -> StopReading | None:
        """What the planning frame shows under the jaw, or the multi-finger hand's boxes,
        where its approach stopped (None for a fault, or without a frame's camera pose or the
        hand's boxes); a run of stops where it shows nothing faults the loop for the operator
        to see to the hand (unseen_stops_to_check)."""
        if moved.status is not MoveStatus.FAILED:
            return None
        reading = read_hand_stop(plan.frame, moved.T_base_tcp, self.config.gripper, plan.view,
                                 self.hand is not None, self.stop_margin_m)
        if reading is not None:
            count_stop(self.state, reading, self.config.arm.unseen_stops_to_check,
                       moved.message)
        return reading

    def _abort(self, moved: MoveResult, what: str, ex: Execution | None = None, *,
               unseen: StopReading | None = None) -> Execution:
        """An arm motion did not reach: record why (with unseen, what the frame shows where
        an approach stopped), and make the cell safe. A stop after the fingers closed keeps
        the after-close image and the truth of their closing (not the poses: its movement
        stays measured at the object's origin)."""
        if moved.status is MoveStatus.FAULTED:
            self.state.fault = f"arm faulted during {what}: {moved.message}"
        why = f"arm {moved.status.value} during {what}: {moved.message}"
        if unseen is not None and unseen.unseen:
            why += f" ({unseen.text()})"
        out = self._safe_stop(why)
        if ex is not None:
            out.truth = GraspTruth(ex.truth.movement_m, ex.truth.movement_rad)
            out.after_close = ex.after_close
        if moved.status is not MoveStatus.FAULTED:  # the grasp was tried and did not hold
            out.outcome, out.success = "failure", False
        return out

    def _safe_stop(self, why: str) -> Execution:
        """Open the gripper and retreat the arm, as far as each still answers."""
        log.error("stopping the pick safely: %s", why)
        try:
            self._open()
        except (GripperError, HandError) as exc:
            log.error("could not open the %s: %s", "gripper" if self.hand is None else "hand",
                      exc)
        # a faulted arm stays where it is; one stopped for a look at the hand backs away
        if self.arm is not None and (self.state.fault is None or self.state.hand_check):
            r = self.arm.retreat(self.config.arm.pregrasp_m, self.config.arm.approach_speed_mps)
            if r.reached:
                self.arm.move(self.home, self.config.arm.speed_mps)
        return Execution("error", None, error=why)


def gripper_text(st) -> str:
    """A short text of a GripperStatus."""
    if st.faulted:
        return f"fault {st.fault_code:#x}: {st.fault_message}"
    return f"{'holding' if st.object_detected else 'empty'} at {st.width_m * 1e3:.1f} mm"


def hand_text(st: HandStatus) -> str:
    """A short text of a HandStatus."""
    if st.faulted:
        return f"fault {st.fault_code:#x}: {st.fault_message}"
    return (f"{'holding' if st.object_detected else 'empty'}, "
            f"{st.n_contacts} of {len(st.finger_names)} fingers in contact")
