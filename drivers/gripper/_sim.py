"""A kinematic gripper behind the Gripper interface: no port, no physics, no waiting (by default)."""
from __future__ import annotations

import time

from ._base import Gripper
from ._errors import GripperFault, GripperTimeout
from ._specs import ROBOTIQ_2F85
from ._types import FingerStatus, GraspResult, GripperSpec, GripperStatus


class SimGripper(Gripper):
    """Fingers move at the commanded speed and stop on an object of ``object_width_m``.

    A motion longer than its timeout_s raises GripperTimeout, the fingers where they were then.

    With ``realtime=False`` (default) a motion completes at once and its elapsed time is the
    kinematic duration (distance / speed); with ``realtime=True`` the call sleeps that long.
    """

    model = "sim"

    def __init__(self, port: str = "sim", *, spec: GripperSpec = ROBOTIQ_2F85,
                 object_width_m: float | None = None, realtime: bool = False) -> None:
        super().__init__(port, spec)
        self.object_width_m = object_width_m
        self.realtime = realtime
        self._width = spec.width.high
        self._active = False
        self._detected = False
        self._duration = 0.0
        self.commands: list[tuple[str, float]] = []   # what was commanded, for loop tests

    def _activate(self, timeout_s: float) -> None:
        self.commands.append(("activate", 0.0))
        self._active = True
        self._width, self._detected = self._spec.width.high, False

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        if not self._active:
            raise GripperFault(0x07, "the activation bit must be set before an action",
                               port=self._port)
        self.commands.append(("move", width_m))
        end, detected = width_m, False
        obj = self.object_width_m
        if obj is not None and width_m < obj <= self._width:
            end, detected = obj, True       # closing onto the object stops at its width
        self._duration = abs(self._width - end) / speed_mps
        if self._duration > timeout_s:
            # As a real gripper: fingers still moving when the time is up raise, where they are.
            self._width += (end - self._width) * timeout_s / self._duration
            self._duration, self._detected = timeout_s, False
            if self.realtime:
                time.sleep(timeout_s)
            raise GripperTimeout(f"motion to width {width_m:g} m not finished within "
                                 f"{timeout_s:g} s (width now {self._width:.4f} m)",
                                 port=self._port)
        if self.realtime:
            time.sleep(self._duration)
        self._width, self._detected = end, detected

    def _move(self, width_m: float, speed_mps: float | None, force_n: float | None,
              timeout_s: float) -> GraspResult:
        result = super()._move(width_m, speed_mps, force_n, timeout_s)
        # Report kinematic time, not the (near-zero) wall time of an instant simulation.
        return GraspResult(result.object_detected, result.width_m, self._duration, result.status)

    def _read_status(self) -> GripperStatus:
        closure = 1.0 - self._width / self._spec.width.high
        return GripperStatus(activated=self._active, moving=False,
                             object_detected=self._detected, width_m=self._width,
                             fingers=(FingerStatus("jaws", int(round(255 * closure)), closure,
                                                   self._detected),))

    def _stop(self) -> None:
        self.commands.append(("stop", self._width))

    def _close(self) -> None:
        pass
