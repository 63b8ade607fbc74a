"""The fingers' room beside an object's readings: a grasp searched on the readings alone (the
sensor's holes at a wall's edge left out, ImageSearch._search) has no band round its outline
to keep the open fingers off the wall, so its score is scaled by how far the nearer finger
clears the readings' outline, up to one camera pixel at the object's distance: the error of
that outline (docs/scoring.md, "The fingers' room beside the readings").

On the 50 mm jaw's seed-170 pass an upright cylinder's grasp on its readings scored 0.98 with
the nearer finger 0.10 mm from them, and the pad came down on its top edge; of the 21 such
grasps at under a pixel's room in the stored passes of seeds 150-170, 11 held. The band's
silhouette needs no such factor: its band is the room."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from drivers.camera import RGBDFrame
from scoring import GripperProjection, Scores
from vision import ObjectMask

READINGS_CLEARANCE = "readings_clearance_m"  # the feature: the nearer finger's room, metres
SCORE_CLEARANCE = "score_clearance"  # the feature: the factor it scaled the score by


def camera_pixel_m(frame: RGBDFrame, mask: ObjectMask) -> float:
    """One camera pixel's footprint at the object's distance (metres): the median depth of
    the mask's readings over the focal length in pixels; NaN without a reading."""
    with np.errstate(invalid="ignore"):
        z = frame.depth_m[mask.mask.astype(bool)]
        z = z[z > 0]
    if z.size == 0:
        return math.nan
    k = frame.intrinsics
    return float(np.median(z)) / math.sqrt(k.fx * k.fy)


def finger_room_px(scores: Scores, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                   projection: GripperProjection) -> np.ndarray:
    """Per candidate, how far the nearer open finger's face lies from the outline it first
    meets along the closing direction (silhouette pixels: from the primary contact's pixel,
    half a pixel to its outline); NaN where the candidate was not evaluated."""
    u = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    centre = np.stack([x, y], axis=1)
    half = 0.5 * projection.open_width_px
    room = [half - np.abs(np.sum((np.asarray(c, np.float64) - centre) * u, axis=1)) - 0.5
            for c in (scores.contact_left, scores.contact_right)]
    return np.minimum(room[0], room[1])


def candidate_room_m(scores: Scores, j: int, x: float, y: float, theta: float,
                     projection: GripperProjection, metres_per_px: float) -> float:
    """finger_room_px of candidate j of scores at (x, y, theta), in metres."""
    return float(finger_room_px(scores.take([j]), np.array([x], np.float64),
                                np.array([y], np.float64), np.array([theta], np.float64),
                                projection)[0]) * metres_per_px


def clearance_factor(room_m: np.ndarray, pixel_m: float) -> np.ndarray:
    """The score factor for fingers room_m (metres) from the readings: the share of one
    camera pixel (pixel_m) they clear, in [0, 1]; 1 where the room is NaN (not evaluated:
    the score is already 0) or the pixel unknown."""
    if not (math.isfinite(pixel_m) and pixel_m > 0):
        return np.ones_like(room_m)
    f = np.clip(room_m / pixel_m, 0.0, 1.0)
    return np.where(np.isfinite(f), f, 1.0)


def scale_by_room(scores: Scores, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                  projection: GripperProjection, metres_per_px: float,
                  pixel_m: float) -> np.ndarray:
    """Scale the candidates' scores (scores.score, in place) by clearance_factor; their
    rooms in metres."""
    room_m = finger_room_px(scores, np.asarray(x, np.float64), np.asarray(y, np.float64),
                            np.asarray(theta, np.float64), projection) * metres_per_px
    scores.score[:] = scores.score * clearance_factor(room_m, pixel_m).astype(np.float32)
    return room_m


def room_features(room_m: float, pixel_m: float) -> dict[str, float]:
    """The trial log's features of one candidate's room: the room (metres) and its factor."""
    if not math.isfinite(room_m):
        return {}
    return {READINGS_CLEARANCE: float(room_m),
            SCORE_CLEARANCE: float(clearance_factor(np.array([room_m]), pixel_m)[0])}


def best_first(found):
    """A search's grasps (scoring.GraspSet) sorted best first again, after their scores
    were scaled (a stable sort: ties keep the search's order)."""
    order = np.argsort(-found.scores.score, kind="stable")
    return dataclasses.replace(found, x=found.x[order], y=found.y[order],
                               theta=found.theta[order], scores=found.scores.take(order))
