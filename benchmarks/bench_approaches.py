"""Tilted approach axes on tall objects (issue 24 item 6): top-down only against top-down with
the approaches, on the same tables of standing objects in the simulated cell.

Each arm runs ``--trials`` best-grasp trials on a simulated cell whose objects stand in their
tallest stable pose (``SimCellSettings.stand_tall``: an upright bottle or can, a box on its
end, the YCB mustard bottle, power drill and cracker box with ``--ycb``), the same seed in
both arms so that both start from the same tables. Prints, per object kind: trials, success
with top-down only, success with the approaches and how many of those grasps were tilted;
then the planning time: per object and per grasp source (the top-down image search, the
tilted search on the objects tall enough for it, and per approach), median and p99, and the
whole plan per trial (segment + silhouette + search + choose) in each arm.

Run from the repository root (about 10 minutes for 2 x 40 trials on 2 cores):

    .venv/bin/python -m benchmarks.bench_approaches --trials 40 --seed 0 --ycb ../shared/data/ycb
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PLAN_STAGES = ("segment", "silhouette", "search", "choose")
# the YCB scans that stand tall (the others are short or wider than the stroke)
TALL_YCB = ("mustard_bottle", "power_drill", "cracker_box")


@dataclasses.dataclass
class Arm:
    """One arm's trials and timings: per trial (object kind, success, source, plan seconds);
    per object planned, seconds by source name; the tilted search's per-object timings."""

    name: str
    kinds: list[str] = dataclasses.field(default_factory=list)
    success: list[bool] = dataclasses.field(default_factory=list)
    sources: list[str] = dataclasses.field(default_factory=list)
    plan_s: list[float] = dataclasses.field(default_factory=list)
    propose_s: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    tilted: list = dataclasses.field(default_factory=list)
    no_grasp: int = 0
    refused: dict[str, int] = dataclasses.field(default_factory=dict)


def tall_ycb_dir(ycb: str, into: Path) -> str:
    """A folder holding links to the tall YCB scans of ``ycb`` (the cell draws from all of a
    folder's scans)."""
    for name in TALL_YCB:
        if (Path(ycb) / name / "visual.obj").is_file():
            (into / name).symlink_to(Path(ycb).resolve() / name)
    return str(into)


def timed(source, store: dict[str, list[float]]):
    """source.propose wrapped to add each call's seconds to store[source.name]."""
    inner = source.propose

    def propose(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            store.setdefault(source.name, []).append(time.perf_counter() - t0)
    source.propose = propose


def run_arm(name: str, n: int, seed: int, ycb: str | None, approaches) -> Arm:
    """n best-grasp trials on a cell of standing objects; approaches : the cell file's
    approaches section, or None for top-down only."""
    import msgspec
    from tqdm import tqdm

    from onboard import PickingCell, config_hash, sim_cell_file

    arm = Arm(name)
    with tempfile.TemporaryDirectory() as tmp:
        ycb_dir = tall_ycb_dir(ycb, Path(tmp)) if ycb else None
        config = sim_cell_file(seed=seed, log_dir=str(Path(tmp) / "trials"))
        config = msgspec.structs.replace(config, approaches=approaches)
        with PickingCell(config, config_hash(config)) as cell:
            sim = cell.devices.truth
            sim.use_settings(dataclasses.replace(
                sim.settings, builtin=("bottle", "cylinder"), ycb_dir=ycb_dir,
                random_primitives=("cylinder", "box"), stand_tall=True, objects_per_table=(3, 4)))
            for source in cell.loop.planner.sources:
                timed(source, arm.propose_s)
            for _ in tqdm(range(n), desc=name, unit="trial", file=sys.stderr):
                r = cell.pick_record()
                if r.outcome == "no_grasp":  # what no grasp was offered on (nothing moved)
                    arm.no_grasp += 1
                    w = sim.world
                    for name in (w.objects[k].name for k in w.on_table()):
                        arm.refused[name] = arm.refused.get(name, 0) + 1
                if r.success is None:
                    continue
                arm.kinds.append(r.object_label.split("@")[0] or "unknown")
                arm.success.append(bool(r.success))
                arm.sources.append(r.source)
                arm.plan_s.append(sum(r.stage_s.get(k, 0.0) for k in PLAN_STAGES))
            arm.tilted = [s for s in cell.loop.planner.sources if s.name == "approach_search"]
            arm.tilted = arm.tilted[0].timings if arm.tilted else []
    return arm


def ms(values: list[float], q: float) -> str:
    """The q-th percentile of seconds, as milliseconds."""
    return f"{np.percentile(values, q) * 1e3:.0f}" if values else "-"


def print_tables(top: Arm, tilted: Arm, n_axes: int) -> None:
    """Success per object kind in both arms, then the planning times."""
    print("| object kind | trials (top-down) | success (top-down) | trials (approaches) | "
          "success (approaches) | taken tilted |")
    print("|---|---|---|---|---|---|")
    for k in sorted(set(top.kinds) | set(tilted.kinds)):
        a = [s for kk, s in zip(top.kinds, top.success) if kk == k]
        b = [s for kk, s in zip(tilted.kinds, tilted.success) if kk == k]
        t = sum(1 for kk, src in zip(tilted.kinds, tilted.sources)
                if kk == k and src == "approach_search")
        print(f"| {k} | {len(a)} | {np.mean(a) if a else np.nan:.0%} | {len(b)} | "
              f"{np.mean(b) if b else np.nan:.0%} | {t} |")
    print(f"| all | {len(top.success)} | {np.mean(top.success):.0%} | {len(tilted.success)} | "
          f"{np.mean(tilted.success):.0%} | {tilted.sources.count('approach_search')} |")
    print(f"\nno grasp offered: {top.no_grasp} cycles top-down only, {tilted.no_grasp} with the "
          f"approaches; objects in view then (cycles): top-down only {top.refused}, with the "
          f"approaches {tilted.refused}")
    per_object = [t.seconds for t in tilted.tilted]
    per_axis = [t.seconds / t.n_approaches for t in tilted.tilted]
    print("\n| planning time, ms | median | p99 | calls |")
    print("|---|---|---|---|")
    rows = [("top-down image search, per object (top-down arm)", top.propose_s.get("image_search", [])),
            ("top-down image search, per object (approaches arm)",
             tilted.propose_s.get("image_search", [])),
            ("tilted search, per object (all objects; short ones skip it)",
             tilted.propose_s.get("approach_search", [])),
            (f"tilted search, per tall object ({n_axes} approaches)", per_object),
            ("tilted search, per approach", per_axis),
            ("whole plan per trial, top-down only", top.plan_s),
            ("whole plan per trial, with approaches", tilted.plan_s)]
    for label, v in rows:
        print(f"| {label} | {ms(v, 50)} | {ms(v, 99)} | {len(v)} |")


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, run both arms, print the tables."""
    from onboard import ApproachesConfig

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=40, help="best-grasp trials per arm")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ycb", default=None, help="YCB folder (e.g. ../shared/data/ycb)")
    ap.add_argument("--tilts", type=float, nargs="+", default=[30.0, 60.0],
                    help="tilts from straight down, degrees")
    ap.add_argument("--azimuths", type=int, default=8)
    ap.add_argument("--full-searches", type=int, default=1)
    args = ap.parse_args(argv)
    section = ApproachesConfig(tilts_deg=args.tilts, azimuths=args.azimuths,
                               full_searches=args.full_searches)
    top = run_arm("top-down", args.trials, args.seed, args.ycb, None)
    tilted = run_arm("approaches", args.trials, args.seed, args.ycb, section)
    print(f"\n{args.trials} trials per arm, seed {args.seed}, tilts {args.tilts} deg, "
          f"{args.azimuths} azimuths, {args.full_searches} full search(es) per tall object\n")
    print_tables(top, tilted, len(args.tilts) * args.azimuths)


if __name__ == "__main__":
    main()
