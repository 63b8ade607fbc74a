"""SimHand: the cell's multi-finger hand behind drivers.hand.Hand, closing physically.

The closing is the grasp simulation's own controller (offline_sim.dynamics.GraspController's
closing law, Kim et al. eq. 1): each drive's servo targets advance at v0 (1 - τ/τm) and stop
when every drive has stalled; the targets then stay where they stopped, so the fingers keep
squeezing through the lift as the servos of a position-controlled hand do. As in the grasp
simulation that ranked the database, the closing ends after SimSettings.close_max_s (0.6 s)
even if a drive has not stalled. Preshape joints
(a BH8's spread) are servos set to their targets. Status and timeouts run on the cell's
clock: each status read steps the world by POLL_S.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from drivers.hand import Hand, HandDisconnected, HandStatus

from ..dynamics import GraspController, SimSettings
from ._fingers import FingerIndex

POLL_S = 0.012                # simulated time stepped per status read (two control periods)
CONTROL_PERIOD_S = 0.006      # the closing law's period, as in the grasp simulation
STILL_JOINT_SPEED = 0.05      # rad/s (or m/s): a joint slower than this has stopped
STILL_POLLS = 3               # polls in a row with every joint still: a motion has ended
MIN_CLOSE_S = 0.05            # a servo has no torque in its first steps: not yet stalled


class SimHand(Hand):
    """The multi-finger hand of a SimCell; ``fault`` and ``disconnected`` inject faults."""

    def __init__(self, cell) -> None:
        super().__init__("sim-cell", poll_interval_s=0.0)
        self._cell = cell
        self.name = cell.world.hand.name
        self._mode = "idle"        # idle, preshape, closing, opening
        self._controller: GraspController | None = None
        self._t0 = 0.0
        self._still = 0
        self._stalled = False
        self._closed_on = False    # the last finished motion was a closing
        self.fault: tuple[int, str] | None = None  # injected device fault (code, message)
        self.disconnected = False  # injected: the link is gone
        self.commands: list[tuple[str, object]] = []  # what was commanded (for tests' rigs)

    # ------------------------------------------------------------------ the interface
    @property
    def preshape_joints(self) -> tuple[str, ...]:
        """The hand model's preshape joints (a BH8's spread: f1_spread, f2_spread)."""
        return tuple(name for name, _ in self._cell.world.hand.preshape)

    @property
    def finger_names(self) -> tuple[str, ...]:
        """The fingers, in the order of HandStatus.finger_contact ("palm" first)."""
        return self._index.finger_names

    def reset(self) -> None:
        """Fingers open at once and forces as built (a new table: called by the cell)."""
        w, f = self._cell.world, self._index
        w.data.ctrl[f.drives.act_ids] = f.drive_open
        w.data.ctrl[f.servo_ids] = f.servo_rest
        w.model.actuator_forcerange[f.drives.act_ids] = f.force_range[f.drives.act_ids]
        self._mode, self._controller, self._closed_on = "idle", None, False

    # ---------------------------------------------------------------- device hooks
    @property
    def _index(self) -> FingerIndex:
        f = self._cell.world.fingers
        if f is None:
            raise ValueError("the simulated cell carries a parallel jaw, not a multi-finger hand")
        return f

    def _start_preshape(self, q: np.ndarray) -> None:
        self._check_link()
        w, f = self._cell.world, self._index
        for a, v in zip(f.preshape_actuator, q):
            if a >= 0:  # a joint without a servo follows its coupling (f2_spread)
                lo, hi = w.model.actuator_ctrlrange[a]
                w.data.ctrl[a] = float(np.clip(v, lo, hi)) if w.model.actuator_ctrllimited[a] else v
        self.commands.append(("preshape", tuple(float(v) for v in q)))
        self._begin("preshape")

    def _start_close(self, effort: float) -> None:
        self._check_link()
        w, f = self._cell.world, self._index
        ids = f.drives.act_ids
        w.model.actuator_forcerange[ids] = f.force_range[ids] * effort
        drives = dataclasses.replace(f.drives, act_tau_max=f.drives.act_tau_max * effort,
                                     drive_breakaway=f.drives.drive_breakaway * effort)
        dt = float(w.model.opt.timestep)
        settings = SimSettings(timestep_s=dt, control_period_s=CONTROL_PERIOD_S)
        self._controller = GraspController(w.model, w.data, drives, np.zeros(0, np.int64), settings)
        self.commands.append(("close", effort))
        self._begin("closing")

    def _start_open(self) -> None:
        self._check_link()
        w, f = self._cell.world, self._index
        ids = f.drives.act_ids
        w.data.ctrl[ids] = f.drive_open
        w.model.actuator_forcerange[ids] = f.force_range[ids]
        self.commands.append(("open", None))
        self._begin("opening")

    def _begin(self, mode: str) -> None:
        self._mode, self._t0, self._still, self._stalled = mode, self._cell.time_s, 0, False
        self._closed_on = False

    def _read_status(self) -> HandStatus:
        self._check_link()
        cell, f = self._cell, self._index
        w = cell.world
        if self._mode == "closing" and self._controller is not None:
            ctl = self._controller
            for _ in range(max(1, round(POLL_S / ctl.period_s))):
                stalled = ctl.law.step(ctl.period_s, True)
                cell.step(ctl.steps_per_period)
                t = cell.time_s - self._t0
                # as the grasp simulation: until every drive stalls, or close_max_s (a BH8
                # finger past its breakaway curls its distal link on and may never stall)
                self._stalled = (stalled and t > MIN_CLOSE_S) or t >= ctl.settings.close_max_s
                if self._stalled:
                    break
        else:
            cell.step(max(1, round(POLL_S / w.model.opt.timestep)))
        speed = np.abs(w.data.qvel[f.joint_dofadr])
        self._still = self._still + 1 if (speed.size == 0 or speed.max() < STILL_JOINT_SPEED) else 0
        if self._mode == "closing":
            moving = not self._stalled
        elif self._mode in ("preshape", "opening"):
            moving = self._still < STILL_POLLS
        else:
            moving = False
        if not moving and self._mode != "idle":
            self._closed_on = self._mode == "closing"
            self._mode = "idle"
        contact, on_object = self._contacts()
        code, msg = self.fault if self.fault else (0, "")
        return HandStatus(
            joint_names=f.joint_names, joint_positions=w.data.qpos[f.joint_qposadr].copy(),
            joint_efforts=w.data.qfrc_actuator[f.joint_dofadr].copy(),
            finger_names=f.finger_names, finger_contact=contact,
            object_detected=bool(self._closed_on and on_object >= 2), moving=moving,
            fault_code=code, fault_message=msg)

    def _contacts(self) -> tuple[np.ndarray, int]:
        """(per-finger contact with anything not of the hand, how many fingers touch an object)."""
        w, f = self._cell.world, self._index
        touch = np.zeros(len(f.finger_names), bool)
        on_object = np.zeros(len(f.finger_names), bool)
        d = w.data
        for i in range(d.ncon):
            c = d.contact[i]
            f1, f2 = f.finger_of_geom[c.geom1], f.finger_of_geom[c.geom2]
            if (f1 >= 0) == (f2 >= 0):
                continue
            finger, other = (f1, c.geom2) if f1 >= 0 else (f2, c.geom1)
            touch[finger] = True
            on_object[finger] |= bool(w.geom_instance[other] > 0)
        return touch, int(on_object.sum())

    def _clock(self) -> float:
        """The cell's simulated time: timeouts are the cell's."""
        return self._cell.time_s

    def _wait(self) -> None:
        """No pause: each status read steps the world by POLL_S."""

    def _stop(self) -> None:
        w, f = self._cell.world, self._index
        # hold where the joints are: every servo's target to its actuator length now
        ids = np.concatenate([f.drives.act_ids, f.servo_ids])
        w.data.ctrl[ids] = w.data.actuator_length[ids]
        self._mode = "idle"
        self.commands.append(("stop", None))

    def _shutdown(self) -> None:
        pass

    def _check_link(self) -> None:
        if self.disconnected:
            raise HandDisconnected("the simulated hand's link is down (injected)", hand=self._port)
