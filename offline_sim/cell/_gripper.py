"""SimJawGripper: the cell's parallel jaw behind drivers.gripper.Gripper, closing physically.

The jaw is a position servo with a force limit, as a Robotiq 2F-85 is commanded: the target
width moves at the commanded speed, the pads stop where the object stops them, and each pad
then squeezes with the commanded force. Status and timeouts run on the simulation's clock
(the world steps while the driver polls), so a motion reports the time it took in the cell.
"""
from __future__ import annotations

import math

import numpy as np

from drivers.gripper import (SPECS, FingerStatus, GraspResult, Gripper, GripperDisconnected,
                             GripperFault, GripperSpec, GripperStatus, GripperTimeout, LinearMap,
                             Range)

POLL_S = 0.01             # simulated time stepped per status read
SETTLED_SPEED_MPS = 0.002  # a finger slower than this has stopped
CONTACT_MARGIN_M = 0.002   # stopped this far short of the target: on an object


def jaw_spec(open_width_m: float) -> GripperSpec:
    """The Robotiq 2F-85's speed and force ranges with this jaw's opening."""
    base = SPECS["robotiq2f85"]
    return GripperSpec(model="sim_jaw", width=Range(0.0, open_width_m, "m"), speed=base.speed,
                       force=base.force, width_map=LinearMap((open_width_m, 0.0), (0, 255)),
                       speed_map=base.speed_map, force_map=base.force_map)


class SimJawGripper(Gripper):
    """The parallel jaw of a SimCell; ``fault`` / ``stall`` / ``disconnected`` inject faults."""

    model = "sim_jaw"

    def __init__(self, cell) -> None:
        super().__init__("sim-cell", jaw_spec(cell.world.hand.aperture_m), poll_interval_s=0.0)
        self._cell = cell
        self._active = False
        self._target_m = 0.0      # per-finger closing travel the servo goes to, metres
        self._speed_mps = 0.1
        self._settled = 0
        self.fault: tuple[int, str] | None = None  # injected device fault (code, message)
        self.stall = False         # injected: the fingers never report that they stopped
        self.disconnected = False  # injected: the port is gone

    # ---------------------------------------------------------------- device hooks
    def _activate(self, timeout_s: float) -> None:
        self._check_link()
        self._active = True
        self._cell.gripper_reset()

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        self._check_link()
        if not self._active:
            raise GripperFault(0x07, "the activation bit must be set before an action",
                               port=self._port)
        w = self._cell.world
        half_open = 0.5 * w.hand.aperture_m
        self._target_m = min(max(half_open - 0.5 * width_m, 0.0), half_open)
        self._speed_mps = speed_mps
        self._settled = 0
        # the servo's force limit is shared by the two coupled pads (virtual work): 2 F
        w.model.actuator_forcerange[w.close_actuator] = (-2.0 * force_n, 2.0 * force_n)

    def _read_status(self) -> GripperStatus:
        self._check_link()
        w = self._cell.world
        ctrl = w.data.ctrl
        a = w.close_actuator
        n_steps = max(1, int(round(POLL_S / w.model.opt.timestep)))
        for _ in range(n_steps):  # the servo target runs towards the commanded width
            step = 0.5 * self._speed_mps * w.model.opt.timestep
            ctrl[a] += float(np.clip(self._target_m - ctrl[a], -step, step))
            self._cell.step(1)
        travel = float(np.mean(w.data.qpos[w.finger_qposadr]))
        speed = float(np.max(np.abs(w.data.qvel[w.finger_dofadr])))
        target_reached = abs(ctrl[a] - self._target_m) < 1e-9
        self._settled = self._settled + 1 if target_reached and speed < SETTLED_SPEED_MPS else 0
        moving = self.stall or self._settled < 3
        detected = (not moving) and travel < self._target_m - CONTACT_MARGIN_M
        width = max(0.0, w.hand.aperture_m - 2.0 * travel)
        closure = travel / (0.5 * w.hand.aperture_m)
        code, msg = self.fault if self.fault else (0, "")
        return GripperStatus(activated=self._active, moving=moving, object_detected=detected,
                             width_m=width, fault_code=code, fault_message=msg, mode="sim",
                             fingers=(FingerStatus("jaws", int(round(255 * closure)), closure,
                                                   detected),))

    def _move(self, width_m: float, speed_mps: float | None, force_n: float | None,
              timeout_s: float) -> GraspResult:
        """As Gripper._move, with the deadline and the elapsed time on the cell's clock."""
        spec = self._spec
        width = spec.width.check("width_m", width_m)
        speed = spec.speed.check("speed_mps", spec.speed.high if speed_mps is None else speed_mps)
        force = spec.force.check("force_n", spec.force.low if force_n is None else force_n)
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError(f"timeout_s must be finite and > 0, got {timeout_s!r}")
        self._check_usable()
        t0 = self._cell.time_s
        self._start_motion(width, speed, force, timeout_s)
        while True:
            st = self._read_status()
            self._raise_if_fault(st)
            elapsed = self._cell.time_s - t0
            if self._motion_finished(st):
                return GraspResult(st.object_detected, st.width_m, elapsed, st)
            if elapsed >= timeout_s:
                raise GripperTimeout(f"motion to width {width:g} m not finished within "
                                     f"{timeout_s:g} s (width now {st.width_m:.4f} m)",
                                     port=self._port)

    def _stop(self) -> None:
        self._check_link()
        w = self._cell.world
        self._target_m = float(np.mean(w.data.qpos[w.finger_qposadr]))
        w.data.ctrl[w.close_actuator] = self._target_m

    def _close(self) -> None:
        pass

    def _check_link(self) -> None:
        if self.disconnected:
            raise GripperDisconnected("the simulated gripper's link is down (injected)",
                                      port=self._port)
