"""Tabletop scenes in MuJoCo: a table and objects resting on it, built as MJCF in code."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from ._meshes import GraspObject

TABLE_HALF_EXTENTS_M = (0.40, 0.30)
TABLE_THICKNESS_M = 0.04
GAP_M = 0.015  # least free space between two objects' bounding circles


@dataclass(frozen=True)
class ObjectSpec:
    """One object of a scene; lengths in metres.

    kind : "box" (size = full extents x, y, z), "cylinder" (size = radius, height) or "mesh"
    (mesh_path: an OBJ/STL in metres, +z up, scaled by ``scale``; size unused).
    place : (x, y, yaw) on the table (metres from its centre, radians), or None for random.
    """

    name: str
    kind: str
    size: tuple[float, ...] = ()
    mesh_path: str | None = None
    scale: float = 1.0
    rgba: tuple[float, float, float, float] = (0.8, 0.4, 0.2, 1.0)
    place: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        wanted = {"box": 3, "cylinder": 2, "mesh": 0}
        if self.kind not in wanted:
            raise ValueError(f"ObjectSpec {self.name!r}: kind must be box, cylinder or mesh, "
                             f"got {self.kind!r}")
        if self.kind == "mesh":
            if not self.mesh_path or not Path(self.mesh_path).is_file():
                raise ValueError(f"ObjectSpec {self.name!r}: mesh_path {self.mesh_path!r} is not a file")
        elif len(self.size) != wanted[self.kind] or not all(s > 0 for s in self.size):
            raise ValueError(f"ObjectSpec {self.name!r}: a {self.kind} needs {wanted[self.kind]} "
                             f"sizes > 0, got {self.size!r}")


@dataclass
class TabletopScene:
    """A built scene: MuJoCo model and data, and what is where.

    object_names[k - 1] is instance k; geom_instance : (ngeom,) int32 instance id per geom (0 =
    table and floor); table_height_m : world z of the table top; poses : (n, 4, 4) T_world_object.
    """

    model: object
    data: object
    specs: list[ObjectSpec]
    geom_instance: np.ndarray
    table_height_m: float
    poses: np.ndarray
    object_names: list[str] = field(default_factory=list)

    def camera(self, intrinsics, T_world_camera: np.ndarray, *, noise: bool = True,
               seed: int | None = 0):
        """A SimCamera on this scene, instance ids filled (noise: the D400-like model or none)."""
        from drivers.camera import DepthNoise, SimCamera

        return SimCamera(self.model, self.data, intrinsics, T_world_camera,
                         noise=DepthNoise() if noise else None,
                         geom_instance=self.geom_instance, seed=seed)


def ycb_specs(ycb_dir: str | Path) -> list[ObjectSpec]:
    """One mesh ObjectSpec per object folder of a YCB subset (``<name>/visual.obj``)."""
    root = Path(ycb_dir)
    if not root.is_dir():
        raise ValueError(f"ycb_dir {str(root)!r} is not a folder")
    palette = [(0.9, 0.8, 0.2, 1), (0.8, 0.3, 0.2, 1), (0.3, 0.5, 0.8, 1), (0.9, 0.7, 0.1, 1),
               (0.2, 0.2, 0.25, 1)]
    return [ObjectSpec(p.parent.name, "mesh", mesh_path=str(p), rgba=palette[i % len(palette)])
            for i, p in enumerate(sorted(root.glob("*/visual.obj")))]


def random_specs(n: int, rng: np.random.Generator, ycb: list[ObjectSpec] = ()) -> list[ObjectSpec]:
    """n graspable objects: boxes and cylinders of random size, and YCB meshes if given."""
    specs = []
    pool = list(ycb)
    for k in range(n):
        colour = tuple(rng.uniform(0.25, 0.95, 3)) + (1.0,)
        pick = rng.integers(3 if pool else 2)
        if pick == 2:
            specs.append(pool.pop(rng.integers(len(pool))))
            continue
        if pick == 0:
            size = (rng.uniform(0.035, 0.09), rng.uniform(0.035, 0.12), rng.uniform(0.03, 0.15))
            specs.append(ObjectSpec(f"box{k}", "box", size, rgba=colour))
        else:
            size = (rng.uniform(0.02, 0.045), rng.uniform(0.04, 0.16))
            specs.append(ObjectSpec(f"cylinder{k}", "cylinder", size, rgba=colour))
    return specs


def support_points(spec: ObjectSpec) -> np.ndarray:
    """(N, 3) points of the object's convex hull in its own frame, metres: box corners, cylinder
    rims (64 points each, exact at the 4 axis directions) or mesh vertices."""
    if spec.kind == "box":
        corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1], indexing="ij")).reshape(3, -1).T
        return 0.5 * corners * np.asarray(spec.size, np.float64)
    if spec.kind == "cylinder":
        a = np.linspace(0.0, 2.0 * math.pi, 64, endpoint=False)
        r, h = spec.size[0], 0.5 * spec.size[1]
        rim = np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
        return np.concatenate([np.column_stack([rim, np.full(64, -h)]),
                               np.column_stack([rim, np.full(64, h)])])
    import trimesh

    mesh = trimesh.load(spec.mesh_path, force="mesh", process=False)
    return np.asarray(mesh.vertices, np.float64) * spec.scale


def object_points(obj: ObjectSpec | GraspObject) -> np.ndarray:
    """(N, 3) points of the object's surface in its frame, metres (for the resting height)."""
    return obj.visual[0] if isinstance(obj, GraspObject) else support_points(obj)


def _extent(spec: ObjectSpec) -> tuple[float, float]:
    """(bounding radius in the table plane, lowest z) of an object in its own frame, metres."""
    v = support_points(spec)
    return float(np.hypot(v[:, 0], v[:, 1]).max()), float(v[:, 2].min())


def _place(radii: list[float], fixed: list, rng: np.random.Generator,
           half: tuple[float, float]) -> np.ndarray:
    """(n, 3) x, y, yaw of objects on the table: ``fixed[k]`` where given, else at random
    where it overlaps no other (rejection sampling)."""
    placed: list[tuple[float, float, float]] = [(f[0], f[1], r) for f, r in zip(fixed, radii) if f]
    yaws = [f[2] if f else rng.uniform(-math.pi, math.pi) for f in fixed]
    for r, f in zip(radii, fixed):
        if f:
            continue
        for _ in range(2000):
            x = rng.uniform(-half[0] + r, half[0] - r)
            y = rng.uniform(-half[1] + r, half[1] - r)
            if all(math.hypot(x - px, y - py) >= r + pr + GAP_M for px, py, pr in placed):
                placed.append((x, y, r))
                break
        else:
            raise ValueError(f"cannot place {len(radii)} objects on a table of half extents "
                             f"{half} m without overlap; use fewer or smaller objects")
    xy = {}
    it = iter(placed[sum(1 for f in fixed if f):])
    for k, f in enumerate(fixed):
        xy[k] = (f[0], f[1]) if f else next(it)[:2]
    return np.array([(*xy[k], yaws[k]) for k in range(len(fixed))]).reshape(-1, 3)


def primitive_geom_xml(spec: ObjectSpec, k: int) -> tuple[str, str]:
    """(asset XML, geom XML) of object k."""
    rgba = " ".join(f"{c:.3f}" for c in spec.rgba)
    if spec.kind == "box":
        half = " ".join(f"{0.5 * s:.5f}" for s in spec.size)
        return "", f'<geom name="obj{k}" type="box" size="{half}" rgba="{rgba}"/>'
    if spec.kind == "cylinder":
        return "", (f'<geom name="obj{k}" type="cylinder" size="{spec.size[0]:.5f} '
                    f'{0.5 * spec.size[1]:.5f}" rgba="{rgba}"/>')
    s = f"{spec.scale:.6g}"
    asset = f'<mesh name="mesh{k}" file={quoteattr(str(Path(spec.mesh_path).resolve()))} scale="{s} {s} {s}"/>'
    return asset, f'<geom name="obj{k}" type="mesh" mesh="mesh{k}" rgba="{rgba}"/>'


def build_tabletop_scene(objects: list[ObjectSpec] | None = None, *, n_objects: int = 5,
                         seed: int | None = 0, ycb_dir: str | Path | None = None,
                         table_half_extents_m: tuple[float, float] = TABLE_HALF_EXTENTS_M,
                         table_height_m: float = 0.75) -> TabletopScene:
    """A table with objects resting upright on it at random non-overlapping places and yaws.

    objects : the objects, or None for n_objects random boxes and cylinders (and YCB meshes
    from ycb_dir when given). Same seed, same scene. The world frame is the robot base.
    """
    import mujoco

    if objects is None and (isinstance(n_objects, bool) or not 1 <= n_objects <= 20):
        raise ValueError(f"n_objects must be between 1 and 20, got {n_objects!r}")
    rng = np.random.default_rng(seed)
    specs = list(objects) if objects is not None else random_specs(
        n_objects, rng, ycb_specs(ycb_dir) if ycb_dir is not None else [])
    extents = [_extent(s) for s in specs]
    xy_yaw = _place([r for r, _ in extents], [s.place for s in specs], rng, table_half_extents_m)

    assets, bodies, poses = [], [], []
    for k, (spec, (_, z_low), (x, y, yaw)) in enumerate(zip(specs, extents, xy_yaw), start=1):
        asset, geom = primitive_geom_xml(spec, k)
        assets.append(asset)
        z = table_height_m - z_low
        q = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
        bodies.append(f'<body name="object{k}" pos="{x:.5f} {y:.5f} {z:.5f}" '
                      f'quat="{" ".join(f"{c:.6f}" for c in q)}"><freejoint/>{geom}</body>')
        T = np.eye(4)
        T[:3, :3] = [[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]]
        T[:3, 3] = (x, y, z)
        poses.append(T)
    hx, hy = table_half_extents_m
    xml = f"""<mujoco model="tabletop">
  <asset>{''.join(assets)}</asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" rgba="0.45 0.45 0.45 1"/>
    <geom name="table" type="box" pos="0 0 {table_height_m - TABLE_THICKNESS_M / 2:.5f}"
          size="{hx:.5f} {hy:.5f} {TABLE_THICKNESS_M / 2:.5f}" rgba="0.62 0.55 0.45 1"/>
    {''.join(bodies)}
  </worldbody>
</mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom_instance = np.zeros(model.ngeom, np.int32)
    for k in range(1, len(specs) + 1):
        geom_instance[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"obj{k}")] = k
    return TabletopScene(model, data, specs, geom_instance, table_height_m,
                         np.array(poses).reshape(-1, 4, 4), [s.name for s in specs])
