"""Building the simulation-ranked grasp database: pre-grasp candidates per object and hand, the
evaluators that simulate them under pose uncertainty (dynamics/, quality/, and kinematic/ for
P(fc)), the parallel and resumable build over local processes or a Ray cluster, the SQLite
writer (one transaction per batch) with the surface sample it keeps per object, and the
demo's database built on first use. ray is imported only when a cluster is asked for.
"""
from ._build import (MAX_EVALUATORS, ON_CHANGE, BuildInputsChanged, BuildSummary, BuildTarget,
                     Evaluator, build_database, changed_inputs, digest)
from ._demo import DEMO_CANDIDATES, DEMO_SAMPLES, DEMO_STABLE_POSES, demo_database_path, ensure_demo_database
from ._candidates import (SOURCE_PRINCIPAL_AXIS, SOURCE_SURFACE_NORMAL, GraspCandidates,
                          pregrasp_candidates)
from ._evaluators import (HandSource, ObjectSource, SimEvaluator, SimEvaluatorFactory,
                          distinct_resting_poses, hand_digest, measures_code_version,
                          object_sources)
from ._writer import SURFACE_POINTS, GraspDatabaseWriter, GraspRecord, surface_points

__all__ = ["DEMO_CANDIDATES", "DEMO_SAMPLES", "DEMO_STABLE_POSES", "MAX_EVALUATORS", "ON_CHANGE",
           "SOURCE_PRINCIPAL_AXIS", "SOURCE_SURFACE_NORMAL", "SURFACE_POINTS", "BuildInputsChanged",
           "BuildSummary", "BuildTarget", "Evaluator", "GraspCandidates", "GraspDatabaseWriter", "GraspRecord",
           "HandSource", "ObjectSource", "SimEvaluator", "SimEvaluatorFactory", "build_database",
           "changed_inputs", "demo_database_path", "distinct_resting_poses", "digest", "ensure_demo_database",
           "hand_digest", "measures_code_version", "object_sources", "pregrasp_candidates",
           "surface_points"]
