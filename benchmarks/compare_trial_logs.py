"""Compare two trial logs field by field: did a change keep the picking loop's behaviour?

Every field of every trial must be equal (floats exactly, the pose and the features value
for value, the stored images pixel for pixel); only what depends on the wall clock or the
folder is left out: started_at_s, finished_at_s, the seconds in stage_s (its stage names are
compared), the "budget overrun: ..." parts of the note, the image files' paths, and
cell_hash (the hash of the cell file, which holds the log's folder: two demo runs into two
folders differ there; --cell-hash compares it too). Prints a table of the differences and
exits 1 when there is any, 0 when the logs agree. The logs are opened read-only.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/compare_trial_logs.py out/demo-a out/demo-b

A and B are trial-log folders (holding trials.sqlite) or folders holding exactly one such
folder (what ``graspline demo --out`` writes).
"""
from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from pathlib import Path

import cv2
import numpy as np

DB_NAME = "trials.sqlite"
WALL_CLOCK_FIELDS = ("started_at_s", "finished_at_s")
JSON_FIELDS = ("features", "stage_s", "T_base_tcp", "images")
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


def read_trials(folder: Path) -> dict[int, dict[str, object]]:
    """Every trial of a log by id, as column name -> value (JSON columns decoded), read-only."""
    con = sqlite3.connect(f"file:{folder / DB_NAME}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in con.execute("SELECT * FROM trials ORDER BY trial_id")]
    finally:
        con.close()
    for r in rows:
        for name in JSON_FIELDS:
            if r[name] is not None:
                r[name] = json.loads(r[name])
        if r["T_base_tcp"] is not None:
            r["T_base_tcp"] = np.array(r["T_base_tcp"], np.float64)
    return {int(r["trial_id"]): r for r in rows}


def _comparable(row: dict[str, object], cell_hash: bool) -> dict[str, object]:
    """The trial's fields that must not change, by name."""
    out: dict[str, object] = {}
    for name, value in row.items():
        if name in WALL_CLOCK_FIELDS or (name == "cell_hash" and not cell_hash):
            continue
        if name == "stage_s":
            value = sorted(value)
        elif name == "note":
            value = _note(value)
        elif name == "images":
            value = sorted(value)
        out[name] = value
    return out


def _short(v: object, most: int = 60) -> str:
    """A value as a table cell."""
    text = np.array2string(v, precision=17, max_line_width=10**6) \
        if isinstance(v, np.ndarray) else repr(v)
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 3] + "..."


def _image(folder: Path, trial_id: int, name: str) -> np.ndarray | None:
    """A stored image's pixels as written (PNG, unchanged), None when unreadable."""
    return cv2.imread(str(folder / "images" / str(trial_id) / f"{name}.png"),
                      cv2.IMREAD_UNCHANGED)


def compare(a: Path, b: Path, *, cell_hash: bool = False) -> list[tuple[str, str, str, str]]:
    """(trial, field, value in A, value in B) of every difference between two trial-log
    folders."""
    ra, rb = read_trials(a), read_trials(b)
    diffs: list[tuple[str, str, str, str]] = []
    for tid in sorted(ra.keys() | rb.keys()):
        if tid not in ra or tid not in rb:
            diffs.append((str(tid), "(trial)", "present" if tid in ra else "absent",
                          "present" if tid in rb else "absent"))
            continue
        fa, fb = _comparable(ra[tid], cell_hash), _comparable(rb[tid], cell_hash)
        for name in fa:
            if not _same(fa[name], fb[name]):
                diffs.append((str(tid), name, _short(fa[name]), _short(fb[name])))
        for name in sorted(set(ra[tid]["images"]) & set(rb[tid]["images"])):
            ia, ib = _image(a, tid, name), _image(b, tid, name)
            if ia is None or ib is None or ia.shape != ib.shape or not np.array_equal(ia, ib):
                why = "unreadable" if ia is None or ib is None else (
                    "shape" if ia.shape != ib.shape else f"{int(np.sum(ia != ib))} values")
                diffs.append((str(tid), f"image {name}", "", f"differs ({why})"))
    return diffs


def main(argv: list[str] | None = None) -> int:
    """Compare the two logs the command line names; 1 when they differ."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path, help="the first trial log (or a folder holding one)")
    p.add_argument("b", type=Path, help="the second trial log (or a folder holding one)")
    p.add_argument("--cell-hash", action="store_true",
                   help="compare cell_hash too (it covers the log's folder)")
    args = p.parse_args(argv)
    a, b = trial_log_folder(args.a), trial_log_folder(args.b)
    print(f"A: {a} ({len(read_trials(a))} trials)\nB: {b} ({len(read_trials(b))} trials)")
    diffs = compare(a, b, cell_hash=args.cell_hash)
    if not diffs:
        print("the logs agree field by field (wall-clock times, paths and cell_hash left out)")
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
