"""The vision figures on SimCamera scenes: segmentation IoU against the ground-truth instance
ids and silhouette agreement with the true footprint, ray-cast from the MuJoCo geometry.

Shared by tests/vision/test_figures.py (slow) and benchmarks/bench_vision.py. Needs the `sim`
extra (mujoco); YCB meshes are used when ../shared/data/ycb exists.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drivers.camera import intrinsics_from_fov, look_at
from vision import Silhouette, TabletopSegmenter, silhouette

YCB_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ycb"
# Objects counted: fully in view (touching no image border; the camera cannot see the rest
# of one cut off by the border) and showing at least MIN_VISIBLE_PX pixels.
MIN_VISIBLE_PX = 200
VIEWS = {"straight-down": ((0.0, 0.0, 0.70), (0.0, 0.0, 0.0)),
         "oblique": ((0.45, 0.15, 0.55), (0.0, 0.0, 0.0))}


def ycb_dir() -> Path | None:
    """The shared YCB folder, or None when this checkout has none beside it."""
    return YCB_DIR if YCB_DIR.is_dir() else None


def scene_and_camera(seed: int, view: str, *, noise: bool = True, width: int = 640,
                     height: int = 480):
    """(scene, SimCamera) of scene ``seed``: 3 + seed % 6 objects (3-8), boxes, cylinders and
    YCB meshes, seen from ``view`` (offsets from the table centre, metres)."""
    from offline_sim import build_tabletop_scene

    scene = build_tabletop_scene(n_objects=3 + seed % 6, seed=seed, ycb_dir=ycb_dir())
    eye, target = (np.asarray(p) + (0.0, 0.0, scene.table_height_m) for p in VIEWS[view])
    cam = scene.camera(intrinsics_from_fov(width, height), look_at(eye, target), noise=noise,
                       seed=seed)
    return scene, cam


def true_footprint(scene, instance: int, sil: Silhouette, far_m: float = 1000.0) -> np.ndarray:
    """(H, W) bool: pixels whose approach line meets object ``instance`` before the
    silhouette's fingertip plane, from the MuJoCo geometry.

    mj_multiRay takes one origin, so the rays start far_m behind the plane's centre and aim
    at each pixel: at 1 km they are parallel to 1e-4 rad, 20 um off over the 20 cm above
    the plane that matter.
    """
    import mujoco

    h, w = sil.shape
    v, u = np.mgrid[0:h, 0:w]
    pts = sil.points_m(u.ravel(), v.ravel())
    origin = sil.points_m([(w - 1) / 2], [(h - 1) / 2])[0] - far_m * sil.approach
    ray = pts - origin
    length = np.linalg.norm(ray, axis=1)
    vec = np.ascontiguousarray((ray / length[:, None]).ravel())
    n = pts.shape[0]
    geomid = np.empty(n, np.int32)
    dist = np.empty(n, np.float64)
    mujoco.mj_multiRay(scene.model, scene.data, np.ascontiguousarray(origin), vec, None, True,
                       -1, geomid, dist, None, n, 1e7)
    ids = scene.geom_instance[np.maximum(geomid, 0)]
    return ((geomid >= 0) & (ids == instance) & (dist < length)).reshape(h, w)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two bool masks (1 when both are empty)."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 1.0


@dataclass
class FrameResult:
    """Figures of one frame. Per counted ground-truth object (see MIN_VISIBLE_PX):
    its best segmentation IoU and, when found (IoU >= 0.5), the IoU of the silhouette of its
    mask with its true footprint (NaN otherwise). extra : masks matching no object at all
    (IoU < 0.5 with every instance, counted or not: a fragment or a phantom).
    vision_s : segmentation plus every mask's silhouette, seconds."""

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


def evaluate(scene, frame, segmenter=None, *, seed: int = 0, view: str = "",
             insertion_depth_m: float = 0.02, metres_per_px: float = 0.001) -> FrameResult:
    """Segment a frame, make every mask's top-down silhouette, and score both."""
    segmenter = segmenter or TabletopSegmenter()
    t0 = time.perf_counter()
    masks = segmenter.segment(frame)
    support = getattr(segmenter, "last_plane", None)
    sils = [silhouette(frame, m, insertion_depth_m=insertion_depth_m,
                       metres_per_px=metres_per_px, support=support) for m in masks]
    vision_s = time.perf_counter() - t0

    res = FrameResult(seed, view, [], vision_s=vision_s)
    n = len(scene.object_names)
    # Each mask's best IoU with any instance (the one holding most of its pixels).
    owners = [np.bincount(frame.instance_ids[m.mask], minlength=n + 1).argmax() for m in masks]
    res.extra = sum(k == 0 or iou(m.mask, frame.instance_ids == k) < 0.5
                    for m, k in zip(masks, owners))
    for k, name in enumerate(scene.object_names, start=1):
        gt = frame.instance_ids == k
        border = gt[0].any() or gt[-1].any() or gt[:, 0].any() or gt[:, -1].any()
        if border or np.count_nonzero(gt) < MIN_VISIBLE_PX:
            continue
        scores = [iou(m.mask, gt) for m in masks]
        best = int(np.argmax(scores)) if scores else -1
        res.names.append(name)
        res.seg_iou.append(scores[best] if scores else 0.0)
        if scores and scores[best] >= 0.5:
            res.sil_iou.append(iou(sils[best].target, true_footprint(scene, k, sils[best])))
        else:
            res.sil_iou.append(float("nan"))
    return res
