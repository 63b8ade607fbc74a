"""`graspline db`: build the simulation-ranked grasp database (``db build``), and look inside
one (``db info``, ``db top``)."""
from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from pathlib import Path

from ._common import CliError, reported

# (xy step m, θ step rad) of the P(fc) grid per --pfc choice; None: not computed
PFC_GRIDS = {"off": None, "coarse": (0.002, math.radians(2.0)), "full": (0.001, math.radians(1.0))}


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``db`` with its actions build, info and top."""
    p = sub.add_parser("db", help="build or inspect the grasp database",
                       description="Build the grasp database by simulating grasps under pose "
                                   "uncertainty (offline), or inspect one.")
    actions = p.add_subparsers(dest="db_action", metavar="ACTION")
    actions.required = True

    info = actions.add_parser("info", help="objects, hands, grasp counts and builds of a database")
    info.add_argument("db", type=Path)
    info.set_defaults(func=run_info)

    top = actions.add_parser("top", help="the best grasps of an object for a hand")
    top.add_argument("db", type=Path)
    top.add_argument("object")
    top.add_argument("--hand", required=True)
    top.add_argument("-k", type=int, default=10)
    top.add_argument("--by", choices=("quality", "pfc"), default="quality",
                     help="rank by the simulated quality or by P(force closure) (Weisz & Allen)")
    top.set_defaults(func=run_top)

    _add_build_parser(actions)


def _open(path: Path):
    from scoring import GraspDatabase, GraspDatabaseError

    with reported(GraspDatabaseError):
        return GraspDatabase(path)


def _alive(host: str | None, pid: int | None) -> bool:
    """Whether a build logged as running by (host, pid) still runs; True if it cannot be told
    (another host)."""
    import os
    import socket

    if host != socket.gethostname() or pid is None:
        return host is not None and host != socket.gethostname()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_info(args: argparse.Namespace) -> int:
    """Print what a grasp database holds: per (object, hand) target its progress and state,
    then the builds run on it (a file that turns out damaged while it is read: one line)."""
    from scoring import GraspDatabaseError

    with _open(args.db) as db, reported(GraspDatabaseError):
        objects, hands = db.objects(), sorted({name for name, _ in db.hands()})
        targets = {(t.object_name, t.hand_name): t for t in db.targets()}
        builds = db.builds()
        # a killed build stays 'running' in the log: ask whether its process is still there
        status = [b.status if b.status != "running" or _alive(b.host, b.pid) else "killed"
                  for b in builds]
        running = "running" in status
        print(f"{args.db}: {len(objects)} object(s), {len(hands)} hand(s), "
              f"{sum(t.done for t in targets.values())}/{sum(t.n_candidates for t in targets.values())} "
              f"grasps of {len(targets)} target(s) written")
        for obj in objects:
            for name in hands:
                t, table = targets.get((obj, name)), db.grasps(obj, name)
                if t is None and not len(table):
                    continue
                if t is None:  # written by a build that did not record its targets
                    done, n, state = len(table), len(table), "unrecorded inputs"
                else:
                    done, n = t.done, t.n_candidates
                    state = ("finished" if t.status == "finished" or done >= n
                             else "building" if running else "stopped")
                best = f"{table.quality[0]:.3f}" if len(table) else "-"
                print(f"  {obj:<20} {name:<16} {done:>6}/{n:<6} grasps {done / max(n, 1):>5.0%}  "
                      f"{state:<9} best quality {best}, "
                      f"{int(table.discarded_early.sum())} discarded early, "
                      f"{int(table.samples_run.sum())} trials")
        for b, st in zip(builds, status):
            print(f"  build {b.started_at} -> {b.finished_at or '-'}: {st}  ({b.command})")
    return 0


def run_top(args: argparse.Namespace) -> int:
    """Print the k best grasps of an object for a hand, one line each."""
    from scoring import GraspDatabaseError

    if args.k < 1:
        raise CliError(f"-k must be >= 1, got {args.k}")
    with _open(args.db) as db, reported(GraspDatabaseError):
        t = db.grasps(args.object, args.hand, k=args.k, by=args.by)
    print(f"{'rank':>4} {'cand':>6} {'quality':>8} {'success':>8} {'A':>7} {'B':>5} {'C':>5} "
          f"{'P(fc)':>6} {'trials':>6}  position_m (object frame)")
    fmt = lambda v: "-" if not math.isfinite(v) else f"{v:.3f}"  # noqa: E731
    for i in range(len(t)):
        x, y, z = t.T_object_hand[i][:3, 3]
        print(f"{i + 1:>4} {t.candidate[i]:>6} {fmt(t.quality[i]):>8} {fmt(t.success_rate[i]):>8} "
              f"{fmt(t.a_mean[i]):>7} {fmt(t.b_mean[i]):>5} {fmt(t.c_mean[i]):>5} "
              f"{fmt(t.pfc[i]):>6} {t.samples_run[i]:>6}  ({x:+.3f}, {y:+.3f}, {z:+.3f})")
    return 0


def _add_build_parser(actions: argparse._SubParsersAction) -> None:
    """Register ``db build``."""
    p = actions.add_parser(
        "build", help="simulate grasps and write the ranked database (resumable)",
        description="Simulate each object's grasp candidates for a hand under pose uncertainty "
                    "(Kim et al.) in MuJoCo and write the ranking to an SQLite database. "
                    "Interrupted (Ctrl-C, kill -9) and run again, it resumes where it stopped.")
    p.add_argument("--objects", required=True,
                   help="'builtin', 'builtin:NAME,NAME' or a folder of meshes (*.obj/stl/ply or "
                        "NAME/visual.obj), metres")
    p.add_argument("--hand", required=True,
                   help="parallel, three_finger, underactuated, or a JSON description of an MJCF hand")
    p.add_argument("--candidates", type=int, default=100, help="candidates per object")
    p.add_argument("--samples", type=int, default=100, help="Monte Carlo pose samples per candidate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="database file (created or resumed)")
    p.add_argument("--workers", type=int, default=None, help="local processes (default: all cores)")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="run on a Ray cluster at ADDRESS ('local' starts one here)")
    p.add_argument("--cache", type=Path, default=None,
                   help="folder for convex decompositions (default: beside --out)")
    p.add_argument("--scale", type=float, default=1.0, help="mesh units to metres")
    p.add_argument("--pfc", choices=sorted(PFC_GRIDS), default="off",
                   help="also compute Weisz & Allen's P(force closure) per grasp by kinematic "
                        "closing over ±10 mm, ±20°: full = 1 mm/1° steps (18,081 poses, minutes "
                        "per grasp), coarse = 2 mm/2° (2,541 poses)")
    p.add_argument("--on-change", choices=("stop", "restart"), default="stop",
                   help="when resuming and a target's inputs (hand model, mesh, scale, settings, "
                        "code of the measures) differ from those its grasps were built with: "
                        "stop and say which changed (default), or delete its grasps and rebuild it")
    p.add_argument("--no-early-discard", action="store_true",
                   help="run every sample even for grasps that already failed (Kim's heuristic off)")
    p.add_argument("--closing", choices=("python", "native"), default="python",
                   help="Kim's closing law: python = servo targets advanced in Python every control "
                        "period, one trial at a time (default); native = motor-curve actuators, each "
                        "candidate's pose samples rolled out in batches by mujoco.rollout")
    p.add_argument("--threads", type=int, default=1,
                   help="rollout threads per worker with --closing native (default 1: the workers "
                        "already use the cores)")
    p.add_argument("--stable-poses", type=int, default=1, metavar="N",
                   help="draw --candidates in each of the object's N most probable resting poses "
                        "that face a different way up (default 1: the most probable alone); the "
                        "cell lays objects in any of them, and a grasp from above in one is from "
                        "the side or below in another")
    p.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    """Build (or resume) the database; one progress bar per object."""
    from offline_sim.database import (BuildInputsChanged, BuildTarget, HandSource,
                                      SimEvaluatorFactory, build_database, hand_digest,
                                      object_sources, surface_points)
    from offline_sim.quality import MonteCarloSettings

    for name in ("candidates", "samples"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.threads < 1:
        raise CliError(f"--threads must be >= 1, got {args.threads}")
    if args.stable_poses < 1:
        raise CliError(f"--stable-poses must be >= 1, got {args.stable_poses}")
    if args.workers is not None and args.workers < 0:
        raise CliError(f"--workers must be >= 0, got {args.workers}")
    cache = args.cache or args.out.resolve().parent / ".graspline-cache"
    try:  # decompositions and candidates are written there: a file in its place is a user error
        Path(cache).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a file is there" if Path(cache).exists() else exc.strerror or str(exc)
        raise CliError(f"--cache {cache}: cannot be used as a folder ({why})") from exc
    with reported(ValueError):
        hand = HandSource.parse(args.hand)
        sources = object_sources(args.objects, cache_dir=str(cache), scale=args.scale)
        hand_version = hand_digest(hand.build())  # fail here, in one line, not in every worker
    mc = MonteCarloSettings(n_samples=args.samples, early_discard=not args.no_early_discard,
                            seed=args.seed)
    targets = []
    for src in sources:
        factory = SimEvaluatorFactory(src, hand, args.candidates, args.seed, mc,
                                      pfc_steps=PFC_GRIDS[args.pfc], closing=args.closing,
                                      nthread=args.threads, candidates_cache_dir=str(cache),
                                      stable_poses=args.stable_poses)
        print(f"{src.name}: preparing (decomposition and candidates are cached in {cache})",
              file=sys.stderr)
        with reported(ValueError, prefix=f"{src.name}: "):
            n = len(factory())  # collision-free candidates this hand has on this object
            obj = src.load()
        if n == 0:
            print(f"{src.name}: no collision-free candidate for {hand.name}; skipped", file=sys.stderr)
            continue
        targets.append(BuildTarget(
            src.name, hand.name, hand_version, hand.params(), n, factory,
            {"mesh_path": src.mesh_path, "mesh_sha256": obj.source_sha256, "scale": src.scale,
             "mass_kg": obj.mass_kg, "radius_m": obj.radius_m, "stable_poses": obj.stable_poses,
             "points": surface_points(obj)},  # the model onboard recognition registers to
            factory.inputs()))
    command = "graspline " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    try:
        s = build_database(targets, args.out, workers=args.workers, ray_address=args.ray,
                           samples_planned=args.samples, command=command, on_change=args.on_change,
                           progress=sys.stderr.isatty() or bool(os.environ.get("GRASPLINE_PROGRESS")))
    except BuildInputsChanged as exc:
        raise CliError(f"{exc.path}: {exc.describe()} since its grasps were built; run with "
                       f"--on-change restart to rebuild them, or write to another --out") from exc
    except ConnectionError as exc:  # Ray's, when no cluster answers at --ray
        raise CliError(f"--ray {args.ray}: {exc}".splitlines()[0]) from exc
    except KeyboardInterrupt:
        print(f"graspline db build: interrupted; finished grasps are kept in {args.out}, "
              f"run the same command to resume", file=sys.stderr)
        return 130
    saved = 1 - s.trials_run / s.trials_planned if s.trials_planned else 0.0
    for key in s.restarted:
        print(f"{key}: inputs changed, rebuilt from scratch", file=sys.stderr)
    print(f"{args.out}: {s.evaluated} grasps simulated now, {s.skipped} already there, "
          f"{s.discarded_early} discarded early ({saved:.0%} of the Monte Carlo trials saved), "
          f"{s.wall_s:.1f} s")
    return 0
