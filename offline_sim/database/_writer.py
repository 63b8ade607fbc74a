"""Writing the grasp database: one transaction per batch, so a killed build loses nothing
it finished and, started again, skips what is done. Also the surface sample the database keeps
per object (``surface_points``): here, with the writer, because it decides no grasp's results
(this module is outside the measures' code version, so adding it changed no database's inputs)."""
from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring import SCHEMA_SQL, SCHEMA_VERSION, GraspDatabaseError, to_blob

from ..objects import GraspObject


@dataclass
class GraspRecord:
    """One simulated grasp candidate and its results (see the ``results`` table)."""

    candidate: int
    T_object_hand: np.ndarray
    nominal_ok: bool
    samples_run: int
    discarded_early: bool
    success_rate: float
    quality: float
    a_mean: float | None = None
    b_mean: float | None = None
    c_mean: float | None = None
    pfc: float | None = None
    approach: np.ndarray | None = None
    preshape: np.ndarray | None = None
    force_var: float | None = None
    position_var: float | None = None
    normal_var: float | None = None
    seed: int | None = None
    wall_s: float | None = None


SURFACE_POINTS = 2000  # ~4 mm apart on a 10 cm object: finer than the D400's depth noise at 0.7 m


def surface_points(obj: GraspObject, n: int = SURFACE_POINTS, *, seed: int | None = 0) -> np.ndarray:
    """(n, 3) float64 points on the object's surface (its ``visual`` mesh), object frame,
    metres: triangles drawn with probability proportional to their area, points uniform in
    each. Same seed, same points."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"surface_points: n must be an integer >= 1, got {n!r}")
    vertices, faces = (np.asarray(a) for a in obj.visual)
    tri = np.asarray(vertices, np.float64)[np.asarray(faces, np.int64)]      # (F, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    if not area.sum() > 0:
        raise ValueError(f"surface_points: object {obj.name!r} has no surface area")
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(tri), size=int(n), p=area / area.sum())
    # uniform in a triangle: fold the unit square's upper half back onto the lower one
    a, b = rng.random((2, int(n)))
    fold = a + b > 1.0
    a[fold], b[fold] = 1.0 - a[fold], 1.0 - b[fold]
    t = tri[pick]
    return t[:, 0] + a[:, None] * (t[:, 1] - t[:, 0]) + b[:, None] * (t[:, 2] - t[:, 0])


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _opt(v: float | None) -> float | None:
    return None if v is None or not np.isfinite(v) else float(v)


class GraspDatabaseWriter:
    """Creates or reopens a grasp database for writing (SQLite, WAL mode). A context manager."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        # WAL: readers (onboard, `db info`) never block the build; NORMAL sync is durable
        # across a killed process, which is the failure a long build meets.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._transaction():
            for statement in SCHEMA_SQL.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self._db.execute("INSERT INTO meta VALUES ('created', ?)", (_now(),))
            elif int(row[0]) in (1, 2):
                # version 1 lacks the targets table (just created above) and the build's pid;
                # its grasps keep their rows and count as built from unrecorded inputs.
                # Versions 1 and 2 lack objects.points: NULL until a build gives the sample.
                if int(row[0]) == 1:
                    self._db.execute("ALTER TABLE build_log ADD COLUMN pid INTEGER")
                if "points" not in {r[1] for r in self._db.execute("PRAGMA table_info(objects)")}:
                    self._db.execute("ALTER TABLE objects ADD COLUMN points BLOB")
                self._db.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                                 (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise GraspDatabaseError(f"{self.path} has schema version {row[0]}; this "
                                         f"graspline writes version {SCHEMA_VERSION}")

    def _transaction(self):
        return _Transaction(self._db)

    def close(self) -> None:
        """Close the file. Safe to call twice."""
        self._db.close()

    def __enter__(self) -> "GraspDatabaseWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def object_id(self, name: str, *, mesh_path: str | None = None, mesh_sha256: str | None = None,
                  scale: float = 1.0, mass_kg: float | None = None, radius_m: float | None = None,
                  stable_poses: np.ndarray | None = None, points: np.ndarray | None = None,
                  replace: bool = False) -> int:
        """Id of the object, adding it the first time; the same name with another mesh is an
        error unless replace, which rewrites the object's row (its grasps are the caller's).

        points : (N, 3) surface sample, object frame, metres. An existing row without one (a
        file from before schema 3) gets it filled in, and nothing else of the row changes.
        """
        row = self._db.execute("SELECT id, mesh_sha256, points IS NULL FROM objects WHERE name=?",
                               (name,)).fetchone()
        values = (mesh_path, mesh_sha256, scale, _opt(mass_kg), _opt(radius_m),
                  None if stable_poses is None else to_blob(stable_poses),
                  None if points is None else to_blob(points))
        if row is not None:
            if replace:
                with self._transaction():
                    self._db.execute("UPDATE objects SET mesh_path=?, mesh_sha256=?, scale=?, "
                                     "mass_kg=?, radius_m=?, stable_poses=?, points=? WHERE id=?",
                                     (*values, row[0]))
            elif mesh_sha256 is not None and row[1] not in (None, mesh_sha256):
                raise GraspDatabaseError(f"{self.path}: object {name!r} was built from another mesh "
                                         f"(sha256 {row[1][:12]}…, now {mesh_sha256[:12]}…)")
            elif points is not None and row[2]:
                with self._transaction():
                    self._db.execute("UPDATE objects SET points=? WHERE id=?", (values[-1], row[0]))
            return int(row[0])
        with self._transaction():
            cur = self._db.execute(
                "INSERT INTO objects (name, mesh_path, mesh_sha256, scale, mass_kg, radius_m, "
                "stable_poses, points) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (name, *values))
        return int(cur.lastrowid)

    def hand_id(self, name: str, version: str, params: dict) -> int:
        """Id of the hand model (name, version), adding it the first time."""
        row = self._db.execute("SELECT id FROM hands WHERE name=? AND version=?",
                               (name, version)).fetchone()
        if row is not None:
            return int(row[0])
        with self._transaction():
            cur = self._db.execute("INSERT INTO hands (name, version, params) VALUES (?, ?, ?)",
                                   (name, version, json.dumps(params, sort_keys=True)))
        return int(cur.lastrowid)

    def target_inputs(self, object_name: str, hand_name: str) -> dict[str, str] | None:
        """The inputs {name: digest} a target was built from; {} where grasps exist but no
        inputs were recorded (a schema-1 database); None where nothing of it is there."""
        row = self._db.execute(
            "SELECT t.inputs FROM targets t JOIN objects o ON o.id = t.object_id "
            "WHERE o.name=? AND t.hand_name=?", (object_name, hand_name)).fetchone()
        if row is not None:
            return json.loads(row[0])
        n = self._db.execute(
            "SELECT COUNT(*) FROM grasps g JOIN objects o ON o.id = g.object_id "
            "JOIN hands h ON h.id = g.hand_id WHERE o.name=? AND h.name=?",
            (object_name, hand_name)).fetchone()[0]
        return {} if n else None

    def begin_target(self, object_id: int, hand_id: int, version: str, inputs: dict[str, str],
                     n_candidates: int, *, restart: bool = False) -> None:
        """Record that a target is being built from these inputs; restart first deletes every
        grasp of its object and hand name (any hand version) in the same transaction."""
        hand_name = self._db.execute("SELECT name FROM hands WHERE id=?", (hand_id,)).fetchone()[0]
        with self._transaction():
            if restart:
                stale = ("SELECT g.id FROM grasps g JOIN hands h ON h.id = g.hand_id "
                         "WHERE g.object_id=? AND h.name=?")
                self._db.execute(f"DELETE FROM results WHERE grasp_id IN ({stale})",
                                 (object_id, hand_name))
                self._db.execute(f"DELETE FROM grasps WHERE id IN ({stale})", (object_id, hand_name))
            self._db.execute(
                "INSERT INTO targets (object_id, hand_name, hand_id, version, inputs, n_candidates, "
                "status, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'building', ?) "
                "ON CONFLICT (object_id, hand_name) DO UPDATE SET hand_id=excluded.hand_id, "
                "version=excluded.version, inputs=excluded.inputs, "
                "n_candidates=excluded.n_candidates, status='building', updated_at=excluded.updated_at",
                (object_id, hand_name, hand_id, version, json.dumps(inputs, sort_keys=True),
                 int(n_candidates), _now()))
            if restart:  # hand versions nothing refers to any more
                self._db.execute(
                    "DELETE FROM hands WHERE name=? AND id NOT IN (SELECT hand_id FROM grasps) "
                    "AND id NOT IN (SELECT hand_id FROM targets)", (hand_name,))

    def finish_target(self, object_id: int, hand_id: int) -> None:
        """Mark a target whose candidates are all written as finished."""
        with self._transaction():
            self._db.execute("UPDATE targets SET status='finished', updated_at=? "
                             "WHERE object_id=? AND hand_id=?", (_now(), object_id, hand_id))

    def finished_candidates(self, object_id: int, hand_id: int) -> set[int]:
        """Candidate indices whose results are already written (a resumed build skips them)."""
        return {r[0] for r in self._db.execute(
            "SELECT g.candidate FROM grasps g JOIN results r ON r.grasp_id = g.id "
            "WHERE g.object_id=? AND g.hand_id=?", (object_id, hand_id))}

    def write_batch(self, object_id: int, hand_id: int, records: list[GraspRecord]) -> None:
        """Write grasps and their results in one transaction: all of the batch or none."""
        with self._transaction():
            for rec in records:
                cur = self._db.execute(
                    "INSERT INTO grasps (object_id, hand_id, candidate, T_object_hand, preshape, "
                    "approach) VALUES (?, ?, ?, ?, ?, ?)",
                    (object_id, hand_id, int(rec.candidate), to_blob(rec.T_object_hand),
                     None if rec.preshape is None else to_blob(rec.preshape),
                     None if rec.approach is None else to_blob(rec.approach)))
                self._db.execute(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (cur.lastrowid, int(rec.nominal_ok), int(rec.samples_run),
                     int(rec.discarded_early), _opt(rec.success_rate), _opt(rec.a_mean),
                     _opt(rec.b_mean), _opt(rec.c_mean), _opt(rec.quality), _opt(rec.pfc),
                     _opt(rec.force_var), _opt(rec.position_var), _opt(rec.normal_var),
                     rec.seed, _opt(rec.wall_s), _now()))

    def log_start(self, command: str) -> int:
        """Record that a build started; returns its log id."""
        with self._transaction():
            cur = self._db.execute(
                "INSERT INTO build_log (started_at, command, host, status, pid) "
                "VALUES (?, ?, ?, 'running', ?)", (_now(), command, socket.gethostname(), os.getpid()))
        return int(cur.lastrowid)

    def log_finish(self, log_id: int, status: str, message: str = "") -> None:
        """Record how a build ended: finished, interrupted or failed."""
        with self._transaction():
            self._db.execute("UPDATE build_log SET finished_at=?, status=?, message=? WHERE id=?",
                             (_now(), status, message, log_id))


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *exc) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
