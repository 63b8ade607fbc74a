"""The grasp database a multi-finger hand on the simulated cell plans with: the built-in
objects' database for that hand, built on first use (with progress) and kept in a cache
folder; what ``graspline demo --hand`` and ``graspline serve --sim --hand`` share."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from ._common import CliError, reported


def user_cache_dir() -> Path:
    """The user's cache folder for graspline: $XDG_CACHE_HOME/graspline or ~/.cache/graspline."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graspline"


# the demo database's size (offline_sim.database.DEMO_CANDIDATES and DEMO_SAMPLES), written
# here so that --help needs no simulator
DEFAULT_CANDIDATES = 40
DEFAULT_SAMPLES = 10


def add_size_arguments(p: argparse.ArgumentParser, applies: str) -> None:
    """Register --db-candidates and --db-samples (the hand database's size) on p; applies
    names the flags they go with in the help."""
    p.add_argument("--db-candidates", type=int, default=None, metavar="N",
                   help=f"{applies}: grasp candidates per object and resting pose in the hand's "
                        f"database (default {DEFAULT_CANDIDATES}; fewer builds sooner and "
                        f"finds fewer grasps)")
    p.add_argument("--db-samples", type=int, default=None, metavar="N",
                   help=f"{applies}: pose samples per candidate that rank its quality (default "
                        f"{DEFAULT_SAMPLES}; fewer builds sooner and ranks less surely)")


def database_size(args: argparse.Namespace, multi_finger: bool) -> tuple[int, int]:
    """(candidates, samples) of the hand database from --db-candidates and --db-samples (the
    defaults where not given); a one-line CliError for a size under 1, or for either given
    without a hand that plans with a database."""
    size = []
    for flag, value, default in (("--db-candidates", args.db_candidates, DEFAULT_CANDIDATES),
                                 ("--db-samples", args.db_samples, DEFAULT_SAMPLES)):
        if value is not None and not multi_finger:
            raise CliError(f"{flag} applies to a multi-finger --hand only (the jaw plans "
                           f"without a grasp database)")
        if value is not None and value < 1:
            raise CliError(f"{flag} must be >= 1, got {value}")
        size.append(default if value is None else value)
    return size[0], size[1]


def hand_database(hand: str, cache: Path | None, *, out: TextIO,
                  candidates: int = DEFAULT_CANDIDATES, samples: int = DEFAULT_SAMPLES) -> Path:
    """The path of the built-in objects' grasp database for hand (a built-in name or a JSON
    hand description) with candidates per object and resting pose and samples per candidate,
    built first where missing (offline_sim.database.ensure_demo_database: a progress bar on
    stderr when it is a terminal or GRASPLINE_PROGRESS is set), in cache (None:
    user_cache_dir()). What it does goes to out as two lines; a bad hand or cache is a
    one-line CliError, checked before anything is built."""
    from offline_sim.database import HandSource, ensure_demo_database

    with reported(ValueError):
        HandSource.parse(hand)  # a bad --hand in one line, before anything is built
    cache = cache or user_cache_dir()
    print(f"grasp database of the built-in objects for the {hand} hand (cached in "
          f"{cache}) ...", file=out, flush=True)
    with reported(ValueError):
        db = ensure_demo_database(hand, cache, candidates=candidates, samples=samples,
                                  progress=sys.stderr.isatty() or bool(
                                      os.environ.get("GRASPLINE_PROGRESS")))
    print(f"grasp database: {db}", file=out, flush=True)
    return db
