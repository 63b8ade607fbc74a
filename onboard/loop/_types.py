"""What the loop's stages hand each other: the Plan (planning's result), the Execution (what
the arm and gripper did with it), and the LoopState (what the cell is doing, its fault)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame
from vision import ObjectMask, Silhouette

from .._types import GraspChoice, NoGrasp
from ._truth import GraspTruth


@dataclass(frozen=True)
class DatabaseGraspView:
    """A database grasp as the trial's panel draws it, in its object's frame: the object's
    name and surface sample (points_object (N, 3), metres; empty when the database has
    none), the grasp (T_object_hand, the recognised pose's object frame), the hand's open
    volume (hand_centre, hand_half (B, 3) boxes in the hand frame, metres) and half its
    fingertips' span (closing_half_m), the database candidate, its quality and P(fc) (NaN
    when not computed), what the cell ranks by, and the pose's confidence (0..1)."""

    object_name: str
    points_object: np.ndarray
    T_object_hand: np.ndarray
    hand_centre: np.ndarray
    hand_half: np.ndarray
    closing_half_m: float
    candidate: int
    quality: float
    pfc: float
    rank_by: str
    pose_confidence: float


@dataclass
class Plan:
    """What the planning stages produced for one frame: the choice (or why none), the frame,
    the masks, the chosen object's silhouette and mask index, the score level a validate-mode
    draw took the grasp from (-1: the best grasp), the frame's support plane
    (vision.SupportPlane, None when the segmenter found none), for a database grasp the view
    the trial's panel draws (None for the jaw), and the fallbacks: one line per object the
    database could not serve and what stood in for it (the trial's note)."""

    choice: GraspChoice | NoGrasp
    frame: RGBDFrame | None = None
    masks: list[ObjectMask] = field(default_factory=list)
    sil: Silhouette | None = None
    mask_index: int = -1
    level: int = -1
    support: object | None = None
    view: DatabaseGraspView | None = None
    fallbacks: list[str] = field(default_factory=list)

    @property
    def grasp(self) -> GraspChoice | None:
        """The chosen grasp, None when there is none."""
        return self.choice if isinstance(self.choice, GraspChoice) else None

    @property
    def chosen_mask(self) -> ObjectMask | None:
        """The mask of the object the grasp is on, None when there is none."""
        return self.masks[self.mask_index] if self.mask_index >= 0 else None


@dataclass
class Execution:
    """What happened when the arm and gripper carried out a grasp.

    outcome : "success", "failure" or "error" as the gripper and the after-image judge it;
    success : True / False, None after an error. gripper_status, gripper_width_m (m),
    object_detected : the gripper's own report after the lift. after_close / after_lift :
    the frames taken then (None when the camera failed). truth : the simulator's view of the
    object (all None on hardware). error : what stopped the pick; judge_note : why the
    judgement differs from the gripper's own.
    """

    outcome: str
    success: bool | None
    gripper_status: str = ""
    gripper_width_m: float | None = None
    object_detected: bool | None = None
    after_close: RGBDFrame | None = None
    after_lift: RGBDFrame | None = None
    truth: GraspTruth = field(default_factory=GraspTruth)
    error: str | None = None
    judge_note: str = ""


@dataclass
class LoopState:
    """What the cell is doing ("idle", "planning", "moving", "gripping") and its fault: an arm
    that reported FAULTED, or approaches that kept stopping where the frame showed nothing
    (a part on the hand: hand_check), after which picks are refused until the fault is
    cleared. unseen_stops : such approach stops in a row, up to now."""

    activity: str = "idle"
    fault: str | None = None
    hand_check: bool = False
    unseen_stops: int = 0

    @property
    def text(self) -> str:
        """The state as the endpoint reports it: "faulted" while there is a fault."""
        return "faulted" if self.fault else self.activity

    def clear_fault(self) -> None:
        """Leave the faulted state (after the operator has seen to the arm or the hand)."""
        self.fault = None
        self.hand_check = False
        self.unseen_stops = 0
        self.activity = "idle"
