"""Analytic RGB-D frames for the vision tests: a table plane with boxes and cylinders,
ray-cast with numpy, with an optional depth-noise and hole model, and exact footprints."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from drivers.camera import Intrinsics, RGBDFrame

INTR = Intrinsics(640, 480, 600.0, 600.0, 319.5, 239.5)
TABLE_Z = 0.0  # world z of the table top; world = base


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """T_world_camera of an optical frame (z forward, x right, y down) at eye looking at target."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    if np.linalg.norm(x) < 1e-6:  # looking along up: take world x as the image's right
        x = np.cross(z, (0.0, 1.0, 0.0))
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.stack([x, np.cross(z, x), z], axis=1)
    T[:3, 3] = eye
    return T


def pose(xyz, yaw=0.0, roll=0.0) -> np.ndarray:
    """4 x 4 pose: rotation about world z by yaw after one about x by roll, at xyz."""
    cz, sz, cx, sx = math.cos(yaw), math.sin(yaw), math.cos(roll), math.sin(roll)
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    T = np.eye(4)
    T[:3, :3] = Rz @ Rx
    T[:3, 3] = xyz
    return T


@dataclass
class Box:
    """A box of half extents (hx, hy, hz), metres, at pose T (world)."""

    T: np.ndarray
    half: tuple[float, float, float]

    def hit(self, o: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Ray parameter of the first hit (inf for a miss) of rays o + t d, t > 0."""
        R, p = self.T[:3, :3], self.T[:3, 3]
        ol, dl = (o - p) @ R, d @ R
        h = np.asarray(self.half)
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (-h - ol) / dl, (h - ol) / dl
        tmin = np.nanmax(np.minimum(t1, t2), axis=1)
        tmax = np.nanmin(np.maximum(t1, t2), axis=1)
        return np.where((tmax >= tmin) & (tmin > 0), tmin, np.inf)


@dataclass
class Cylinder:
    """A cylinder of radius r and half length hl along its local z, at pose T (world)."""

    T: np.ndarray
    radius: float
    half_length: float

    def hit(self, o: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Ray parameter of the first hit (inf for a miss) of rays o + t d, t > 0."""
        R, p = self.T[:3, :3], self.T[:3, 3]
        ol, dl = (o - p) @ R, d @ R
        a = dl[:, 0] ** 2 + dl[:, 1] ** 2
        b = 2 * (ol[:, 0] * dl[:, 0] + ol[:, 1] * dl[:, 1])
        c = ol[:, 0] ** 2 + ol[:, 1] ** 2 - self.radius ** 2
        disc = b * b - 4 * a * c
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = (-b - np.sqrt(disc)) / (2 * a)
            side = (disc >= 0) & (ts > 0) & (np.abs(ol[:, 2] + ts * dl[:, 2]) <= self.half_length)
            best = np.where(side, ts, np.inf)
            for zc in (-self.half_length, self.half_length):
                tc = (zc - ol[:, 2]) / dl[:, 2]
                xy2 = (ol[:, 0] + tc * dl[:, 0]) ** 2 + (ol[:, 1] + tc * dl[:, 1]) ** 2
                best = np.where((tc > 0) & (xy2 <= self.radius ** 2) & (tc < best), tc, best)
        return best


@dataclass
class Scene:
    """Table (top at TABLE_Z, half size table_half metres) and objects; object k has id k + 1."""

    objects: list = field(default_factory=list)
    table_half: float = 0.6

    def cast(self, o: np.ndarray, d: np.ndarray, table: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(t, id) of the first hit of each ray; id 0 = table, -1 = nothing."""
        t = np.full(o.shape[0], np.inf)
        ids = np.full(o.shape[0], -1, np.int32)
        if table:
            with np.errstate(divide="ignore", invalid="ignore"):
                tt = (TABLE_Z - o[:, 2]) / d[:, 2]
            x, y = o[:, 0] + tt * d[:, 0], o[:, 1] + tt * d[:, 1]
            on = (tt > 0) & (np.abs(x) <= self.table_half) & (np.abs(y) <= self.table_half)
            t = np.where(on, tt, t)
            ids[on] = 0
        for k, obj in enumerate(self.objects):
            tk = obj.hit(o, d)
            closer = tk < t
            t = np.where(closer, tk, t)
            ids[closer] = k + 1
        return t, ids


def render(scene: Scene, T_world_camera: np.ndarray, *, intr: Intrinsics = INTR,
           noise: bool = False, seed: int = 0, table: bool = True) -> RGBDFrame:
    """An RGBDFrame of the scene (world = base) with instance ids; with noise: depth noise
    0.5 mm + 1.5 mm/m² z², 1 % dropped pixels, a few hole blobs and some NaN readings."""
    v, u = np.mgrid[0:intr.height, 0:intr.width]
    d_cam = np.stack([(u - intr.cx) / intr.fx, (v - intr.cy) / intr.fy, np.ones_like(u, float)], -1)
    d_cam = d_cam.reshape(-1, 3)
    R, p = T_world_camera[:3, :3], T_world_camera[:3, 3]
    t, ids = scene.cast(np.broadcast_to(p, d_cam.shape), d_cam @ R.T, table=table)
    depth = np.where(np.isfinite(t), t, 0.0).reshape(intr.height, intr.width)  # t is z here
    ids = ids.reshape(intr.height, intr.width)
    palette = np.array([[150, 150, 150]] + [[(60 * k) % 256, (120 + 80 * k) % 256, (200 - 50 * k) % 256]
                                            for k in range(1, 20)], np.uint8)
    color = np.where(ids[..., None] >= 0, palette[np.clip(ids, 0, 19)], 0).astype(np.uint8)
    if noise:
        rng = np.random.default_rng(seed)
        sigma = 0.0005 + 0.0015 * depth ** 2
        depth = depth + rng.normal(0.0, 1.0, depth.shape) * sigma * (depth > 0)
        depth[rng.random(depth.shape) < 0.01] = 0.0
        holes = np.zeros(depth.shape, np.uint8)
        for _ in range(8):
            c = (int(rng.integers(0, intr.width)), int(rng.integers(0, intr.height)))
            cv2.circle(holes, c, int(rng.integers(2, 6)), 1, -1)
        depth[holes.astype(bool)] = 0.0
        depth[rng.random(depth.shape) < 0.002] = np.nan
    return RGBDFrame(color=color, depth_m=depth.astype(np.float32), intrinsics=intr,
                     T_base_camera=T_world_camera, seq=seed,
                     instance_ids=np.maximum(ids, 0).astype(np.int32))


def footprint(obj, T_base_plane: np.ndarray, shape: tuple[int, int], metres_per_px: float,
              reach_m: float = 2.0) -> np.ndarray:
    """(H, W) bool: the pixels whose approach line meets the solid before the plane (z = 0):
    the exact silhouette of its part above the plane, projected along the plane's z."""
    v, u = np.mgrid[0:shape[0], 0:shape[1]]
    pts = T_base_plane[:3, 3] + (u.reshape(-1, 1) * T_base_plane[:3, 0]
                                 + v.reshape(-1, 1) * T_base_plane[:3, 1]) * metres_per_px
    a = T_base_plane[:3, 2]
    t = obj.hit(pts - reach_m * a, np.broadcast_to(a, pts.shape))
    return (t < reach_m).reshape(shape)


def upright_box(x, y, size, yaw=0.0) -> Box:
    """A box of size (sx, sy, sz) standing on the table at (x, y), turned by yaw."""
    return Box(pose((x, y, TABLE_Z + size[2] / 2), yaw), tuple(s / 2 for s in size))


def upright_cylinder(x, y, radius, height) -> Cylinder:
    """A cylinder standing on the table at (x, y)."""
    return Cylinder(pose((x, y, TABLE_Z + height / 2)), radius, height / 2)


def lying_cylinder(x, y, radius, length, yaw=0.0) -> Cylinder:
    """A cylinder lying on the table at (x, y), its axis horizontal at yaw."""
    return Cylinder(pose((x, y, TABLE_Z + radius), yaw, math.pi / 2), radius, length / 2)


def random_scene(n: int, seed: int) -> Scene:
    """n boxes and cylinders on the table, at least 2 cm apart (no touching), within 0.2 m."""
    rng = np.random.default_rng(seed)
    objs, placed = [], []
    while len(objs) < n:
        kind = rng.integers(0, 3)
        if kind == 0:
            size = rng.uniform([0.03, 0.03, 0.03], [0.09, 0.09, 0.12])
            extent = np.hypot(size[0], size[1]) / 2
        elif kind == 1:
            r, hgt = rng.uniform(0.02, 0.045), rng.uniform(0.04, 0.14)
            extent = r
        else:
            r, length = rng.uniform(0.015, 0.035), rng.uniform(0.06, 0.14)
            extent = length / 2
        xy = rng.uniform(-0.2, 0.2, 2)
        if any(np.hypot(*(xy - q)) < extent + e + 0.02 for q, e in placed):
            continue
        placed.append((xy, extent))
        yaw = rng.uniform(0, math.pi)
        if kind == 0:
            objs.append(upright_box(xy[0], xy[1], size, yaw))
        elif kind == 1:
            objs.append(upright_cylinder(xy[0], xy[1], r, hgt))
        else:
            objs.append(lying_cylinder(xy[0], xy[1], r, length, yaw))
    return Scene(objs)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two bool masks (1 when both are empty)."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 1.0
