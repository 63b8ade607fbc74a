"""Offline simulation: MuJoCo worlds, hands and objects, and the dynamic grasp simulation (Kim et al.).

mujoco and trimesh are imported only inside the functions that use them.
"""
from ._candidates import SOURCE_PRINCIPAL_AXIS, SOURCE_SURFACE_NORMAL, GraspCandidates, pregrasp_candidates
from ._frames import frame_from_approach, invert, matrix_to_quat, pose, quat_to_matrix, rotation_angle
from ._grasp_sim import (ContactSet, GraspOutcome, GraspWorld, HoldDiagnostics, SimSettings,
                         build_grasp_world, place_hand, simulate_grasp, start_collisions)
from ._hands import Drive, HandModel, load_mjcf_hand, parallel_jaw, three_finger, underactuated
from ._tabletop import ObjectSpec, TabletopScene, build_tabletop_scene, random_specs, support_points, ycb_specs

__all__ = ["ObjectSpec", "TabletopScene", "build_tabletop_scene", "random_specs", "ycb_specs",
           "support_points",
           "Drive", "HandModel", "parallel_jaw", "three_finger", "underactuated", "load_mjcf_hand",
           "GraspWorld", "SimSettings", "GraspOutcome", "ContactSet", "HoldDiagnostics",
           "build_grasp_world", "place_hand", "start_collisions", "simulate_grasp",
           "GraspCandidates", "pregrasp_candidates", "SOURCE_PRINCIPAL_AXIS", "SOURCE_SURFACE_NORMAL",
           "pose", "invert", "rotation_angle", "quat_to_matrix", "matrix_to_quat", "frame_from_approach"]
