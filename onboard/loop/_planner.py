"""Planning: a frame captured, segmented, every grasp source asked about every object in view,
and the best proposal chosen; a NoGrasp that says why when there is none."""
from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from drivers.arm import ArmController
from drivers.camera import Camera, CameraError, RGBDFrame
from vision import ObjectMask, Segmenter

from .._cellfile import CellConfig
from .._types import NoGrasp
from ._clock import StageClock
from ._approach_search import approach_source
from ._database_source import database_source
from ._image_search import ImageSearch
from ._promise import promise_order
from ._source import TOP_LEVEL_SCORE, GraspSource, Proposal, SourceSetup
from ._truth import CellTruth
from ._types import LoopState, Plan

# The grasp sources every plan asks, in this order (the first of equal scores wins): each
# is built with a SourceSetup. A new source is a module beside _image_search.py and one
# entry here, or in OPTIONAL_SOURCES when a cell file section turns it on.
GRASP_SOURCES = (ImageSearch,)
# Sources a cell file turns on by its own section: (the CellConfig field, the factory).
OPTIONAL_SOURCES = (("database", database_source), ("approaches", approach_source))

# With scoring.scene_budget, a plan stops at the first object with a top-level grasp
SCENE_GOOD_ENOUGH = TOP_LEVEL_SCORE
# Under this best score in view the planner also asks the segmenter's finer cut: a grasp more
# likely dropped than held (the score's levels 0.4-0.6 hold about half their grasps) is often
# on a piece of an object the first cut joined with another, e.g. a mug leaning on the box
# that rests on it (docs/figures.md, "A cut finer where the best grasp is poor")
FINER_CUT_BELOW = 0.5
log = logging.getLogger("graspline.loop")


def grasp_sources(config: CellConfig) -> tuple[Callable[[SourceSetup], GraspSource], ...]:
    """The sources a cell's plans ask: GRASP_SOURCES, then each optional source whose cell
    file section is set (the database for a multi-finger hand). Without those sections the
    list is GRASP_SOURCES alone and the loop plans as it always did."""
    return GRASP_SOURCES + tuple(make for key, make in OPTIONAL_SOURCES
                                 if getattr(config, key) is not None)


class Planner:
    """Frame -> Plan. mode : "best" (the top grasp) or "validate" (grasps drawn across the
    score levels)."""

    def __init__(self, config: CellConfig, *, camera: Camera, segmenter: Segmenter,
                 arm: ArmController | None, home: np.ndarray, state: LoopState,
                 truth: CellTruth, sources: list[GraspSource], mode: str = "best") -> None:
        self.config = config
        self.camera, self.segmenter, self.arm = camera, segmenter, arm
        self.home = home
        self.state = state
        self.truth = truth
        self.sources = sources
        self.mode = mode
        # how the last cycle ended, for the simulated cell's operator: True nothing holdable
        # in view, False a grasp chosen, None neither (a camera fault, nothing segmented)
        self._nothing_holdable: bool | None = None
        # the mask indices the last plan asked the sources about, in the order asked (all the
        # targets without scoring.scene_budget; with it, up to the first good-enough grasp)
        self.last_asked: list[int] = []

    def plan(self, clock: StageClock, object_label: str | None = None,
             timeout_s: float | None = None) -> Plan:
        """Capture a frame and choose a grasp on it (object_label: on that object only)."""
        self.truth.start_cycle(no_grasp=self._nothing_holdable)
        self._nothing_holdable = None
        self._clear_view()
        with clock.stage("capture"):
            frame, why = self._capture(timeout_s)
        if frame is None:
            return Plan(NoGrasp(why, clock.stage_s))
        if not np.any(np.isfinite(frame.depth_m) & (frame.depth_m > 0)):
            return Plan(NoGrasp("the frame has no depth (every pixel reads 0)", clock.stage_s),
                        frame)
        with clock.stage("segment"):
            try:
                masks = self.segmenter.segment(frame)
            except (ValueError, RuntimeError) as exc:
                return Plan(NoGrasp(f"segmentation failed: {exc}", clock.stage_s), frame)
        if object_label is not None:
            targets = [i for i, m in enumerate(masks) if m.label == object_label]
            if not targets:
                return Plan(NoGrasp(f"no object labelled {object_label!r} in view "
                                    f"({len(masks)} object(s) segmented)", clock.stage_s),
                            frame, masks)
        else:
            targets = list(range(len(masks)))
        if not masks:
            return Plan(NoGrasp("nothing segmented in view", clock.stage_s), frame, masks)
        best, unholdable, fallbacks = self._ask_sources(frame, masks, targets, clock)
        min_score = self.config.scoring.min_score
        first_cut = masks
        # a cell file's min_score over FINER_CUT_BELOW: cut finer wherever no grasp is taken
        if (best is None or best.score < max(FINER_CUT_BELOW, min_score)) \
                and object_label is None:
            masks, best, unholdable, fallbacks = self._finer(frame, masks, best, unholdable,
                                                             fallbacks, clock)
            targets = list(range(len(masks)))
        if best is None or best.score < min_score:
            score = 0.0 if best is None else best.score
            why = "".join(f"; {u}" for u in unholdable)
            if best is not None:
                why = best.held_down_by + why
            self._nothing_holdable = True
            return Plan(NoGrasp(f"no grasp scores at least {min_score:g} on the "
                                f"{len(targets)} object(s) in view (best {score:.2f}{why})",
                                clock.stage_s), frame, masks)
        with clock.stage("choose"):
            choice, level = best.source.choose(best, frame, masks, clock,
                                               validate=self.mode == "validate")
            if masks is not first_cut:
                # logged with the grasp, so that re-scoring it segments as planned
                choice.features[FINER_CUT] = 1.0
            plan = Plan(choice, frame, masks, best.sil, best.mask_index, level,
                        getattr(self.segmenter, "last_plane", None),
                        getattr(best.source, "last_view", None), fallbacks)   # view: the database's only
        self._nothing_holdable = False
        return plan

    def _ask_sources(self, frame: RGBDFrame, masks: list[ObjectMask], targets: list[int],
                     clock: StageClock) -> tuple[Proposal | None, list[str], list[str]]:
        """The best proposal of any source on any target object, why the objects no source
        can hold cannot be held, and the fallbacks: for a source that reports them
        (``reports_fallbacks``, the database), each object it could not serve, why, and what
        stands in for it (the other sources, or no grasp), each also logged.

        A source with an ``only_below`` score (the tilted approaches) is asked about an
        object only while the sources before it found less there.

        With scoring.scene_budget, in mode "best", the objects are asked in order of promise
        (promise_order) and the asking stops at the first proposal scoring
        SCENE_GOOD_ENOUGH; validate mode asks every object, so that its draws across the
        score levels are not drawn from the easiest objects only."""
        best: Proposal | None = None
        unholdable: list[str] = []
        fallbacks: list[str] = []
        budget = self.config.scoring.scene_budget and self.mode == "best"
        self.last_asked = []
        if budget and len(targets) > 1:
            # the masks' cues, timed with the segmentation they are read from
            with clock.stage("segment"):
                targets = promise_order(frame, masks, targets, self.config.gripper.open_width_m)
        for i in targets:
            if budget and best is not None and best.score >= SCENE_GOOD_ENOUGH:
                break
            self.last_asked.append(i)
            here = 0.0  # the best score an earlier source found on object i
            for source in self.sources:
                below = getattr(source, "only_below", None)
                if below is not None and here >= below:
                    continue  # a source that only adds where the others found less (tilts)
                found = source.propose(frame, masks, i, clock)
                if isinstance(found, Proposal):
                    here = max(here, found.score)
                if isinstance(found, str):
                    unholdable.append(found)
                    if getattr(source, "reports_fallbacks", False):
                        fallbacks.append(self._fallback(source, found))
                elif found is not None and (best is None or found.score > best.score):
                    best = found
        return best, unholdable, fallbacks

    def _finer(self, frame: RGBDFrame, masks: list[ObjectMask], best: Proposal | None,
               unholdable: list[str], fallbacks: list[str], clock: StageClock):
        """Where no object in view had a grasp scoring FINER_CUT_BELOW (or the cell file's
        min_score, if higher): the segmenter's finer cut of the frame (segment_finer), and
        the sources asked about its new pieces, the masks the first cut did not have. Two
        objects that touch at one height come out of the first cut as one mask, often too
        wide for the stroke (docs/figures.md: a bar lying against a lying bottle, a mug
        under a box leaning on it); apart, one of them may be held. (masks, best,
        unholdable, fallbacks): the finer cut's when one of its pieces has a grasp at least
        min_score and over the first cut's best, else those given."""
        with clock.stage("segment"):
            try:
                finer = self.segmenter.segment_finer(frame)
            except (ValueError, RuntimeError) as exc:
                log.warning("the finer segmentation failed: %s", exc)
                return masks, best, unholdable, fallbacks
            pieces = [i for i, m in enumerate(finer) if not _same_as_any(m, masks)]
        if not pieces:
            return masks, best, unholdable, fallbacks
        asked = self.last_asked
        got, why, fell = self._ask_sources(frame, finer, pieces, clock)
        if (got is None or got.score < self.config.scoring.min_score
                or (best is not None and got.score <= best.score)):
            self.last_asked = asked
            return masks, best, unholdable, fallbacks
        log.info("best grasp on the %d object(s) segmented %s; cut finer, %d piece(s), one "
                 "with a grasp scoring %.2f", len(masks),
                 "none" if best is None else f"{best.score:.2f}", len(pieces), got.score)
        return finer, got, why, fell

    def _fallback(self, source: GraspSource, why: str) -> str:
        """One line for an object a source could not serve: why, and what stands in for it
        (the cell's other sources, e.g. the parallel jaw's image search, or no grasp); logged."""
        others = [s.name.replace("_", " ") for s in self.sources if s is not source]
        then = f"falling back to the {' and the '.join(others)}" if others else "no grasp for it"
        line = f"{source.name}: {why}; {then}"
        log.info(line)
        return line

    def _clear_view(self) -> None:
        """Send graspline's arm home before a capture when it is elsewhere (a stopped pick
        can leave the hand over the table, where the segmenter took it for an object)."""
        if self.arm is None or self.state.fault:
            return
        if np.linalg.norm(self.arm.T_base_tcp[:3, 3] - self.home[:3, 3]) > 0.01:
            r = self.arm.move(self.home, self.config.arm.speed_mps)
            if not r.reached:
                log.error("could not send the arm home before the capture: %s", r.message)

    def _capture(self, timeout_s: float | None) -> tuple[RGBDFrame | None, str]:
        """A frame, or (None, why) after the configured retries."""
        cfg = self.config.camera
        why = ""
        for attempt in range(cfg.retries + 1):
            try:
                return self.camera.read(timeout_s or cfg.timeout_s), ""
            except CameraError as exc:
                why = f"camera: {exc}"
                log.warning("capture attempt %d failed: %s", attempt + 1, exc)
        return None, why


FINER_CUT = "finer_cut"  # the feature (1.0) of a grasp planned on the segmenter's finer cut


def planned_on_finer_cut(features: dict[str, float] | None) -> bool:
    """Whether a grasp with these (logged) features was planned on the segmenter's finer cut
    (Planner._finer), so that re-scoring it must segment the same way."""
    return bool((features or {}).get(FINER_CUT, 0.0))


SAME_MASK_IOU = 0.95  # a finer cut's mask this close to one of the first cut's is not new


def _same_as_any(mask: ObjectMask, masks: list[ObjectMask]) -> bool:
    """Whether mask covers nearly the same pixels as one of masks (IoU over SAME_MASK_IOU)."""
    for m in masks:
        inter = np.count_nonzero(mask.mask & m.mask)
        if inter and inter >= SAME_MASK_IOU * np.count_nonzero(mask.mask | m.mask):
            return True
    return False
