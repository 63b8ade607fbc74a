"""An approach that stopped where the frame shows nothing under the hand.

A protective stop on the way down is almost always a finger or the palm meeting a surface the
camera saw, within a few millimetres of where the scorer placed it: a box's edge wider than
seen, a rounded side's last seen lean, a neighbour's rim under the palm. When nothing the
planning frame saw lies under the hand where it stopped, the hand met something the camera
could not see: a part still hooked on a finger after the release over the bin (it rides down
with the hand, out of a table camera's view), or something put in the cell after the capture.
A hooked part stops every approach after it, each on another grasp, so a run of such stops
(the cell file's ``arm.unseen_stops_to_check``) faults the loop and asks the operator to look
at the hand before the next pick, instead of pressing the part onto the table again.

The hand is read as boxes in its TCP frame: a parallel jaw's fingers and palm (jaw_boxes), or
a multi-finger hand's open volume as its database grasp carries it (read_stop_boxes). The
reading also says how much of the boxes' lower faces lay behind a surface the camera saw (a
rounded object's far side, a neighbour's shadow), where the frame cannot say what is there.
That does not excuse the stop: a finger of a hand held up by a hooked part hangs in the
grasped object's shadow as often as one landing on its far side does (docs/picking-cell.md,
"An approach that stops on something unseen").
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from drivers.camera import RGBDFrame

from .._cellfile import GripperConfig
from ._types import DatabaseGraspView, LoopState

log = logging.getLogger("graspline.loop")

# around each part of the hand: the depth's noise and a rounded side's last seen lean (4-5 mm
# inside the true outline at 0.7 m, docs/scoring.md, "Fingers landing on the far side")
STOP_MARGIN_M = 0.005
STOP_ABOVE_TIP_M = 0.005  # a seen surface this far under the fingertips still counts as met
HIDDEN_STEP_M = 0.002  # the grid on the hand's lower faces read for places the camera missed


@dataclass(frozen=True)
class StopReading:
    """What the planning frame shows under the hand at an approach's stop.

    seen_points : seen surface points inside the fingers' or the palm's footprint (each
    widened by STOP_MARGIN_M) at or above that part's lower face (STOP_ABOVE_TIP_M under it
    counts).
    clearance_m : how far the hand's nearest part stopped above the highest seen point in
    its footprint (metres; NaN where the footprints hold no reading).
    hidden_points : points of the parts' lower faces (so widened, and down to
    STOP_ABOVE_TIP_M under them, every HIDDEN_STEP_M) that lie behind a seen surface along
    their pixel's ray by more than the margin: places the camera could not see into (told
    in the text, not counted against unseen)."""

    seen_points: int
    clearance_m: float
    hidden_points: int = 0

    @property
    def unseen(self) -> bool:
        """True when nothing seen lies where the hand stopped."""
        return self.seen_points == 0

    def text(self) -> str:
        """A short account for the trial's error."""
        if not self.unseen:
            return f"the frame shows {self.seen_points} surface points where the hand stopped"
        above = ("" if math.isnan(self.clearance_m) else
                 f", the hand {self.clearance_m * 1e3:.0f} mm above the highest seen under it")
        hidden = ("" if not self.hidden_points else
                  f"; {self.hidden_points} points of its lower faces lay behind a surface the "
                  f"camera saw, out of its view")
        return f"the frame shows nothing under the hand where it stopped{above}{hidden}"


def read_hand_stop(frame: RGBDFrame | None, T_stop: np.ndarray, gripper: GripperConfig,
                   view: DatabaseGraspView | None, multi_finger: bool,
                   margin_m: float = STOP_MARGIN_M) -> StopReading | None:
    """The stop read for the cell's hand: the jaw (read_stop), or with multi_finger the open
    volume its database grasp carries (view's boxes; None without a view)."""
    if not multi_finger:
        return read_stop(frame, T_stop, gripper, margin_m)
    if view is None:
        return None
    return read_stop_boxes(frame, T_stop, view.hand_centre, view.hand_half, margin_m)


def read_stop(frame: RGBDFrame | None, T_stop: np.ndarray, gripper: GripperConfig,
              margin_m: float = STOP_MARGIN_M) -> StopReading | None:
    """The planning frame's surface under the open parallel jaw with its TCP at T_stop (4 x
    4, base frame, metres): jaw_boxes (the fingers opened to gripper.open_width_m, their tips
    gripper.tcp_to_tip_m along the approach, the palm gripper.finger_length_m behind them)
    read by read_stop_boxes, each widened by margin_m (stop_margin_m: the cell's)."""
    centre, half = jaw_boxes(gripper)
    return read_stop_boxes(frame, T_stop, centre, half, margin_m)


def jaw_boxes(gripper: GripperConfig) -> tuple[np.ndarray, np.ndarray]:
    """(centre, half) (B, 3): the open jaw as boxes in its TCP frame (z = approach, metres):
    each finger with its body, from its tip back to the palm, and the palm (where the cell
    file gives its width) behind them; only each box's footprint and lower face are read."""
    tip, length = gripper.tcp_to_tip_m, gripper.finger_length_m
    x = 0.5 * gripper.open_width_m + 0.5 * gripper.finger_thickness_m
    finger_half = (0.5 * gripper.finger_thickness_m, 0.5 * gripper.finger_width_m, 0.5 * length)
    centre = [(x, 0.0, tip - 0.5 * length), (-x, 0.0, tip - 0.5 * length)]
    half = [finger_half, finger_half]
    palm_w, palm_l = gripper.palm_m()
    if math.isfinite(palm_w):
        if not math.isfinite(palm_l):
            palm_l = gripper.open_width_m + 2.0 * gripper.finger_thickness_m
        centre.append((0.0, 0.0, tip - length - 0.01))
        half.append((0.5 * palm_l, 0.5 * palm_w, 0.01))
    return np.array(centre, np.float64), np.array(half, np.float64)


def read_stop_boxes(frame: RGBDFrame | None, T_stop: np.ndarray, centre: np.ndarray,
                    half: np.ndarray, margin_m: float = STOP_MARGIN_M) -> StopReading | None:
    """The planning frame's surface under a hand of boxes (centre, half: (B, 3) in its TCP
    frame, z = approach, metres) with its TCP at T_stop (4 x 4, base frame): the readings in
    a box's footprint widened by margin_m at or above its lower face (STOP_ABOVE_TIP_M under
    it counts), how far the nearest part stopped above the highest seen under it, and how
    many points of the lower faces the camera could not see into (_hidden_points); None
    without a frame, its camera pose or any depth reading."""
    if frame is None or frame.T_base_camera is None:
        return None
    q = _points_in_tcp(frame, np.asarray(T_stop, np.float64))
    if q is None:
        return None
    hits = np.zeros(len(q), bool)
    clearance = math.inf
    for c, h in zip(np.asarray(centre, np.float64), np.asarray(half, np.float64)):
        under = ((np.abs(q[:, 0] - c[0]) <= h[0] + margin_m)
                 & (np.abs(q[:, 1] - c[1]) <= h[1] + margin_m))
        lower_face = c[2] + h[2]
        hits |= under & (q[:, 2] <= lower_face + STOP_ABOVE_TIP_M)
        if under.any():
            clearance = min(clearance, float(q[under, 2].min() - lower_face))
    return StopReading(int(np.count_nonzero(hits)),
                       clearance if math.isfinite(clearance) else math.nan,
                       _hidden_points(frame, T_stop, centre, half, margin_m))


def stop_margin_m(hand_eye_rms_m: float | None) -> float:
    """How far around each part of the hand a seen surface still counts as met (metres):
    STOP_MARGIN_M, plus the hand-eye calibration's rms translation residual where the cell
    has one (a seen point sits in the base frame only as surely as that calibration puts
    it)."""
    return STOP_MARGIN_M + (hand_eye_rms_m or 0.0)


def count_stop(state: LoopState, reading: StopReading, limit: int, message: str) -> None:
    """Count an approach's stop in state: a stop on nothing seen adds to the run of them, one
    on something seen ends it; ``limit`` in a row (0: never) faults the loop for a look at the
    hand (state.hand_check), naming the last stop's message (the arm's or the controller's)."""
    state.unseen_stops = state.unseen_stops + 1 if reading.unseen else 0
    if reading.unseen and limit and state.unseen_stops >= limit:
        state.fault = (f"{state.unseen_stops} approaches in a row stopped where the camera saw "
                       f"nothing under the hand (last: {message}; {reading.text()}): a part may "
                       f"hang on a finger, or something came into the cell after the capture; "
                       f"see to the hand and clear the fault")
        state.hand_check = True
        log.error("%s", state.fault)


def _points_in_tcp(frame: RGBDFrame, T_stop: np.ndarray) -> np.ndarray | None:
    """(N, 3) the frame's depth readings in the stopped TCP's frame (z along the approach,
    metres); None when the frame has no reading."""
    d = frame.depth_m
    v, u = np.nonzero(np.isfinite(d) & (d > 0))
    if v.size == 0:
        return None
    cam = frame.intrinsics.deproject_pixels(u, v, d[v, u])
    T_tcp_cam = np.linalg.inv(T_stop) @ frame.T_base_camera
    return cam @ T_tcp_cam[:3, :3].T + T_tcp_cam[:3, 3]


def _lower_faces(centre: np.ndarray, half: np.ndarray, margin_m: float) -> np.ndarray:
    """(N, 3) points in the TCP frame (metres) on a grid of HIDDEN_STEP_M over each box's
    lower face widened by margin_m, at the face and STOP_ABOVE_TIP_M under it: where a part
    moving down its approach meets what stops it."""
    out = []
    for c, h in zip(np.asarray(centre, np.float64), np.asarray(half, np.float64)):
        xs = np.linspace(c[0] - h[0] - margin_m, c[0] + h[0] + margin_m,
                         max(2, math.ceil(2.0 * (h[0] + margin_m) / HIDDEN_STEP_M) + 1))
        ys = np.linspace(c[1] - h[1] - margin_m, c[1] + h[1] + margin_m,
                         max(2, math.ceil(2.0 * (h[1] + margin_m) / HIDDEN_STEP_M) + 1))
        zs = c[2] + h[2] + np.array([0.0, STOP_ABOVE_TIP_M])
        g = np.stack(np.meshgrid(xs, ys, zs, indexing="ij"), axis=-1).reshape(-1, 3)
        out.append(g)
    return np.concatenate(out)


def _hidden_points(frame: RGBDFrame, T_stop: np.ndarray, centre: np.ndarray, half: np.ndarray,
                   margin_m: float) -> int:
    """How many of the boxes' lower-face points (_lower_faces, TCP at T_stop in the base
    frame) lie in the camera's view behind the surface their pixel saw, by more than
    margin_m of depth: the frame says nothing of what is there. A pixel with no reading
    counts as neither seen through nor hidden."""
    T_cam_tcp = np.linalg.inv(frame.T_base_camera) @ np.asarray(T_stop, np.float64)
    p = _lower_faces(centre, half, margin_m) @ T_cam_tcp[:3, :3].T + T_cam_tcp[:3, 3]
    p = p[p[:, 2] > 0.0]
    if len(p) == 0:
        return 0
    uv = np.rint(frame.intrinsics.project(p)).astype(np.int64)
    h, w = frame.depth_m.shape
    inside = (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
    d = frame.depth_m[uv[inside, 1], uv[inside, 0]]
    seen = np.isfinite(d) & (d > 0)
    return int(np.count_nonzero(seen & (p[inside, 2] > d + margin_m)))
