"""The grasp controller of Kim et al. 2013 (§III-A): torque-limited closing, then lift, hold, shake.

It steps a MuJoCo model and data it is given, through index arrays into them (HandDrives for
the hand's closing actuators, three carrier actuators for the lift), so the same controller
drives a hand in the one-object grasp world and a hand on an arm in a cell of several objects.

Closing is Kim eq. 1: each drive's servo targets advance at v = v0 (1 - τ/τm), slowing as the
joint torque rises and stopping at τm; a drive with a breakaway clutch (BH8) stops its leader
at the breakaway torque and lets the others go on closing alone. The lift is a trapezoidal
velocity move of the carrier; the fingers keep squeezing through lift, hold and shake.

This is the per-step Python path (SimEvaluatorFactory(closing="python"), the default): one
trial at a time, Python every control period. _native runs the same law as motor-curve
actuators and rolls out a candidate's pose samples in batches (closing="native").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..hands import HandModel
from ._sim_settings import SimSettings


@dataclass(frozen=True)
class HandDrives:
    """A hand's closing drives in a compiled model, flattened to one entry per actuator.

    act_ids : (A,) actuator ids; act_speed : (A,) v0 times the ratio (m/s or rad/s, signed to
    close); act_sign : (A,) +1 or -1, the closing direction; act_tau_max : (A,) τm (N or N·m);
    act_drive : (A,) index of the actuator's drive; act_leader : (A,) bool, first of its drive;
    act_lo, act_hi : (A,) servo target range (±inf where unlimited); drive_breakaway : (D,)
    leader torque at which the drive's clutch slips (inf: none); drive_leader : (D,) entry of
    each drive's leader.
    """

    act_ids: np.ndarray
    act_speed: np.ndarray
    act_sign: np.ndarray
    act_tau_max: np.ndarray
    act_drive: np.ndarray
    act_leader: np.ndarray
    act_lo: np.ndarray
    act_hi: np.ndarray
    drive_breakaway: np.ndarray
    drive_leader: np.ndarray

    @property
    def n_drives(self) -> int:
        """Number of drives (motors)."""
        return len(self.drive_breakaway)


def actuator_id(model, hand: HandModel, name: str) -> int:
    """Id of the actuator called name in model; ValueError naming the hand if there is none."""
    import mujoco

    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
    if i < 0:
        raise ValueError(f"hand {hand.name!r}: no actuator named {name!r} in the world")
    return i


def hand_drives(model, hand: HandModel, prefix: str = "") -> HandDrives:
    """The closing drives of hand, compiled into model with its names prefixed by prefix."""
    ids, speed, sign, tau, drive_of, leader, lo, hi = [], [], [], [], [], [], [], []
    breakaway, drive_leader = [], []
    for d_idx, drive in enumerate(hand.drives):
        drive_leader.append(len(ids))
        breakaway.append(np.inf if drive.breakaway_torque_nm is None else drive.breakaway_torque_nm)
        for k, (a, r, t) in enumerate(zip(drive.actuators, drive.ratios, drive.torque_limits)):
            i = actuator_id(model, hand, prefix + a)
            ids.append(i)
            speed.append(drive.closing_speed * r)
            sign.append(1.0 if r >= 0 else -1.0)
            tau.append(t)
            drive_of.append(d_idx)
            leader.append(k == 0)
            limited = bool(model.actuator_ctrllimited[i])
            lo.append(model.actuator_ctrlrange[i, 0] if limited else -np.inf)
            hi.append(model.actuator_ctrlrange[i, 1] if limited else np.inf)
    return HandDrives(np.array(ids, np.int64), np.array(speed), np.array(sign), np.array(tau),
                      np.array(drive_of, np.int64), np.array(leader, bool), np.array(lo),
                      np.array(hi), np.array(breakaway), np.array(drive_leader, np.int64))


def hold_servos(model, data, actuators: np.ndarray) -> None:
    """Set the targets of position servos to where their joints are now (after the position stage),
    clipped to the control range where it is limited: the servos hold their start position."""
    data.ctrl[actuators] = data.actuator_length[actuators]
    lo, hi = model.actuator_ctrlrange[actuators].T
    lim = model.actuator_ctrllimited[actuators].astype(bool)
    data.ctrl[actuators] = np.where(lim, np.clip(data.ctrl[actuators], lo, hi), data.ctrl[actuators])


class ClosingLaw:
    """Kim eq. 1 on one hand's servo targets in data.ctrl, one call per control period.

    Works on plain floats: for a handful of actuators in a Python loop that is several times
    faster than numpy calls on tiny arrays. Holds whether each drive's clutch has slipped,
    which lasts until reset().
    """

    def __init__(self, data, drives: HandDrives, stall_torque_fraction: float) -> None:
        self._force, self._ctrl = data.actuator_force, data.ctrl  # views, valid across resets
        self._ids = [int(i) for i in drives.act_ids]
        self._speed, self._sign = drives.act_speed.tolist(), drives.act_sign.tolist()
        self._tau_max = drives.act_tau_max.tolist()
        self._lo, self._hi = drives.act_lo.tolist(), drives.act_hi.tolist()
        self._drive, self._leader = drives.act_drive.tolist(), drives.act_leader.tolist()
        self._breakaway = drives.drive_breakaway.tolist()
        self._n_drives = drives.n_drives
        self._stall = 1.0 - stall_torque_fraction  # a drive slower than this has stopped
        self.reset()

    def reset(self) -> None:
        """Re-engage every clutch (start of a trial)."""
        self._broken = [False] * self._n_drives

    def _load(self) -> list[float]:
        """τ/τm of each actuator in [0, 1]; marks drives whose leader reached the breakaway."""
        frac = [0.0] * len(self._ids)
        for k, i in enumerate(self._ids):
            tau = self._force[i] * self._sign[k]
            f = tau / self._tau_max[k]
            frac[k] = 0.0 if f < 0.0 else 1.0 if f > 1.0 else f
            if self._leader[k] and tau >= self._breakaway[self._drive[k]]:
                self._broken[self._drive[k]] = True  # the clutch slips; it stays slipped
        return frac

    def step(self, dt_s: float, closing: bool) -> bool:
        """Advance the servo targets over dt_s seconds; True (while closing) when every drive
        has stalled (slowed below the stall fraction, or reached its closing limit)."""
        frac = self._load()
        worst = [0.0] * self._n_drives
        for k, f in enumerate(frac):
            if f > worst[self._drive[k]]:
                worst[self._drive[k]] = f
        stalled = True
        for k, i in enumerate(self._ids):
            dr = self._drive[k]
            # an unbroken drive's motor slows with the most loaded of its joints; after the
            # breakaway the leader stays put and the others answer to their own torque
            if self._broken[dr]:
                v = 0.0 if self._leader[k] else 1.0 - frac[k]
            else:
                v = 1.0 - worst[dr]
            lo, hi = self._lo[k], self._hi[k]
            c = self._ctrl[i] + self._speed[k] * v * dt_s
            c = lo if c < lo else hi if c > hi else c
            self._ctrl[i] = c
            if closing and v > self._stall and not (c >= hi if self._sign[k] > 0 else c <= lo):
                stalled = False
        return closing and stalled


def trapezoid(t_s: float, height_m: float, duration_s: float, ramp_s: float) -> float:
    """Position (m) at time t_s of a trapezoidal-velocity move of height_m over duration_s,
    with ramp_s of acceleration and of deceleration."""
    if t_s <= 0:
        return 0.0
    if t_s >= duration_s:
        return height_m
    v = height_m / (duration_s - ramp_s)  # peak speed: the area under the trapezoid is the height
    a = v / ramp_s
    if t_s < ramp_s:
        return 0.5 * a * t_s * t_s
    if t_s < duration_s - ramp_s:
        return 0.5 * v * ramp_s + v * (t_s - ramp_s)
    r = duration_s - t_s
    return height_m - 0.5 * a * r * r


def shake_direction(seed: int | None) -> np.ndarray:
    """(3,) unit direction of the shake in the world frame: vertical for None, else random."""
    if seed is None:
        return np.array([0.0, 0.0, 1.0])
    v = np.random.default_rng(seed).normal(size=3)
    return v / np.linalg.norm(v)


@dataclass(frozen=True)
class LiftSchedule:
    """Lift, hold, shake of a carrier from time t0_s (s): a trapezoid up over the lift, nothing
    new during the hold, then a sine of the settings' amplitude along shake_dir (until end_s)."""

    t0_s: float
    settings: SimSettings
    shake_dir: np.ndarray
    shake: bool

    @property
    def hold_start_s(self) -> float:
        """End of the lift, start of the hold (s)."""
        return self.t0_s + self.settings.lift_duration_s

    @property
    def shake_start_s(self) -> float:
        """End of the hold, start of the shake (s)."""
        return self.hold_start_s + self.settings.hold_s

    @property
    def end_s(self) -> float:
        """End of the schedule (s)."""
        return self.shake_start_s + (self.settings.shake_s if self.shake else 0.0)

    def holding(self, t: float) -> bool:
        """Whether time t (s) falls in the hold."""
        return self.hold_start_s <= t < self.shake_start_s

    def command(self, t: float, ctrl: np.ndarray, carrier: np.ndarray) -> None:
        """Write the targets (m) of the carrier's x, y, z position servos (ids carrier, zero at
        the start pose) for time t: z along the lift; left as they are during the hold."""
        s = self.settings
        if t < self.hold_start_s:
            ctrl[carrier[2]] = trapezoid(t - self.t0_s, s.lift_height_m, s.lift_duration_s, s.lift_ramp_s)
        elif t >= self.shake_start_s:
            w = s.shake_amplitude_m * math.sin(2.0 * math.pi * s.shake_frequency_hz * (t - self.shake_start_s))
            ctrl[carrier] = w * self.shake_dir + (0.0, 0.0, s.lift_height_m)


class GraspController:
    """Closes a hand and lifts its carrier in a MuJoCo model+data, one control period per advance.

    drives : the hand's closing actuators (hand_drives); carrier : (3,) ids of the x, y, z
    position servos that carry the hand. t_s and steps count from construction, which should
    follow the reset of the trial (mj_resetData and the start pose).
    """

    def __init__(self, model, data, drives: HandDrives, carrier: np.ndarray,
                 settings: SimSettings) -> None:
        self.model, self.data, self.carrier, self.settings = model, data, carrier, settings
        self.law = ClosingLaw(data, drives, settings.stall_torque_fraction)
        self.steps_per_period = max(1, round(settings.control_period_s / settings.timestep_s))
        self.period_s = self.steps_per_period * settings.timestep_s
        self.t_s, self.steps = 0.0, 0

    def advance(self, closing: bool) -> bool:
        """Closing law, then one control period of MuJoCo steps; True when every drive stalled."""
        import mujoco

        stalled = self.law.step(self.period_s, closing)
        mujoco.mj_step(self.model, self.data, self.steps_per_period)
        self.steps += self.steps_per_period
        self.t_s += self.period_s
        return stalled

    def crossed(self, every: int) -> bool:
        """Whether the last advance passed a multiple of every MuJoCo steps."""
        return self.steps % every < self.steps_per_period

    def close(self, after: Callable[[], None] = lambda: None) -> float:
        """Close until every drive stalls or close_max_s; after() runs after each period.
        Returns the closing time (s)."""
        s = self.settings
        while self.t_s < s.close_max_s:
            stalled = self.advance(True)
            after()
            if stalled and self.t_s > 0.05:  # the first steps of a servo have no torque yet
                return self.t_s
        return s.close_max_s

    def lift(self, schedule: LiftSchedule, after: Callable[[], bool] = lambda: False) -> bool:
        """Run the lift schedule to its end with the fingers still closing (Kim: the mechanism
        keeps running); after() runs after each period and stops the run by returning True.
        Returns whether after() stopped it."""
        while self.t_s < schedule.end_s - 0.5 * self.period_s:
            schedule.command(self.t_s, self.data.ctrl, self.carrier)
            self.advance(False)
            if after():
                return True
        return False
