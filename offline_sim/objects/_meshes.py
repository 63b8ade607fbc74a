"""Objects for grasp simulation: meshes in metres, mass, convex parts for contact, resting poses.

Scanned meshes (OBJ/STL/PLY) load with trimesh and are split into convex parts by CoACD,
cached on disk by content (it takes seconds to minutes per mesh). The built-in procedural set
is assembled from convex parts directly, so it needs no decomposition and no downloads.
"""
from __future__ import annotations

import hashlib
import math
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scoring import check_positive

DEFAULT_DENSITY = 600.0  # kg/m^3: household objects, between plastic shells and full wood
CACHE_VERSION = 1


@dataclass(frozen=True)
class Decomposition:
    """CoACD settings: concavity threshold (smaller = more, tighter parts) and a part cap."""

    threshold: float = 0.08
    max_parts: int = 12
    seed: int = 0


@dataclass
class GraspObject:
    """An object ready to simulate; lengths in metres, object frame at the centre of mass.

    parts : convex parts as (vertices (V, 3), faces (F, 3)) in the object frame;
    visual : (vertices, faces) of the full surface; mass_kg, radius_m (largest distance of the
    surface from the centre of mass: the torque scale of measure A); stable_poses : (n, 4, 4)
    T_table_object resting poses, most probable first, with their probabilities;
    source_sha256 : of the mesh file (None for built-ins).
    """

    name: str
    parts: list[tuple[np.ndarray, np.ndarray]]
    visual: tuple[np.ndarray, np.ndarray]
    mass_kg: float
    radius_m: float
    stable_poses: np.ndarray
    stable_probabilities: np.ndarray
    source_sha256: str | None = None
    extents_m: np.ndarray = field(default_factory=lambda: np.zeros(3))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def assemble_object(name: str, parts, density: float, sha: str | None, n_poses: int) -> GraspObject:
    """A GraspObject from convex trimesh parts: mass, centre of mass and resting poses."""
    import trimesh

    hulls = [p.convex_hull for p in parts]
    volumes = np.array([h.volume for h in hulls])
    if not (volumes > 0).all():
        raise ValueError(f"object {name!r}: a convex part has no volume")
    com = (np.array([h.center_mass for h in hulls]) * volumes[:, None]).sum(0) / volumes.sum()
    whole = trimesh.util.concatenate(parts)
    whole.apply_translation(-com)
    hull = whole.convex_hull
    poses, probs = trimesh.poses.compute_stable_poses(hull, center_mass=np.zeros(3),
                                                      n_samples=n_poses)
    order = np.argsort(-probs, kind="stable")
    verts = np.asarray(whole.vertices)
    return GraspObject(
        name=name,
        parts=[(np.asarray(h.vertices) - com, np.asarray(h.faces)) for h in hulls],
        visual=(verts, np.asarray(whole.faces)),
        mass_kg=float(density * volumes.sum()),
        radius_m=float(np.linalg.norm(verts, axis=1).max()),
        stable_poses=np.asarray(poses)[order], stable_probabilities=np.asarray(probs)[order],
        source_sha256=sha, extents_m=np.ptp(verts, axis=0))


def decompose(vertices: np.ndarray, faces: np.ndarray, settings: Decomposition = Decomposition(),
              cache_dir: str | Path | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Convex parts of a surface by CoACD, cached in cache_dir by mesh content and settings."""
    key = hashlib.sha256(np.ascontiguousarray(vertices, "<f8").tobytes()
                         + np.ascontiguousarray(faces, "<i8").tobytes()
                         + repr((settings, CACHE_VERSION)).encode()).hexdigest()
    cache = Path(cache_dir) / f"coacd-{key[:24]}.pkl" if cache_dir else None
    if cache is not None and cache.is_file():
        with open(cache, "rb") as f:
            return pickle.load(f)
    import coacd

    coacd.set_log_level("error")
    raw = coacd.run_coacd(coacd.Mesh(np.asarray(vertices, np.float64), np.asarray(faces, np.int32)),
                          threshold=settings.threshold, max_convex_hull=settings.max_parts,
                          seed=settings.seed)
    parts = [(np.asarray(v, np.float64), np.asarray(f, np.int64)) for v, f in raw]
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        # one temporary file per process: two runs decomposing the same mesh at once each
        # write their own and the last rename wins (a shared name crashed the slower one)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(parts, f)
        tmp.replace(cache)  # atomic: a killed run never leaves half a cache file
    return parts


def load_object(path: str | Path, *, name: str | None = None, scale: float = 1.0,
                density: float = DEFAULT_DENSITY, decomposition: Decomposition = Decomposition(),
                cache_dir: str | Path | None = None, n_poses: int = 6) -> GraspObject:
    """Load an OBJ/STL/PLY mesh (metres after ``scale``), decompose it and find its resting poses."""
    import trimesh

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"mesh {str(path)!r} does not exist")
    check_positive(scale, "scale")
    check_positive(density, "density")
    try:
        mesh = trimesh.load(path, force="mesh", process=True)
    except Exception as exc:  # noqa: BLE001 - trimesh raises many kinds
        raise ValueError(f"cannot read mesh {str(path)!r}: {exc}") from exc
    if len(mesh.faces) == 0:
        raise ValueError(f"mesh {str(path)!r} has no faces")
    mesh.apply_scale(scale)
    parts = decompose(mesh.vertices, mesh.faces, decomposition, cache_dir)
    return assemble_object(name or path.parent.name if path.stem == "visual" else name or path.stem,
                     [trimesh.Trimesh(v, f) for v, f in parts], density, _sha256(path), n_poses)


def _ring(radius_out: float, radius_in: float, height: float, z0: float, n: int = 12):
    """Convex wedge segments of a cylindrical wall (a tube) from z0 to z0 + height."""
    import trimesh

    segs = []
    for k in range(n):
        a0, a1 = 2 * math.pi * k / n, 2 * math.pi * (k + 1) / n
        pts = [(r * math.cos(a), r * math.sin(a), z) for r in (radius_in, radius_out)
               for a in (a0, a1) for z in (z0, z0 + height)]
        segs.append(trimesh.convex.convex_hull(np.array(pts)))
    return segs


def builtin_object(name: str, density: float = DEFAULT_DENSITY) -> GraspObject:
    """One of the procedural objects: box, cylinder, bottle, mug, banana, wedge, l_bracket."""
    import trimesh
    from trimesh.creation import box, capsule, cylinder

    def at(mesh, xyz):
        mesh.apply_translation(xyz)
        return mesh

    if name == "box":
        parts = [box((0.05, 0.08, 0.12))]
    elif name == "cylinder":
        parts = [cylinder(radius=0.035, height=0.12, sections=24)]
    elif name == "bottle":
        parts = [at(cylinder(radius=0.035, height=0.14, sections=24), (0, 0, 0.07)),
                 at(cylinder(radius=0.024, height=0.03, sections=24), (0, 0, 0.155)),
                 at(cylinder(radius=0.014, height=0.04, sections=16), (0, 0, 0.19))]
    elif name == "mug":
        handle = [at(box((0.012, 0.012, 0.07)), (0.062, 0, 0.05)),
                  at(box((0.024, 0.012, 0.012)), (0.05, 0, 0.079)),
                  at(box((0.024, 0.012, 0.012)), (0.05, 0, 0.021))]
        parts = (_ring(0.04, 0.034, 0.1, 0.0) + [at(cylinder(radius=0.04, height=0.008, sections=24),
                                                   (0, 0, 0.004))] + handle)
    elif name == "banana":  # a curved capsule: short straight capsules along an arc
        parts = []
        for k in range(5):
            a = math.radians(-40 + 20 * k)
            c = capsule(height=0.035, radius=0.018, count=[10, 10])
            c.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2 + a, [0, 0, 1])
                              @ trimesh.transformations.rotation_matrix(math.pi / 2, [1, 0, 0]))
            parts.append(at(c, (0.12 * math.sin(a), 0.12 * (1 - math.cos(a)), 0.018)))
    elif name == "wedge":
        pts = [(x, y, z) for x in (-0.04, 0.04) for y in (-0.03, 0.03) for z in (0,)]
        pts += [(-0.04, y, 0.06) for y in (-0.03, 0.03)]
        parts = [trimesh.convex.convex_hull(np.array(pts))]
    elif name == "l_bracket":
        parts = [at(box((0.1, 0.04, 0.012)), (0.05, 0, 0.006)),
                 at(box((0.012, 0.04, 0.08)), (0.006, 0, 0.052))]
    else:
        raise ValueError(f"unknown built-in object {name!r}; choose from {', '.join(BUILTIN_OBJECTS)}")
    return assemble_object(name, parts, density, None, n_poses=6)


BUILTIN_OBJECTS = ("box", "cylinder", "bottle", "mug", "banana", "wedge", "l_bracket")


def object_mjcf(obj: GraspObject, prefix: str, rgba: str = "0.8 0.5 0.3 1") -> tuple[str, str]:
    """(asset XML, geoms XML) of an object's convex parts as inline MuJoCo meshes, with the
    object's mass spread over the parts by volume."""
    assets, geoms = [], []
    volumes = np.array([_hull_volume(v, f) for v, f in obj.parts])
    for k, (v, f) in enumerate(obj.parts):
        vert = " ".join(f"{c:.6g}" for c in v.ravel())
        face = " ".join(str(int(i)) for i in f.ravel())
        assets.append(f'<mesh name="{prefix}_p{k}" vertex="{vert}" face="{face}"/>')
        mass = obj.mass_kg * volumes[k] / volumes.sum()
        geoms.append(f'<geom name="{prefix}_g{k}" type="mesh" mesh="{prefix}_p{k}" '
                     f'mass="{mass:.6g}" rgba="{rgba}"/>')
    return "".join(assets), "".join(geoms)


def _hull_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Volume of a closed triangle mesh (divergence theorem), m^3."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    return float(abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0)
