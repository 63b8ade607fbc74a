"""The ``graspline`` command line: one subcommand per module, each adding its own parser."""
from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand name -> module (in this package) with ``add_parser(subparsers)`` whose parser sets
# ``func(args) -> int``. Modules are imported only when the command line is built, and each
# imports its heavy dependencies inside ``func``, so ``graspline --help`` stays fast.
SUBCOMMANDS = {
    "score": "onboard._cli_score",
    "gripper": "onboard._cli_gripper",
    "db": "onboard._cli_db",
    "record": "onboard._cli_record",
    "trials": "onboard._cli_trials",
    "serve": "onboard._cli_serve",
    "demo": "onboard._cli_demo",
    "calibrate": "onboard._cli_calibrate",
}


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="graspline",
        description="Grasp scoring, gripper drivers and grasp-database tools for picking cells.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``graspline`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"graspline {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"graspline {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # `python -m onboard.cli` runs this file as __main__, a second copy of the module whose
    # CliError the subcommands (importing onboard.cli) do not raise: run the real one
    from onboard.cli import main as _main

    sys.exit(_main())
