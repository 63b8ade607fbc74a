"""`graspline db`: build the simulation-ranked grasp database, and look inside one."""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from .cli import CliError


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

    from ._cli_db_build import add_build_parser

    add_build_parser(actions)


def _open(path: Path):
    from scoring import GraspDatabase, GraspDatabaseError

    try:
        return GraspDatabase(path)
    except GraspDatabaseError as exc:
        raise CliError(str(exc)) from exc


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
    then the builds run on it."""
    with _open(args.db) as db:
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
    with _open(args.db) as db:
        try:
            t = db.grasps(args.object, args.hand, k=args.k, by=args.by)
        except GraspDatabaseError as exc:
            raise CliError(str(exc)) from exc
    print(f"{'rank':>4} {'cand':>6} {'quality':>8} {'success':>8} {'A':>7} {'B':>5} {'C':>5} "
          f"{'P(fc)':>6} {'trials':>6}  position_m (object frame)")
    fmt = lambda v: "-" if not math.isfinite(v) else f"{v:.3f}"  # noqa: E731
    for i in range(len(t)):
        x, y, z = t.T_object_hand[i][:3, 3]
        print(f"{i + 1:>4} {t.candidate[i]:>6} {fmt(t.quality[i]):>8} {fmt(t.success_rate[i]):>8} "
              f"{fmt(t.a_mean[i]):>7} {fmt(t.b_mean[i]):>5} {fmt(t.c_mean[i]):>5} "
              f"{fmt(t.pfc[i]):>6} {t.samples_run[i]:>6}  ({x:+.3f}, {y:+.3f}, {z:+.3f})")
    return 0
