"""Offline simulation: MuJoCo worlds, hands and objects, the dynamic grasp simulation (Kim et
al.), pose uncertainty, measure A, and the build of the simulation-ranked grasp database.

mujoco, trimesh, coacd and ray are imported only inside the functions that use them.
"""
from ._build import (MAX_EVALUATORS, ON_CHANGE, BuildInputsChanged, BuildSummary, BuildTarget,
                     Evaluator, build_database, changed_inputs, digest)
from ._candidates import (SOURCE_PRINCIPAL_AXIS, SOURCE_SURFACE_NORMAL, GraspCandidates,
                          pregrasp_candidates)
from ._evaluate import (HandSource, ObjectSource, SimEvaluator, SimEvaluatorFactory, hand_digest,
                        measures_code_version, object_sources)
from ._controller import (ClosingLaw, GraspController, HandDrives, LiftSchedule, hand_drives,
                          hold_servos, shake_direction, trapezoid)
from ._grasp_sim import EndMeasures, GraspOutcome, end_measures, simulate_grasp
from ._native import (CLOSINGS, ClutchServos, MotorCurve, NativeRunner, NativeTrial, clutch_servos,
                      motor_curves, native_closing_spec, native_end_measures)
from ._measures import (ContactSet, GraspProbe, HoldDiagnostics, HoldSampler, area_link,
                        measure_b, measure_c, object_contacts)
from ._sim_settings import SimSettings
from ._world import (HAND_PREFIX, GraspWorld, attach_hand, build_grasp_world, place_hand,
                     start_collisions)
from ._graspdb_writer import GraspDatabaseWriter, GraspRecord
from ._kinematic import ClosedGrasp, ClosingSettings, KinematicCloser, PfcResult
from ._hands import (BUILTIN_HANDS, Drive, HandModel, builtin_hand, load_mjcf_hand, parallel_jaw,
                     three_finger, underactuated)
from ._objects import (BUILTIN_OBJECTS, Decomposition, GraspObject, builtin_object, decompose,
                       load_object, object_mjcf)
from ._tabletop import (ObjectSpec, TabletopScene, build_tabletop_scene, random_specs,
                        support_points, ycb_specs)
from ._views import FIGURE_VIEWS, figure_scene, scene_footprint
from ._uncertainty import (MonteCarloResult, MonteCarloSettings, PoseErrorModel, TrialMeasures,
                           evaluate_batched, evaluate_under_uncertainty, grid_transforms, pfc_grid,
                           probability_of_force_closure, sample_pose_errors)
from ._wrench import contact_wrenches, ferrari_canny

__all__ = [
    # scenes and objects
    "ObjectSpec", "TabletopScene", "build_tabletop_scene", "random_specs", "support_points",
    "ycb_specs", "BUILTIN_OBJECTS", "Decomposition", "GraspObject", "builtin_object",
    "decompose", "load_object", "object_mjcf", "FIGURE_VIEWS", "figure_scene", "scene_footprint",
    # hands and the grasp simulation
    "Drive", "HandModel", "parallel_jaw", "three_finger", "underactuated", "load_mjcf_hand",
    "builtin_hand",
    "GraspWorld", "SimSettings", "GraspOutcome", "ContactSet", "HoldDiagnostics",
    "build_grasp_world", "place_hand", "start_collisions", "simulate_grasp", "attach_hand",
    "HAND_PREFIX",
    # the grasp controller and measures (reused by the simulated cell)
    "HandDrives", "hand_drives", "hold_servos", "ClosingLaw", "GraspController", "LiftSchedule",
    "shake_direction", "trapezoid", "GraspProbe", "HoldSampler", "object_contacts", "area_link",
    "measure_b", "measure_c", "EndMeasures", "end_measures",
    # Kim's closing law as native actuation, trials rolled out in batches
    "CLOSINGS", "MotorCurve", "motor_curves", "native_closing_spec", "ClutchServos",
    "clutch_servos", "NativeRunner", "NativeTrial", "native_end_measures",
    "GraspCandidates", "pregrasp_candidates", "SOURCE_PRINCIPAL_AXIS", "SOURCE_SURFACE_NORMAL",
    # measures, uncertainty, the database
    "contact_wrenches", "ferrari_canny", "MonteCarloResult", "MonteCarloSettings",
    "PoseErrorModel", "TrialMeasures", "evaluate_under_uncertainty", "evaluate_batched", "grid_transforms",
    "pfc_grid", "probability_of_force_closure", "ClosingSettings", "ClosedGrasp",
    "KinematicCloser", "PfcResult", "sample_pose_errors", "BuildSummary",
    "BuildTarget", "Evaluator", "MAX_EVALUATORS", "build_database", "GraspDatabaseWriter",
    "GraspRecord",
    "ON_CHANGE", "BuildInputsChanged", "changed_inputs", "digest", "hand_digest",
    "measures_code_version",
    "BUILTIN_HANDS", "HandSource", "ObjectSource", "SimEvaluator", "SimEvaluatorFactory",
    "object_sources",
]
