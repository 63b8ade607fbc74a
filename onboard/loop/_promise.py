"""The order of promise in which a scene-level budget searches the objects in view: cheap cues
from the camera's masks (narrow enough for the stroke, clear of the neighbours, seen large
enough), no silhouette and no search."""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from drivers.camera import RGBDFrame
from vision import ObjectMask

# Clearance to the nearest neighbour beyond which more does not help a grasp (metres): about
# a finger's thickness and a margin each side.
CLEAR_ENOUGH_M = 0.03
# A mask narrower than this share of the stroke leaves room for the fingers' approach error.
STROKE_SHARE = 0.9
# Fewer pixels than this: a sliver of an object or a segmentation scrap, searched last.
MIN_PIXELS = 150


@dataclass(frozen=True)
class Promise:
    """One mask's cues, camera-derived and approximate: narrowest width of its pixels'
    minimum-area rectangle and clearance from the nearest other mask's bounding box, metres
    at the mask's median depth; its pixel count."""

    index: int
    narrow_m: float
    clear_m: float
    pixels: int

    def key(self, stroke_m: float) -> tuple:
        """Sort key, most promising first: fits the stroke, big enough, clear, narrow."""
        return (self.narrow_m > STROKE_SHARE * stroke_m, self.pixels < MIN_PIXELS,
                -min(self.clear_m, CLEAR_ENOUGH_M), self.narrow_m, self.index)


def promises(frame: RGBDFrame, masks: list[ObjectMask], targets: list[int]) -> list[Promise]:
    """The cues of each target mask (frame's intrinsics; depth in metres)."""
    boxes = [m.box_px for m in masks]
    out = []
    for i in targets:
        # within the mask's box only: a whole-frame pass per mask costs more than the rest
        c0, r0, w, h = boxes[i]
        sub = masks[i].mask[r0:r0 + h, c0:c0 + w]
        depth = frame.depth_m[r0:r0 + h, c0:c0 + w][sub]
        depth = depth[np.isfinite(depth) & (depth > 0)]
        pixels = int(np.count_nonzero(sub))
        if pixels < 3 or depth.size == 0:
            out.append(Promise(i, math.inf, 0.0, pixels))
            continue
        m_per_px = _median(depth) / frame.intrinsics.fx
        # the outline's points give the mask's minimum-area rectangle as well as all of them
        outline, _ = cv2.findContours(sub.view(np.uint8), cv2.RETR_EXTERNAL,
                                      cv2.CHAIN_APPROX_SIMPLE)
        (_, _), (rw, rh), _ = cv2.minAreaRect(np.concatenate(outline))
        gap = min((_box_gap(boxes[i], b) for j, b in enumerate(boxes) if j != i),
                  default=math.inf)
        out.append(Promise(i, (min(rw, rh) + 1.0) * m_per_px, gap * m_per_px, pixels))
    return out


def promise_order(frame: RGBDFrame, masks: list[ObjectMask], targets: list[int],
                  stroke_m: float) -> list[int]:
    """The target indices, most promising first (Promise.key); ties keep the masks' order."""
    return [p.index for p in sorted(promises(frame, masks, targets),
                                    key=lambda p: p.key(stroke_m))]


def _median(values: np.ndarray) -> float:
    """np.median of a 1-D array, by one partition (numpy's wrapper costs as much again as
    the partition on a mask's few thousand readings)."""
    k = values.size // 2
    if values.size % 2:
        return float(np.partition(values, k)[k])
    part = np.partition(values, (k - 1, k))
    return float(np.mean(part[k - 1:k + 1]))


def _box_gap(a: tuple, b: tuple) -> float:
    """Distance in pixels between two (x, y, w, h) boxes; 0 when they overlap."""
    dx = max(b[0] - (a[0] + a[2]), a[0] - (b[0] + b[2]), 0)
    dy = max(b[1] - (a[1] + a[3]), a[1] - (b[1] + b[3]), 0)
    return math.hypot(dx, dy)
