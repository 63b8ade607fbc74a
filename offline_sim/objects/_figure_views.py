"""Seeded SimCamera scenes for the vision figures, and the true footprint of an object in them.

The vision tests (tests/vision/test_figures.py) and benchmarks/bench_vision.py judge the same
scenes: tabletop scene ``seed`` holds 3 + seed % 6 objects (3-8), seen from one of
FIGURE_VIEWS. The footprint is ray-cast from the MuJoCo geometry, so it is exact where the
camera's depth is not.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ._tabletop import TabletopScene, build_tabletop_scene

# eye and target of each view, metres, offsets from the centre of the table top
FIGURE_VIEWS = {"straight-down": ((0.0, 0.0, 0.70), (0.0, 0.0, 0.0)),
                "oblique": ((0.45, 0.15, 0.55), (0.0, 0.0, 0.0))}


def figure_scene(seed: int, view: str, *, ycb_dir: str | Path | None = None, noise: bool = True,
                 width: int = 640, height: int = 480):
    """(TabletopScene, SimCamera) of figure scene ``seed``: 3 + seed % 6 boxes, cylinders and,
    with ycb_dir, YCB meshes, seen from FIGURE_VIEWS[view] by a D435-like 640 x 480 camera
    (D400-like depth noise unless noise=False)."""
    from drivers.camera import intrinsics_from_fov, look_at

    if view not in FIGURE_VIEWS:
        raise ValueError(f"view must be one of {sorted(FIGURE_VIEWS)}, got {view!r}")
    scene = build_tabletop_scene(n_objects=3 + seed % 6, seed=seed, ycb_dir=ycb_dir)
    eye, target = (np.asarray(p) + (0.0, 0.0, scene.table_height_m) for p in FIGURE_VIEWS[view])
    cam = scene.camera(intrinsics_from_fov(width, height), look_at(eye, target), noise=noise,
                       seed=seed)
    return scene, cam


def scene_footprint(scene: TabletopScene, instance: int, T_base_plane: np.ndarray,
                    shape: tuple[int, int], metres_per_px: float, *,
                    far_m: float = 1000.0) -> np.ndarray:
    """(H, W) bool: pixels of a projection plane whose approach line (the plane's z axis)
    meets object ``instance`` before the plane. T_base_plane : (4, 4), its origin at the
    centre of pixel (0, 0), x along columns, y along rows; metres_per_px : pixel size, metres.

    mj_multiRay takes one origin, so the rays start far_m behind the plane's centre and aim
    at each pixel: at 1 km they are parallel to 1e-4 rad, 20 um off over the 20 cm above
    the plane that matter.
    """
    import mujoco

    h, w = shape
    v, u = np.mgrid[0:h, 0:w]
    T = np.asarray(T_base_plane, np.float64)
    pts = T[:3, 3] + np.outer(u.ravel() * metres_per_px, T[:3, 0]) \
        + np.outer(v.ravel() * metres_per_px, T[:3, 1])
    centre = T[:3, 3] + ((w - 1) / 2 * T[:3, 0] + (h - 1) / 2 * T[:3, 1]) * metres_per_px
    origin = centre - far_m * T[:3, 2]
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
