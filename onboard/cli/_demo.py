"""``graspline demo`` (the loop on the simulated cell) and ``graspline run`` (the loop on the
cell a cell file describes): trials with a live progress line, then the validation report."""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from ._common import CliError, progress_bar, reported, warm_up_kernels
from ._hand_database import add_size_arguments, database_size, hand_database


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``demo`` and ``run``."""
    demo = sub.add_parser("demo", help="run the picking loop on the simulated cell (no hardware)",
                          description="The picking loop on the simulated MuJoCo cell: trials "
                                      "with a progress line, then the validation report.")
    demo.add_argument("--trials", type=int, default=20, help="trials to run (default 20)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the cell and the search")
    demo.add_argument("--validate", action="store_true",
                      help="draw grasps across the score levels (Tan et al.'s protocol) "
                           "instead of the best only")
    demo.add_argument("--out", default="out/demo", help="folder of the trial log and report")
    demo.add_argument("--ycb", default=None, metavar="DIR",
                      help="also lay YCB scans from DIR (e.g. ../shared/data/ycb)")
    demo.add_argument("--hand", default="parallel", metavar="HAND",
                      help="the cell's hand: parallel (the jaw, default), three_finger, "
                           "underactuated, or a JSON description of an MJCF hand; a "
                           "multi-finger hand plans with a grasp database of the built-in "
                           "objects, built on first use into --cache")
    demo.add_argument("--cache", type=Path, default=None, metavar="DIR",
                      help="where the demo's grasp databases are kept (default: the user's "
                           "cache folder, ~/.cache/graspline)")
    add_size_arguments(demo, "with a multi-finger --hand")
    demo.set_defaults(func=run_demo)
    run = sub.add_parser("run", help="run the picking loop on the cell a cell file describes",
                         description="The picking loop on a cell (hardware or simulated) from "
                                     "its cell file; trials are logged to its log_dir.")
    run.add_argument("--config", required=True, help="the cell file (YAML)")
    run.add_argument("--trials", type=int, default=1, help="trials to run (default 1)")
    run.add_argument("--validate", action="store_true", help="draw grasps across score levels")
    run.add_argument("--report", default=None, metavar="DIR", help="write the report to DIR after")
    run.set_defaults(func=run_cell)


def _check_trials(n: int) -> None:
    if n < 1:
        raise CliError(f"--trials must be >= 1, got {n}")


def run_demo(args: argparse.Namespace) -> int:
    """The demo: the built-in simulated cell, a fresh log in --out, the report at the end."""
    from onboard import open_picking_cell

    from .._devices import CellSetupError

    _check_trials(args.trials)
    if args.ycb is not None and not Path(args.ycb).is_dir():
        raise CliError(f"--ycb {args.ycb!r} is not a folder")
    size = database_size(args, args.hand != "parallel")   # a misplaced size fails first
    if args.hand != "parallel":
        return _multi_finger_demo(args, *size)
    out = Path(args.out)
    log_dir = out / f"trials-{time.strftime('%Y%m%d-%H%M%S')}"
    print(f"building the simulated cell (seed {args.seed}) ...", flush=True)
    with reported(CellSetupError):
        cell = open_picking_cell(sim=True, seed=args.seed, log_dir=str(log_dir),
                                 mode="validate" if args.validate else "best", ycb_dir=args.ycb)
    with cell:
        warm_up_kernels(cell)
        _trials(cell, args.trials)
    return _report(log_dir, out / "report")


def _multi_finger_demo(args: argparse.Namespace, candidates: int, samples: int) -> int:
    """The demo with a multi-finger hand: its grasp database of that size first (built on
    first use, cached, with progress), then trials on the simulated cell carrying the hand, planned
    with the database (the object recognised by vision.recognise), then the report."""
    from scoring import GraspDatabaseError

    from onboard import open_picking_cell

    from .._devices import CellSetupError

    db = hand_database(args.hand, args.cache, out=sys.stdout, candidates=candidates,
                       samples=samples)
    out = Path(args.out)
    log_dir = out / f"trials-{time.strftime('%Y%m%d-%H%M%S')}"
    print(f"building the simulated cell (seed {args.seed}, {args.hand} hand) ...", flush=True)
    with reported(CellSetupError, ValueError, GraspDatabaseError):
        cell = open_picking_cell(sim=True, seed=args.seed, log_dir=str(log_dir),
                                 mode="validate" if args.validate else "best", ycb_dir=args.ycb,
                                 hand=args.hand, database_path=str(db))
    with cell:
        warm_up_kernels(cell)
        _trials(cell, args.trials)
    return _report(log_dir, out / "report")


def run_cell(args: argparse.Namespace) -> int:
    """Trials on the cell of a cell file (whose arm graspline commands)."""
    from onboard import CellFileError, load_cell_file, open_picking_cell

    from .._devices import CellSetupError

    _check_trials(args.trials)
    with reported(CellFileError, CellSetupError):
        config, _ = load_cell_file(args.config)
        if config.arm.kind == "none":
            # before any device is opened: with kind none the controller moves the arm
            raise CliError(f"{args.config}: arm.kind is none, so picking is driven by the robot "
                           f"controller over `graspline serve`; `run` needs an arm graspline "
                           f"commands (arm.kind: sim, or a real ArmController)")
        cell = open_picking_cell(args.config, mode="validate" if args.validate else "best")
    with cell:
        warm_up_kernels(cell)
        _trials(cell, args.trials)
        log_dir = cell.config.log_dir
    return _report(Path(log_dir), Path(args.report)) if args.report else 0


def _trials(cell, n: int) -> None:
    """Run n picks with a live progress line: trial, object, score, outcome, success so far;
    a cell that faults (its arm, or a look at the hand it asks for) stops them, saying why."""
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    done = ok = ran = 0
    bar = progress_bar(n, "trial", dynamic_ncols=True, file=sys.stdout)
    try:
        for _ in range(n):
            try:
                rec = cell.pick_record()
            except RuntimeError as exc:
                if not cell.loop.state.fault:
                    raise
                # faulted (an arm fault, or stops on nothing seen: a look at the hand); the
                # trials so far stay logged, and the report is written from them
                bar.write(f"stopped: {exc}")
                break
            ran += 1
            done += rec.success is not None
            ok += bool(rec.success)
            score = "-" if rec.score is None else f"{rec.score:.2f}"
            what = rec.outcome if not rec.error or rec.outcome != "no_grasp" else \
                f"no grasp ({_short_reason(rec.error)})"
            rate = f"{ok / done:.0%}" if done else "-"
            bar.set_postfix_str(f"#{rec.trial_id} {rec.object_label[:16]} score {score} "
                                f"{what}; success {rate}", refresh=False)
            bar.update(1)
    finally:
        bar.close()
    print(f"{ran} trial(s): {ok} of {done} grasps held", flush=True)


def _report(log_dir: Path, out: Path) -> int:
    """Write the validation report and say where it is."""
    from onboard import write_report

    page = write_report(log_dir, out)
    print(f"trial log: {log_dir}\nreport: {page}", flush=True)
    return 0


def _short_reason(error: str, most: int = 80) -> str:
    """The most specific part of a no-grasp message for the live line: the last clause of
    "no grasp scores at least 0.2 ... (best 0.00; the object is 109 mm across ...)"."""
    reason = error.rsplit("; ", 1)[-1].rstrip(")") if "; " in error else error
    return reason if len(reason) <= most else reason[:most - 3] + "..."
