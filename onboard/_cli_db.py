"""`graspline db`: build the simulation-ranked grasp database, and look inside one."""
from __future__ import annotations

import argparse
import math
import sqlite3
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


def run_info(args: argparse.Namespace) -> int:
    """Print what a grasp database holds."""
    with _open(args.db) as db:
        objects, hands = db.objects(), db.hands()
        print(f"{args.db}: {len(objects)} object(s), {len(hands)} hand(s)")
        for name, version in hands:
            for obj in objects:
                t = db.grasps(obj, name)
                if len(t):
                    print(f"  {obj:<20} {name:<16} {len(t):>6} grasps, best quality "
                          f"{t.quality[0]:.3f}, {int(t.discarded_early.sum())} discarded early, "
                          f"{int(t.samples_run.sum())} trials")
        con = sqlite3.connect(f"{args.db.resolve().as_uri()}?mode=ro", uri=True)
        for started, finished, status, command in con.execute(
                "SELECT started_at, finished_at, status, command FROM build_log ORDER BY id"):
            print(f"  build {started} -> {finished or '-'}: {status}  ({command})")
        con.close()
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
