"""The demo's grasp database: built on first use for the built-in objects and one hand, kept in
the user's cache folder, and reused (resumed where an earlier build stopped) afterwards.

The build is the same as ``graspline db build --objects builtin --hand HAND`` with a small
budget (DEMO_CANDIDATES candidates in each of the DEMO_STABLE_POSES most probable resting
poses, DEMO_SAMPLES pose samples each), so that a first demo
waits minutes, not hours; a target whose inputs changed (a new version of the measures' code,
an edited hand description) is rebuilt rather than reused.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from ..objects import BUILTIN_OBJECTS
from ..quality import MonteCarloSettings
from ._build import BuildTarget, build_database
from ._evaluators import HandSource, ObjectSource, SimEvaluatorFactory, hand_digest
from ._writer import surface_points

DEMO_CANDIDATES = 40
DEMO_SAMPLES = 10
DEMO_SEED = 0
DEMO_STABLE_POSES = 3   # the cell lays objects in any resting pose: grasps from above in each


def demo_database_path(hand: str, cache_dir: str | Path, *, candidates: int = DEMO_CANDIDATES,
                       samples: int = DEMO_SAMPLES) -> Path:
    """Where the demo database of a hand (a built-in name or a JSON description) is kept."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", HandSource.parse(hand).name)
    return Path(cache_dir) / f"demo-{name}-c{candidates}-s{samples}.sqlite"


def ensure_demo_database(hand: str, cache_dir: str | Path, *,
                         objects: tuple[str, ...] = BUILTIN_OBJECTS,
                         candidates: int = DEMO_CANDIDATES, samples: int = DEMO_SAMPLES,
                         workers: int | None = None, progress: bool = True) -> Path:
    """The path of a finished grasp database of the built-in objects for hand ("three_finger",
    "underactuated", "parallel" or a JSON hand description), building what is missing first
    (a progress bar on stderr when progress). cache_dir : the folder that keeps it, with the
    objects' decompositions and candidates. workers : local processes (None: all cores; 0:
    in this process). Raises ValueError naming a bad hand or object."""
    if candidates < 1 or samples < 1:
        raise ValueError(f"ensure_demo_database: candidates and samples must be >= 1, got "
                         f"{candidates} and {samples}")
    unknown = [o for o in objects if o not in BUILTIN_OBJECTS]
    if unknown or not objects:
        raise ValueError(f"ensure_demo_database: objects must be built-in objects "
                         f"({', '.join(BUILTIN_OBJECTS)}), got {list(objects)!r}")
    cache = Path(cache_dir)
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"ensure_demo_database: cache_dir {str(cache)!r} cannot be used as a "
                         f"folder ({exc.strerror or exc})") from exc
    source = HandSource.parse(hand)
    model = source.build()
    version = hand_digest(model)
    mc = MonteCarloSettings(n_samples=samples, seed=DEMO_SEED)
    path = demo_database_path(hand, cache, candidates=candidates, samples=samples)
    targets = []
    from tqdm import tqdm

    for name in tqdm(objects, desc=f"preparing {model.name} candidates", unit="object",
                     disable=not progress, file=sys.stderr, leave=False):
        src = ObjectSource(name)
        factory = SimEvaluatorFactory(src, source, candidates, DEMO_SEED, mc,
                                      candidates_cache_dir=str(cache),
                                      stable_poses=DEMO_STABLE_POSES)
        n = len(factory())  # collision-free candidates of this hand on this object (cached)
        if n == 0:
            continue
        obj = src.load()
        targets.append(BuildTarget(
            name, source.name, version, source.params(), n, factory,
            {"mesh_path": None, "mesh_sha256": obj.source_sha256, "scale": 1.0,
             "mass_kg": obj.mass_kg, "radius_m": obj.radius_m, "stable_poses": obj.stable_poses,
             "points": surface_points(obj)},   # the model onboard recognition registers to
            factory.inputs()))
    build_database(targets, path, workers=workers, progress=progress, samples_planned=samples,
                   command=f"ensure_demo_database({hand!r})", on_change="restart")
    return path
