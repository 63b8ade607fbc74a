"""The ``graspline`` command line: one module per command group, each registering its own
subcommands with ``add_parser(subparsers)``; the shared plumbing (the error wrapper, camera
frames, progress) is in ``_common``.

Command modules import their heavy dependencies inside the command's function, so
``graspline --help`` stays fast.
"""
from __future__ import annotations

import argparse
import sys

from .._cellfile import DEFAULT_PORT
from . import _calibrate, _db, _demo, _gripper, _record, _score, _serve, _trials, _warm_up
from ._common import CliError
from ._db import PFC_GRIDS

# In the order ``graspline --help`` lists them; ``_demo`` registers ``demo`` and ``run``.
COMMAND_GROUPS = (_score, _gripper, _db, _record, _trials, _serve, _demo, _calibrate,
                  _warm_up)

__all__ = ["DEFAULT_PORT", "PFC_GRIDS", "CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="graspline",
        description="Grasp scoring, gripper drivers and grasp-database tools for picking cells.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for group in COMMAND_GROUPS:
        group.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``graspline`` console script; returns the exit status (2 after a
    CliError, printed as one line on stderr; 130 after Ctrl-C)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"graspline {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"graspline {args.command}: interrupted", file=sys.stderr)
        return 130
