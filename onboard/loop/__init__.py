"""The picking loop, one module per concern; PickingLoop orchestrates them.

    _clock.py         StageClock: stage timing against the cell file's budgets
    _planner.py       Planner: frame -> Plan (capture, segment, ask each grasp source, choose);
                      GRASP_SOURCES, the sources every plan asks
    _source.py        the grasp-source seam: GraspSource, Proposal, SourceSetup, FailedGrasps
    _image_search.py  ImageSearch, the first source: parallel-jaw grasps searched in the
                      silhouette image
    _draws.py         validate mode: a grasp drawn across the score levels
    _executor.py      Executor: Plan -> Execution (approach, grip, after-image, lift, judge,
                      place); safe stop on any fault
    _record.py        Plan + Execution -> TrialRecord and TrialImages (pure functions)
    _truth.py         the simulator's ground truth as a port: CellTruth; NO_TRUTH on hardware,
                      SimulatedTruth on the simulated cell
    _types.py         Plan, Execution, LoopState
    _loop.py          PickingLoop
"""
from ._clock import StageClock
from ._draws import LEVELS, LevelDraw, draw_across_levels
from ._executor import Executor
from ._image_search import ImageSearch
from ._loop import PickingLoop
from ._planner import GRASP_SOURCES, Planner
from ._record import trial_images, trial_record
from ._source import FailedGrasps, GraspSource, Proposal, SourceSetup
from ._truth import NO_TRUTH, CellTruth, GraspTruth, NoTruth, ObjectWatch, SimulatedTruth
from ._types import Execution, LoopState, Plan

__all__ = [
    "CellTruth",
    "Execution",
    "Executor",
    "FailedGrasps",
    "GRASP_SOURCES",
    "GraspSource",
    "GraspTruth",
    "ImageSearch",
    "LEVELS",
    "LevelDraw",
    "LoopState",
    "NO_TRUTH",
    "NoTruth",
    "ObjectWatch",
    "PickingLoop",
    "Plan",
    "Planner",
    "Proposal",
    "SimulatedTruth",
    "SourceSetup",
    "StageClock",
    "draw_across_levels",
    "trial_images",
    "trial_record",
]
