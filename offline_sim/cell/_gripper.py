"""SimJawGripper: the cell's jaw behind drivers.gripper.Gripper, closing physically.

The jaw is a position servo with a force limit, as a Robotiq 2F-85 is commanded: the target
width moves at the commanded speed, the pads stop where the object stops them, and each pad
then squeezes with the commanded force. Status and timeouts run on the simulation's clock
(the world steps while the driver polls), so a motion reports the time it took in the cell.
Two jaws: the built-in parallel jaw (offline_sim.hands.parallel_jaw: one slide servo, the pads'
force half its force limit) and MuJoCo Menagerie's Robotiq 2F-85 (its linkage closed by
equality constraints, control 0..255; pad force measured in that model at 8.2 N per unit
of its tendon force limit plus 8.2 N from its springs, so its 5-unit limit gives about 49 N:
a stronger command is clamped there).
"""
from __future__ import annotations


import numpy as np

from drivers.gripper import (SPECS, FingerStatus, Gripper, GripperDisconnected,
                             GripperFault, GripperSpec, GripperStatus, LinearMap,
                             Range)

POLL_S = 0.01             # simulated time stepped per status read
SETTLED_SPEED_MPS = 0.002  # a finger slower than this has stopped
CONTACT_MARGIN_M = 0.002   # stopped this far short of the target: on an object


MENAGERIE_2F85_N_PER_UNIT = 8.2   # measured: pad force per unit of the tendon's force limit
MENAGERIE_2F85_SPRING_N = 8.2


def force_limit(hand_name: str, force_n: float) -> float:
    """The closing actuator's force limit that makes each pad squeeze with force_n (N)."""
    if hand_name == "robotiq_2f85":
        units = force_n / MENAGERIE_2F85_N_PER_UNIT - MENAGERIE_2F85_SPRING_N / MENAGERIE_2F85_N_PER_UNIT
        return float(np.clip(units, 0.05, 5.0))
    # one servo drives both pads through a rigid coupling (virtual work): 2 F
    return 2.0 * force_n


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
        self._target = cell.world.ctrl_open   # the servo's control target
        self._rate = 1.0                       # control units per second
        self._settled = 0
        self.fault: tuple[int, str] | None = None  # injected device fault (code, message)
        self.stall = False         # injected: the fingers never report that they stopped
        self.disconnected = False  # injected: the port is gone
        self.commands: list[tuple[str, float]] = []  # what was commanded (for the tests' rigs)
        self.last_force_n: float | None = None

    # ---------------------------------------------------------------- device hooks
    def _activate(self, timeout_s: float) -> None:
        self._check_link()
        self.commands.append(("activate", 0.0))
        self.fault = None  # a reactivation clears a device fault, as on the real device
        self._active = True
        self._cell.gripper_reset()

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        self._check_link()
        if not self._active:
            raise GripperFault(0x07, "the activation bit must be set before an action",
                               port=self._port)
        w = self._cell.world
        closure = 1.0 - min(max(width_m / w.hand.aperture_m, 0.0), 1.0)
        self._target = w.ctrl_open + closure * (w.ctrl_closed - w.ctrl_open)
        # control units per second for the commanded speed (of the opening, as the Gripper
        # interface's speed_mps is: each finger moves at half of it)
        self._rate = abs(w.ctrl_closed - w.ctrl_open) * speed_mps / w.hand.aperture_m
        self.commands.append(("move", width_m))
        self.last_force_n = force_n
        self._settled = 0
        limit = force_limit(w.hand.name, force_n)
        w.model.actuator_forcerange[w.close_actuator] = (-limit, limit)

    def _read_status(self) -> GripperStatus:
        self._check_link()
        w = self._cell.world
        ctrl = w.data.ctrl
        a = w.close_actuator
        dt = w.model.opt.timestep
        n_steps = max(1, int(round(POLL_S / dt)))
        width0 = w.jaw_width_m()
        for _ in range(n_steps):  # the servo target runs towards the commanded width
            step = self._rate * dt
            ctrl[a] += float(np.clip(self._target - ctrl[a], -step, step))
            self._cell.step(1)
        width = w.jaw_width_m()
        speed = abs(width - width0) / (n_steps * dt)
        target_reached = abs(ctrl[a] - self._target) < 1e-9
        still = target_reached and speed < SETTLED_SPEED_MPS
        self._settled = self._settled + 1 if still else 0
        moving = self.stall or not still
        closing = (self._target - w.ctrl_open) * (w.ctrl_closed - w.ctrl_open) > 0
        target_width = w.hand.aperture_m * (1.0 - (self._target - w.ctrl_open)
                                            / (w.ctrl_closed - w.ctrl_open))
        detected = (not moving) and closing and width > target_width + CONTACT_MARGIN_M
        closure = 1.0 - width / w.hand.aperture_m
        code, msg = self.fault if self.fault else (0, "")
        return GripperStatus(activated=self._active, moving=moving, object_detected=detected,
                             width_m=width, fault_code=code, fault_message=msg, mode="sim",
                             fingers=(FingerStatus("jaws", int(round(255 * closure)), closure,
                                                   detected),))

    def _clock(self) -> float:
        """The cell's simulated time: a motion's timeout and duration are the cell's."""
        return self._cell.time_s

    def _wait(self) -> None:
        """No pause: each status read steps the world by POLL_S."""

    def _motion_finished(self, st: GripperStatus) -> bool:
        """Finished once the fingers have been still for three polls (30 ms)."""
        return not st.moving and self._settled >= 3

    def _stop(self) -> None:
        self._check_link()
        w = self._cell.world
        self.commands.append(("stop", w.jaw_width_m()))
        self._target = float(w.data.ctrl[w.close_actuator])

    def _close(self) -> None:
        pass

    def _check_link(self) -> None:
        if self.disconnected:
            raise GripperDisconnected("the simulated gripper's link is down (injected)",
                                      port=self._port)
