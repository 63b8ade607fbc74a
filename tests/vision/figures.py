"""The vision figures on SimCamera scenes, as tests/vision/test_figures.py calls them: the
package's figure scenes (offline_sim.figure_scene) with this checkout's YCB folder, judged by
vision.evaluate_frame against the footprint ray-cast from the MuJoCo geometry
(offline_sim.scene_footprint). benchmarks/bench_vision.py uses the same package functions.
"""
from __future__ import annotations

from pathlib import Path

from offline_sim import figure_scene, scene_footprint
from vision import FrameFigures, evaluate_frame

YCB_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ycb"


def ycb_dir() -> Path | None:
    """The shared YCB folder, or None when this checkout has none beside it."""
    return YCB_DIR if YCB_DIR.is_dir() else None


def scene_and_camera(seed: int, view: str, *, noise: bool = True):
    """(scene, SimCamera) of figure scene ``seed`` seen from ``view``, with YCB meshes when present."""
    return figure_scene(seed, view, ycb_dir=ycb_dir(), noise=noise)


def evaluate(scene, frame, segmenter=None, *, seed: int = 0, view: str = "") -> FrameFigures:
    """vision.evaluate_frame of a figure scene's frame, silhouettes against the true footprint."""
    return evaluate_frame(frame, scene.object_names, segmenter, seed=seed, view=view,
                          footprint=lambda k, s: scene_footprint(scene, k, s.T_base_plane,
                                                                 s.shape, s.metres_per_px))
