"""Pure computation: the image-space antipodal grasp measure and the candidate search.

numpy and numba only; nothing of graspline is imported from here.
"""
import os

# Numba's OpenMP threads spin while they wait for the next parallel region. On a robot PC that
# runs anything beside the loop (camera driver, controller), a spinning thread holds the core
# another one needs: on this project's 2-core machine under load, one 3-object frame's
# planning took 2.8 s with the default and 0.22 s with passive waiting (docs/figures.md,
# "Planning latency"). Set before any parallel kernel runs (libgomp reads it when Numba first
# loads it); a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._checks import ROTATION_TOL, check_pose, check_positive, check_rotation
from ._jit import jit_kernels
from ._graspdb import (SCHEMA_SQL, SCHEMA_VERSION, GraspDatabase, GraspDatabaseError,
                       GraspTable, ObjectShape, from_blob, to_blob)
from ._measure import (MEASURES, PreparedSilhouette, drop_off_target, grasp_region_profile,
                       prepare_silhouette, score_candidates)
from ._physical import (DepthParams, DepthView, JawLimits, PhysicalTerms, SideArc,
                        contact_arcs, contact_full_m, mean_patch_radius_m, narrowest_width_m,
                        palm_reach_m, physical_terms, swing_score, why_not_holdable)
from ._search import SAMPLERS, GraspSet, SearchParams, non_max_suppression, search_grasps
from ._antipodal import AntipodalPairs, antipodal_candidates
from ._normals import contact_normal, disc_weights, normal_field
from ._types import GripperProjection, MeasureParams, Scores

__all__ = [
    "ROTATION_TOL",
    "check_pose",
    "check_positive",
    "check_rotation",
    "jit_kernels",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "GraspDatabase",
    "GraspDatabaseError",
    "GraspTable",
    "ObjectShape",
    "from_blob",
    "to_blob",
    "DepthParams",
    "contact_arcs",
    "contact_full_m",
    "DepthView",
    "GraspSet",
    "JawLimits",
    "MEASURES",
    "PhysicalTerms",
    "SideArc",
    "drop_off_target",
    "narrowest_width_m",
    "mean_patch_radius_m",
    "palm_reach_m",
    "physical_terms",
    "why_not_holdable",
    "GripperProjection",
    "MeasureParams",
    "PreparedSilhouette",
    "Scores",
    "SearchParams",
    "contact_normal",
    "disc_weights",
    "grasp_region_profile",
    "non_max_suppression",
    "normal_field",
    "prepare_silhouette",
    "score_candidates",
    "search_grasps",
    "swing_score",
    "SAMPLERS",
    "AntipodalPairs",
    "antipodal_candidates",
]
