"""Offline simulation: MuJoCo worlds, hands and objects (step 4 grows the grasp simulation).

mujoco and trimesh are imported only inside the functions that use them.
"""
from ._build import BuildSummary, BuildTarget, Evaluator, build_database
from ._graspdb_writer import GraspDatabaseWriter, GraspRecord
from ._objects import (BUILTIN_OBJECTS, Decomposition, GraspObject, builtin_object, decompose,
                       load_object, object_mjcf)
from ._tabletop import ObjectSpec, TabletopScene, build_tabletop_scene, random_specs, ycb_specs
from ._uncertainty import (MonteCarloResult, MonteCarloSettings, PoseErrorModel, TrialMeasures,
                           evaluate_under_uncertainty, grid_transforms, pfc_grid,
                           probability_of_force_closure, sample_pose_errors)
from ._wrench import contact_wrenches, ferrari_canny

__all__ = ["BUILTIN_OBJECTS", "BuildSummary", "BuildTarget", "Decomposition", "Evaluator",
           "build_database", "GraspDatabaseWriter", "GraspObject",
           "GraspRecord", "MonteCarloResult", "MonteCarloSettings", "ObjectSpec",
           "PoseErrorModel", "TrialMeasures", "evaluate_under_uncertainty", "grid_transforms",
           "pfc_grid", "probability_of_force_closure", "sample_pose_errors", "builtin_object", "decompose", "load_object", "object_mjcf", "TabletopScene", "build_tabletop_scene", "contact_wrenches",
           "ferrari_canny", "random_specs", "ycb_specs"]
