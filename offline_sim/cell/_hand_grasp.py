"""A database grasp executed with an arm and a multi-finger hand: pre-grasp, preshape,
approach, torque-limited close, lift, hold, judge.

``execute_hand_grasp`` drives only the public interfaces (drivers.arm.ArmController and
drivers.hand.Hand), so the picking loop's executor can run the same sequence on hardware;
the simulated cell adds its ground truth (did the object rise?) through the ``rose``
callback (SimCell.execute_grasp).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from drivers.arm import ArmController
from drivers.hand import Hand, HandError, HandStatus


@dataclass(frozen=True)
class HandGraspSettings:
    """How a hand grasp is carried out; metres, m/s, seconds.

    pregrasp_m : the pre-grasp pose is this far back along the hand's approach (its TCP z)
    from the grasp; speed_mps : free motions; approach_speed_mps : the straight approach;
    lift_m, lift_speed_mps : straight up after closing; hold_s : held still before judging;
    effort : fraction of each drive's torque limit; timeout_s : per hand motion.
    """

    pregrasp_m: float = 0.08
    speed_mps: float = 0.25
    approach_speed_mps: float = 0.05
    lift_m: float = 0.10
    lift_speed_mps: float = 0.1
    hold_s: float = 0.5
    effort: float = 1.0
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        for name in ("pregrasp_m", "speed_mps", "approach_speed_mps", "lift_m", "lift_speed_mps",
                     "timeout_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"HandGraspSettings.{name} must be finite and > 0, got {v!r}")
        if not (math.isfinite(self.hold_s) and self.hold_s >= 0):
            raise ValueError(f"HandGraspSettings.hold_s must be finite and >= 0, got {self.hold_s!r}")


@dataclass(frozen=True)
class HandGraspOutcome:
    """What a hand grasp did.

    stage : where it ended: "held" (lifted and judged), or the stage that failed ("approach",
    "preshape", "close", "lift"); success : the hand holds something after the hold
    (object_detected) and, where the truth is known, the object rose; object_detected : the
    hand's own judgement after the hold (fingers stalled on an object); rose : the ground
    truth (the object rose by half the lift or more), None where unknown (hardware);
    status : the hand's last status (None if it was never read); message : why it failed.
    The object stays in the hand: placing and releasing it is the caller's.
    """

    stage: str
    success: bool
    object_detected: bool
    rose: bool | None
    status: HandStatus | None
    message: str = ""


def pregrasp_pose(T_base_hand: np.ndarray, distance_m: float) -> np.ndarray:
    """The hand's pose distance_m back along its approach (TCP z) from T_base_hand, 4 x 4."""
    T = np.array(T_base_hand, np.float64)
    T[:3, 3] -= distance_m * T[:3, 2]
    return T


def execute_hand_grasp(arm: ArmController, hand: Hand, T_base_hand: np.ndarray,
                       preshape: np.ndarray, *, settings: HandGraspSettings = HandGraspSettings(),
                       hold: Callable[[float], None] = time.sleep,
                       rose: Callable[[], bool | None] = lambda: None) -> HandGraspOutcome:
    """Open, preshape, go to the pre-grasp and approach T_base_hand (the hand's TCP in the
    base frame: z along the approach), close torque-limited until stalled, lift, hold, judge.

    hold(seconds) lets time pass with the arm still (a sleep on hardware, the cell's steps in
    simulation); rose() says whether the object rose (the simulator's truth; None unknown).
    On a failed motion the hand is opened and the arm backs off along the approach.
    """
    s = settings
    try:
        hand.open(timeout_s=s.timeout_s)
        hand.preshape(np.asarray(preshape, np.float64), timeout_s=s.timeout_s)
    except HandError as exc:
        return HandGraspOutcome("preshape", False, False, None, None, f"hand: {exc}")
    moved = arm.approach(T_base_hand, s.pregrasp_m, speed_mps=s.speed_mps,
                         approach_speed_mps=s.approach_speed_mps)
    if not moved.reached:
        _back_off(arm, hand, s)
        return HandGraspOutcome("approach", False, False, None, None,
                                f"arm {moved.status.value} during the approach: {moved.message}")
    try:
        closed = hand.close(effort=s.effort, timeout_s=s.timeout_s)
    except HandError as exc:
        _back_off(arm, hand, s)
        return HandGraspOutcome("close", False, False, None, None, f"hand: {exc}")
    lifted = arm.lift(s.lift_m, speed_mps=s.lift_speed_mps)
    if not lifted.reached:
        _back_off(arm, hand, s)
        return HandGraspOutcome("lift", False, closed.object_detected, None, closed,
                                f"arm {lifted.status.value} during the lift: {lifted.message}")
    hold(s.hold_s)
    st = hand.status()
    truth = rose()
    ok = st.object_detected and truth is not False
    return HandGraspOutcome("held", bool(ok), st.object_detected, truth, st,
                            "" if ok else "the hand holds nothing after the lift")


def _back_off(arm: ArmController, hand: Hand, s: HandGraspSettings) -> None:
    """Open the hand and retreat along the approach, as far as each still answers."""
    try:
        hand.open(timeout_s=s.timeout_s)
    except HandError:
        pass
    arm.retreat(s.pregrasp_m, speed_mps=s.approach_speed_mps)
