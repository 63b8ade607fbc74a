"""Settings of the dynamic grasp simulation: solver, controller periods, lift/hold/shake, measure limits.

Why each solver value is what it is: see the module docstring of _grasp_world (the compiled world's
options) and the comments below.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scoring import check_positive


@dataclass(frozen=True)
class SimSettings:
    """Durations (s), lift and shake (m, Hz), limits of Kim measure C and solver options."""

    timestep_s: float = 0.003
    impratio: float = 10.0
    # closing ends earlier once every drive stalls (Kim §III-A); a BH8 finger past its
    # breakaway keeps curling its distal link until this cap, so the cap bounds most trials
    close_max_s: float = 0.6
    stall_torque_fraction: float = 0.95  # a drive at this fraction of τm has (nearly) stopped
    lift_height_m: float = 0.06     # above measure C's 5 cm: an object left behind scores 0
    lift_duration_s: float = 0.4
    lift_ramp_s: float = 0.1        # acceleration and deceleration time of the trapezoid
    hold_s: float = 0.2             # BLEM diagnostics are taken over the hold
    hold_sample_every: int = 4      # steps between BLEM samples (83 Hz at 3 ms)
    shake_s: float = 0.3
    shake_amplitude_m: float = 0.01
    shake_frequency_hz: float = 5.0
    deviation_limit_m: float = 0.05             # Kim §III-B, L for position
    deviation_limit_rad: float = math.radians(30.0)  # L for orientation
    area_contact_min_m: float = 0.002  # spread (RMS, across the line) of a link's contact points
    area_contact_counts_two: bool = True
    record_every: int = 10          # steps between samples of the recorded trajectory
    # Period of the controller (Kim eq. 1 and the lift profile), rounded to whole steps. The
    # speed law's torque rises with time constants of 30 ms and more (τm over servo stiffness
    # times v0), so 166 Hz follows it, and MuJoCo runs two 3 ms steps per Python call. Set in
    # seconds so that halving the timestep leaves the controller as it was.
    control_period_s: float = 0.006
    drop_distance_m: float = 0.15   # object COM this far from the TCP: dropped, stop early

    def __post_init__(self) -> None:
        for name in ("timestep_s", "impratio", "close_max_s", "control_period_s", "lift_duration_s",
                     "deviation_limit_m", "deviation_limit_rad", "drop_distance_m"):
            check_positive(getattr(self, name), name, "SimSettings")
        if not 0 < self.lift_ramp_s <= 0.5 * self.lift_duration_s:
            raise ValueError(f"SimSettings: lift_ramp_s must be in (0, lift_duration_s / 2], "
                             f"got {self.lift_ramp_s!r}")
        if self.record_every < 1 or self.hold_sample_every < 1:
            raise ValueError(f"SimSettings: record_every and hold_sample_every must be >= 1, got "
                             f"{self.record_every!r} and {self.hold_sample_every!r}")
