"""``graspline warm-up``: compile the picking loop's kernels into numba's cache, once per
install, so that the first start of a cell loads them instead of compiling them."""
from __future__ import annotations

import argparse
import tempfile

from ._common import CliError, reported, warm_up_kernels


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``warm-up``."""
    p = sub.add_parser("warm-up", help="compile the planning kernels into numba's cache now "
                                       "(after an install or an upgrade)",
                       description="Compile every kernel the picking loop's planning uses, "
                                   "on the built-in simulated cell, into numba's cache: a "
                                   "cell's first start (demo, run, serve) then loads them in "
                                   "about a second instead of compiling them for minutes. "
                                   "Needs the sim extra; no hardware.")
    p.set_defaults(func=run_warm_up)


def run_warm_up(args: argparse.Namespace) -> int:
    """Open the built-in simulated cell (its trial log in a throwaway folder), warm its
    kernels up and print how (compiled or loaded, and how long)."""
    from .._devices import CellSetupError

    try:
        from onboard import open_picking_cell
        import mujoco  # noqa: F401 - the simulated cell's physics
    except ImportError as exc:
        raise CliError(f"warm-up runs on the simulated cell, which needs the sim extra "
                       f"(pip install 'graspline[sim]'): {exc}") from exc

    with tempfile.TemporaryDirectory(prefix="graspline-warm-up-") as log_dir:
        with reported(CellSetupError):
            cell = open_picking_cell(sim=True, log_dir=log_dir)
        with cell:
            warm_up_kernels(cell)
    return 0
