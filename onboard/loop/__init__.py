"""The picking loop, one module per concern; PickingLoop orchestrates them.

    _clock.py         StageClock: stage timing against the cell file's budgets
    _planner.py       Planner: frame -> Plan (capture, segment, ask each grasp source, choose);
                      GRASP_SOURCES, the sources every plan asks
    _source.py        the grasp-source seam: GraspSource, Proposal, SourceSetup, FailedGrasps
    _image_search.py  ImageSearch, the first source: parallel-jaw grasps searched in the
                      silhouette image
    _db_grasps.py     database grasps placed by the object's pose, filtered against the scene
                      (reach, height-map collision, image consistency), ranked; GraspIndex
    _database_source.py  DatabaseSource, the multi-finger source (the cell file's database
                      section turns it on): recognise, place, filter, propose
    _promise.py       promise_order: the order a scene-level budget (scoring.scene_budget)
                      searches the objects in, from cheap cues of their masks
    _draws.py         validate mode: a grasp drawn across the score levels
    _centring.py      the chosen grasp centred on the object as its depth readings place it
    _readings_clearance.py  the fingers' room beside an object's readings, which scales a
                      grasp searched on the readings alone
    _executor.py      Executor: Plan -> Execution (approach, grip, after-image, lift, judge,
                      place); safe stop on any fault
    _jaw_region.py    jaw_region: the part of a mask the jaw closes on (what the after-image
                      and the simulator's truth judge, when a mask joins touching objects)
    _record.py        Plan + Execution -> TrialRecord and TrialImages (pure functions)
    _truth.py         the simulator's ground truth as a port: CellTruth; NO_TRUTH on hardware,
                      SimulatedTruth on the simulated cell
    _types.py         Plan, Execution, LoopState
    _unseen_stop.py   read_stop: what the planning frame shows under the jaw where its
                      approach stopped (nothing, a run of times: a part on the hand)
    _warm.py          warm start: the planning's Numba kernels made ready on a synthetic scene
                      before the first frame (PickingLoop.warm_up)
    _approach_search.py  tilted approaches on tall objects (optional source "approach_search",
                      the cell file's approaches section)
    _loop.py          PickingLoop
"""
from ._approach_search import (ApproachSearch, ApproachTiming, approach_axes, approach_source,
                               hand_clear, hand_corners_tcp)
from ._centring import MAX_SHIFT_M, Centring, centred_on_readings, pose_as_scored
from ._clock import StageClock
from ._database_source import (DatabaseDetail, DatabaseSource, Recognition, Recogniser,
                               current_measures_version, database_name, database_source,
                               ground_truth_recogniser)
from ._db_grasps import (REJECT_REASONS, DatabaseFilterSettings, FilterResult, GraspIndex,
                         HandVolume, HeightMap, PlacedGrasps, filter_grasps,
                         filter_grasps_reference, height_map, place_grasps)
from ._draws import LEVELS, LevelDraw, RankDraw, draw_across_levels, draw_rank_level
from ._executor import Executor
from ._jaw_region import CLOSING_MARGIN_M, MIN_REGION_PX, closing_band_m, jaw_band_px, jaw_region
from ._image_search import (ImageSearch, ScoredPose, band_beside_walls, deeper_search_wanted,
                            insertion_depths, nearest_mask, pinched_at_widest,
                            planned_on_readings, silhouette_margin_m)
from ._loop import PickingLoop
from ._readings_clearance import (READINGS_CLEARANCE, SCORE_CLEARANCE, camera_pixel_m,
                                  clearance_factor, finger_room_px, scale_by_room)
from ._planner import (FINER_CUT, FINER_CUT_BELOW, GRASP_SOURCES, OPTIONAL_SOURCES,
                       SCENE_GOOD_ENOUGH, Planner, grasp_sources, planned_on_finer_cut)
from ._promise import Promise, promise_order, promises
from ._record import trial_images, trial_record
from ._source import FailedGrasps, GraspSource, Proposal, SourceSetup
from ._truth import NO_TRUTH, CellTruth, GraspTruth, NoTruth, ObjectWatch, SimulatedTruth
from ._types import DatabaseGraspView, Execution, LoopState, Plan
from ._unseen_stop import (STOP_ABOVE_TIP_M, STOP_MARGIN_M, StopReading, jaw_boxes, read_stop,
                           read_stop_boxes, stop_margin_m)

__all__ = [
    "READINGS_CLEARANCE",
    "SCORE_CLEARANCE",
    "camera_pixel_m",
    "clearance_factor",
    "finger_room_px",
    "scale_by_room",
    "read_stop",
    "read_stop_boxes",
    "jaw_boxes",
    "StopReading",
    "STOP_ABOVE_TIP_M",
    "STOP_MARGIN_M",
    "stop_margin_m",
    "band_beside_walls",
    "jaw_region",
    "closing_band_m",
    "CLOSING_MARGIN_M",
    "jaw_band_px",
    "MIN_REGION_PX",
    "Centring",
    "centred_on_readings",
    "MAX_SHIFT_M",
    "pose_as_scored",
    "FINER_CUT",
    "FINER_CUT_BELOW",
    "planned_on_finer_cut",
    "approach_axes",
    "approach_source",
    "ApproachSearch",
    "ApproachTiming",
    "hand_clear",
    "hand_corners_tcp",
    "CellTruth",
    "current_measures_version",
    "database_name",
    "database_source",
    "DatabaseDetail",
    "DatabaseFilterSettings",
    "DatabaseGraspView",
    "DatabaseSource",
    "deeper_search_wanted",
    "pinched_at_widest",
    "planned_on_readings",
    "draw_across_levels",
    "draw_rank_level",
    "Execution",
    "Executor",
    "FailedGrasps",
    "filter_grasps",
    "filter_grasps_reference",
    "FilterResult",
    "GRASP_SOURCES",
    "grasp_sources",
    "GraspIndex",
    "GraspSource",
    "GraspTruth",
    "ground_truth_recogniser",
    "HandVolume",
    "height_map",
    "HeightMap",
    "ImageSearch",
    "insertion_depths",
    "silhouette_margin_m",
    "nearest_mask",
    "LevelDraw",
    "LEVELS",
    "LoopState",
    "NO_TRUTH",
    "NoTruth",
    "ObjectWatch",
    "OPTIONAL_SOURCES",
    "PickingLoop",
    "place_grasps",
    "PlacedGrasps",
    "RankDraw",
    "Plan",
    "Planner",
    "Promise",
    "promise_order",
    "promises",
    "Proposal",
    "Recogniser",
    "Recognition",
    "REJECT_REASONS",
    "SCENE_GOOD_ENOUGH",
    "ScoredPose",
    "SimulatedTruth",
    "SourceSetup",
    "StageClock",
    "trial_images",
    "trial_record",
]
