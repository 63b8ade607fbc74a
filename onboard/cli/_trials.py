"""`graspline trials`: list and show logged trials, confirm an outcome, write the report."""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from ._common import CliError, reported


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``trials`` with its actions list, show, outcome and report."""
    p = sub.add_parser("trials", help="the trial log: list, show, confirm outcomes, report",
                       description="Look into a trial log (a directory with trials.sqlite and "
                                   "images/), confirm a trial's outcome, or write the "
                                   "validation report.")
    actions = p.add_subparsers(dest="trials_action", metavar="ACTION")
    actions.required = True

    ls = actions.add_parser("list", help="one line per trial")
    ls.add_argument("log", type=Path, help="trial log directory")
    ls.set_defaults(func=run_list)

    show = actions.add_parser("show", help="every field of one trial")
    show.add_argument("log", type=Path)
    show.add_argument("trial_id", type=int)
    show.set_defaults(func=run_show)

    out = actions.add_parser("outcome", help="close a pending trial with a confirmed outcome")
    out.add_argument("log", type=Path)
    out.add_argument("trial_id", type=int)
    which = out.add_mutually_exclusive_group(required=True)
    which.add_argument("--success", dest="success", action="store_true")
    which.add_argument("--failure", dest="success", action="store_false")
    out.add_argument("--note", default="", help="why, in a few words")
    out.add_argument("--source", choices=("operator", "controller"), default="operator")
    out.set_defaults(func=run_outcome)

    rep = actions.add_parser("report", help="write the validation report (HTML + PNG plots)")
    rep.add_argument("log", type=Path)
    rep.add_argument("--out", type=Path, required=True, help="directory for index.html")
    rep.add_argument("--levels", type=int, default=5, help="number of score levels (default 5)")
    rep.set_defaults(func=run_report)


def _open(path: Path):
    """The TrialLog in ``path``; CliError if there is none (never creates one)."""
    from onboard import TrialLog, TrialLogError

    from .._trials import DB_NAME

    if not (path / DB_NAME).is_file():
        raise CliError(f"no trial log in {path} (no {DB_NAME})")
    with reported(TrialLogError):
        return TrialLog(path)


def _num(v: float | None, scale: float = 1.0, spec: str = ".3f") -> str:
    return "-" if v is None or not math.isfinite(v) else format(v * scale, spec)


def _when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def run_list(args: argparse.Namespace) -> int:
    """Print one line per trial."""
    with _open(args.log) as log:
        records = log.records()
    print(f"{'id':>5} {'started (UTC)':<19} {'mode':<8} {'object':<14} {'score':>6} "
          f"{'outcome':<10} {'by':<13} {'move mm':>8} {'move deg':>8} {'total s':>8}")
    for r in records:
        outcome = r.outcome if r.finished_at_s is not None or r.closed else "unfinished"
        total = sum(r.stage_s.values()) if r.stage_s else None
        print(f"{r.trial_id:>5} {_when(r.started_at_s):<19} {r.mode:<8} "
              f"{(r.object_label or '-')[:14]:<14} {_num(r.score):>6} {outcome:<10} "
              f"{r.outcome_source if r.closed else '-':<13} {_num(r.movement_m, 1e3, '.1f'):>8} "
              f"{_num(r.movement_rad, 180 / math.pi, '.1f'):>8} {_num(total):>8}")
    print(f"{len(records)} trial(s)")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print every field of one trial, one per line."""
    from onboard import TrialLogError

    with _open(args.log) as log, reported(TrialLogError):
        r = log.get(args.trial_id)
    print(f"trial {r.trial_id}")
    for name, value in vars(r).items():
        if name in ("trial_id", "T_base_tcp", "features", "stage_s", "images"):
            continue
        if name in ("started_at_s", "finished_at_s") and value is not None:
            value = f"{value:.3f} ({_when(value)} UTC)"
        print(f"  {name:<20} {value if value not in ('', None) else '-'}")
    for name in ("features", "stage_s"):
        items = getattr(r, name)
        print(f"  {name:<20} " + (", ".join(f"{k}={v:.6g}" for k, v in items.items()) or "-"))
    if r.T_base_tcp is None:
        print(f"  {'T_base_tcp':<20} -")
    else:
        for i, row in enumerate(r.T_base_tcp):
            print(f"  {'T_base_tcp' if i == 0 else '':<20} "
                  + " ".join(f"{v:+.4f}" for v in row))
    for name, path in sorted(r.images.items()):
        print(f"  {'image ' + name:<20} {path}")
    return 0


def run_outcome(args: argparse.Namespace) -> int:
    """Close a pending trial with the outcome the operator (or controller) confirmed."""
    from onboard import TrialLogError

    with _open(args.log) as log, reported(TrialLogError):
        r = log.report_outcome(args.trial_id, args.success, note=args.note, source=args.source)
    print(f"trial {r.trial_id}: {r.outcome} (by {r.outcome_source})")
    return 0


def run_report(args: argparse.Namespace) -> int:
    """Write the validation report and print where it is."""
    from onboard import TrialLogError, write_report

    if args.levels < 1:
        raise CliError(f"--levels must be >= 1, got {args.levels}")
    _open(args.log).close()  # a clear error for a missing or foreign log
    with reported(TrialLogError, OSError):
        page = write_report(args.log, args.out, n_levels=args.levels)
    print(f"wrote {page}")
    return 0
