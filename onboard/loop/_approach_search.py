"""Tilted approaches, an optional grasp source ("approach_search"): a tall object's points
projected along approach axes tilted from straight down (Tan et al.'s cross-section remark:
the silhouette along any approach is a plane image the same measure scores), each projection
searched with the image search's measure, approaches whose hand would meet the support
dropped, the best proposed. The cell file's ``approaches`` section turns it on
(docs/cell-file.md#approach-axes); the top-down image search still runs beside it and the
planner takes the higher score."""
from __future__ import annotations

import collections
import dataclasses
import logging
import math
import time

import numpy as np

from drivers.camera import RGBDFrame
from scoring import SearchParams, search_grasps
from vision import (ObjectMask, Silhouette, SupportPlane, axial_pieces, neighbours, silhouette,
                    touching)

from .._cellfile import ApproachesConfig, CellConfig
from .._types import GraspChoice
from ._clock import StageClock
from ._features import limit_text
from ._image_search import ImageSearch, silhouette_margin_m
from ._source import TOP_LEVEL_SCORE, Proposal, SourceSetup

# Share of an object's points above which its top is taken (a flying pixel must not make a
# flat object tall), as the silhouette takes its first point along the approach.
TOP_PERCENTILE = 98.0
# Distinct grasps each tilted search keeps: more than the image search's top_k, since the
# closing-slope and hand checks then pass over some of them.
TILTED_TOP_K = 20
# The approach source's own random stream (from the cell's scoring seed and this tag): with
# it, turning the section on leaves the top-down search's draws, hence its grasps, unchanged.
_STREAM_TAG = 24
# The last searches' timings kept (ApproachSearch.timings)
TIMINGS_KEPT = 10_000
# asked about an object only while the straight-down search found no top-level grasp there
ASK_BELOW = TOP_LEVEL_SCORE
log = logging.getLogger("graspline.loop")


@dataclasses.dataclass(frozen=True)
class ApproachTiming:
    """What one tall object's tilted search cost: the object's mask, the approaches
    projected and searched, and the seconds in all (silhouettes, screens, full searches)."""

    mask_index: int
    n_approaches: int
    seconds: float


@dataclasses.dataclass(frozen=True)
class _Searched:
    """One approach searched: the score of its best grasp that passes the checks (0 if
    none), the silhouette, that grasp's index in ``found`` (None if none), the grasps, and
    the measure's keyword arguments they were scored with."""

    score: float
    sil: Silhouette
    j: int | None
    found: object
    kw: dict


def approach_axes(tilts_deg: list[float], azimuths: int,
                  max_tilt_deg: float) -> list[tuple[float, float, np.ndarray]]:
    """(tilt, azimuth in degrees, base-frame unit approach) of each tilted approach
    a = (sin t cos phi, sin t sin phi, -cos t) the arm reaches (t <= max_tilt_deg)."""
    out = []
    for t in tilts_deg:
        if t > max_tilt_deg:
            continue
        for k in range(azimuths):
            phi = 360.0 * k / azimuths
            tr, pr = math.radians(t), math.radians(phi)
            out.append((float(t), phi, np.array([math.sin(tr) * math.cos(pr),
                                                   math.sin(tr) * math.sin(pr), -math.cos(tr)])))
    return out


def hand_corners_tcp(*, open_width_m: float, finger_width_m: float, finger_thickness_m: float,
                     finger_length_m: float, tcp_to_tip_m: float, palm_m: tuple[float, float],
                     hand_length_m: float) -> np.ndarray:
    """(16, 3) corners (TCP frame, metres: x closing, y across the fingers, z the approach) of
    two boxes that hold the open hand: the fingers with their bodies from the fingertips to
    the finger roots, and the palm (its width and length; NaN: the fingers' band) from the
    roots hand_length_m back along the approach."""
    tip = tcp_to_tip_m
    root = tip - finger_length_m
    fx = open_width_m / 2.0 + finger_thickness_m
    fy = finger_width_m / 2.0
    pw, pl = palm_m
    px = fx if math.isnan(pl) else pl / 2.0
    py = fy if math.isnan(pw) else pw / 2.0
    boxes = ((fx, fy, root, tip), (px, py, root - hand_length_m, root))
    return np.array([(sx * x, sy * y, z) for x, y, z0, z1 in boxes
                     for sx in (-1, 1) for sy in (-1, 1) for z in (z0, z1)], np.float64)


def hand_clear(T_base_tcp: np.ndarray, corners_tcp: np.ndarray, pregrasp_m: float,
               support_normal: np.ndarray, support_offset_m: float, clearance_m: float) -> bool:
    """Whether the hand's boxes stay clearance_m above the support plane (base frame:
    normal . p + offset = height) at the grasp and at the pre-grasp, pregrasp_m back along
    the approach."""
    R, p = T_base_tcp[:3, :3], T_base_tcp[:3, 3]
    pts = corners_tcp @ R.T + p
    pre = pts - pregrasp_m * R[:, 2]
    low = min(float(np.min(pts @ support_normal)), float(np.min(pre @ support_normal)))
    return low + support_offset_m >= clearance_m


class ApproachSearch:
    """Grasps found along tilted approaches on tall objects (source "approach_search"),
    searched and scored by an ImageSearch of its own through its public methods."""

    name = "approach_search"
    # the planner asks it about an object only while the straight-down search found less
    # there: above it a tilted grasp could gain little, at 11 ms an approach (docs/picking-cell.md)
    only_below = ASK_BELOW

    def __init__(self, setup: SourceSetup) -> None:
        if setup.config.approaches is None:
            raise ValueError("approach_search needs the cell file's approaches section")
        self._config = setup.config
        self.settings: ApproachesConfig = setup.config.approaches
        rng = np.random.default_rng([setup.config.scoring.seed, _STREAM_TAG])
        self._image = ImageSearch(dataclasses.replace(setup, rng=rng))
        self._rng = rng
        self._segmenter = setup.segmenter
        self._failed = setup.failed
        s, g = self.settings, self.config.gripper
        self.axes = approach_axes(s.tilts_deg, s.azimuths, s.max_tilt_deg)
        self._corners = hand_corners_tcp(
            open_width_m=g.open_width_m, finger_width_m=g.finger_width_m,
            finger_thickness_m=g.finger_thickness_m, finger_length_m=g.finger_length_m,
            tcp_to_tip_m=g.tcp_to_tip_m, palm_m=g.palm_m(), hand_length_m=s.hand_length_m)
        # one round of screen_candidates, no refinement: enough to rank the approaches
        self._screen = SearchParams(batch=s.screen_candidates,
                                    max_candidates=s.screen_candidates, refine_rounds=0)
        # one per tall object searched, for benchmarks; bounded, for a cell that runs for days
        self.timings: collections.deque[ApproachTiming] = collections.deque(maxlen=TIMINGS_KEPT)

    @property
    def config(self) -> CellConfig:
        """The cell file the source plans with."""
        return self._config

    @config.setter
    def config(self, config: CellConfig) -> None:
        # an experiment may change the scoring between cycles: the inner image search too
        self._config = config
        self._image.config = config

    # ------------------------------------------------------------ which objects
    def object_height_m(self, frame: RGBDFrame, mask: ObjectMask,
                        plane: SupportPlane) -> float:
        """How high the object's top stands over the support, metres (the TOP_PERCENTILE of
        its pixels' heights); 0.0 for a mask without a depth reading."""
        rows, cols = np.nonzero(mask.mask)
        d = frame.depth_m[rows, cols]
        ok = np.isfinite(d) & (d > 0)
        if not ok.any():
            return 0.0
        pts = frame.intrinsics.deproject_pixels(cols[ok], rows[ok], d[ok])
        return float(np.percentile(plane.height_m(pts), TOP_PERCENTILE))

    # ------------------------------------------------------------ the source
    def silhouette(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                   approach: np.ndarray) -> Silhouette:
        """Object i's silhouette along approach (base frame) with the fingertips the image
        search's first insertion past its first point along it (at most the pads' length),
        its neighbours as obstacles."""
        s, g = self.config.scoring, self.config.gripper
        attached = touching(masks, i) if s.join_touching else None
        return silhouette(frame, masks[i], approach=approach,
                          insertion_depth_m=self._image.insertions()[0],
                          metres_per_px=s.metres_per_px,
                          margin_m=silhouette_margin_m(self.config, self._image.jaw),
                          obstacles=neighbours(masks, i), support=self._plane(),
                          clearance_m=s.clearance_m,
                          attached=attached, attached_max_width_m=g.open_width_m,
                          axial=lambda: axial_pieces(masks, i))

    def _plane(self) -> SupportPlane | None:
        """The support plane the segmenter fitted to the last frame, if any."""
        return getattr(self._segmenter, "last_plane", None)

    def propose(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                clock: StageClock) -> Proposal | None:
        """The best grasp on object i over the tilted approaches whose hand stays clear of
        the support; None for an object under min_height_m, without a support plane, or
        without a grasp along any approach (the top-down search speaks for it then).
        Every approach's projection is screened with screen_candidates candidates; the
        full_searches best then get the image search's whole search (its SearchParams)."""
        plane = self._plane()
        if plane is None or not self.axes:
            return None
        if self.object_height_m(frame, masks[i], plane) < self.settings.min_height_m:
            return None
        start = time.perf_counter()
        screened = []
        for k, (_, _, a) in enumerate(self.axes):
            found = self._search(frame, masks, i, a, self._screen, clock)
            if found is not None and found.j is not None:
                screened.append((found.score, k, found.sil))
        best = None
        for _, k, sil in sorted(screened, key=lambda e: -e[0])[:self.settings.full_searches]:
            found = self._search(frame, masks, i, self.axes[k][2], SearchParams(), clock, sil=sil)
            if found.j is not None and (best is None or found.score > best[0].score):
                best = (found, k)
        self.timings.append(ApproachTiming(i, len(self.axes), time.perf_counter() - start))
        if best is None:
            return None
        found, k = best
        tilt, azimuth, _ = self.axes[k]
        return Proposal(found.score, i, self, limit_text(found.found.scores, found.j),
                        found.sil, (found.found, found.j, found.kw, tilt, azimuth))

    def _search(self, frame: RGBDFrame, masks: list[ObjectMask], i: int, a: np.ndarray,
                params: SearchParams, clock: StageClock, *,
                sil: Silhouette | None = None) -> _Searched | None:
        """Object i searched along approach a (base frame) with params; None without a
        silhouette. sil : the approach's silhouette when already made."""
        if sil is None:
            with clock.stage("silhouette"):
                try:
                    sil = self.silhouette(frame, masks, i, a)
                except ValueError as exc:
                    log.info("object %d, approach %s: no silhouette (%s)", i, a.round(3), exc)
                    return None
        if not sil.target.any():
            return None
        with clock.stage("search"):
            kw = self._image.measure_kw(frame, masks[i], sil)
            found = search_grasps(sil.image, self._image.projection, target=sil.target,
                                  top_k=max(TILTED_TOP_K, self.config.scoring.top_k),
                                  settings=params, seed=int(self._rng.integers(2**31)), **kw)
        if found.no_grasp or len(found) == 0:
            return _Searched(0.0, sil, None, found, kw)
        j = self._first_clear(sil, found, *self._plane().in_base(frame.T_base_camera))
        return _Searched(0.0 if j is None else float(found.scores.score[j]), sil, j, found, kw)

    def _first_clear(self, sil: Silhouette, found, n_b: np.ndarray, off_b: float) -> int | None:
        """Index of the best grasp in ``found`` that closes within max_closing_slope_deg of
        the support's plane, whose hand stays clear of the support at the grasp and the
        pre-grasp, and that is not one of the last failed grasps."""
        g, s = self.config.gripper, self.settings
        T = sil.tcp_poses(found.x, found.y, found.theta, tcp_to_tip_m=g.tcp_to_tip_m)
        max_rise = math.sin(math.radians(s.max_closing_slope_deg)) + 1e-9
        for j in range(len(found)):
            if (abs(float(T[j][:3, 0] @ n_b)) <= max_rise
                    and hand_clear(T[j], self._corners, self.config.arm.pregrasp_m, n_b, off_b,
                                   s.clearance_m) and not self._failed.near(T[j])):
                return j
        return None

    def choose(self, proposal: Proposal, frame: RGBDFrame, masks: list[ObjectMask],
               clock: StageClock, *, validate: bool) -> tuple[GraspChoice, int]:
        """The proposed grasp with its tilted T_base_tcp (or, with validate, one drawn across
        the score levels on the same silhouette), as the image search turns it into a choice;
        its features add the approach's tilt and azimuth (degrees)."""
        found, j, kw, tilt, azimuth = proposal.detail
        inner = dataclasses.replace(proposal, source=self._image, detail=(found, j, kw))
        choice, level = self._image.choose(inner, frame, masks, clock, validate=validate)
        feats = dict(choice.features, approach_tilt_deg=tilt, approach_azimuth_deg=azimuth)
        return dataclasses.replace(choice, source=self.name, features=feats), level


def approach_source(setup: SourceSetup) -> ApproachSearch:
    """The approach source of a loop's SourceSetup (the cell file's approaches section)."""
    return ApproachSearch(setup)
