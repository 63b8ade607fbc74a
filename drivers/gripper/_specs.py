"""Per-model ranges and unit maps (nominal, from the makers' data sheets; calibration replaces them).

Shared by the drivers and the emulators so that both sides agree on what a count means.
"""
from __future__ import annotations

from ._types import GripperSpec, LinearMap, Range


def _robotiq(model: str, stroke_m: float, speed: tuple[float, float],
             force: tuple[float, float]) -> GripperSpec:
    # Robotiq position counts run 0 (open) .. 255 (closed); the manual's "full close" is 0xFF.
    # Speed and force counts 0..255 map linearly onto the data sheet's ranges.
    return GripperSpec(
        model=model,
        width=Range(0.0, stroke_m, "m"),
        speed=Range(speed[0], speed[1], "m/s"),
        force=Range(force[0], force[1], "N"),
        width_map=LinearMap((stroke_m, 0.0), (0, 255)),
        speed_map=LinearMap(speed, (0, 255)),
        force_map=LinearMap(force, (0, 255)),
    )


ROBOTIQ_2F85 = _robotiq("robotiq2f85", 0.085, (0.020, 0.150), (20.0, 235.0))
ROBOTIQ_2F140 = _robotiq("robotiq2f140", 0.140, (0.030, 0.250), (10.0, 125.0))

# 3-Finger: the aperture spanned by the fingers depends on the grasping mode; these are nominal
# widths at count 0 (open) for each mode, closing to 0 at count 255.
ROBOTIQ_3F_MODE_WIDTH_M = {"basic": 0.155, "pinch": 0.110, "wide": 0.160, "scissor": 0.070}
ROBOTIQ_3F = _robotiq("robotiq3f", 0.160, (0.022, 0.110), (15.0, 60.0))


def robotiq3f_width_map(mode: str) -> LinearMap:
    """The nominal width map of the 3-Finger gripper in a grasping mode."""
    return LinearMap((ROBOTIQ_3F_MODE_WIDTH_M[mode], 0.0), (0, 255))


# Barrett BH8-262: fingers 0 (open) .. 17800 encoder counts (closed), spread 0 .. 3150.
# width_m is the nominal aperture between the opposed finger tips; speed maps to MCV/MOV in
# counts per 10 ms; force maps to the MT (maximum torque) property.
BARRETT_FINGER_MAX = 17800
BARRETT_SPREAD_MAX = 3150
BARRETT = GripperSpec(
    model="barrett",
    width=Range(0.0, 0.200, "m"),
    speed=Range(0.010, 0.100, "m/s"),
    force=Range(5.0, 20.0, "N"),
    width_map=LinearMap((0.200, 0.0), (0, BARRETT_FINGER_MAX)),
    speed_map=LinearMap((0.010, 0.100), (9, 89)),
    force_map=LinearMap((5.0, 20.0), (500, 1500)),
    extra={"spread_max": BARRETT_SPREAD_MAX},
)

SPECS = {s.model: s for s in (ROBOTIQ_2F85, ROBOTIQ_2F140, ROBOTIQ_3F, BARRETT)}
