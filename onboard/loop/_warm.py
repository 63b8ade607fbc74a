"""Warm start: every Numba kernel the loop's planning uses, compiled (or loaded from numba's
cache) before the first frame, so that the first cycle plans as fast as the hundredth.

The warm-up plans once on a small synthetic scene (two boxes on a table, seen from above,
with sensor holes) through the loop's own segmenter, silhouettes and measure, so each kernel
meets the argument types the cycles give it (numba compiles one signature per type; a
warm-up on other types would leave the first cycle compiling). It draws nothing from the
loop's random stream and leaves the segmenter's last plane as it was: the cycles after it are
the ones a cell without warm-up would run, bit for bit.
"""
from __future__ import annotations

import math
import time

import numpy as np

import scoring
import vision
from drivers.camera import RGBDFrame, intrinsics_from_fov, look_at
from scoring import antipodal_candidates, search_grasps

from .._overlay import draw_grasps
from .._types import KernelWarmUp
from ._image_search import ImageSearch

WARM_UP_IMAGE_PX = (320, 240)
CAMERA_HEIGHT_M = 0.6
# (centre x, centre y, half x, half y, height), metres in the base frame: a box with a
# neighbour beside it (obstacle and touching paths of the silhouette)
BOXES_M = ((0.0, 0.0, 0.03, 0.02, 0.05), (0.075, 0.0, 0.02, 0.02, 0.03))


def kernel_counts() -> tuple[int, int, int]:
    """(kernels, cache misses, cache hits) summed over scoring's and vision's njit kernels."""
    kernels = {**scoring.jit_kernels(), **vision.jit_kernels()}
    misses = sum(sum(d.stats.cache_misses.values()) for d in kernels.values())
    hits = sum(sum(d.stats.cache_hits.values()) for d in kernels.values())
    return len(kernels), misses, hits


def synthetic_frame() -> RGBDFrame:
    """A WARM_UP_IMAGE_PX frame looking straight down from CAMERA_HEIGHT_M at BOXES_M on a
    table (base z = 0), with a few pixels of no reading on the first box."""
    w, h = WARM_UP_IMAGE_PX
    intr = intrinsics_from_fov(w, h, math.radians(69.0))
    T = look_at(np.array([0.0, 0.0, CAMERA_HEIGHT_M]), np.zeros(3), up=(0.0, 1.0, 0.0))
    rays = intr.deproject_pixels(*np.meshgrid(np.arange(w, dtype=np.float64),
                                              np.arange(h, dtype=np.float64)), 1.0)
    dirs = rays @ T[:3, :3].T  # base-frame ray per pixel, 1 along the optical axis (-z)
    depth = np.full((h, w), CAMERA_HEIGHT_M, np.float64)
    for cx, cy, hx, hy, top in BOXES_M:
        z = CAMERA_HEIGHT_M - top  # the top face's depth
        x, y = T[0, 3] + dirs[..., 0] * z, T[1, 3] + dirs[..., 1] * z
        on = (np.abs(x - cx) <= hx) & (np.abs(y - cy) <= hy)
        depth[on] = np.minimum(depth[on], z)
    rows, cols = np.nonzero(depth < CAMERA_HEIGHT_M - 0.04)
    depth[rows[::37], cols[::37]] = 0.0  # sensor holes on the first box
    return RGBDFrame(color=np.zeros((h, w, 3), np.uint8), depth_m=depth.astype(np.float32),
                     intrinsics=intr, T_base_camera=T, stamp_s=0.0, seq=0)


def warm_up(segmenter: vision.Segmenter, image_search: ImageSearch | None) -> KernelWarmUp:
    """Run the loop's planning kernels once on synthetic_frame(): segmentation, each
    insertion depth's silhouette and search with the cell's measure (image_search None: a
    cell without the image search, segmentation and a silhouette only); the result counts
    what numba compiled and what it loaded from its cache."""
    t0 = time.perf_counter()
    n, misses0, hits0 = kernel_counts()
    frame = synthetic_frame()
    plane_before = getattr(segmenter, "last_plane", None)
    try:
        # a segmenter that sees nothing in it (a learned one, on its blank colour) still
        # leaves the silhouettes and the search to warm up: the boxes' pixels stand in
        masks = segmenter.segment(frame) or _box_masks(frame)
        if image_search is None:
            for i in range(len(masks)):
                vision.silhouette(frame, masks[i], support=getattr(segmenter, "last_plane", None))
        else:
            for i in range(len(masks)):
                _search_object(image_search, frame, masks, i)
    finally:
        if hasattr(segmenter, "last_plane"):
            segmenter.last_plane = plane_before
    _, misses, hits = kernel_counts()
    return KernelWarmUp(seconds=time.perf_counter() - t0, kernels=n, compiled=misses - misses0,
                        from_cache=hits - hits0, at_s=time.time())


def _box_masks(frame: RGBDFrame) -> list[vision.ObjectMask]:
    """The synthetic boxes' masks (pixels nearer than the table), one per box."""
    import cv2

    near = (frame.depth_m > 0) & (frame.depth_m < CAMERA_HEIGHT_M - 0.01)
    n, labels = cv2.connectedComponents(near.view(np.uint8), connectivity=8)
    return [vision.ObjectMask(mask=labels == k, label=None, confidence=1.0, backend="warm_up")
            for k in range(1, n)]


def _search_object(source: ImageSearch, frame: RGBDFrame, masks: list, i: int) -> None:
    """Object i's silhouettes and searches as ImageSearch.propose makes them (the arcs at the
    top grasp's contacts included), with a fixed seed instead of the loop's random stream,
    the antipodal pairs, and the trial's overlay of the top grasp."""
    for insertion in source.insertions():
        try:
            sil = source.silhouette(frame, masks, i, insertion)
        except ValueError:
            continue
        if not sil.target.any():
            continue
        kw = source.measure_kw(frame, masks[i], sil)
        found = search_grasps(sil.image, source.projection, target=sil.target,
                              top_k=source.config.scoring.top_k, settings=source.search_params(),
                              seed=0, **kw)
        if len(found):  # the arcs at the top grasp's contacts, as propose reads them
            source._pinched_at_widest(found, 0, kw)
        # the other sampler's pairing kernel too: a cell may switch scoring.search between
        # cycles (PickingLoop.config), and its first cycle must not compile
        antipodal_candidates(sil.image, source.projection, target=sil.target, seed=0)
        if len(found):  # as trial_images draws the chosen grasp
            draw_grasps(sil.image, np.array([float(found.x[0])]), np.array([float(found.y[0])]),
                        np.array([float(found.theta[0])]), np.array([float(found.scores.score[0])]),
                        source.projection)
