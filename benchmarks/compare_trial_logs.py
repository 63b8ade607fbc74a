"""Compare two trial logs field by field: did a change keep the picking loop's behaviour?

Every field of every trial must be equal (floats exactly, the pose and the features value
for value, the stored images pixel for pixel); only what depends on the wall clock or the
folder is left out: started_at_s, finished_at_s, the seconds in stage_s (its stage names are
compared), the "budget overrun: ..." parts of the note, and the image files' paths. Prints a
table of the differences and exits 1 when there is any, 0 when the logs agree.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/compare_trial_logs.py out/demo-a out/demo-b

A and B are trial-log folders (holding trials.sqlite) or folders holding exactly one such
folder (what ``graspline demo --out`` writes).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from onboard import TrialLog, TrialRecord

DB_NAME = "trials.sqlite"
WALL_CLOCK_FIELDS = ("started_at_s", "finished_at_s")
OVERRUN_PREFIX = "budget overrun: "


def trial_log_folder(path: Path) -> Path:
    """The trial-log folder at or directly under path; SystemExit naming path otherwise."""
    if (path / DB_NAME).is_file():
        return path
    found = sorted(p.parent for p in path.glob(f"*/{DB_NAME}"))
    if len(found) != 1:
        raise SystemExit(f"{path}: expected a trial log ({DB_NAME}) in it or in exactly one "
                         f"folder under it, found {len(found)}")
    return found[0]


def _same(a: object, b: object) -> bool:
    """Exact equality of two field values (NaN equals NaN; arrays value for value)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (a is not None and b is not None and np.shape(a) == np.shape(b)
                and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _note(note: str) -> str:
    """The note without its budget overruns (their milliseconds are the wall clock's)."""
    return "; ".join(p for p in note.split("; ") if not p.startswith(OVERRUN_PREFIX))


def _comparable(r: TrialRecord) -> dict[str, object]:
    """The record's fields that must not change, by name."""
    out: dict[str, object] = {}
    for name, value in vars(r).items():
        if name in WALL_CLOCK_FIELDS or name == "images":
            continue
        if name == "stage_s":
            value = sorted(value)
        elif name == "note":
            value = _note(value)
        out[name] = value
    out["images"] = sorted(r.images)
    return out


def _short(v: object, most: int = 60) -> str:
    """A value as a table cell."""
    text = np.array2string(v, precision=17, max_line_width=10**6) \
        if isinstance(v, np.ndarray) else repr(v)
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 3] + "..."


def compare(a: TrialLog, b: TrialLog) -> list[tuple[str, str, str, str]]:
    """(trial, field, value in A, value in B) of every difference between two logs."""
    ra = {r.trial_id: r for r in a.records()}
    rb = {r.trial_id: r for r in b.records()}
    diffs: list[tuple[str, str, str, str]] = []
    for tid in sorted(ra.keys() | rb.keys()):
        if tid not in ra or tid not in rb:
            diffs.append((str(tid), "(trial)", "present" if tid in ra else "absent",
                          "present" if tid in rb else "absent"))
            continue
        fa, fb = _comparable(ra[tid]), _comparable(rb[tid])
        for name in fa:
            if not _same(fa[name], fb[name]):
                diffs.append((str(tid), name, _short(fa[name]), _short(fb[name])))
        for name in sorted(set(ra[tid].images) & set(rb[tid].images)):
            ia, ib = a.image(tid, name), b.image(tid, name)
            if ia.shape != ib.shape or not np.array_equal(ia, ib):
                n = "shape" if ia.shape != ib.shape else f"{int(np.sum(ia != ib))} values"
                diffs.append((str(tid), f"image {name}", "", f"differs ({n})"))
    return diffs


def main(argv: list[str] | None = None) -> int:
    """Compare the two logs the command line names; 1 when they differ."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path, help="the first trial log (or a folder holding one)")
    p.add_argument("b", type=Path, help="the second trial log (or a folder holding one)")
    args = p.parse_args(argv)
    with TrialLog(trial_log_folder(args.a)) as a, TrialLog(trial_log_folder(args.b)) as b:
        n = a.count(), b.count()
        diffs = compare(a, b)
    print(f"A: {a.directory} ({n[0]} trials)\nB: {b.directory} ({n[1]} trials)")
    if not diffs:
        print("the logs agree field by field (wall-clock times and paths left out)")
        return 0
    rows = [("trial", "field", "A", "B"), *diffs]
    widths = [max(len(r[k]) for r in rows) for k in range(4)]
    for k, r in enumerate(rows):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        if k == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(f"{len(diffs)} difference(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
