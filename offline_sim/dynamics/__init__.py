"""The dynamic grasp simulation of Kim et al. 2013 in MuJoCo: the compiled grasp world (table,
one object, a hand on a lifting carrier), the torque-limited closing controller with lift, hold
and shake, measures B and C with the BLEM hold diagnostics, the same closing law as native
motor-curve actuators rolled out in batches, and the solver settings. mujoco is imported only
inside the functions that use it.
"""
from ._controller import (GraspController, LiftSchedule, hand_drives, hold_servos, shake_direction,
                          trapezoid)
from ._grasp_sim import GraspOutcome, simulate_grasp
from ._grasp_world import (HAND_PREFIX, GraspWorld, attach_hand, build_grasp_world, hand_collides,
                           place_hand, start_collisions)
from ._measures import GraspProbe, area_link
from ._native import CLOSINGS, NativeRunner, motor_curves, native_end_measures
from ._sim_settings import SimSettings

__all__ = ["CLOSINGS", "GraspController", "GraspOutcome", "GraspProbe", "GraspWorld", "HAND_PREFIX",
           "LiftSchedule", "NativeRunner", "SimSettings", "area_link", "attach_hand",
           "build_grasp_world", "hand_collides", "hand_drives", "hold_servos", "motor_curves",
           "native_end_measures", "place_hand", "shake_direction", "simulate_grasp",
           "start_collisions", "trapezoid"]
