"""What the robot-controller endpoint drives: the ``PickingService`` interface and its replies.

The picking cell (``onboard.PickingCell``) implements :class:`PickingService`; the endpoint
(``onboard._server``) and the CLI call it and hold no picking logic of their own. SI units
throughout: metres, seconds, newtons; poses are (4, 4) float64 ``T_base_tcp`` (the TCP in
the robot base frame).

Thread safety: a service need not be thread-safe. The endpoint makes every call from one
dedicated worker thread, one call at a time, in the order the requests arrived.

Errors: any method may raise (``GripperError``, ``CameraError``, ``ValueError`` for a request the
cell cannot honour, ...). The endpoint answers the request with ``ok: false``, the exception's
message and its type name, and goes on serving.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ._types import CellStatus, GraspChoice, MoveResult, NoGrasp


@dataclass(frozen=True)
class GripReply:
    """How a grip or a release ended: object held or not, opening reached (m), time taken (s).

    status : the gripper's own state as a short text ("holding", "open", "closed empty", ...).
    fault : the gripper's fault as text, "" when there is none.
    """

    object_detected: bool
    width_m: float
    elapsed_s: float
    status: str
    fault: str = ""


@dataclass(frozen=True)
class TrialSummary:
    """One trial as the trial log holds it, for the endpoint and the CLI.

    outcome : "pending" (grasped, waiting for ``report_outcome``), "success", "failure",
        "no_grasp" or "error" -- the loop's vocabulary, passed through as text.
    success : True / False once known, None while pending.
    score, width_m, T_base_tcp : the chosen grasp (score 0..1, opening in m, (4, 4) TCP pose in
        the base frame), None when no grasp was chosen.
    stage_s : seconds spent in each stage ("capture", "segment", ..., "grip", "lift").
    note : the operator's or controller's note; error : what went wrong, "" when nothing did.
    """

    trial_id: int
    object_label: str
    outcome: str
    success: bool | None
    score: float | None
    T_base_tcp: np.ndarray | None
    width_m: float | None
    stage_s: dict[str, float] = field(default_factory=dict)
    note: str = ""
    error: str = ""


@runtime_checkable
class PickingService(Protocol):
    """The picking cell as the endpoint sees it (implemented by PickingCell)."""

    def status(self) -> CellStatus:
        """The loop's state, each device's state as text, and the number of trials logged."""
        ...

    def best_grasp(self, object_label: str | None,
                   timeout_s: float | None) -> GraspChoice | NoGrasp:
        """Capture, segment and score; the best grasp (opens a trial) or why there is none.

        object_label : pick only this object (None: any); timeout_s : give up after this many
        seconds and return ``NoGrasp`` (None: the cell's own budget).
        """
        ...

    def move(self, T_base_tcp: np.ndarray, speed_mps: float | None) -> MoveResult:
        """Move the TCP to ``T_base_tcp`` ((4, 4), metres, base frame) at ``speed_mps`` (m/s).

        ``speed_mps`` None: the cell's default speed. An unreachable goal is a FAILED result, not
        an exception."""
        ...

    def grip(self, width_m: float | None, force_n: float | None,
             speed_mps: float | None) -> GripReply:
        """Close the gripper towards ``width_m`` (m) with ``force_n`` (N); None: cell defaults."""
        ...

    def release(self, width_m: float | None, speed_mps: float | None) -> GripReply:
        """Open the gripper to ``width_m`` (m; None: fully open)."""
        ...

    def pick(self, object_label: str | None) -> TrialSummary:
        """One whole cycle (choose, approach, grip, lift, after-image) with the cell's own arm."""
        ...

    def report_outcome(self, trial_id: int, success: bool, note: str | None,
                       approach_stopped_at: np.ndarray | None = None) -> TrialSummary:
        """Close trial ``trial_id`` with the controller's verdict; KeyError for an unknown trial.
        approach_stopped_at : the TCP pose ((4, 4), metres, base frame) where the controller's
        approach stopped short, read against the trial's frame (a run of stops where it shows
        nothing under the hand faults the cell for a look at the hand); None: it did not."""
        ...

    def clear_fault(self) -> None:
        """Leave the faulted state, after a person has seen to the arm or the hand."""
        ...

    def record_robot_pose(self, T_base_tcp: np.ndarray, label: str | None) -> int:
        """Record the controller's current TCP pose ((4, 4), metres, base frame); its index."""
        ...

    def close(self) -> None:
        """Release the cell's devices; safe to call twice."""
        ...
