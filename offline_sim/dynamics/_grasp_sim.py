"""One dynamic grasp trial after Kim et al. 2013, composed of the world, the controller and the measures.

place_hand resets the world (_grasp_world), the controller closes the hand with the torque-limited
law and lifts, holds and optionally shakes (_controller), and the measures read the contacts,
Kim's B and C and the BLEM hold diagnostics (_measures) from the same model and data.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, fields

import numpy as np

from ._controller import GraspController, LiftSchedule, shake_direction
from ._measures import (ContactSet, GraspProbe, HoldDiagnostics, HoldSampler, deviation,
                        measure_b, measure_c, support_count)
from ._sim_settings import SimSettings
from ._grasp_world import GraspWorld, place_hand


@dataclass(frozen=True)
class EndMeasures:
    """Kim's measures of a trial's end state: lifted, B, C, the supporting links, the object's
    deviation in the hand (m, rad) and the hand-object contacts (object frame)."""

    lifted: bool
    measure_b: float
    measure_c: float
    n_contact_links: int
    n_area_links: int
    position_deviation_m: float
    rotation_deviation_rad: float
    contacts: ContactSet


@dataclass(frozen=True)
class GraspOutcome(EndMeasures):
    """The result of one simulated grasp: its end measures (EndMeasures: measure_b is Kim
    measure B (1, 0.5 or 0), measure_c Kim measure C in [0, 1], the mean of the position and
    orientation scores (eq. 2) of the final deviation (eq. 3)), then its trajectory: times_s
    (M,) and T_hand_object (M, 4, 4), the object pose in the hand (TCP) frame.
    """

    times_s: np.ndarray
    T_hand_object: np.ndarray
    hold: HoldDiagnostics
    close_time_s: float
    sim_time_s: float
    wall_time_s: float
    settings: SimSettings


class _Trial:
    """What a trial records while the controller runs: the object's trajectory in the hand
    (from its start pose T_ref, COM com_ref) and the hold samples; it tells the lift to stop
    once the object has dropped out of the hand."""

    def __init__(self, world: GraspWorld, ctl: GraspController) -> None:
        self.world, self.ctl = world, ctl
        self.probe: GraspProbe = world.probe
        d = world.data
        self.T_ref, self.com_ref = self.probe.T_hand_object(d), self.probe.com_in_hand(d)
        self.times, self.traj = [0.0], [self.T_ref]
        self.hold = HoldSampler()

    def record(self) -> bool:
        """Take a trajectory sample when the record period has passed; whether it did."""
        if not self.ctl.crossed(self.ctl.settings.record_every):
            return False
        self.times.append(self.ctl.t_s)
        self.traj.append(self.probe.T_hand_object(self.world.data))
        return True

    def watch_lift(self, schedule: LiftSchedule) -> bool:
        """After a period of lift/hold/shake: record; sample the hold; True once dropped."""
        s, d = self.ctl.settings, self.world.data
        if self.record() and np.linalg.norm(self.probe.com_in_hand(d) - self.com_ref) > s.drop_distance_m:
            return True
        if schedule.holding(self.ctl.t_s) and self.ctl.crossed(s.hold_sample_every):
            self.hold.add(self.probe.contacts(self.world.model, d, True)[0])
        return False


def simulate_grasp(world: GraspWorld, T_object_hand: np.ndarray, *, seed: int | None = None,
                   shake: bool = False, settings: SimSettings = SimSettings(),
                   preshape: np.ndarray | None = None) -> GraspOutcome:
    """Simulate one grasp from the pre-grasp T_object_hand (4, 4; TCP in the object frame).

    Kim §III-A: close with v = v0 (1 - τ/τm) per drive (eq. 1) until every drive stalls or
    close_max_s; lift along a trapezoid while the fingers keep squeezing; hold (BLEM
    diagnostics); optionally shake. seed : direction of the shake (None: vertical). The same
    world, pose, settings and seed give the same outcome.
    """
    wall0 = time.perf_counter()
    place_hand(world, T_object_hand, preshape, settings)
    ctl = GraspController(world.model, world.data, world.drives, world.carrier_actuators, settings)
    trial = _Trial(world, ctl)
    close_time = ctl.close(trial.record)
    schedule = LiftSchedule(ctl.t_s, settings, shake_direction(seed), shake)
    dropped = ctl.lift(schedule, lambda: trial.watch_lift(schedule))
    return _outcome(world, trial, dropped, close_time, wall0)




def end_measures(world: GraspWorld, model, data, T_ref: np.ndarray, com_ref: np.ndarray,
                 dropped: bool, settings: SimSettings) -> EndMeasures:
    """The measures of the state in data (after a forward pass) of a trial in world whose
    object started at T_ref (4, 4) with COM com_ref (3,) in the TCP frame (m); model : the
    trial's MjModel (world.model, or a copy with the trial's mount pose)."""
    s, probe = settings, world.probe
    contacts, on_table = probe.contacts(model, data, True)
    n_links, n_area = support_count(contacts, s)
    lifted = (not dropped and not on_table and n_links >= 1
              and data.xipos[world.object_body][2] > world.T_world_object[2, 3] + 0.5 * s.lift_height_m)
    dp, dR = deviation(com_ref, probe.com_in_hand(data), T_ref, probe.T_hand_object(data))
    return EndMeasures(bool(lifted), measure_b(n_links, n_area, lifted), measure_c(dp, dR, lifted, s),
                       n_links, n_area, dp, dR, contacts)


def _outcome(world: GraspWorld, trial: _Trial, dropped: bool, close_time_s: float,
             wall0: float) -> GraspOutcome:
    """The measures of the trial's end state: contacts, lifted, B, C, the hold diagnostics;
    wall0 : time.perf_counter() at the start of the trial."""
    s, d, probe = trial.ctl.settings, world.data, trial.probe
    e = end_measures(world, world.model, d, trial.T_ref, trial.com_ref, dropped, s)
    T_end = probe.T_hand_object(d)
    t = trial.ctl.t_s
    if trial.times[-1] != t:
        trial.times.append(t)
        trial.traj.append(T_end)
    return GraspOutcome(
        **{f.name: getattr(e, f.name) for f in fields(EndMeasures)},
        times_s=np.array(trial.times), T_hand_object=np.array(trial.traj),
        hold=trial.hold.diagnostics(), close_time_s=close_time_s, sim_time_s=t,
        wall_time_s=time.perf_counter() - wall0, settings=s)
