"""The vision figures on SimCamera scenes, as tests/vision/test_figures.py calls them: the
package's figure scenes (offline_sim.objects.figure_scene) with this checkout's YCB folder,
judged by vision.evaluate_frame against the footprint ray-cast from the MuJoCo geometry
(offline_sim.objects.scene_footprint). benchmarks/bench_vision.py uses the same package
functions.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from offline_sim.objects import figure_scene, scene_footprint
from vision import FrameFigures, evaluate_frame, mask_iou

YCB_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ycb"


def ycb_dir() -> Path | None:
    """The shared YCB folder, or None when this checkout has none beside it."""
    return YCB_DIR if YCB_DIR.is_dir() else None


def scene_and_camera(seed: int, view: str, *, noise: bool = True, width: int = 640,
                     height: int = 480):
    """(scene, SimCamera) of figure scene ``seed`` seen from ``view``, with YCB meshes when present."""
    return figure_scene(seed, view, ycb_dir=ycb_dir(), noise=noise, width=width, height=height)


def true_footprint(scene, instance: int, sil) -> np.ndarray:
    """(H, W) bool: the silhouette plane's pixels whose approach line meets object
    ``instance`` (offline_sim.objects.scene_footprint on the silhouette's plane)."""
    return scene_footprint(scene, instance, sil.T_base_plane, sil.shape, sil.metres_per_px)


iou = mask_iou


def evaluate(scene, frame, segmenter=None, *, seed: int = 0, view: str = "") -> FrameFigures:
    """vision.evaluate_frame of a figure scene's frame, silhouettes against the true footprint."""
    return evaluate_frame(frame, scene.object_names, segmenter, seed=seed, view=view,
                          footprint=lambda k, s: scene_footprint(scene, k, s.T_base_plane,
                                                                 s.shape, s.metres_per_px))
