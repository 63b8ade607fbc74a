"""``graspline serve``: the robot-controller endpoint on a cell file's cell or the simulated one."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .._cellfile import DEFAULT_PORT
from .._messages import ENDPOINT_COMMANDS
from ._common import CliError, reported
from ._hand_database import add_size_arguments, database_size, hand_database


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``serve`` subcommand."""
    p = subparsers.add_parser(
        "serve", help="serve the robot-controller endpoint (JSON lines over TCP)",
        description="Let an external robot controller drive picking over TCP: one JSON request "
                    f"per line ({', '.join(ENDPOINT_COMMANDS)}), or the plain-text line GRASP. "
                    "Prints 'listening on HOST:PORT' once it accepts connections; Ctrl-C or "
                    "SIGTERM stops it.")
    cell = p.add_mutually_exclusive_group(required=True)
    cell.add_argument("--config", metavar="CELL_YAML", help="the cell file")
    cell.add_argument("--sim", action="store_true", help="the simulated cell (MuJoCo)")
    p.add_argument("--host", help="address to bind (default: the cell file's, else 127.0.0.1; "
                                  "0.0.0.0 accepts connections from other machines)")
    p.add_argument("--port", type=int, help=f"TCP port (default: the cell file's, else "
                                            f"{DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--seed", type=int, help="--sim: seed of the simulated scene")
    p.add_argument("--hand", metavar="HAND",
                   help="--sim: the cell's hand: parallel (the jaw, default), three_finger, "
                        "underactuated, or a JSON description of an MJCF hand; a multi-finger "
                        "hand plans with the grasp database of the built-in objects, built on "
                        "first use into --cache (as graspline demo --hand does)")
    p.add_argument("--cache", type=Path, metavar="DIR",
                   help="--sim --hand: where the hand's grasp database is kept (default: the "
                        "user's cache folder, ~/.cache/graspline)")
    add_size_arguments(p, "--sim --hand")
    p.add_argument("--log-dir", metavar="DIR",
                   help="folder of the trial log (default: the cell file's log_dir; with --sim, "
                        "out/trials under the working directory)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every request")
    p.set_defaults(func=run)


def _make_service(args: argparse.Namespace):
    """The picking service for the cell the arguments name (the picking loop's factory)."""
    from onboard import make_picking_service as factory
    from scoring import GraspDatabaseError

    from .._devices import CellSetupError

    for flag, value in (("--seed", args.seed), ("--hand", args.hand), ("--cache", args.cache)):
        if value is not None and not args.sim:
            raise CliError(f"{flag} applies to the simulated cell only (use it with --sim)")
    if args.config is not None and not os.path.isfile(args.config):
        raise CliError(f"cell file {args.config} does not exist")
    multi_finger = args.hand not in (None, "parallel")
    candidates, samples = database_size(args, multi_finger)
    hand = {}
    if multi_finger:
        # its database on stderr: stdout's first line stays 'listening on HOST:PORT'
        db = hand_database(args.hand, args.cache, out=sys.stderr, candidates=candidates,
                           samples=samples)
        hand = {"hand": args.hand, "database_path": str(db)}
    # a bad cell file or a device that cannot be opened: the loader's message says which
    with reported(OSError, ValueError, CellSetupError, GraspDatabaseError):
        return factory(args.config, sim=args.sim, seed=args.seed, log_dir=args.log_dir, **hand)


def _address(args: argparse.Namespace, service) -> tuple[str, int]:
    """Bind address: the flags, else the service's ``endpoint_address`` if any, else defaults."""
    from .._server import DEFAULT_HOST

    cell_host, cell_port = getattr(service, "endpoint_address", None) or (None, None)
    host = args.host or cell_host or DEFAULT_HOST
    port = args.port if args.port is not None else (cell_port if cell_port is not None
                                                    else DEFAULT_PORT)
    if not 0 <= port <= 65535:
        raise CliError(f"--port must be 0..65535, got {port}")
    return host, port


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit status 0 after a clean stop."""
    from onboard import serve

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if args.port is not None and not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0..65535, got {args.port}")
    service = _make_service(args)
    warm_up = getattr(service, "kernel_warm_up", None)  # the factory warms a PickingCell up
    if warm_up is not None:
        print(warm_up.text(), flush=True)
    try:
        host, port = _address(args, service)

        def ready(bound_host: str, bound_port: int) -> None:
            print(f"listening on {bound_host}:{bound_port}", flush=True)

        try:
            serve(service, host, port, ready=ready)
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise CliError(f"cannot listen on {host}:{port}: {reason}") from exc
    finally:
        close = getattr(service, "close", None)
        if close is not None:
            close()
    print("stopped", flush=True)
    return 0
