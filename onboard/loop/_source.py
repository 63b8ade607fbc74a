"""The seam for grasp sources: what the planner asks of each one, and what it gives them.

A grasp source proposes its best grasp on one segmented object (a ``Proposal`` with a score
in 0..1), and turns the proposal the planner chose into the ``GraspChoice`` the arm carries
out. The image search (parallel jaw, ``_image_search.py``) is the first; another source is a
module beside it and one entry in the planner's ``GRASP_SOURCES``.
"""
from __future__ import annotations

import collections
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from drivers.camera import RGBDFrame
from scoring import GripperProjection, JawLimits, SearchParams
from vision import ObjectMask, Segmenter, Silhouette

from .._cellfile import CellConfig
from .._types import GraspChoice
from ._clock import StageClock
from ._truth import CellTruth

# A grasp scoring this much is at the top level (the search's own quality threshold, the
# trial reports' top level): more searching could gain little. The deeper second search, the
# tilted approaches and the scene budget each stop at it.
TOP_LEVEL_SCORE = SearchParams().quality_threshold


class FailedGrasps:
    """The last few grasps that failed (position and closing direction, base frame): a cell
    must not retry a grasp that just failed, whichever source proposes it again."""

    def __init__(self, keep: int = 5) -> None:
        self._failed: collections.deque = collections.deque(maxlen=keep)

    def __bool__(self) -> bool:
        return bool(self._failed)

    def remember(self, T_base_tcp: np.ndarray) -> None:
        """Keep a failed grasp's position and closing direction for the next cycles."""
        self._failed.append((T_base_tcp[:3, 3].copy(), T_base_tcp[:3, 0].copy()))

    def near(self, T_base_tcp: np.ndarray) -> bool:
        """Whether a grasp is within 10 mm (in the table's plane) and 15 degrees (closing
        direction, either way) of one that failed."""
        return any(np.linalg.norm(T_base_tcp[:2, 3] - p[:2]) < 0.010
                   and abs(float(T_base_tcp[:3, 0] @ d)) > math.cos(math.radians(15))
                   for p, d in self._failed)


@dataclass(frozen=True)
class SourceSetup:
    """What a grasp source is built with: the cell file, the fingers as the scorer sees them
    (projection in pixels of the silhouette, jaw in metres), the loop's random generator (one
    stream for the whole loop, so a seed repeats a run), the segmenter (its support plane),
    the ground-truth port, the failed grasps not to retry, and the object recogniser the
    database source asks (frame, mask -> Recognition; None: the simulated cell's ground
    truth where there is one)."""

    config: CellConfig
    projection: GripperProjection
    jaw: JawLimits
    rng: np.random.Generator
    segmenter: Segmenter | None
    truth: CellTruth
    failed: FailedGrasps = field(default_factory=FailedGrasps)
    recogniser: Callable | None = None


@dataclass(frozen=True)
class Proposal:
    """A source's best grasp on one object.

    score : 0..1; mask_index : the object's mask; source : the source that proposed it (it
    turns the proposal into a choice); held_down_by : what keeps the score low, as text
    (", Tan 0.95, held down by ..."), for the no-grasp message; sil : the silhouette it was
    found on (image-space sources), kept with the trial; detail : the source's own data.
    """

    score: float
    mask_index: int
    source: GraspSource
    held_down_by: str = ""
    sil: Silhouette | None = None
    detail: object = None


@runtime_checkable
class GraspSource(Protocol):
    """One way of finding grasps on a segmented object. A source may also set
    ``reports_fallbacks = True`` (the database does): then each object it says it cannot
    serve goes into the trial's note with what stood in for it, and is logged."""

    name: str
    config: CellConfig

    def propose(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                clock: StageClock) -> Proposal | str | None:
        """The best grasp on object i (masks[i], the others its neighbours); a string saying
        why when the gripper cannot hold it at all; None when this source has no grasp."""
        ...

    def choose(self, proposal: Proposal, frame: RGBDFrame, masks: list[ObjectMask],
               clock: StageClock, *, validate: bool) -> tuple[GraspChoice, int]:
        """The grasp to carry out from this source's proposal, and its score level (0..4)
        when validate draws one across the levels, else -1."""
        ...
