"""Planning latency of the picking loop: PickingLoop.plan() against Tan's measure alone.

Seeded tables of the simulated cell (offline_sim.cell: its SimCamera over the table, 640 x 480,
D400-like depth noise on) with each of --objects objects (default 1, 3, 6 and 10), --scenes
tables per count. Each table is rendered once, outside the timing; the frame in hand is then
planned --repeats times by each path:

* ``plan``: the loop's own planning, ``PickingLoop.plan()`` with the default cell file's
  scoring (graspline's measure with the depth terms, both insertion depths, the antipodal
  search, the scene budget: objects searched in order of promise, stopping at the first grasp
  scoring 0.95), its StageClock's stages (segment, silhouette, search, choose; the capture of
  the frame in hand is left out);
* ``exhaustive``: the same plan() with ``scoring.search: tan`` and ``scoring.scene_budget:
  false``: Tan's random global rounds on every object, the default before 2026-11-26 and
  the reference each path's best score is compared with;
* ``anti``: the antipodal search on every object (``scoring.scene_budget: false``);
* ``tan``: Tan et al.'s measure alone through the public API on the same frames: the same
  segmentation, one silhouette per object (the configured insertion depth, neighbours as
  obstacles) and ``scoring.search_grasps(measure="tan2024")``; its stages timed alike.

Each path plans for the scene's best grasp (every object in view) and for a named target (the
first object the cell laid, by its name; the segmenter's masks are labelled with the
simulator's names, as a learned segmenter labels them; the labelling, a bincount per mask, is
timed with the segmentation). A first plan of each path on each object count's first table
compiles the Numba kernels or loads them from numba's cache: it is the warm-up, reported apart
and left out of every figure. --threads sets Numba's threads (default: every core); the
1-minute load average before and after is printed, since other work on the machine slows the
parallel kernels most (with the omp threading layer, whose threads spin while they wait, a
loaded machine makes them ten times slower; OMP_WAIT_POLICY=PASSIVE, printed with the
machine, avoids it: docs/figures.md, "Planning latency").

The table gives per object count, path and goal: the median and p99 of the total and of each
stage (ms); the candidates scored on the chosen object (median; what the trial log's
n_candidates holds: the search of the object the grasp is on, not those of the others); the
best score reached (mean over the plans that found a grasp); the plans that found none. Then
the cost of the most objects against the fewest (ratio of the median totals) and the issue's
goal at 6 objects (<= 15 ms median; floor 30 ms median, 60 ms p99). Last, each new path's
best score against ``plan``'s on the same plans (same table, repeat and goal): the means and
the share of plans where it is within 0.02 of plan's (or above it).

--baseline-tree PATH measures another checkout's plan() beside this one's: the measurement runs
--rounds times per tree, alternating which goes first, each in a subprocess whose PYTHONPATH is
that tree (the same seeded tables: the simulated cell must be the same in both); it prints both
tables and the ratio of the median totals (this tree / baseline).

Run from the repository root:
    python -m benchmarks.bench_loop [--scenes 5] [--repeats 2] [--seed 0] [--objects 1,3,6,10]
    python -m benchmarks.bench_loop --baseline-tree ../base [--rounds 2]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numba
import numpy as np

from drivers.camera import Camera, Intrinsics, RGBDFrame
from vision import ObjectMask, Segmenter

STAGES = ("segment", "silhouette", "search", "choose")
PATHS = ("plan", "exhaustive", "anti", "tan")
# the loop's paths: the cell file's scoring keys each sets over the default cell file's
# (plan: the defaults, the antipodal search with the scene budget)
LOOP_PATHS = {"plan": {}, "exhaustive": {"search": "tan", "scene_budget": False},
              "anti": {"search": "antipodal", "scene_budget": False}}
REFERENCE = "exhaustive"  # the best grasp a path's is compared with: every object, Tan's loop
SAME_SCORE = 0.02  # a path's best within this of the reference's counts as the same
GOALS = ("best", "target")
GOAL_MS, FLOOR_MEDIAN_MS, FLOOR_P99_MS, GOAL_OBJECTS = 15.0, 30.0, 60.0, 6  # issue 24


class FrameInHand(Camera):
    """A camera that hands out one frame, already rendered: the loop's capture costs nothing
    and every repeat plans on the same pixels."""

    def __init__(self, frame: RGBDFrame) -> None:
        self.frame = frame

    @property
    def intrinsics(self) -> Intrinsics:
        return self.frame.intrinsics

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        return self.frame


class NamedSegmenter(Segmenter):
    """The cell's segmenter with each mask labelled by the simulated object under it (names:
    the table's object names, index k for instance id k + 1; HAND_INSTANCE and the table are
    not objects): what a learned segmenter's labels are on hardware."""

    def __init__(self, inner: Segmenter, names: list[str]) -> None:
        self.inner, self.names = inner, names
        self.name = inner.name

    @property
    def last_plane(self):
        """The support plane of the last frame (the tabletop segmenter's)."""
        return getattr(self.inner, "last_plane", None)

    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        masks = self.inner.segment(frame)
        ids = frame.instance_ids
        out = []
        for m in masks:
            # within the mask's box: a learned segmenter's labels cost nothing extra, so
            # this stand-in for them should cost little inside the timed segment stage
            # (an older tree's ObjectMask, measured with --baseline-tree, has no box_px)
            box = getattr(m, "box_px", None)
            c0, r0, w, h = box if box is not None else cv2.boundingRect(m.mask.view(np.uint8))
            under = ids[r0:r0 + h, c0:c0 + w][m.mask[r0:r0 + h, c0:c0 + w]]
            under = under[(under > 0) & (under <= len(self.names))]
            # the inner segmenter's own fresh masks: labelled in place (a copy would lose
            # their box, which the promise order reads next)
            m.label = self.names[int(np.bincount(under).argmax()) - 1] if under.size else None
            out.append(m)
        return out


@dataclass
class Samples:
    """Every timed plan of one (object count, path, goal): seconds, candidates, best scores."""

    total_s: list[float] = field(default_factory=list)
    stage_s: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STAGES})
    candidates: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    no_grasp: int = 0
    grasp_total_s: list[float] = field(default_factory=list)  # the plans that found a grasp
    plan_scores: list[float | None] = field(default_factory=list)  # every plan's, None: no grasp

    def add(self, stages: dict[str, float], candidates: int, score: float | None) -> None:
        """One plan: its stage seconds (the total is their sum), candidates scored on the
        chosen object, its score (None: no grasp)."""
        for s in STAGES:
            self.stage_s[s].append(stages.get(s, 0.0))
        self.total_s.append(sum(stages.get(s, 0.0) for s in STAGES))
        self.plan_scores.append(score)
        if score is None:  # a NoGrasp does not say how many candidates it scored
            self.no_grasp += 1
        else:
            self.candidates.append(int(candidates))
            self.scores.append(float(score))
            self.grasp_total_s.append(self.total_s[-1])

    def pooled(self, other: Samples) -> Samples:
        """This sample's plans and other's together."""
        return Samples(self.total_s + other.total_s,
                       {s: self.stage_s[s] + other.stage_s[s] for s in STAGES},
                       self.candidates + other.candidates, self.scores + other.scores,
                       self.no_grasp + other.no_grasp, self.grasp_total_s + other.grasp_total_s,
                       self.plan_scores + other.plan_scores)


@dataclass
class Figures:
    """One measurement: samples by "count/path/goal", warm-up seconds by path (one per
    object count), the load average before and after, set-up."""

    samples: dict[str, Samples]
    warm_up_s: dict[str, list[float]]
    load: list[float]
    objects_in_view: dict[str, list[int]]
    render_s: list[float]
    args: dict
    onboard_file: str
    machine: str = ""

    def pooled(self, other: Figures) -> Figures:
        """Two measurements of the same tree together."""
        return Figures({k: s.pooled(other.samples[k]) for k, s in self.samples.items()},
                       {k: v + other.warm_up_s[k] for k, v in self.warm_up_s.items()},
                       self.load + other.load,
                       {k: v + other.objects_in_view[k] for k, v in self.objects_in_view.items()},
                       self.render_s + other.render_s, self.args, self.onboard_file,
                       self.machine)

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> Figures:
        d = json.loads(text)
        d["samples"] = {k: Samples(**s) for k, s in d["samples"].items()}
        return cls(**d)


# ------------------------------------------------------------------------------ measuring
def _machine() -> str:
    """The processor, its cores and numba's threads."""
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"numba {numba.__version__} ({numba.get_num_threads()} threads, "
            f"{numba.threading_layer()} layer, OMP_WAIT_POLICY "
            f"{os.environ.get('OMP_WAIT_POLICY', 'unset')})")


def _cell_for(n_objects: int, seed: int):
    """(cell file, SimCell) of the default simulated cell with n_objects on every table."""
    import msgspec

    from offline_sim.cell import SimCell, SimCellSettings
    from onboard import sim_cell_file

    config = sim_cell_file(seed=seed, log_dir=tempfile.mkdtemp(prefix="bench_loop_"))
    config = msgspec.structs.replace(
        config, sim=msgspec.structs.replace(config.sim, objects_per_table=[n_objects, n_objects]))
    g, s = config.gripper, config.sim
    settings = SimCellSettings(
        objects_per_table=(n_objects, n_objects), finger_width_m=g.finger_width_m,
        open_width_m=g.open_width_m, pad_friction=s.pad_friction, depth_noise=True,
        image_width_px=config.camera.width_px, image_height_px=config.camera.height_px)
    return config, SimCell(settings, seed=seed)


def _loop_for(config, frame: RGBDFrame, segmenter: Segmenter, **scoring):
    """A PickingLoop of the cell file (its scoring keys replaced by ``scoring``) planning on
    the frame in hand (no arm, no gripper), and what to close after it (its trial log, its
    camera)."""
    import msgspec

    from onboard import PickingLoop, TrialLog

    if scoring:
        config = msgspec.structs.replace(
            config, scoring=msgspec.structs.replace(config.scoring, **scoring))

    log = TrialLog(config.log_dir)
    camera = FrameInHand(frame)
    loop = PickingLoop(config, camera=camera, segmenter=segmenter, gripper=None,
                       arm=None, trial_log=log, cell_hash="bench_loop",
                       seed=config.scoring.seed)
    return loop, (log, camera)


def _plan_once(loop, target: str | None) -> tuple[dict[str, float], int, float | None]:
    """(stage seconds, candidates scored on the chosen object, score or None) of one
    PickingLoop.plan()."""
    from onboard import GraspChoice, StageClock

    clock = StageClock({})
    plan = loop.plan(target, clock=clock)
    c = plan.choice
    if isinstance(c, GraspChoice):
        return dict(clock.stage_s), c.n_candidates, c.score
    return dict(clock.stage_s), 0, None


def _tan_once(config, projection, segmenter: Segmenter, frame: RGBDFrame, target: str | None,
              seed: int) -> tuple[dict[str, float], int, float | None]:
    """(stage seconds, candidates scored on the chosen object, best score or None) of Tan's
    measure alone through the public API: segment, one silhouette per object,
    search_grasps(measure="tan2024")."""
    from scoring import search_grasps
    from vision import neighbours, silhouette

    s, g = config.scoring, config.gripper
    stages = {k: 0.0 for k in STAGES}
    t0 = time.perf_counter()
    masks = segmenter.segment(frame)
    stages["segment"] = time.perf_counter() - t0
    plane = getattr(segmenter, "last_plane", None)
    best, n = None, 0
    for i, m in enumerate(masks):
        if target is not None and m.label != target:
            continue
        t0 = time.perf_counter()
        try:
            sil = silhouette(frame, m, approach=(0.0, 0.0, -1.0),
                             insertion_depth_m=s.insertion_depth_m,
                             metres_per_px=s.metres_per_px, margin_m=0.6 * g.open_width_m + 0.02,
                             obstacles=neighbours(masks, i), support=plane,
                             clearance_m=s.clearance_m)
        except ValueError:
            sil = None
        stages["silhouette"] += time.perf_counter() - t0
        if sil is None or not sil.target.any():
            continue
        t0 = time.perf_counter()
        found = search_grasps(sil.image, projection, target=sil.target, top_k=s.top_k,
                              seed=seed + i, measure="tan2024")
        stages["search"] += time.perf_counter() - t0
        if len(found) and not found.no_grasp and (best is None or found.scores.score[0] > best):
            best, n = float(found.scores.score[0]), int(found.n_scored)
    return stages, n, best


def measure(args: argparse.Namespace) -> Figures:
    """Render the seeded tables and time both paths on each, as the arguments say."""
    from tqdm import tqdm

    import onboard
    from vision import make_segmenter

    counts = [int(c) for c in args.objects.split(",")]
    samples = {f"{n}/{p}/{g}": Samples() for n in counts for p in PATHS for g in GOALS}
    warm_up: dict[str, list[float]] = {p: [] for p in PATHS}
    load = [os.getloadavg()[0]]
    if args.threads:
        numba.set_num_threads(args.threads)
    in_view: dict[str, list[int]] = {str(n): [] for n in counts}
    render_s: list[float] = []
    bar = tqdm(total=len(counts) * args.scenes, desc="tables", unit="table", file=sys.stderr)
    for n in counts:
        config, sim = _cell_for(n, args.seed)
        tabletop = make_segmenter(config.segmenter.backend, **config.segmenter.options)
        try:
            for scene in range(args.scenes):
                if scene:
                    sim.new_table()
                t0 = time.perf_counter()
                frame = sim.camera.read()
                render_s.append(time.perf_counter() - t0)
                names = [o.name for o in sim.world.objects]
                seg = NamedSegmenter(tabletop, names)
                labels = [m.label for m in seg.segment(frame)]
                in_view[str(n)].append(len(labels))
                target = names[0] if names[0] in labels else next(
                    (lb for lb in labels if lb), None)
                loops, opened = {}, []
                try:
                    for path, keys in LOOP_PATHS.items():
                        loops[path], things = _loop_for(config, frame, seg, **keys)
                        opened += things
                    for path in PATHS if scene == 0 else ():
                        # the warm-up: a first plan of each path on each count's first table
                        # (a table where the jaw holds nothing leaves kernels unused)
                        t0 = time.perf_counter()
                        _one(path, loops.get(path, loops["plan"]), config, seg, frame, None,
                             10**6)
                        warm_up[path].append(time.perf_counter() - t0)
                    for r in range(args.repeats):
                        for path in PATHS:
                            for goal in GOALS:
                                samples[f"{n}/{path}/{goal}"].add(*_one(
                                    path, loops.get(path, loops["plan"]), config, seg, frame,
                                    target if goal == "target" else None, 1000 * scene + r))
                finally:
                    for thing in opened:
                        thing.close()
                bar.update(1)
        finally:
            sim.close()
    bar.close()
    load.append(os.getloadavg()[0])
    return Figures(samples, warm_up, load, in_view, render_s, vars(args), onboard.__file__,
                   _machine())


def _one(path: str, loop, config, seg: Segmenter, frame: RGBDFrame, target: str | None,
         seed: int):
    """One plan by a loop path (LOOP_PATHS: the loop with its scoring keys) or "tan" (Tan's
    measure alone)."""
    if path in LOOP_PATHS:
        return _plan_once(loop, target)
    return _tan_once(config, loop.projection, seg, frame, target, seed)


# ------------------------------------------------------------------------------ printing
def _ms(v: list[float]) -> tuple[float, float]:
    """(median, p99) of seconds, in milliseconds; NaN for none."""
    if not v:
        return float("nan"), float("nan")
    a = 1e3 * np.asarray(v)
    return float(np.median(a)), float(np.percentile(a, 99))


def _paths(fig: Figures) -> list[str]:
    """The paths a measurement has (a baseline tree's bench_loop may know fewer)."""
    return [p for p in PATHS if any(k.split("/")[1] == p for k in fig.samples)]


def print_table(fig: Figures) -> None:
    """The markdown table of one measurement, the warm-up, the cost ratio and the goal."""
    a = fig.args
    counts = [int(c) for c in a["objects"].split(",")]
    paths = _paths(fig)
    print(f"bench_loop: {a['scenes']} seeded tables (seed {a['seed']}) per object count, "
          f"{a['repeats']} plans per path and goal on each; 640x480, depth noise on")
    print(f"machine: {fig.machine}; onboard from {fig.onboard_file}")
    print(f"1-minute load average before / after: {fig.load[0]:.1f} / {fig.load[-1]:.1f}")
    print("warm-up (the first plan of each path on each object count's first table: Numba "
          "compile or cache load; not in the figures): " + "; ".join(
              f"{p} " + ", ".join(f"{s:.2f}" for s in v) + " s" for p, v in fig.warm_up_s.items())
          + f"; render of a frame (outside the timing): median {_ms(fig.render_s)[0]:.0f} ms\n")
    head = ["objects (in view)", "path", "goal", "total ms median / p99"] + \
        [f"{s} ms" for s in STAGES] + ["candidates (chosen object)", "best score", "no grasp"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in counts:
        seen = fig.objects_in_view[str(n)]
        for p in paths:
            for g in GOALS:
                s = fig.samples[f"{n}/{p}/{g}"]
                med, p99 = _ms(s.total_s)
                cells = [f"{n} ({np.mean(seen):.1f})", p, g, f"**{med:.1f}** / {p99:.1f}"]
                for st in STAGES:
                    m, q = _ms(s.stage_s[st])
                    cells.append(f"{m:.1f} / {q:.1f}")
                score = f"{np.mean(s.scores):.3f}" if s.scores else "-"
                cand = f"{np.median(s.candidates):,.0f}" if s.candidates else "-"
                cells += [cand, score,
                          f"{s.no_grasp} of {len(s.total_s)}"]
                print("| " + " | ".join(cells) + " |")
    print()
    lo, hi = min(counts), max(counts)
    for p in paths:
        for g in GOALS:
            sa, sb = fig.samples[f"{lo}/{p}/{g}"], fig.samples[f"{hi}/{p}/{g}"]
            a_, b_ = _ms(sa.total_s)[0], _ms(sb.total_s)[0]
            # a table the jaw cannot hold ends its search early: the ratio over the plans
            # that found a grasp too
            ga, gb = _ms(sa.grasp_total_s)[0], _ms(sb.grasp_total_s)[0]
            found = (f"x{gb / ga:.2f}, {gb:.1f} / {ga:.1f} ms" if sa.grasp_total_s
                     and sb.grasp_total_s else "- (a count without a grasp)")
            print(f"cost of {hi} objects against {lo}, {p}, {g}: x{b_ / a_:.2f} "
                  f"(median {b_:.1f} ms / {a_:.1f} ms; plans that found a grasp only: "
                  f"{found}; linear would be x{hi / lo:.0f})")
    if GOAL_OBJECTS in counts:
        med, p99 = _ms(fig.samples[f"{GOAL_OBJECTS}/plan/best"].total_s)
        verdict = "meets the goal" if med <= GOAL_MS else (
            "meets the floor" if med <= FLOOR_MEDIAN_MS and p99 <= FLOOR_P99_MS
            else "BELOW the floor")
        print(f"issue 24 at {GOAL_OBJECTS} objects, plan, best: median {med:.1f} ms, p99 "
              f"{p99:.1f} ms against goal {GOAL_MS:g} ms median, floor {FLOOR_MEDIAN_MS:g} ms "
              f"median and {FLOOR_P99_MS:g} ms p99 -> {verdict}")
    for p in paths:
        if p in LOOP_PATHS and GOAL_OBJECTS in counts:
            med, p99 = _ms(fig.samples[f"{GOAL_OBJECTS}/{p}/best"].total_s)
            print(f"  {p}: median {med:.1f} ms, p99 {p99:.1f} ms")
    print_scores(fig)


def print_scores(fig: Figures) -> None:
    """Each loop path's best score against the REFERENCE path's on the same plans: means over
    the plans where both found a grasp, the share within SAME_SCORE of the reference's or
    above, and the plans where only one of the two found a grasp."""
    counts = [int(c) for c in fig.args["objects"].split(",")]
    if REFERENCE not in _paths(fig):
        return
    print(f"\nbest score against {REFERENCE}'s on the same plans (within {SAME_SCORE:g} or "
          f"above: the same):")
    print(f"| objects | goal | path | plans | mean, {REFERENCE} | mean, path | within 0.02 | "
          f"grasp only by {REFERENCE} / only by path |")
    print("|---|---|---|---|---|---|---|---|")
    for n in counts:
        for g in GOALS:
            base = fig.samples[f"{n}/{REFERENCE}/{g}"].plan_scores
            for p in (q for q in _paths(fig) if q in LOOP_PATHS and q != REFERENCE):
                new = fig.samples[f"{n}/{p}/{g}"].plan_scores
                both = [(a, b) for a, b in zip(base, new) if a is not None and b is not None]
                only_a = sum(a is not None and b is None for a, b in zip(base, new))
                only_b = sum(a is None and b is not None for a, b in zip(base, new))
                if both:
                    a, b = np.array(both).T
                    same = f"{np.mean(b >= a - SAME_SCORE):.0%}"
                    means = f"{a.mean():.3f} | {b.mean():.3f}"
                else:
                    same, means = "-", "- | -"
                print(f"| {n} | {g} | {p} | {len(both)} | {means} | {same} | "
                      f"{only_a} / {only_b} |")


def print_comparison(this: Figures, base: Figures) -> None:
    """Median and p99 totals of the loop's plan() of both trees, and their ratios."""
    counts = [int(c) for c in this.args["objects"].split(",")]
    print("| objects | goal | this median ms | base median ms | ratio | this p99 ms | "
          "base p99 ms | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for n in counts:
        for g in GOALS:
            a, b = (_ms(f.samples[f"{n}/plan/{g}"].total_s) for f in (this, base))
            print(f"| {n} | {g} | {a[0]:.1f} | {b[0]:.1f} | {a[0] / b[0]:.3f} | {a[1]:.1f} | "
                  f"{b[1]:.1f} | {a[1] / b[1]:.3f} |")
    print("(ratio < 1: this tree plans faster)")


def compare(args: argparse.Namespace) -> None:
    """Measure this tree and the baseline tree in alternating subprocesses; print both."""
    # here, not at the top: the measuring subprocess runs this file against the baseline
    # tree's packages, where benchmarks/_baseline.py may not exist
    from benchmarks._baseline import alternate_rounds, baseline_trees

    trees = baseline_trees(args.baseline_tree, "onboard")
    runs = alternate_rounds(trees, args.rounds, lambda tree: _measure_in_subprocess(tree, args),
                            lambda fig: fig.onboard_file)
    for name in ("this", "base"):
        print(f"\n== {name} tree: {trees[name]} ({args.rounds} rounds pooled)")
        print_table(runs[name])
    print("\nPickingLoop.plan(), this tree against the baseline")
    print_comparison(runs["this"], runs["base"])


def _measure_in_subprocess(tree: Path, args: argparse.Namespace) -> Figures:
    """This benchmark's measurement run as a script with PYTHONPATH=tree (tree's packages
    are the ones measured)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--json", "--scenes", str(args.scenes),
           "--repeats", str(args.repeats), "--seed", str(args.seed), "--objects", args.objects,
           "--threads", str(args.threads)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(cmd, env=env, cwd=tree, stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise SystemExit(f"measuring {tree} failed (exit {out.returncode})")
    return Figures.from_json(out.stdout.strip().splitlines()[-1])


def _objects_arg(text: str) -> str:
    """--objects: comma-separated object counts, each 1..10 (the simulated cell's range)."""
    try:
        counts = [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--objects {text!r}: not a comma-separated list of "
                                         f"integers") from None
    if not counts or any(not 1 <= c <= 10 for c in counts):
        raise argparse.ArgumentTypeError(f"--objects {text!r}: each count must be 1..10")
    return ",".join(map(str, counts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=5, help="tables per object count")
    ap.add_argument("--repeats", type=int, default=2, help="plans per path and goal per table")
    ap.add_argument("--seed", type=int, default=0, help="seed of the tables and the searches")
    ap.add_argument("--objects", type=_objects_arg, default="1,3,6,10",
                    help="object counts, comma-separated (default 1,3,6,10)")
    ap.add_argument("--threads", type=int, default=0,
                    help="Numba threads (default 0: numba's default, every core)")
    ap.add_argument("--baseline-tree", metavar="PATH",
                    help="another checkout whose plan() to measure beside this one's")
    ap.add_argument("--rounds", type=int, default=2,
                    help="with --baseline-tree: measurements of each tree, alternating order")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a subprocess's output
    args = ap.parse_args()
    for key in ("scenes", "repeats", "rounds"):
        if getattr(args, key) < 1:
            ap.error(f"--{key} must be >= 1, got {getattr(args, key)}")
    if not 0 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
        ap.error(f"--threads must be 0..{numba.config.NUMBA_NUM_THREADS}, got {args.threads}")
    if args.baseline_tree:
        compare(args)
    elif args.json:
        print(measure(args).to_json())
    else:
        print_table(measure(args))


if __name__ == "__main__":
    main()
