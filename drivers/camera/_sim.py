"""SimCamera: RGB-D frames ray-cast from any MuJoCo model, with a D400-like depth noise model."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._base import Camera
from ._types import Intrinsics, RGBDFrame


def intrinsics_from_fov(width: int = 640, height: int = 480,
                        hfov_rad: float = math.radians(69.0)) -> Intrinsics:
    """Distortion-free intrinsics with a horizontal field of view (a D435's colour camera: 69°)."""
    f = 0.5 * width / math.tan(hfov_rad / 2.0)
    return Intrinsics(width, height, f, f, (width - 1) / 2.0, (height - 1) / 2.0)


@dataclass(frozen=True)
class DepthNoise:
    """Depth errors of an active-stereo camera like the RealSense D400 series.

    Stereo matching errs by ``subpixel_px`` of disparity (d = f b / z), so the depth error grows
    with distance squared: σ_z = z² σ_d / (f b). Depth is stored in ``depth_unit_m`` steps.
    Holes: surfaces seen at more than ``max_incidence_rad`` from their normal, a band of
    ``edge_px`` pixels beside depth steps larger than ``edge_jump_m`` (occlusion shadows; each
    pixel lost with probability ``edge_drop``), random ``dropout``, and ranges outside
    [min_range_m, max_range_m].
    """

    baseline_m: float = 0.050
    subpixel_px: float = 0.08
    depth_unit_m: float = 0.001
    max_incidence_rad: float = math.radians(78.0)
    edge_jump_m: float = 0.02
    edge_px: int = 2
    edge_drop: float = 0.6
    dropout: float = 0.002
    min_range_m: float = 0.11
    max_range_m: float = 6.0


class SimCamera(Camera):
    """A camera rendering depth, colour and instance ids from a MuJoCo model by ray casting.

    Each pixel casts one ray with ``mujoco.mj_multiRay`` (no OpenGL needed) against the current
    state in ``data`` (the camera never steps the simulation). model, data : MuJoCo objects;
    intrinsics : the image; T_world_camera : 4 x 4 pose of the optical frame in the world (the
    world is the robot base: frames carry it as T_base_camera); noise : a DepthNoise or None
    for exact depth; geom_instance : (ngeom,) int, instance id per geom (0 = not an object);
    geomgroup : MuJoCo geom groups to see (None = all); seed : of the noise.
    """

    def __init__(self, model, data, intrinsics: Intrinsics, T_world_camera: np.ndarray, *,
                 noise: DepthNoise | None = DepthNoise(), geom_instance: np.ndarray | None = None,
                 geomgroup: np.ndarray | None = None, seed: int | None = 0) -> None:
        T = np.asarray(T_world_camera, np.float64)
        if T.shape != (4, 4) or not np.isfinite(T).all():
            raise ValueError(f"T_world_camera must be a finite 4 x 4 array, got shape {T.shape}")
        if geom_instance is not None and len(geom_instance) != model.ngeom:
            raise ValueError(f"geom_instance must have one entry per geom ({model.ngeom}), "
                             f"got {len(geom_instance)}")
        self._model, self._data = model, data
        self._intr = intrinsics
        self._T = T
        self._noise = noise
        self._rng = np.random.default_rng(seed)
        self._geom_instance = (np.zeros(model.ngeom, np.int32) if geom_instance is None
                               else np.asarray(geom_instance, np.int32))
        self._geomgroup = None if geomgroup is None else np.asarray(geomgroup, np.uint8)
        self._seq = 0
        # Unit ray directions in the optical frame, and their z (depth = distance * z).
        v, u = np.mgrid[0:intrinsics.height, 0:intrinsics.width].astype(np.float64)
        rays = intrinsics.deproject_pixels(u, v, 1.0)
        rays /= np.linalg.norm(rays, axis=-1, keepdims=True)
        self._ray_z = rays[..., 2].astype(np.float32)
        self._rays_cam = rays.reshape(-1, 3)

    @property
    def intrinsics(self) -> Intrinsics:
        return self._intr

    @property
    def T_world_camera(self) -> np.ndarray:
        """Pose of the optical frame in the world, 4 x 4."""
        return self._T.copy()

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        import mujoco  # only a simulated camera needs it

        h, w = self._intr.height, self._intr.width
        n = h * w
        vec = np.ascontiguousarray((self._rays_cam @ self._T[:3, :3].T).ravel())
        geomid = np.empty(n, np.int32)
        dist = np.empty(n, np.float64)
        normal = np.empty(3 * n, np.float64)
        mujoco.mj_multiRay(self._model, self._data, np.ascontiguousarray(self._T[:3, 3]), vec,
                           self._geomgroup, True, -1, geomid, dist, normal, n, 1e6)
        hit = (geomid >= 0).reshape(h, w)
        depth = np.where(hit, dist.reshape(h, w) * self._ray_z, 0.0).astype(np.float32)
        normal_w = normal.reshape(h, w, 3)
        cos_incidence = -np.einsum("hwk,hwk->hw", normal_w, vec.reshape(h, w, 3))
        ids = np.where(geomid >= 0, self._geom_instance[np.maximum(geomid, 0)], 0).reshape(h, w)
        color = self._shade(geomid.reshape(h, w), hit, cos_incidence)
        if self._noise is not None:
            depth = self._noisy(depth, hit, cos_incidence)
        self._seq += 1
        return RGBDFrame(color=color, depth_m=depth, intrinsics=self._intr,
                         T_base_camera=self._T.copy(), stamp_s=float(self._data.time),
                         seq=self._seq, instance_ids=ids.astype(np.int32))

    def _shade(self, geomid: np.ndarray, hit: np.ndarray, cos_incidence: np.ndarray) -> np.ndarray:
        """RGB uint8: each geom's colour lit by a headlight, grey where nothing is hit."""
        m = self._model
        rgba = m.geom_rgba.copy()
        has_mat = m.geom_matid >= 0
        rgba[has_mat] = m.mat_rgba[m.geom_matid[has_mat]]
        base = rgba[np.maximum(geomid, 0), :3]
        light = 0.35 + 0.65 * np.clip(cos_incidence, 0.0, 1.0)
        rgb = np.where(hit[..., None], base * light[..., None], 0.15)
        return np.clip(rgb * 255.0 + 0.5, 0, 255).astype(np.uint8)

    def _noisy(self, depth: np.ndarray, hit: np.ndarray, cos_incidence: np.ndarray) -> np.ndarray:
        """Depth with the D400-like errors and holes of ``self._noise``."""
        p, rng = self._noise, self._rng
        f_b = self._intr.fx * p.baseline_m
        z = depth.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            disparity = np.where(hit, f_b / z, 0.0) + rng.normal(0.0, p.subpixel_px, z.shape)
            z = np.where(hit & (disparity > 0), f_b / disparity, 0.0)
        z = np.round(z / p.depth_unit_m) * p.depth_unit_m
        holes = ~hit | (cos_incidence < math.cos(p.max_incidence_rad))
        holes |= (z < p.min_range_m) | (z > p.max_range_m)
        holes |= rng.random(z.shape) < p.dropout
        holes |= self._edge_band(depth, p) & (rng.random(z.shape) < p.edge_drop)
        return np.where(holes, 0.0, z).astype(np.float32)

    @staticmethod
    def _edge_band(depth: np.ndarray, p: DepthNoise) -> np.ndarray:
        """Pixels within edge_px of a depth step larger than edge_jump_m."""
        import cv2

        step = np.zeros(depth.shape, bool)
        step[:, 1:] |= np.abs(np.diff(depth, axis=1)) > p.edge_jump_m
        step[1:, :] |= np.abs(np.diff(depth, axis=0)) > p.edge_jump_m
        if p.edge_px <= 0:
            return step
        kernel = np.ones((2 * p.edge_px + 1, 2 * p.edge_px + 1), np.uint8)
        return cv2.dilate(step.astype(np.uint8), kernel) > 0
