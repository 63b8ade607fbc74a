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
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from drivers.camera import RGBDFrame

from .._cellfile import GripperConfig
from ._types import LoopState

# around each part of the hand: the depth's noise and a rounded side's last seen lean (4-5 mm
# inside the true outline at 0.7 m, docs/scoring.md, "Fingers landing on the far side")
STOP_MARGIN_M = 0.005
STOP_ABOVE_TIP_M = 0.005  # a seen surface this far under the fingertips still counts as met


@dataclass(frozen=True)
class StopReading:
    """What the planning frame shows under the hand at an approach's stop.

    seen_points : seen surface points inside the fingers' or the palm's footprint (each
    widened by STOP_MARGIN_M) at or above that part's lower face (STOP_ABOVE_TIP_M under it
    counts).
    clearance_m : how far the fingertips stopped above the highest seen point inside the
    fingers' footprints (metres; NaN where the footprints hold no reading)."""

    seen_points: int
    clearance_m: float

    @property
    def unseen(self) -> bool:
        """True when nothing seen lies where the hand stopped."""
        return self.seen_points == 0

    def text(self) -> str:
        """A short account for the trial's error."""
        if not self.unseen:
            return f"the frame shows {self.seen_points} surface points where the hand stopped"
        above = ("" if math.isnan(self.clearance_m) else
                 f", the fingertips {self.clearance_m * 1e3:.0f} mm above the highest seen "
                 f"under them")
        return f"the frame shows nothing under the hand where it stopped{above}"


def read_stop(frame: RGBDFrame | None, T_stop: np.ndarray, gripper: GripperConfig,
              margin_m: float = STOP_MARGIN_M) -> StopReading | None:
    """The planning frame's surface under the open parallel jaw with its TCP at T_stop (4 x
    4, base frame, metres): the fingers opened to gripper.open_width_m, their tips
    gripper.tcp_to_tip_m along the approach (the TCP's z), the palm gripper.finger_length_m
    behind them, each part widened by margin_m (stop_margin_m: the cell's); None without a
    frame, its camera pose or any depth reading."""
    if frame is None or frame.T_base_camera is None:
        return None
    q = _points_in_tcp(frame, np.asarray(T_stop, np.float64))
    if q is None:
        return None
    x, y, z = np.abs(q[:, 0]), np.abs(q[:, 1]), q[:, 2]
    tip = gripper.tcp_to_tip_m
    half_open = 0.5 * gripper.open_width_m
    in_fingers = ((x >= half_open - margin_m)
                  & (x <= half_open + gripper.finger_thickness_m + margin_m)
                  & (y <= 0.5 * gripper.finger_width_m + margin_m))
    finger_hits = in_fingers & (z <= tip + STOP_ABOVE_TIP_M)
    palm_w, palm_l = gripper.palm_m()
    palm_hits = np.zeros_like(finger_hits)
    if math.isfinite(palm_w):
        if not math.isfinite(palm_l):
            palm_l = gripper.open_width_m + 2.0 * gripper.finger_thickness_m
        palm_hits = ((x <= 0.5 * palm_l + margin_m) & (y <= 0.5 * palm_w + margin_m)
                     & (z <= tip - gripper.finger_length_m + STOP_ABOVE_TIP_M))
    under = z[in_fingers]
    clearance = float(under.min() - tip) if under.size else math.nan
    return StopReading(int(np.count_nonzero(finger_hits | palm_hits)), clearance)


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
