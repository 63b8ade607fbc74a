"""The grasp database a multi-finger hand on the simulated cell plans with: the built-in
objects' database for that hand, built on first use (with progress) and kept in a cache
folder; what ``graspline demo --hand`` and ``graspline serve --sim --hand`` share."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from ._common import reported


def user_cache_dir() -> Path:
    """The user's cache folder for graspline: $XDG_CACHE_HOME/graspline or ~/.cache/graspline."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graspline"


def hand_database(hand: str, cache: Path | None, *, out: TextIO) -> Path:
    """The path of the built-in objects' grasp database for hand (a built-in name or a JSON
    hand description), built first where missing (offline_sim.database.ensure_demo_database:
    a progress bar on stderr when it is a terminal or GRASPLINE_PROGRESS is set), in cache
    (None: user_cache_dir()). What it does goes to out as two lines; a bad hand or cache is
    a one-line CliError, checked before anything is built."""
    from offline_sim.database import HandSource, ensure_demo_database

    with reported(ValueError):
        HandSource.parse(hand)  # a bad --hand in one line, before anything is built
    cache = cache or user_cache_dir()
    print(f"grasp database of the built-in objects for the {hand} hand (cached in "
          f"{cache}) ...", file=out, flush=True)
    with reported(ValueError):
        db = ensure_demo_database(hand, cache, progress=sys.stderr.isatty() or bool(
            os.environ.get("GRASPLINE_PROGRESS")))
    print(f"grasp database: {db}", file=out, flush=True)
    return db
