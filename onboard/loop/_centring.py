"""The jaw centred on the object as its depth readings place it.

A silhouette's target is drawn with the sensor's holes at the object's edge filled with the
object's depth (vision.silhouette): the D400 loses a band of pixels beside a depth step and
on walls seen at a grazing angle, the segmenter claims them, and the filled band widens the
target by 1-4 mm, mostly on the side facing the camera. The measure scores on that target
(its collision test keeps the fingers clear of it), but a grasp centred on it is off the
object's middle towards the camera, and where the object nearly fills the stroke the far
finger comes down on the object's far edge. The readings alone (``Silhouette.target_read``)
place both sides; the chosen grasp is moved along its closing axis by as much as their
middle lies from the target's: the place the score judged, relative to the object.
Measured in docs/scoring.md ("The jaw centred on the readings").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scoring import GripperProjection
from vision import Silhouette

# The most the jaw is moved, metres: the filled band is at most about four millimetres wide
# (docs/vision.md); a larger difference is the readings missing part of the object.
MAX_SHIFT_M = 0.004


@dataclass(frozen=True)
class Centring:
    """Where the jaw comes down for a grasp scored on the target: x_px, y_px in the
    silhouette's pixels, and shift_m, how far that is from the grasp as scored along its
    closing axis (metres, + towards the right finger; 0 where it stays)."""

    x_px: float
    y_px: float
    shift_m: float


def _distance_to_object(image: np.ndarray, ex: np.ndarray, ey: np.ndarray, ux: float,
                        uy: float, length_px: float) -> np.ndarray:
    """Per line, the distance (px, in half-pixel steps) from its end (ex, ey) along (ux, uy)
    to the first set pixel of image within length_px; length_px where there is none."""
    steps = np.arange(0.0, length_px + 0.25, 0.5)
    cols = np.rint(ex[:, None] + steps[None, :] * ux).astype(np.int64)
    rows = np.rint(ey[:, None] + steps[None, :] * uy).astype(np.int64)
    inside = (rows >= 0) & (rows < image.shape[0]) & (cols >= 0) & (cols < image.shape[1])
    hit = np.zeros(inside.shape, bool)
    hit[inside] = image[rows[inside], cols[inside]]
    found = hit.any(axis=1)
    return np.where(found, steps[hit.argmax(axis=1)], length_px)


def _ends_clear(image: np.ndarray, x: float, y: float, c: float, s: float, dw: np.ndarray,
                half_r: float) -> bool:
    """Whether no grasp line's end (Δr = ±r/2, the open pads' inner faces) lies on image."""
    for sign in (-1.0, 1.0):
        cols = np.rint(x - dw * s + sign * half_r * c).astype(np.int64)
        rows = np.rint(y + dw * c + sign * half_r * s).astype(np.int64)
        inside = (rows >= 0) & (rows < image.shape[0]) & (cols >= 0) & (cols < image.shape[1])
        if image[rows[inside], cols[inside]].any():
            return False
    return True


def centred_on_readings(sil: Silhouette, x_px: float, y_px: float, theta: float,
                        projection: GripperProjection) -> Centring:
    """The grasp at (x_px, y_px, theta) (silhouette pixels, rad) moved along its closing axis
    by as much as the middle of the target's readings lies from the middle of the target it
    was scored on (each the outermost pixel under any of the pad's lines on either side), at
    most MAX_SHIFT_M: a grasp centred on the target comes down centred on the readings, one
    scored off the middle stays as far off it. It stays where the silhouette has no
    readings-only target, where no line meets the readings, or where a pad would then come
    down on the readings or on a neighbour."""
    stay = Centring(float(x_px), float(y_px), 0.0)
    read = sil.target_read
    if read is None:
        return stay
    c, s = math.cos(theta), math.sin(theta)
    half_r = 0.5 * projection.open_width_px
    dw = projection.line_offsets_px()
    lx, ly = x_px - dw * s, y_px + dw * c  # the lines' centres
    span = 2.0 * half_r

    def middle(image: np.ndarray) -> float:
        """Where image's middle lies along the closing axis, px from the grasp's centre (the
        outermost pixel under any line on each side); NaN where no line meets it."""
        left = _distance_to_object(image, lx - half_r * c, ly - half_r * s, c, s, span).min()
        right = _distance_to_object(image, lx + half_r * c, ly + half_r * s, -c, -s,
                                    span).min()
        return 0.5 * float(left - right) if left + right < span else math.nan

    # the grasp keeps its place relative to the object: off its middle by as much as scored
    shift = middle(read) - middle(sil.target)
    if not math.isfinite(shift):
        return stay
    limit = MAX_SHIFT_M / sil.metres_per_px
    shift = min(max(shift, -limit), limit)
    x, y = x_px + shift * c, y_px + shift * s
    if shift == 0.0 or not _ends_clear(read | (sil.image & ~sil.target), x, y, c, s, dw, half_r):
        return stay
    return Centring(float(x), float(y), shift * sil.metres_per_px)


def pose_as_scored(T_base_tcp: np.ndarray, features: dict[str, float]) -> np.ndarray:
    """The TCP pose a logged grasp was scored at (base frame, 4 x 4): its executed pose less
    the centring (features["centring_m"] along its closing axis, the TCP's x); the pose
    itself for a grasp logged without one. Re-scoring a logged trial starts from this."""
    T = np.array(T_base_tcp, dtype=np.float64)
    shift = float(features.get("centring_m", 0.0) or 0.0)
    T[:3, 3] -= shift * T[:3, 0]
    return T
