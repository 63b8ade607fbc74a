"""Evaluating grasp candidates by dynamic simulation under pose uncertainty (Kim et al.).

``SimEvaluatorFactory`` is what a database build ships to each worker: a small, picklable
description (object source, hand source, settings) from which the worker compiles its
simulation world once and then evaluates candidates by index.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ._build import digest
from ._candidates import GraspCandidates
from geometry import invert
from ._writer import GraspRecord
from ..hands import BUILTIN_HANDS, builtin_hand, load_mjcf_hand, open_hand_volume
from ..objects import BUILTIN_OBJECTS, DEFAULT_DENSITY, GraspObject, builtin_object, load_object
from ..dynamics._native import check_closing
from ..quality import (MonteCarloSettings, TrialMeasures, evaluate_batched,
                       evaluate_under_uncertainty, ferrari_canny)

MESH_SUFFIXES = (".obj", ".stl", ".ply")
# modules of offline_sim (paths under it) that cannot change a grasp's results: the build's
# orchestration, the writer, the vision figures' scenes; with every package's __init__.py and
# the simulated cell (cell/), they are left out, and every other module's source is part of
# the measures' code version
_NOT_MEASURES = ("database/_build.py", "database/_writer.py", "objects/_figure_views.py")


@lru_cache(maxsize=1)
def measures_code_version() -> str:
    """Digest of the code that computes a grasp's results: offline_sim's measure modules'
    source and the versions of MuJoCo and CoACD (the simulation and the decomposition)."""
    import importlib.metadata as md

    root = Path(__file__).parents[1]  # offline_sim
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    files = [f for f in files if f not in _NOT_MEASURES and not f.startswith("cell/")
             and not f.endswith("__init__.py")]
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode() + b"\0" + (root / f).read_bytes() + b"\0")
    for dist in ("mujoco", "coacd"):
        try:
            h.update(f"{dist}=={md.version(dist)}".encode())
        except md.PackageNotFoundError:
            h.update(f"{dist} absent".encode())
    return h.hexdigest()[:16]


def hand_digest(model) -> str:
    """Digest of a HandModel: its parameters and its compiled MJCF (MuJoCo's binary model,
    which holds every mesh and asset the file pulls in)."""
    import mujoco

    compiled = model.spec().compile()
    mjb = np.zeros(mujoco.mj_sizeModel(compiled), np.uint8)
    mujoco.mj_saveModel(compiled, None, mjb)
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)
              if f.name not in ("mjcf", "mjcf_path")}
    return digest([repr(fields), hashlib.sha256(mjb.tobytes()).hexdigest()])


@dataclass(frozen=True)
class ObjectSource:
    """A built-in object (mesh_path None) or a mesh file, with scale (to metres) and density."""

    name: str
    mesh_path: str | None = None
    scale: float = 1.0
    density: float = DEFAULT_DENSITY
    cache_dir: str | None = None

    def load(self) -> GraspObject:
        """The object, decomposed (cached) and with its resting poses."""
        if self.mesh_path is None:
            return builtin_object(self.name, self.density)
        return load_object(self.mesh_path, name=self.name, scale=self.scale, density=self.density,
                           cache_dir=self.cache_dir)


def object_sources(spec: str, *, cache_dir: str | None = None, scale: float = 1.0,
                   density: float = DEFAULT_DENSITY) -> list[ObjectSource]:
    """Objects named on the command line: "builtin" (every built-in object), "builtin:a,b"
    (those built-in objects), or a folder of meshes (``*.obj|stl|ply``, or ``NAME/visual.obj``
    per object as in the YCB layout)."""
    if spec == "builtin":
        return [ObjectSource(n, density=density) for n in BUILTIN_OBJECTS]
    if spec.startswith("builtin:"):
        names = [n.strip() for n in spec[len("builtin:"):].split(",") if n.strip()]
        unknown = [n for n in names if n not in BUILTIN_OBJECTS]
        if unknown or not names:
            raise ValueError(f"--objects {spec!r}: unknown built-in object(s) {unknown or names} "
                             f"(built-in: {', '.join(BUILTIN_OBJECTS)})")
        return [ObjectSource(n, density=density) for n in names]
    root = Path(spec)
    if not root.is_dir():
        raise ValueError(f"--objects must be 'builtin' or a folder of meshes, got {spec!r}")
    found = [ObjectSource(p.parent.name, str(p), scale, density, cache_dir)
             for p in sorted(root.glob("*/visual.obj"))]
    found += [ObjectSource(p.stem, str(p), scale, density, cache_dir)
              for p in sorted(root.iterdir()) if p.suffix.lower() in MESH_SUFFIXES]
    if not found:
        raise ValueError(f"no meshes ({', '.join(MESH_SUFFIXES)} or */visual.obj) in {spec!r}")
    return found


@dataclass(frozen=True)
class HandSource:
    """A built-in hand by name, or a user MJCF hand described by a JSON file:
    {"mjcf": "hand.xml", "closing_actuators": [...], "links": [...], "tcp_site": "..."} with
    paths relative to the JSON file (other keys go to ``load_mjcf_hand``)."""

    name: str
    description: str | None = None

    @classmethod
    def parse(cls, spec: str) -> "HandSource":
        """From the command line's --hand: a built-in name or a path to a description."""
        if spec in BUILTIN_HANDS:
            return cls(spec)
        path = Path(spec)
        if path.suffix.lower() != ".json" or not path.is_file():
            raise ValueError(f"--hand must be one of {', '.join(BUILTIN_HANDS)} or a JSON hand "
                             f"description file, got {spec!r}")
        return cls(path.stem, str(path.resolve()))

    def build(self):
        """The HandModel."""
        if self.description is None:
            return builtin_hand(self.name)
        desc = json.loads(Path(self.description).read_text())
        try:
            mjcf = Path(self.description).parent / desc.pop("mjcf")
        except KeyError as exc:
            raise ValueError(f"hand description {self.description} has no 'mjcf' key") from exc
        return load_mjcf_hand(mjcf, **desc)

    def params(self) -> dict:
        """What identifies this hand in the database, and its open volume in the TCP frame
        (open_hand_volume: what the onboard filter sweeps against the scene)."""
        volume = open_hand_volume(self.build())
        if self.description is None:
            return {"builtin": self.name, "volume": volume}
        return {"description": json.loads(Path(self.description).read_text()), "volume": volume}


@dataclass(frozen=True)
class SimEvaluatorFactory:
    """Everything a worker needs to evaluate candidates k = 0..n-1 of one object and hand.

    Candidate k's Monte Carlo trials use the seed (seed, k), so results do not depend on which
    worker runs it. mu : friction for measure A (the object's in the simulation).
    pfc_steps : (xy metres, θ radians) grid steps of Weisz & Allen's P(fc) over ±10 mm, ±20°
    by kinematic closing, e.g. (0.001, radians(1)) for their 18,081 poses; None: not computed.
    closing : "python" (Kim eq. 1 in Python every control period, one trial at a time) or
    "native" (motor-curve actuators, the Monte Carlo batches rolled out by mujoco.rollout;
    dynamics/_native.py); nthread : threads of that rollout (results do not depend on it).
    candidates_cache_dir : folder where the drawn candidates are kept (see cached_candidates);
    None: every evaluator draws them. stable_poses : in how many of the object's most probable
    resting poses candidates are drawn and simulated (n_candidates in each, those that repeat
    an earlier pose's left out): in each pose's world the table lies where that pose puts it,
    so the approaches it blocks are not drawn and the ones it exposes are. 1 (the default):
    the most probable pose alone, and an object resting otherwise in the cell has few grasps
    from above.
    """

    obj: ObjectSource
    hand: HandSource
    n_candidates: int
    seed: int = 0
    monte_carlo: MonteCarloSettings = MonteCarloSettings()
    mu: float = 0.8
    pfc_steps: tuple[float, float] | None = None
    closing: str = "python"
    nthread: int = 1
    candidates_cache_dir: str | None = None
    stable_poses: int = 1

    def __post_init__(self) -> None:
        check_closing(self.closing)
        if isinstance(self.stable_poses, bool) or not isinstance(self.stable_poses, int) \
                or self.stable_poses < 1:
            raise ValueError(f"SimEvaluatorFactory: stable_poses must be an integer >= 1, got "
                             f"{self.stable_poses!r}")
        if isinstance(self.nthread, bool) or not isinstance(self.nthread, int) or self.nthread < 1:
            raise ValueError(f"SimEvaluatorFactory: nthread must be an integer >= 1, got {self.nthread!r}")

    def __call__(self) -> "SimEvaluator":
        return SimEvaluator(self)

    def inputs(self) -> dict[str, str]:
        """Digests of what decides the results besides the hand and the mesh file (which
        BuildTarget adds): the object's density and kind, the Monte Carlo settings, seed and
        friction, the P(fc) grid, the closing (python or native), the resting poses drawn in and
        the measures' code version."""
        return {"stable_poses": str(self.stable_poses),"object": digest([self.obj.name if self.obj.mesh_path is None else "mesh",
                                  self.obj.density]),
                "monte_carlo": digest([dataclasses.asdict(self.monte_carlo), self.seed, self.mu]),
                "pfc": digest(self.pfc_steps),
                "closing": self.closing,
                "code": measures_code_version()}


def cached_candidates(cache_dir: str | Path | None, obj: GraspObject, world,
                      draw: Callable[[], GraspCandidates], params: list) -> GraspCandidates:
    """The world's candidates, drawn by draw() once and kept in cache_dir (None: not kept).

    A database build evaluates one target in every worker process, and each used to draw the
    same candidates again: seconds per target and process (the can with the three-finger hand,
    1,000 candidates, ~50,000 trial placements: ~8 s), against the tens of milliseconds of
    compiling the world. The file is named by a digest of everything that decides the draw:
    the object (mesh digest or built-in name), the hand's compiled model, params (count, seed,
    scale, density) and the code version of this package's simulation modules; a file that
    cannot be read is drawn again and replaced.
    """
    if cache_dir is None:
        return draw()
    key = digest([obj.source_sha256 or obj.name, hand_digest(world.hand), params,
                  measures_code_version()])
    path = Path(cache_dir) / "candidates" / f"{obj.name}-{world.hand.name}-{key}.npz"
    fields = [f.name for f in dataclasses.fields(GraspCandidates)]
    try:
        with np.load(path) as z:
            found = GraspCandidates(**{f: z[f] for f in fields})
        if all(len(getattr(found, f)) == len(found) for f in fields):
            return found
    # absent, torn or foreign: drawn again
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile):
        pass
    out = draw()
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")  # workers may race: last one wins
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, **{f: getattr(out, f) for f in fields})
        os.replace(tmp, path)
    except OSError as exc:  # a cache that cannot be written costs time, never the build
        print(f"graspline: candidates of {obj.name} with {world.hand.name} not cached in "
              f"{path.parent} ({exc.strerror or exc}); every worker draws them", file=sys.stderr)
        with contextlib.suppress(OSError):
            tmp.unlink()
    return out


class SimEvaluator:
    """A compiled world, the seeded candidate list, and the Monte Carlo evaluation of one."""

    def __init__(self, factory: SimEvaluatorFactory) -> None:
        from ..dynamics import build_grasp_world

        self.factory = factory
        self.object = factory.obj.load()
        hand = factory.hand.build()
        self.pose_index = distinct_resting_poses(self.object.stable_poses,
                                                 self.object.stable_probabilities,
                                                 factory.stable_poses)
        # one world per resting pose, the most probable first
        self.worlds = [build_grasp_world(self.object, hand,
                                         R_table_object=self.object.stable_poses[i][:3, :3],
                                         closing=factory.closing) for i in self.pose_index]
        self.world = self.worlds[0]
        drawn = [self._draw(i) for i in range(len(self.worlds))]
        self.candidates, self.pose_of = _merge_poses(drawn)
        self.runners: dict[int, object] = {}
        self.closers: dict[int, object] = {}
        self.pfc_grid = None
        if factory.pfc_steps is not None:
            from ..quality import pfc_grid

            xy, theta = factory.pfc_steps
            self.pfc_grid = pfc_grid(xy_step_m=xy, theta_step_rad=theta)

    def _draw(self, i: int) -> GraspCandidates:
        """The candidates of the i-th world's resting pose (cached)."""
        from ._candidates import pregrasp_candidates

        f, world = self.factory, self.worlds[i]
        params = [f.n_candidates, f.seed, f.obj.scale, f.obj.density, int(self.pose_index[i])]
        return cached_candidates(f.candidates_cache_dir, self.object, world,
                                 lambda: pregrasp_candidates(world, f.n_candidates, seed=f.seed),
                                 params)

    def _world(self, k: int):
        """The world (resting pose) candidate k was drawn in."""
        return self.worlds[self.pose_of[k]]

    def _runner(self, k: int):
        """The native rollout runner of candidate k's world (built on first use)."""
        from ..dynamics import NativeRunner

        i = int(self.pose_of[k])
        if i not in self.runners:
            self.runners[i] = NativeRunner(self.worlds[i], nthread=self.factory.nthread)
        return self.runners[i]

    def _closer(self, k: int):
        """The kinematic closer of candidate k's world (built on first use)."""
        from ..kinematic import KinematicCloser

        i = int(self.pose_of[k])
        if i not in self.closers:
            self.closers[i] = KinematicCloser(self.worlds[i])
        return self.closers[i]

    def __len__(self) -> int:
        return len(self.candidates)

    def _trial(self, k: int, T_error: np.ndarray | None, keep: list) -> TrialMeasures:
        """One simulated grasp of candidate k with the object displaced by T_error."""
        from ..dynamics import hand_collides, simulate_grasp

        T = self.candidates.T_object_hand[k]
        preshape = self.candidates.preshape[k]
        world = self._world(k)
        if T_error is not None:
            T = invert(T_error) @ T  # the object moved by T_error: the hand sees it so
            if hand_collides(world, T, preshape):
                return TrialMeasures(b=0.0, c=0.0, a=0.0)  # the hand would hit it on approach
        out = simulate_grasp(world, T, preshape=preshape)
        keep.append(out.hold)
        return TrialMeasures(b=out.measure_b, c=out.measure_c, a=self._measure_a(out.contacts, out.measure_b))

    def _measure_a(self, contacts, b: float) -> float:
        """Kim measure A: Ferrari-Canny ε of the final contacts where the grasp held (B > 0), else 0."""
        if b > 0 and len(contacts.positions):
            return ferrari_canny(contacts.positions, contacts.normals, mu=self.factory.mu,
                                 torque_scale_m=self.object.radius_m)
        return 0.0

    def _native_trials(self, k: int, T_errors: np.ndarray | None, keep: list) -> list[TrialMeasures]:
        """Candidate k rolled out natively: the nominal pose alone (T_errors None; its hold
        diagnostics go to keep) or one trial per object displacement in T_errors (n, 4, 4)."""
        from ..dynamics import native_end_measures

        T = self.candidates.T_object_hand[k]
        nominal = T_errors is None
        # the object moved by T_error: the hand sees it so (as _trial does)
        poses = T[None] if nominal else np.array([invert(E) @ T for E in T_errors])
        runner = self._runner(k)
        trials = runner.run(poses, self.candidates.preshape[k], hold_for=(0,) if nominal else (),
                                 check_start=not nominal)
        out = []
        for tr in trials:
            if tr.collided:  # the hand would hit it on approach
                out.append(TrialMeasures(b=0.0, c=0.0, a=0.0))
                continue
            e = native_end_measures(runner, tr)
            out.append(TrialMeasures(b=e.measure_b, c=e.measure_c, a=self._measure_a(e.contacts, e.measure_b)))
        if nominal:
            keep.append(trials[0].hold)
        return out

    def __call__(self, k: int) -> GraspRecord:
        """Evaluate candidate k: nominal trial, then the Monte Carlo samples with early discard."""
        t0 = time.perf_counter()
        f = self.factory
        if not 0 <= k < len(self.candidates):
            raise IndexError(f"candidate {k} of {f.obj.name}/{f.hand.name}: only "
                             f"{len(self.candidates)} collision-free candidates")
        holds: list = []
        settings = dataclasses.replace(f.monte_carlo, seed=f.seed * 1_000_003 + k)
        if f.closing == "python":
            r = evaluate_under_uncertainty(lambda T: self._trial(k, T, holds), settings)
        else:
            r = evaluate_batched(lambda T: self._native_trials(k, T, holds), settings)
        hold = holds[0]  # the nominal trial's contact-stability diagnostics
        pfc = None
        if self.pfc_grid is not None:
            pfc = self._closer(k).pfc(self.candidates.T_object_hand[k], self.candidates.preshape[k],
                                  grid=self.pfc_grid, mu=f.mu, torque_scale_m=self.object.radius_m).pfc
        return GraspRecord(
            candidate=k, T_object_hand=self.candidates.T_object_hand[k],
            nominal_ok=r.nominal.b > 0, samples_run=r.samples_run,
            discarded_early=r.discarded_early, success_rate=r.success_rate,
            quality=r.success_rate * r.c_mean,  # reliable, and without moving the object
            pfc=pfc,
            a_mean=r.a_mean, b_mean=r.b_mean, c_mean=r.c_mean,
            approach=self.candidates.approach[k], preshape=self.candidates.preshape[k],
            force_var=hold.force_variation, position_var=hold.position_variation_m,
            normal_var=hold.normal_variation, seed=settings.seed,
            wall_s=time.perf_counter() - t0)


def distinct_resting_poses(poses: np.ndarray, probabilities: np.ndarray, n: int,
                           same_up_rad: float = 0.35) -> np.ndarray:
    """Indices of up to n resting poses (4, 4) that differ in which way the object faces up:
    the single most probable pose first (what a one-pose build always drew in), then one per
    further group, the most probable group first. Poses whose upward directions (in the object
    frame) are chained within same_up_rad are one group (a cylinder lying on its side in 24
    facets is one), with the group's probability the sum of its members'; a group gives its
    most probable pose."""
    up = np.asarray(poses)[:, 2, :3]          # the world's +z in the object frame: R^T e_z
    k = len(up)
    group = np.arange(k)
    close = (up @ up.T) > math.cos(same_up_rad)
    for a in range(k):        # single linkage by union-find over the close pairs
        for b in np.flatnonzero(close[a]):
            ra, rb = group[a], group[b]
            if ra != rb:
                group[group == rb] = ra
    p = np.asarray(probabilities, np.float64)
    heads = {g: max(np.flatnonzero(group == g), key=lambda i: (p[i], -i)) for g in set(group)}
    mass = {g: p[group == g].sum() for g in heads}
    first = int(np.argmax(p))
    heads[group[first]] = first
    order = sorted(heads, key=lambda g: (g != group[first], -mass[g], heads[g]))
    return np.array([heads[g] for g in order[:n]], np.int64)


def _merge_poses(drawn: list[GraspCandidates], same_m: float = 1e-3,
                 same_rad: float = 0.0175) -> tuple[GraspCandidates, np.ndarray]:
    """The candidates of every resting pose in one list (object frame), and each one's pose
    index; a later pose's candidate within same_m and same_rad of an earlier pose's one with
    the same preshape is left out (the same grasp, found again from another resting pose)."""
    from geometry import rotation_angle

    fields = [f.name for f in dataclasses.fields(GraspCandidates)]
    keep = [(0, j) for j in range(len(drawn[0]))]
    for i in range(1, len(drawn)):
        earlier = [drawn[a].T_object_hand[b] for a, b in keep]
        pre = [drawn[a].preshape[b] for a, b in keep]
        xyz = np.array([T[:3, 3] for T in earlier]).reshape(-1, 3)
        c = drawn[i]
        for j in range(len(c)):
            T = c.T_object_hand[j]
            near = np.flatnonzero(np.linalg.norm(xyz - T[:3, 3], axis=1) < same_m)
            if any(np.array_equal(c.preshape[j], pre[m])
                   and rotation_angle(T[:3, :3].T @ earlier[m][:3, :3]) < same_rad for m in near):
                continue
            keep.append((i, j))
    merged = GraspCandidates(**{f: np.array([getattr(drawn[a], f)[b] for a, b in keep])
                                .reshape((len(keep),) + getattr(drawn[0], f).shape[1:])
                                for f in fields})
    return merged, np.array([a for a, _ in keep], np.int64)
