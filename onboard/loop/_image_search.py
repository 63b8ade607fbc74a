"""The image search, the first grasp source: parallel-jaw grasps searched and scored in the
object's silhouette for a straight-down approach (Tan et al.'s image-space measure, or
graspline's with the depth terms), at one or two fingertip depths past the object's top."""
from __future__ import annotations

import dataclasses
import logging
import math

import cv2
import numpy as np

from drivers.camera import RGBDFrame
from scoring import (DepthParams, JawLimits, Scores, SearchParams, SideArc, contact_arcs,
                     narrowest_width_m, palm_reach_m, score_candidates, search_grasps)
from vision import (ObjectMask, ProjectedObject, Silhouette, axial_pieces, neighbours, seen_width,
                    touching)

from .._cellfile import CellConfig
from .._types import GraspChoice
from ._centring import centred_on_readings
from ._clock import StageClock
from ._draws import draw_across_levels
from ._features import features, limit_text
from ._jaw_region import closing_band_m, jaw_region
from ._readings_clearance import (best_first, camera_pixel_m, candidate_room_m,
                                  room_features, scale_by_room)
from ._source import TOP_LEVEL_SCORE, Proposal, SourceSetup

# the second, deeper search runs only when the first found no top-level grasp: it doubles the
# search time, and above it the first grasp could gain little
DEEPER_SEARCH_BELOW = TOP_LEVEL_SCORE
# ... or when that grasp's pads meet less of the object's side than this (metres; the
# contact term's full overlap for taped pads): with rubber pads such a shallow contact
# scores high, yet it may be a pinch above a lying bottle's axis that the deeper search
# would take at its widest section (docs/scoring.md, "Contact height")
DEEPER_SEARCH_CONTACT_M = DepthParams().full_contact_m
# ... or when its pads end at a rounded side's widest section with less margin under it than
# WIDEST_MARGIN_M (the arc fitted to the side's seen heights, scoring.contact_arcs, centred
# less than this above the fingertips, or under them). The pads' lower edges at the widest
# section hold; 4-6 mm above it they press the section down and in, and taped pads let go
# (docs/scoring.md, "The lying banana"); the camera reads that centre high (the Franka
# hand's bananas: read 0-3 mm over the fingertips, which met them 1.5-3.5 mm above the
# widest section), so a pinch read at the widest has no margin. The deeper search pinches
# the section with the pads' faces, and its best grasp is taken when it scores within
# DEEPER_PREFERRED_WITHIN of the first's.
WIDEST_MARGIN_M = 0.004
DEEPER_PREFERRED_WITHIN = 0.05
# a wall's heights fit an arc too, as short as the camera's blur of its edge and centred high
# over the plane for its length (seen 18-81° from the contact on a taped Franka hand's
# 42 box, bar, plate and mug sides; the bananas' 0-13°: docs/scoring.md)
ROUNDED_ARC_RAD = math.radians(15.0)
# Under this best score, an object whose holes' band beside walls closes the stroke off is
# searched on its readings alone too (ImageSearch._search): a top-level grasp on the
# silhouette with the band needs no other (the band's collision test is the safer one where
# its noisy readings stand out past the wall, docs/scoring.md "A wall's band of holes").
READINGS_SEARCH_BELOW = TOP_LEVEL_SCORE
HOLES_LEFT_OUT = "holes_left_out"  # the feature a grasp searched on the readings alone carries


def deeper_search_wanted(score: float, contact_height_m: float, at_widest: bool = False) -> bool:
    """Whether a second, deeper search should follow a first whose best grasp scores this
    with its pads meeting contact_height_m (metres; NaN: not measured, as for Tan's measure)
    and, with at_widest, ending at a rounded side's widest section (pinched_at_widest)."""
    if score < DEEPER_SEARCH_BELOW or at_widest:
        return True
    return bool(contact_height_m < DEEPER_SEARCH_CONTACT_M)  # False for NaN


def pinched_at_widest(arcs: tuple[SideArc, SideArc]) -> bool:
    """Whether either side a grasp's pads meet is rounded (its arc centred within
    ROUNDED_ARC_RAD of the fingertips' plane, seen from the contact) with its centre less than
    WIDEST_MARGIN_M above the fingertips: the pads' lower edges at or above its widest
    section (scoring.contact_arcs)."""
    return any(math.isfinite(a.centre_above_m) and a.centre_above_m < WIDEST_MARGIN_M
               and math.atan2(a.centre_above_m, a.inward_m) < ROUNDED_ARC_RAD for a in arcs)


log = logging.getLogger("graspline.loop")


def silhouette_margin_m(config: CellConfig, jaw: JawLimits) -> float:
    """The free border a silhouette keeps round its object (metres): room for the open
    fingers (60 % of the opening and 20 mm), and at least as far as the wide palm's check
    reads from a grasp's centre (scoring.palm_reach_m) and a pixel: the Franka hand's palm,
    204 mm along the closing direction, reached past the fingers' border, and a can standing
    there under its end was unseen (a protective stop on a box beside it at 0.97;
    docs/scoring.md). A whole number of pixels: the object's outline then falls on the same
    pixels whatever the border (half a pixel's shift redraws a ragged outline a pixel wider
    on one side, and grasps that cleared it by a pixel collide)."""
    m = config.scoring.metres_per_px
    margin = max(0.6 * config.gripper.open_width_m + 0.02, palm_reach_m(jaw) + m)
    px = margin / m
    return margin if abs(px - round(px)) < 1e-6 else math.ceil(px) * m


def insertion_depths(config: CellConfig) -> list[float]:
    """The fingertip depths past an object's top that the image search tries, metres: the
    configured one, at most the pads' length (the pads meet all of the object above the
    tips), then the deeper one when it is deeper, at most as deep as the fingers reach with
    the palm clearance_m above the top (a lying can is pinched at its widest section, below
    where short pads end). Deeper than the pads are long, the part above the pads faces the
    finger links, set back by the pads' thickness: seen from above an object is solid under
    its surface, so the outermost contact along a grasp line lies in the pads' band, and the
    contact term counts only the pads' overlap (scoring.physical_terms). An overhang the
    camera cannot see (a bowl's rim) would meet the links: the first search stays within the
    pads for it."""
    s, g = config.scoring, config.gripper
    # the palm clears the top by the support's clearance too: the top's noisier readings over
    # the palm check's margin would put the palm on every candidate over the top
    reach = g.finger_length_m - DepthParams().body_margin_m - s.clearance_m
    first = min(s.insertion_depth_m, g.pad_length_m)
    deep = min(s.deep_insertion_m, reach)
    return [first] + ([deep] if deep > first + 1e-9 else [])


def holes_close_stroke(sil: Silhouette, jaw: JawLimits) -> tuple[float, float] | None:
    """(filled, read): the narrowest widths (metres) of the silhouette's target, the sensor's
    holes at its edge filled with its depth, and of its readings alone, where the first is as
    wide as the stroke or wider and the second narrower: the holes are what leaves the
    fingers no room. None otherwise (or without a readings-only target)."""
    if sil.target_read is None:
        return None
    m = sil.metres_per_px
    # the narrowest width is at most the bounding box's narrower side (pixels, as
    # narrowest_width_m counts them): most objects are settled here, before the hull
    _, _, w_px, h_px = cv2.boundingRect(sil.target.view(np.uint8))
    if min(w_px, h_px) * m < jaw.stroke_m:
        return None
    filled = narrowest_width_m(sil.target, m)
    if not filled >= jaw.stroke_m:  # as wide as the open jaw: its fingers land on it
        return None
    read = narrowest_width_m(sil.target_read, m)
    return (filled, read) if read < jaw.stroke_m else None


def widened_text(sil: Silhouette, jaw: JawLimits) -> str:
    """Why no grasp across an object that fits the stroke leaves the fingers room, when the
    sensor's holes at its edge are why (holes_close_stroke; millimetres in the text); empty
    otherwise. The holes' band, and why the score keeps it beside a rounded side:
    docs/scoring.md ("The jaw centred on the readings", "A wall's band of holes")."""
    widths = holes_close_stroke(sil, jaw)
    if widths is None:
        return ""
    filled, read = widths
    return (f"; its silhouette is {filled * 1e3:.0f} mm across at its narrowest, as wide as the "
            f"jaw's {jaw.stroke_m * 1e3:.0f} mm stroke or wider, {read * 1e3:.0f} mm without the "
            f"sensor's holes at its edge (filled with its depth, they widen it): no grasp "
            f"across it leaves the fingers room")


def band_beside_walls(projected: ProjectedObject, sil: Silhouette, jaw: JawLimits) -> bool:
    """Whether the sensor's holes at the object's edge close the stroke off
    (holes_close_stroke) beside sides that are walls (ProjectedObject.sides_are_walls): there
    the filled band lies outside the object (a box 81.5 mm across read 89.3 in an 85 mm
    stroke), and a search on its readings alone is wanted. Beside a rounded side the band
    stands for the bulge under the top the camera loses, and stays."""
    return holes_close_stroke(sil, jaw) is not None \
        and projected.sides_are_walls(sil.insertion_depth_m)


def planned_on_readings(features: dict[str, float] | None) -> bool:
    """Whether a grasp with these (logged) features was searched on its object's readings
    alone (ImageSearch._search), so that re-scoring it must draw the same silhouette."""
    return bool((features or {}).get(HOLES_LEFT_OUT, 0.0))


def _top_score(found) -> float:
    """The best score of a search's candidates (sorted best first); 0 with none."""
    return float(found.scores.score[0]) if not found.no_grasp and len(found) else 0.0


class ImageSearch:
    """Grasps found by searching the silhouette image (source "image_search")."""

    name = "image_search"

    def __init__(self, setup: SourceSetup) -> None:
        self.config = setup.config
        self.projection, self.jaw = setup.projection, setup.jaw
        self._rng = setup.rng
        self._segmenter = setup.segmenter
        self._truth = setup.truth
        self._failed = setup.failed

    # ------------------------------------------------------------ the silhouette
    def silhouette(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                   insertion_m: float | None = None) -> Silhouette:
        """Object i's silhouette for a straight-down approach with the fingertips insertion_m
        past its top (default: the first of insertions()), its neighbours as obstacles (and,
        with scoring.join_touching, those touching it in its mass and mass centre)."""
        depth_m = self.insertions()[0] if insertion_m is None else insertion_m
        return self.projected(frame, masks, i).at(depth_m)

    def projected(self, frame: RGBDFrame, masks: list[ObjectMask], i: int) -> ProjectedObject:
        """Object i projected for a straight-down approach, ready for a silhouette at each
        insertion depth (its neighbours as obstacles; with scoring.join_touching, those
        touching it joined in its mass, or the body it continues along its axis)."""
        s = self.config.scoring
        attached = touching(masks, i) if s.join_touching else None
        return ProjectedObject(frame, masks[i], approach=(0.0, 0.0, -1.0),
                               metres_per_px=s.metres_per_px,
                               margin_m=silhouette_margin_m(self.config, self.jaw),
                               obstacles=neighbours(masks, i),
                               support=getattr(self._segmenter, "last_plane", None),
                               clearance_m=s.clearance_m, attached=attached,
                               attached_max_width_m=self.config.gripper.open_width_m,
                               axial=lambda: axial_pieces(masks, i))

    def insertions(self) -> list[float]:
        """The fingertip depths past an object's top that a search tries (insertion_depths)."""
        return insertion_depths(self.config)

    def search_params(self) -> SearchParams:
        """The search's settings: the planning loop's defaults with the cell file's sampler
        (scoring.search: "tan" or "antipodal")."""
        return SearchParams(sampler=self.config.scoring.search)

    def _label(self, frame: RGBDFrame, mask: ObjectMask) -> str | None:
        """The object's label: the segmenter's, else the ground truth's name, else None."""
        return mask.label or self._truth.object_name(frame, mask)

    def measure_kw(self, frame: RGBDFrame, mask: ObjectMask, sil: Silhouette) -> dict:
        """The measure's keyword arguments for score_candidates and search_grasps; the depth
        terms' view of the target takes its mass from the cell file's masses_kg by label
        when known, else its seen volume times the configured density, at most the
        configured max_guessed_mass_kg."""
        s = self.config.scoring
        if s.measure != "graspline" or sil.height_m is None:
            return {"measure": s.measure}
        label = self._label(frame, mask)
        depth = sil.depth_view(mass_kg=s.masses_kg.get(label) if label else None,
                               density_kg_m3=s.density_kg_m3,
                               max_guessed_mass_kg=s.max_guessed_mass_kg)
        # the width compared with the stroke: the camera's readings, with their uncertainty
        # (the silhouette's outline runs a few millimetres wide: vision.seen_width)
        seen = seen_width(frame, mask, sil)
        depth = dataclasses.replace(depth, width_m=seen.width_m,
                                    width_uncertainty_m=seen.uncertainty_m)
        return {"measure": s.measure, "jaw": self.jaw, "depth": depth}

    # ------------------------------------------------------------ the source
    def propose(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                clock: StageClock) -> Proposal | str | None:
        """The best untried grasp on object i over the insertion depths (insertions); None
        when it has no silhouette or grasp; a string saying why when the jaw cannot hold it
        at all (at the first depth: a deeper section too wide for the stroke only leaves the
        shallower grasps). A deeper search runs only while the best grasp so far scores under
        DEEPER_SEARCH_BELOW, meets less than DEEPER_SEARCH_CONTACT_M of the object's side, or
        pinches a rounded side at its widest section (deeper_search_wanted; then the deeper
        grasp is taken when it scores within DEEPER_PREFERRED_WITHIN of that one)."""
        best, seen, projected, widest = None, [], None, False
        for k, insertion in enumerate(self.insertions()):
            if best is not None and not deeper_search_wanted(
                    best[0], float(best[2].scores.contact_height_m[best[3]]), widest):
                break  # a top-level grasp already: a deeper one could gain little (docs/figures.md)
            with clock.stage("silhouette"):
                try:
                    # one projection of the object's points serves every depth
                    projected = projected or self.projected(frame, masks, i)
                    sil = projected.at(insertion)
                except ValueError as exc:
                    log.info("object %d: no silhouette (%s)", i, exc)
                    return self._proposal(best, i)
            if not sil.target.any():
                return self._proposal(best, i)
            if any(abs(sil.insertion_depth_m - d) < 1e-4 for d in seen):
                continue  # the support stopped the fingertips where a shallower search did
            seen.append(sil.insertion_depth_m)
            with clock.stage("search"):
                sil, kw, found = self._search(frame, masks[i], projected, sil, insertion)
            if found.no_grasp:
                if k == 0:
                    return found.no_grasp
                continue
            if len(found) == 0:
                continue
            j = self._first_untried(sil, found)
            if j is None:
                continue
            score = float(found.scores.score[j])
            if best is None or score > best[0] or (
                    widest and score >= best[0] - DEEPER_PREFERRED_WITHIN):
                if best is not None and score <= best[0]:
                    log.info("object %d: the grasp %.0f mm past the top pinched the widest "
                             "section (%.3f); the one %.0f mm past it taken (%.3f)", i,
                             best[1].insertion_depth_m * 1e3, best[0],
                             sil.insertion_depth_m * 1e3, score)
                best = (score, sil, found, j, kw)
                widest = self._pinched_at_widest(found, j, kw)
        return self._proposal(best, i)

    def _search(self, frame: RGBDFrame, mask: ObjectMask, projected: ProjectedObject,
                sil: Silhouette, insertion_m: float) -> tuple[Silhouette, dict, object]:
        """(silhouette, the measure's keyword arguments, candidates) of the search on sil;
        where its best scores under READINGS_SEARCH_BELOW and the holes' band beside walls
        closes the stroke off (band_beside_walls), the search on the silhouette drawn from
        the readings alone too (ProjectedObject.readings_only), and the better of the two."""
        kw, found = self._search_on(frame, mask, sil)
        if found.no_grasp or _top_score(found) >= READINGS_SEARCH_BELOW \
                or not band_beside_walls(projected, sil, self.jaw):
            return sil, kw, found
        alone = projected.readings_only().at(insertion_m)
        kw_alone, found_alone = self._search_on(frame, mask, alone)
        if len(found_alone):  # no band keeps the fingers off the wall: their room is scored
            scale_by_room(found_alone.scores, found_alone.x, found_alone.y, found_alone.theta,
                          self.projection, alone.metres_per_px, camera_pixel_m(frame, mask))
            found_alone = best_first(found_alone)
        if _top_score(found_alone) <= _top_score(found):
            return sil, kw, found
        log.info("the holes' band beside walls closed the stroke off (best %.3f); on the "
                 "readings alone %.3f", _top_score(found), _top_score(found_alone))
        return alone, kw_alone, found_alone

    def _search_on(self, frame: RGBDFrame, mask: ObjectMask, sil: Silhouette):
        """(the measure's keyword arguments, candidates) of the grasp search on sil."""
        kw = self.measure_kw(frame, mask, sil)
        return kw, search_grasps(sil.image, self.projection, target=sil.target,
                                 top_k=self.config.scoring.top_k, settings=self.search_params(),
                                 seed=int(self._rng.integers(2**31)), **kw)

    def _pinched_at_widest(self, found, j: int, kw: dict) -> bool:
        """Whether grasp j of found meets a rounded side at its widest section with no margin
        (pinched_at_widest; False without the depth terms)."""
        if "depth" not in kw:
            return False
        sc = found.scores
        return pinched_at_widest(contact_arcs(kw["depth"], self.projection, sc.contact_left[j],
                                              sc.contact_right[j], float(found.theta[j]),
                                              float(sc.width_px[j])))

    def _proposal(self, best, i: int) -> Proposal | None:
        """The proposal of (score, silhouette, candidates, index, the measure's keyword
        arguments they were scored with), None for None."""
        if best is None:
            return None
        score, sil, found, j, kw = best
        held = limit_text(found.scores, j)
        if sil.runs_out_of_view:
            held += ("; the object runs past the edge of the camera's view, where no finger "
                     "is planned to land (move it or the camera)")
        if score < self.config.scoring.min_score:  # only a no-grasp message reads it
            held += widened_text(sil, self.jaw)
        return Proposal(score, i, self, held, sil, (found, j, kw))

    def _first_untried(self, sil: Silhouette, found) -> int | None:
        """Index of the best grasp in ``found`` that is not one of the last failed grasps."""
        if not self._failed:
            return 0
        T = sil.tcp_poses(found.x, found.y, found.theta)
        for j in range(len(found)):
            if not self._failed.near(T[j]):
                return j
        return None

    def choose(self, proposal: Proposal, frame: RGBDFrame, masks: list[ObjectMask],
               clock: StageClock, *, validate: bool) -> tuple[GraspChoice, int]:
        """The proposed grasp (the top one), or with validate one drawn across the score
        levels; its score level, -1 for the top one."""
        score, i, sil = proposal.score, proposal.mask_index, proposal.sil
        found, j0, kw = proposal.detail   # kw: as searched (the seen width is not measured again)
        level = -1
        x, y, t = float(found.x[j0]), float(found.y[j0]), float(found.theta[j0])
        feats = features(found.scores, j0)
        n = int(found.n_scored)
        # on the readings alone, the fingers' room beside them scales the score (_search)
        pixel_m = camera_pixel_m(frame, masks[i]) if sil.holes_left_out else None
        if pixel_m is not None:
            feats.update(room_features(candidate_room_m(found.scores, j0, x, y, t,
                                                        self.projection, sil.metres_per_px),
                                       pixel_m))
        if validate:
            d = draw_across_levels(sil, found, self.projection, kw, self._rng,
                                   room_pixel_m=pixel_m)
            x, y, t, score, feats, level = d.x_px, d.y_px, d.theta_rad, d.score, d.features, d.level
            n += d.n_scored
        if "depth" in kw and math.isfinite(kw["depth"].mass_kg):
            feats["mass_kg"] = kw["depth"].mass_kg  # the mass the torque term assumed
        feats["insertion_m"] = sil.insertion_depth_m  # the fingertips' depth past the top
        if sil.holes_left_out:  # searched on the readings alone (_search): replays read it
            feats[HOLES_LEFT_OUT] = 1.0
        # scored on the silhouette's target (x, y), executed centred on its readings (T)
        centred = centred_on_readings(sil, x, y, t, self.projection)
        feats["centring_m"] = centred.shift_m
        g = self.config.gripper
        T = sil.tcp_pose(centred.x_px, centred.y_px, t, tcp_to_tip_m=g.tcp_to_tip_m)
        # named by the part of the mask the jaw closes on: a segmenter's label is the mask's,
        # the simulator's truth names the object under most of that part (a box lifted off a
        # plate it touched, one mask to the segmenter, is the box's trial, not the plate's)
        region = jaw_region(frame, masks[i], T, closing_band_m(feats, g.open_width_m),
                            g.finger_width_m, sil.insertion_depth_m)
        label = self._label(frame, region) or f"object@{x:.0f},{y:.0f}"
        choice = GraspChoice(trial_id=-1, object_label=label, T_base_tcp=T,
                             pregrasp_m=self.config.arm.pregrasp_m, width_m=g.open_width_m,
                             force_n=g.force_n, score=score, features=feats,
                             source=self.name, x_px=x, y_px=y, theta_rad=t, n_candidates=n,
                             stage_s=clock.stage_s)
        return choice, level

    # ------------------------------------------------------------ re-scoring a pose
    def score_pose(self, frame: RGBDFrame, masks: list[ObjectMask], T_base_tcp: np.ndarray, *,
                   holes_left_out: bool = False) -> tuple[float, dict[str, float]]:
        """(score, features by name) of a straight-down grasp at T_base_tcp (base frame, a
        checked TCP pose) on the segmented object nearest its fingertips' point in the
        camera image, with the search's silhouette whose fingertip plane it lies in
        (drawn from the readings alone with holes_left_out, as a grasp logged with
        features["holes_left_out"] was searched)."""
        scored = self.scored_pose(frame, masks, T_base_tcp, holes_left_out=holes_left_out)
        feats = features(scored.scores, 0)
        if math.isfinite(scored.mass_kg):
            feats["mass_kg"] = scored.mass_kg
        if holes_left_out:
            feats.update(room_features(scored.room_m, scored.pixel_m))
        return float(scored.scores.score[0]), feats

    def scored_pose(self, frame: RGBDFrame, masks: list[ObjectMask], T_base_tcp: np.ndarray, *,
                    holes_left_out: bool = False) -> ScoredPose:
        """What score_pose reads for the grasp at T_base_tcp: its silhouette, its pixel
        coordinates there and the scoring's output for it (contacts included)."""
        T = T_base_tcp
        tip = T[:3, 3] + self.config.gripper.tcp_to_tip_m * T[:3, 2]
        i = nearest_mask(frame, masks, tip)
        projected = self.projected(frame, masks, i)
        if holes_left_out:
            projected = projected.readings_only()
        sils = [projected.at(d) for d in self.insertions()]
        sil = min(sils, key=lambda v: abs(float(v.T_base_plane[:3, 2]
                                                @ (tip - v.T_base_plane[:3, 3]))))
        x, y, t = sil.grasp_of(T, angle_tol_rad=1e-3)
        kw = self.measure_kw(frame, masks[i], sil)
        scores = score_candidates(sil.image, np.array([x]), np.array([y]), np.array([t]),
                                  self.projection, target=sil.target, **kw)
        room, pixel_m = math.nan, math.nan
        if holes_left_out:  # as the search scored it there (_search)
            pixel_m = camera_pixel_m(frame, masks[i])
            room = float(scale_by_room(scores, np.array([x]), np.array([y]), np.array([t]),
                                       self.projection, sil.metres_per_px, pixel_m)[0])
        mass = kw["depth"].mass_kg if "depth" in kw else math.nan
        return ScoredPose(i, sil, x, y, t, scores, float(mass), room, pixel_m)


@dataclasses.dataclass(frozen=True)
class ScoredPose:
    """A grasp pose scored as the image search scores it (ImageSearch.scored_pose): the
    target's mask index, the silhouette whose fingertip plane the tips lie in, the grasp in
    its pixels (x, y, θ in radians), the scoring's output for it (one candidate), the
    mass the depth terms took (kg; NaN without them) and, on the readings alone, the nearer
    finger's room beside them and a camera pixel there (metres; NaN otherwise)."""

    mask_index: int
    silhouette: Silhouette
    x_px: float
    y_px: float
    theta_rad: float
    scores: Scores
    mass_kg: float
    room_m: float = math.nan
    pixel_m: float = math.nan


def nearest_mask(frame: RGBDFrame, masks: list[ObjectMask], point_base: np.ndarray) -> int:
    """Index of the mask nearest (in camera pixels) to a base-frame point's image."""
    T_cb = np.linalg.inv(frame.T_base_camera)
    p = T_cb[:3, :3] @ point_base + T_cb[:3, 3]
    k = frame.intrinsics
    u, v = k.fx * p[0] / p[2] + k.cx, k.fy * p[1] / p[2] + k.cy
    dist = []
    for m in masks:
        rows, cols = np.nonzero(m.mask)
        dist.append(float(np.min(np.hypot(cols - u, rows - v))) if rows.size else math.inf)
    return int(np.argmin(dist))
