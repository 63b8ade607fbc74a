"""Segmentation and silhouette figures of one frame against ground truth: the instance ids a
simulated camera renders and, where given, each object's true footprint."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame

from ._base import Segmenter
from ._silhouette import silhouette
from ._tabletop import TabletopSegmenter
from ._types import Silhouette

# Objects counted: fully in view (touching no image border; the camera cannot see the rest
# of one cut off by the border) and showing at least this many pixels.
MIN_VISIBLE_PX = 200


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two bool masks (1 when both are empty)."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 1.0


@dataclass
class FrameFigures:
    """Figures of one frame. Per counted ground-truth object (see MIN_VISIBLE_PX), in names:
    its best segmentation IoU (seg_iou) and, when found (IoU >= 0.5) and a footprint was
    given, the IoU of its mask's silhouette with its true footprint (sil_iou; NaN otherwise).
    extra : masks matching no object at all (IoU < 0.5 with every instance, counted or not: a
    fragment or a phantom). vision_s : segmentation plus every mask's silhouette, seconds."""

    seed: int
    view: str
    names: list[str]
    seg_iou: list[float] = field(default_factory=list)
    sil_iou: list[float] = field(default_factory=list)
    extra: int = 0
    vision_s: float = 0.0

    @property
    def found(self) -> int:
        """Objects found (best IoU >= 0.5)."""
        return sum(v >= 0.5 for v in self.seg_iou)


def evaluate_frame(frame: RGBDFrame, object_names: list[str], segmenter: Segmenter | None = None,
                   *, footprint: Callable[[int, Silhouette], np.ndarray] | None = None,
                   seed: int = 0, view: str = "", insertion_depth_m: float = 0.02,
                   metres_per_px: float = 0.001) -> FrameFigures:
    """Segment a frame with ground-truth instance ids (object_names[k - 1] is instance k), make
    every mask's top-down silhouette, and score both. footprint(k, sil) : (H, W) bool true
    footprint of instance k in sil's plane, or None to leave sil_iou NaN."""
    if frame.instance_ids is None:
        raise ValueError("evaluate_frame needs a frame with instance_ids (a simulated camera's)")
    segmenter = segmenter or TabletopSegmenter()
    t0 = time.perf_counter()
    masks = segmenter.segment(frame)
    support = getattr(segmenter, "last_plane", None)
    sils = [silhouette(frame, m, insertion_depth_m=insertion_depth_m,
                       metres_per_px=metres_per_px, support=support) for m in masks]
    res = FrameFigures(seed, view, [], vision_s=time.perf_counter() - t0)
    n = len(object_names)
    # Each mask's best IoU with any instance (the one holding most of its pixels).
    owners = [np.bincount(frame.instance_ids[m.mask], minlength=n + 1).argmax() for m in masks]
    res.extra = sum(k == 0 or mask_iou(m.mask, frame.instance_ids == k) < 0.5
                    for m, k in zip(masks, owners))
    for k, name in enumerate(object_names, start=1):
        gt = frame.instance_ids == k
        border = gt[0].any() or gt[-1].any() or gt[:, 0].any() or gt[:, -1].any()
        if border or np.count_nonzero(gt) < MIN_VISIBLE_PX:
            continue
        scores = [mask_iou(m.mask, gt) for m in masks]
        best = int(np.argmax(scores)) if scores else -1
        res.names.append(name)
        res.seg_iou.append(scores[best] if scores else 0.0)
        if footprint is not None and scores and scores[best] >= 0.5:
            res.sil_iou.append(mask_iou(sils[best].target, footprint(k, sils[best])))
        else:
            res.sil_iou.append(float("nan"))
    return res
