"""The endpoint's messages: one msgspec Struct per request (a tagged union on ``cmd``) and reply.

Requests are checked by msgspec against these Structs, not by hand: types, required fields,
unknown fields (refused, so that a misspelt ``speed`` is not silently ignored) and numeric
bounds. A 4 x 4 pose is a JSON array of four rows of four numbers, metres, and must be a rigid
transform. Every reply has ``ok``; an ``ok: false`` reply has ``error`` (what was wrong, in
words) and ``error_type`` (a short code or the service exception's class name).
"""
from __future__ import annotations

import math
from typing import Annotated, Any, Union

import msgspec
import numpy as np

from scoring import check_pose

from ._service import GripReply, TrialSummary
from ._types import CellStatus, GraspChoice, MoveResult, NoGrasp

# Rotation part of a pose: |R^T R - I| and |last row - (0 0 0 1)| at most this. Matrices written
# with six decimals pass; a scaled, sheared or garbled one does not.
RIGID_TOL = 1e-4

RequestId = Union[int, str, None]
_Row = Annotated[list[float], msgspec.Meta(min_length=4, max_length=4)]
Matrix4 = Annotated[list[_Row], msgspec.Meta(min_length=4, max_length=4)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0.0)]
Label = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Note = Annotated[str, msgspec.Meta(max_length=4000)]


class BadRequest(ValueError):
    """A request line the endpoint cannot act on; ``request_id`` is its ``id`` when readable."""

    def __init__(self, message: str, request_id: RequestId = None, code: str = "bad_request"):
        super().__init__(message)
        self.request_id = request_id
        self.code = code


def check_rigid(rows: list[list[float]], name: str) -> np.ndarray:
    """``rows`` as a (4, 4) float64 rigid transform; ValueError naming ``name`` if it is not one
    (``scoring.check_pose`` with the endpoint's tolerance, RIGID_TOL)."""
    return check_pose(rows, name, tol=RIGID_TOL)


# --- requests ------------------------------------------------------------------------------------

class _Request(msgspec.Struct, tag_field="cmd", forbid_unknown_fields=True, kw_only=True):
    """Fields every request may carry: ``id`` (a number or a string), echoed by the reply."""

    id: RequestId = None


class StatusRequest(_Request, tag="status"):
    """``status``: the cell's state, devices and trial count."""


class BestGraspRequest(_Request, tag="best_grasp"):
    """``best_grasp``: the best grasp in view (of ``object`` if given) within ``timeout_s``."""

    object: Label | None = None
    timeout_s: PositiveFloat | None = None


class MoveRequest(_Request, tag="move"):
    """``move``: the TCP to ``T_base_tcp`` (4 x 4, metres, base frame) at ``speed_mps``."""

    T_base_tcp: Matrix4
    speed_mps: PositiveFloat | None = None

    def __post_init__(self) -> None:
        check_rigid(self.T_base_tcp, "T_base_tcp")

    @property
    def pose(self) -> np.ndarray:
        """The goal as a (4, 4) float64 array."""
        return np.asarray(self.T_base_tcp, dtype=np.float64)


class GripRequest(_Request, tag="grip"):
    """``grip``: close towards ``width_m`` (m) with ``force_n`` (N) at ``speed_mps`` (m/s)."""

    width_m: NonNegativeFloat | None = None
    force_n: PositiveFloat | None = None
    speed_mps: PositiveFloat | None = None


class ReleaseRequest(_Request, tag="release"):
    """``release``: open to ``width_m`` (m; default fully open) at ``speed_mps`` (m/s)."""

    width_m: NonNegativeFloat | None = None
    speed_mps: PositiveFloat | None = None


class PickRequest(_Request, tag="pick"):
    """``pick``: one whole cycle by graspline's loop and arm (only ``object`` if given)."""

    object: Label | None = None


class ReportOutcomeRequest(_Request, tag="report_outcome"):
    """``report_outcome``: the controller's verdict on trial ``trial_id``, with an optional note
    and, where its approach stopped short (a protective stop), the TCP pose it stopped at
    (``approach_stopped_at``, 4 x 4, metres, base frame), which the cell reads against the
    trial's frame (a run of stops on nothing seen asks for a look at the hand)."""

    trial_id: Annotated[int, msgspec.Meta(ge=0)]
    success: bool
    note: Note | None = None
    approach_stopped_at: Matrix4 | None = None

    def __post_init__(self) -> None:
        if self.approach_stopped_at is not None:
            check_rigid(self.approach_stopped_at, "approach_stopped_at")

    @property
    def stop_pose(self) -> np.ndarray | None:
        """approach_stopped_at as a (4, 4) float64 array, or None."""
        if self.approach_stopped_at is None:
            return None
        return np.asarray(self.approach_stopped_at, dtype=np.float64)


class ClearFaultRequest(_Request, tag="clear_fault"):
    """``clear_fault``: leave the faulted state after a person has seen to the arm or the hand;
    the reply is the cell's status."""


class RobotPoseRequest(_Request, tag="robot_pose"):
    """``robot_pose``: the controller's current TCP pose (4 x 4, metres, base frame), recorded."""

    T_base_tcp: Matrix4
    label: Label | None = None

    def __post_init__(self) -> None:
        check_rigid(self.T_base_tcp, "T_base_tcp")

    @property
    def pose(self) -> np.ndarray:
        """The pose as a (4, 4) float64 array."""
        return np.asarray(self.T_base_tcp, dtype=np.float64)


Request = Union[StatusRequest, BestGraspRequest, MoveRequest, GripRequest, ReleaseRequest,
                PickRequest, ReportOutcomeRequest, RobotPoseRequest, ClearFaultRequest]
# the endpoint's commands: the requests' ``cmd`` values
ENDPOINT_COMMANDS: tuple[str, ...] = tuple(
    cls.__struct_config__.tag for cls in Request.__args__)  # type: ignore[attr-defined]


def decode_request(line: bytes) -> Request:
    """One request line (UTF-8 JSON object, no newline) as its Struct; BadRequest saying why."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"line is not UTF-8 text: byte 0x{line[exc.start]:02x} at position "
                         f"{exc.start} ({exc.reason})", code="not_utf8") from None
    if not text.strip():
        raise BadRequest("empty line: send one JSON object per line", code="not_json")
    try:
        obj: Any = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise BadRequest(f"not JSON: {exc}", code="not_json") from None
    if not isinstance(obj, dict):
        raise BadRequest(f"a request must be a JSON object, got {_json_kind(obj)}")
    rid = obj.get("id")
    rid = rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None
    cmd = obj.get("cmd")
    if cmd is None:
        raise BadRequest("missing field `cmd` (one of: " + ", ".join(ENDPOINT_COMMANDS) + ")",
                         rid)
    if not isinstance(cmd, str):
        raise BadRequest(f"`cmd` must be a string, got {_json_kind(cmd)}", rid)
    if cmd not in ENDPOINT_COMMANDS:
        raise BadRequest(f"unknown cmd {cmd!r} (one of: {', '.join(ENDPOINT_COMMANDS)})", rid,
                         code="unknown_cmd")
    try:
        return msgspec.convert(obj, Request)
    except msgspec.ValidationError as exc:
        raise BadRequest(f"{cmd}: {exc}", rid) from None


def _json_kind(value: Any) -> str:
    """The JSON type name of a decoded value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


# --- replies -------------------------------------------------------------------------------------

class _Reply(msgspec.Struct, omit_defaults=True):
    """Fields of every reply, first on the line: ``ok``, the request's ``id`` (left out when it
    had none), and on failure ``error`` and ``error_type``. (Not kw_only, so that they come
    before the fields of each kind of reply.)"""

    ok: bool
    id: RequestId = None
    error: str | None = None
    error_type: str | None = None


class ErrorReply(_Reply, kw_only=True):
    """A request that could not be served: a bad line, or an exception from the cell."""


class StatusReply(_Reply, kw_only=True):
    """The cell at a glance. ``busy``: the command the cell is running (None: idle); while one
    runs the rest is the last status read, ``age_s`` seconds old."""

    state: str
    camera: str
    gripper: str
    arm: str
    trials: int
    busy: str | None
    age_s: float


class GraspReply(_Reply, kw_only=True):
    """The best grasp: TCP pose (4 x 4, metres, base frame), opening, force, score and
    features; ``preshape``: a multi-finger hand's joint targets before closing (radians or
    metres, the hand's joint order), null for a parallel jaw (always on the line)."""

    trial_id: int
    object: str
    T_base_tcp: list[list[float]]
    pregrasp_m: float
    width_m: float
    force_n: float
    score: float
    features: dict[str, float]
    source: str
    x_px: float
    y_px: float
    theta_rad: float
    n_candidates: int
    stage_s: dict[str, float]
    preshape: list[float] | None   # no default: written as null for a jaw, not left out


class NoGraspReply(_Reply, kw_only=True):
    """Nothing graspable in view: ``ok: false``, ``error_type`` "no_grasp", the reason in ``error``."""

    stage_s: dict[str, float]


class MoveReply(_Reply, kw_only=True):
    """How the motion ended (``status``: reached / failed / faulted) and where the TCP stopped."""

    status: str
    T_base_tcp: list[list[float]]
    duration_s: float
    message: str


class GripperReply(_Reply, kw_only=True):
    """The gripper's result: object held or not, opening (m), time (s), state and fault text."""

    object_detected: bool
    width_m: float
    elapsed_s: float
    status: str
    fault: str


class TrialReply(_Reply, kw_only=True):
    """A trial's record (``pick``, ``report_outcome``)."""

    trial_id: int
    object: str
    outcome: str
    success: bool | None
    score: float | None
    T_base_tcp: list[list[float]] | None
    width_m: float | None
    stage_s: dict[str, float]
    note: str


class RobotPoseReply(_Reply, kw_only=True):
    """A recorded controller pose: its index among the poses recorded."""

    pose_index: int


Reply = Union[ErrorReply, StatusReply, GraspReply, NoGraspReply, MoveReply, GripperReply,
              TrialReply, RobotPoseReply]

_encoder = msgspec.json.Encoder()


def encode_reply(reply: Reply) -> bytes:
    """The reply as one JSON line, newline included."""
    return _encoder.encode(reply) + b"\n"


def error_reply(rid: RequestId, message: str, error_type: str) -> ErrorReply:
    """An ``ok: false`` reply."""
    return ErrorReply(ok=False, id=rid, error=message, error_type=error_type)


def status_reply(rid: RequestId, st: CellStatus, busy: str | None, age_s: float) -> StatusReply:
    """A ``status`` reply from the cell's status."""
    return StatusReply(ok=True, id=rid, state=st.state, camera=st.camera, gripper=st.gripper,
                       arm=st.arm, trials=int(st.trials), busy=busy, age_s=round(age_s, 6))


def grasp_reply(rid: RequestId, g: GraspChoice | NoGrasp) -> GraspReply | NoGraspReply:
    """A ``best_grasp`` reply: the grasp, or ``ok: false`` with the reason there is none."""
    if isinstance(g, NoGrasp):
        return NoGraspReply(ok=False, id=rid, error=g.reason, error_type="no_grasp",
                            stage_s=_floats(g.stage_s))
    return GraspReply(ok=True, id=rid, trial_id=int(g.trial_id), object=g.object_label,
                      T_base_tcp=_rows(g.T_base_tcp), pregrasp_m=float(g.pregrasp_m),
                      width_m=float(g.width_m), force_n=float(g.force_n), score=float(g.score),
                      features=_floats(g.features), source=g.source, x_px=float(g.x_px),
                      y_px=float(g.y_px), theta_rad=float(g.theta_rad),
                      n_candidates=int(g.n_candidates), stage_s=_floats(g.stage_s),
                      preshape=None if g.preshape is None else
                      [float(q) for q in np.asarray(g.preshape, np.float64).ravel()])


def move_reply(rid: RequestId, m: MoveResult) -> MoveReply:
    """A ``move`` reply: ``ok`` only when the TCP reached the goal."""
    status = getattr(m.status, "value", str(m.status))
    ok = m.reached
    return MoveReply(ok=ok, id=rid, status=status, T_base_tcp=_rows(m.T_base_tcp),
                     duration_s=float(m.duration_s), message=m.message,
                     error=None if ok else (m.message or f"move {status}"),
                     error_type=None if ok else f"move_{status}")


def gripper_reply(rid: RequestId, g: GripReply) -> GripperReply:
    """A ``grip`` / ``release`` reply: ``ok`` unless the gripper reports a fault."""
    ok = not g.fault
    return GripperReply(ok=ok, id=rid, object_detected=bool(g.object_detected),
                        width_m=float(g.width_m), elapsed_s=float(g.elapsed_s), status=g.status,
                        fault=g.fault, error=None if ok else f"gripper fault: {g.fault}",
                        error_type=None if ok else "gripper_fault")


def trial_reply(rid: RequestId, t: TrialSummary) -> TrialReply:
    """A ``pick`` / ``report_outcome`` reply: ``ok`` unless the trial records an error."""
    ok = not t.error
    return TrialReply(ok=ok, id=rid, trial_id=int(t.trial_id), object=t.object_label,
                      outcome=t.outcome, success=t.success,
                      score=None if t.score is None else float(t.score),
                      T_base_tcp=None if t.T_base_tcp is None else _rows(t.T_base_tcp),
                      width_m=None if t.width_m is None else float(t.width_m),
                      stage_s=_floats(t.stage_s), note=t.note,
                      error=None if ok else t.error, error_type=None if ok else "trial_error")


def robot_pose_reply(rid: RequestId, index: int) -> RobotPoseReply:
    """A ``robot_pose`` reply."""
    return RobotPoseReply(ok=True, id=rid, pose_index=int(index))


# --- the plain-text GRASP line -------------------------------------------------------------------

# Sent instead of the seven numbers when there is no grasp (or the cell failed): URScript's
# socket_read_ascii_float(7) then returns a list whose first element (the count read) is 0, the
# same test a program already makes for a timeout.
NO_GRASP_TEXT = "()"


def grasp_text(T_base_tcp: np.ndarray, width_m: float) -> str:
    """``(x,y,z,rx,ry,rz,width)``: position (m), axis-angle rotation vector (rad), opening (m).

    Fixed-point with six decimals (micrometres, microradians): URScript's
    ``socket_read_ascii_float`` reads plain decimals.
    """
    import cv2

    T = np.asarray(T_base_tcp, dtype=np.float64)
    rvec, _ = cv2.Rodrigues(np.ascontiguousarray(T[:3, :3]))
    values = [*T[:3, 3], *rvec.ravel(), float(width_m)]
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"grasp has a non-finite value: {values}")
    return "(" + ",".join(f"{v:.6f}" for v in values) + ")"


def _rows(T: np.ndarray) -> list[list[float]]:
    """A (4, 4) array as nested lists of floats."""
    return np.asarray(T, dtype=np.float64).reshape(4, 4).tolist()


def _floats(d: dict[str, float]) -> dict[str, float]:
    """A name -> number mapping with plain floats (numpy scalars encode as floats too)."""
    return {str(k): float(v) for k, v in d.items()}
