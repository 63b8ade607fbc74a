"""The part of an object's mask that a parallel jaw closes on, in the frame's image.

A segmenter joins objects that touch into one mask (a box against a plate), and the grasp
the search finds on that mask is on one of them. What the jaw lifts, and where the
after-lift image should show the support again, is the part of the mask between the
fingers, not the whole mask: judged on the whole mask, a box lifted cleanly off a plate it
touched reads "still in its place" because the plate is, and the simulator's truth watched
the plate, the larger part, instead of the box.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from drivers.camera import RGBDFrame
from vision import ObjectMask

MIN_REGION_PX = 20  # fewer pixels of the mask in the band than this: judge on the whole mask
# either side of the grasp's seen section: a seen outline's bias (docs/scoring.md)
CLOSING_MARGIN_M = 0.005


def closing_band_m(features: dict[str, float] | None, open_width_m: float) -> float:
    """The width (metres) of what the jaw closes on: the grasp's seen section at its contacts
    (features["section_m"]) with CLOSING_MARGIN_M either side, at most the opening; the
    opening where the grasp has no section. Across the whole opening, a wide jaw's band
    holds a neighbour joined in the same mask, the part the pads never touch (a 140 mm
    opening across a bracket's 46 mm leg held more of the box it leaned on)."""
    section = (features or {}).get("section_m", math.nan)
    if not (isinstance(section, (int, float)) and math.isfinite(section) and section > 0.0):
        return open_width_m
    return min(open_width_m, float(section) + 2.0 * CLOSING_MARGIN_M)


def jaw_band_px(frame: RGBDFrame, T_base_tcp: np.ndarray, open_width_m: float,
                finger_width_m: float, insertion_m: float) -> np.ndarray:
    """(N, 2) pixel corners (column, row) of the box the open fingers sweep at the grasp,
    projected into the frame: open_width_m along the TCP's x (closing), finger_width_m along
    its y, from the fingertips at the TCP up insertion_m along its approach (z), so that a
    camera off the approach axis sees the band where the object's top is as well as at the
    fingertips (metres, base frame)."""
    T = np.asarray(T_base_tcp, np.float64)
    x, y, z, p = T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3]
    corners = [p + sx * 0.5 * open_width_m * x + sy * 0.5 * finger_width_m * y - h * z
               for sx in (-1, 1) for sy in (-1, 1) for h in (0.0, max(insertion_m, 0.0))]
    pts = np.asarray(corners)
    T_cb = np.linalg.inv(frame.T_base_camera)
    cam = pts @ T_cb[:3, :3].T + T_cb[:3, 3]
    return frame.intrinsics.project(cam[cam[:, 2] > 1e-6])


def jaw_region(frame: RGBDFrame | None, mask: ObjectMask | None, T_base_tcp: np.ndarray,
               open_width_m: float, finger_width_m: float, insertion_m: float = 0.0
               ) -> ObjectMask | None:
    """The mask's pixels inside the band the open jaw sweeps at T_base_tcp (jaw_band_px), as
    an ObjectMask with the mask's label; the whole mask where the frame has no camera pose,
    the band falls behind the camera, or fewer than MIN_REGION_PX of its pixels are inside
    (a grasp at the mask's very edge); None without a mask."""
    if mask is None or frame is None or frame.T_base_camera is None:
        return mask
    band = jaw_band_px(frame, T_base_tcp, open_width_m, finger_width_m, insertion_m)
    if len(band) < 3 or not np.all(np.isfinite(band)):
        return mask
    inside = np.zeros(mask.mask.shape, np.uint8)
    hull = cv2.convexHull(np.round(band).astype(np.int32))
    cv2.fillConvexPoly(inside, hull, 1)
    region = mask.mask & inside.astype(bool)
    if int(region.sum()) < MIN_REGION_PX:
        return mask
    return ObjectMask(region, mask.label, mask.confidence, mask.backend)
