"""Compare two grasp databases row by row: every table, every column except the ones that
record when or how long (timestamps, durations, host and process ids, the command line).

Rows are matched by content, not by row id: grasps by (object, hand, candidate), results by
their grasp, objects by name, hands by name and version (the ids count in the order the build
wrote its batches, which depends on when each arrived, even with one worker).

A refactor that claims to change no behaviour builds the same small database before and after
(`graspline db build ... --seed 0 --workers 1`) and runs this on the two files; it prints one
line per table and, for a table that differs, its first differing rows, and exits 1 if any
table differs. Floats and blobs are compared exactly (bit for bit), not within a tolerance.

A change that edits the simulation's code also changes its code digest (targets.inputs'
"code", measures_code_version), and with it targets.version, the hash of all inputs: with
--code-changed the "code" entry of inputs is left out and version is not compared, so the
rows still say whether anything else (every result) moved.

A file of an older schema against a newer one (schema 3 added objects.points) is compared on
the columns both have, saying so, and their schema versions are not compared.

Run: .venv/bin/python benchmarks/compare_databases.py A.db B.db [--code-changed]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

# columns that say when, where or how long a build ran: they differ between any two builds
IGNORED = {
    "results": {"wall_s", "finished_at"},
    "targets": {"updated_at"},
    "build_log": {"started_at", "finished_at", "command", "host", "pid", "message"},
}
# meta keys that hold the clock of the build that created the file
IGNORED_META = {"created"}
# columns a newer schema added: when only one file has one, the rows are compared on the
# columns both have, and the schema versions are not compared (both are printed)
SCHEMA_ADDED = {"objects": {"points"}}  # schema 3: each object's surface sample


def tables(db: sqlite3.Connection) -> list[str]:
    """The user tables of db, sorted by name."""
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                      "AND name NOT LIKE 'sqlite_%' ORDER BY name")
    return [r[0] for r in rows]


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    """The columns of table, in schema order."""
    return [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]


def natural_keys(db: sqlite3.Connection) -> dict[str, dict[int, str]]:
    """Per referenced table, row id -> a key that names the row by its content: objects by
    name, hands by name and version, grasps by object, hand and candidate index. Row ids count
    in the order the build wrote its batches, which depends on when each batch arrived."""
    objects = dict(db.execute("SELECT id, name FROM objects"))
    hands = {i: f"{n}@{v}" for i, n, v in db.execute("SELECT id, name, version FROM hands")}
    grasps = {i: f"{objects.get(o)}|{hands.get(h)}|{c}" for i, o, h, c in
              db.execute("SELECT id, object_id, hand_id, candidate FROM grasps")}
    return {"object_id": objects, "hand_id": hands, "grasp_id": grasps,
            "objects": objects, "hands": hands, "grasps": grasps}


def compared_rows(db: sqlite3.Connection, table: str, cols: list[str],
                  code_changed: bool = False, ignored_meta: frozenset = frozenset()) -> list[tuple]:
    """The rows of table over cols, row ids and references to them replaced by natural keys
    (natural_keys; a table's own id is dropped where nothing refers to it), sorted;
    code_changed : the targets' inputs without their "code" digest."""
    keys = natural_keys(db)
    quoted = ", ".join(f'"{c}"' for c in cols)
    rows = db.execute(f'SELECT {quoted} FROM "{table}"').fetchall()
    if table == "meta":
        rows = [r for r in rows if r[0] not in IGNORED_META | ignored_meta]
    if table == "targets" and code_changed and "inputs" in cols:
        i = cols.index("inputs")
        rows = [r[:i] + (_without_code(r[i]),) + r[i + 1:] for r in rows]
    out = []
    for r in rows:
        row = []
        for c, v in zip(cols, r):
            if c == "id":
                if table in keys:
                    row.append(keys[table].get(v))
                continue  # an id nothing refers to (targets, build_log): its order of writing
            row.append(keys[c].get(v) if c in keys else v)
        out.append(tuple(row))
    return sorted(out, key=repr)


def compared_columns(cols: list[str], table: str) -> list[str]:
    """The names of compared_rows' fields: cols without a dropped id."""
    return [c for c in cols if not (c == "id" and table not in ("objects", "hands", "grasps"))]


def _without_code(inputs: str) -> str:
    """A target's inputs JSON without the digest of the measures' code."""
    d = json.loads(inputs)
    d.pop("code", None)
    return json.dumps(d, sort_keys=True)


def compare(path_a: Path, path_b: Path, *, code_changed: bool = False, show: int = 3) -> bool:
    """Print the comparison of every table of the two files; True when all are equal.
    code_changed : leave out the code digest and the target versions hashed from it."""
    a, b = (sqlite3.connect(f"file:{p}?mode=ro", uri=True) for p in (path_a, path_b))
    same = True
    names_a, names_b = tables(a), tables(b)
    if names_a != names_b:
        print(f"tables differ: {names_a} vs {names_b}")
        same = False
    common = sorted(set(names_a) & set(names_b))
    added = {t: set(columns(a, t)) ^ set(columns(b, t)) for t in common}
    added = {t: c for t, c in added.items() if c and c <= SCHEMA_ADDED.get(t, set())}
    ignored_meta = frozenset({"schema_version"}) if added else frozenset()
    if added:
        versions = [db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                    for db in (a, b)]
        print(f"schema versions {versions[0][0] if versions[0] else None} and "
              f"{versions[1][0] if versions[1] else None}: compared on the columns both have "
              f"(not compared: " + ", ".join(f"{t}.{c}" for t in added for c in sorted(added[t]))
              + ", which only one file has, and the schema version)")
    for table in common:
        cols_a, cols_b = columns(a, table), columns(b, table)
        if table in added:
            cols_a = cols_b = [c for c in cols_a if c not in added[table]]
        if cols_a != cols_b:
            print(f"{table}: columns differ: {cols_a} vs {cols_b}")
            same = False
            continue
        ignored = IGNORED.get(table, set()) | ({"version"} if code_changed and table == "targets" else set())
        cols = [c for c in cols_a if c not in ignored]
        rows_a = compared_rows(a, table, cols, code_changed, ignored_meta)
        rows_b = compared_rows(b, table, cols, code_changed, ignored_meta)
        skipped = sorted(set(cols_a) - set(cols))
        note = f" (not compared: {', '.join(skipped)})" if skipped else ""
        if rows_a == rows_b:
            print(f"{table}: {len(rows_a)} rows x {len(cols)} columns identical{note}")
            continue
        same = False
        only_a = [r for r in rows_a if r not in set(rows_b)]
        only_b = [r for r in rows_b if r not in set(rows_a)]
        print(f"{table}: DIFFERENT ({len(rows_a)} vs {len(rows_b)} rows; {len(only_a)} only in A, "
              f"{len(only_b)} only in B){note}")
        for side, rows in (("A", only_a), ("B", only_b)):
            for r in rows[:show]:
                print(f"  {side}: " + ", ".join(f"{c}={_shown(v)}" for c, v in
                                               zip(compared_columns(cols, table), r)))
    a.close()
    b.close()
    return same


def _shown(value: object) -> str:
    """A cell for the report: blobs by length and digest, the rest as repr."""
    if isinstance(value, bytes):
        return f"<{len(value)} bytes {hashlib.sha256(value).hexdigest()[:12]}>"
    return repr(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", type=Path, help="the first database (e.g. built before a change)")
    ap.add_argument("b", type=Path, help="the second database (e.g. built after it)")
    ap.add_argument("--code-changed", action="store_true",
                    help="the simulation's code changed on purpose: leave out its digest "
                         "(targets.inputs' \"code\") and targets.version")
    args = ap.parse_args()
    for p in (args.a, args.b):
        if not p.is_file():
            sys.exit(f"compare_databases: no such file: {p}")
    same = compare(args.a, args.b, code_changed=args.code_changed)
    print("identical" if same else "DIFFERENT")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
