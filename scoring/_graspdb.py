"""The grasp database: its SQLite schema and a read-only reader for the onboard loop.

offline_sim writes it (one transaction per batch, WAL mode, so an interrupted build resumes
where it stopped); onboard reads it into arrays at start-up and never writes. Arrays are
stored as little-endian float64 blobs; poses are 4 x 4 ``T_object_hand`` (metres).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SCHEMA_VERSION = 3  # 2: the targets table (what each (object, hand) was built from, its state);
                    # 3: objects.points, a surface sample per object (recognition onboard)
READABLE_VERSIONS = (2, 3)  # a schema-2 file still serves its grasps; it has no object models

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    mesh_path TEXT,
    mesh_sha256 TEXT,
    scale REAL NOT NULL DEFAULT 1.0,
    mass_kg REAL,
    radius_m REAL,              -- torque scale of measure A
    stable_poses BLOB,          -- (n, 4, 4) T_table_object
    points BLOB                 -- (N, 3) surface sample, object frame, metres (schema 3)
);
CREATE TABLE IF NOT EXISTS hands (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    params TEXT NOT NULL,       -- JSON of the hand model's parameters
    UNIQUE (name, version)
);
CREATE TABLE IF NOT EXISTS grasps (
    id INTEGER PRIMARY KEY,
    object_id INTEGER NOT NULL REFERENCES objects (id),
    hand_id INTEGER NOT NULL REFERENCES hands (id),
    candidate INTEGER NOT NULL, -- index in the seeded candidate list: what resume keys on
    T_object_hand BLOB NOT NULL,
    preshape BLOB,
    approach BLOB,              -- unit approach direction, object frame
    UNIQUE (object_id, hand_id, candidate)
);
CREATE TABLE IF NOT EXISTS results (
    grasp_id INTEGER PRIMARY KEY REFERENCES grasps (id),
    nominal_ok INTEGER NOT NULL,
    samples_run INTEGER NOT NULL,
    discarded_early INTEGER NOT NULL,
    success_rate REAL,          -- mean of measure B over the pose samples
    a_mean REAL, b_mean REAL, c_mean REAL,
    quality REAL,               -- the ranking value
    pfc REAL,                   -- Weisz & Allen P(force closure), NULL if not computed
    force_var REAL, position_var REAL, normal_var REAL,  -- contact-stability diagnostics
    seed INTEGER,
    wall_s REAL,
    finished_at TEXT
);
CREATE TABLE IF NOT EXISTS targets (
    id INTEGER PRIMARY KEY,
    object_id INTEGER NOT NULL REFERENCES objects (id),
    hand_name TEXT NOT NULL,
    hand_id INTEGER NOT NULL REFERENCES hands (id),
    version TEXT NOT NULL,      -- hash of every input that decides the results
    inputs TEXT NOT NULL,       -- JSON {input name: digest}: says which input changed
    n_candidates INTEGER NOT NULL,
    status TEXT NOT NULL,       -- building, finished
    updated_at TEXT,
    UNIQUE (object_id, hand_name)
);
CREATE TABLE IF NOT EXISTS build_log (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    command TEXT NOT NULL,
    host TEXT,
    status TEXT NOT NULL,       -- running, finished, interrupted, failed
    message TEXT,
    pid INTEGER                 -- of the build process on host: is a 'running' build alive?
);
"""


class GraspDatabaseError(Exception):
    """The file is missing, not a graspline grasp database, or of another schema version."""


def _schema_advice(path: Path, found: str | None, version: int | None) -> str:
    """One line: the file's schema version and this graspline's, and what to run."""
    readable = ", ".join(map(str, READABLE_VERSIONS))
    head = f"{path} has schema version {found}, this graspline reads versions {readable}"
    if version is not None and version > SCHEMA_VERSION:
        return (f"{head}: it was written by a newer graspline; update graspline, or build the "
                f"database again with this one into another file (`graspline db build ... "
                f"--out OTHER.sqlite`)")
    if version is not None and version >= 1:
        return (f"{head}: run `graspline db build ... --out {path} --on-change restart` with "
                f"this graspline, which migrates the file and rebuilds its grasps")
    return f"{head}: it is not a graspline grasp database this graspline can read"


def to_blob(array: np.ndarray) -> bytes:
    """Little-endian float64 bytes of an array (shape is the caller's to know)."""
    return np.ascontiguousarray(array, dtype="<f8").tobytes()


def from_blob(blob: bytes | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """The float64 array of a blob, reshaped; None for NULL."""
    if blob is None:
        return None
    return np.frombuffer(blob, dtype="<f8").reshape(shape).copy()


@dataclass
class GraspTable:
    """Ranked grasps of one object for one hand, best first, as a struct of arrays.

    candidate : (N,) int; T_object_hand : (N, 4, 4) metres; approach : (N, 3); quality,
    success_rate, a_mean, b_mean, c_mean, pfc (NaN if not computed) : (N,) float;
    samples_run : (N,) int; discarded_early : (N,) bool; preshape : (N, P) the hand's P
    preshape joint values of each grasp (rad or m; P = 0 for a hand without preshape joints;
    NaN where a row has none).
    """

    object_name: str
    hand_name: str
    candidate: np.ndarray
    T_object_hand: np.ndarray
    approach: np.ndarray
    quality: np.ndarray
    success_rate: np.ndarray
    a_mean: np.ndarray
    b_mean: np.ndarray
    c_mean: np.ndarray
    pfc: np.ndarray
    samples_run: np.ndarray
    discarded_early: np.ndarray
    preshape: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.candidate)


def _preshapes(blobs: list[bytes | None]) -> np.ndarray:
    """(N, P) preshape values of N grasps from their blobs (NaN rows where a blob is NULL)."""
    p = max((len(b) // 8 for b in blobs if b is not None), default=0)
    out = np.full((len(blobs), p), np.nan)
    for i, b in enumerate(blobs):
        if b is not None and len(b) // 8 == p:
            out[i] = from_blob(b, (p,))
    return out


@dataclass(frozen=True)
class ObjectShape:
    """What the database keeps of an object's shape, for recognising it onboard: points (N, 3)
    float64 surface sample, object frame, metres; stable_poses (S, 4, 4) ``T_table_object``.
    (vision.ObjectModel is built from it: scoring cannot import vision.)"""

    name: str
    points: np.ndarray
    stable_poses: np.ndarray


@dataclass(frozen=True)
class TargetState:
    """How far one (object, hand) target of a build got: done of n_candidates grasps written;
    status "building" (until every candidate is written) or "finished"; version : hash of
    every input that decides its results."""

    object_name: str
    hand_name: str
    version: str
    n_candidates: int
    done: int
    status: str


@dataclass(frozen=True)
class BuildLogEntry:
    """One build run: UTC ISO times, status (running, finished, interrupted, failed), the
    command, and the host and process id that ran it (a killed build stays 'running')."""

    started_at: str
    finished_at: str | None
    status: str
    command: str
    host: str | None
    pid: int | None


# the tables a grasp database cannot serve grasps without (targets and build_log, which
# `db info` and the code versions read, came with schema 2)
REQUIRED_TABLES = ("meta", "objects", "hands", "grasps", "results")


class GraspDatabase:
    """Read-only access to a grasp database file. A context manager.

    Every way a file can be wrong is a GraspDatabaseError whose one line names the path and
    what is wrong: missing, not SQLite, truncated or damaged ("database disk image is
    malformed"), a table missing, another schema version (with what to run), never a raw
    sqlite3 error; a file refused at opening leaves no connection open."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise GraspDatabaseError(f"grasp database {self.path} does not exist")
        self._db = None
        try:
            self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
            self.schema_version = self._check()
        except BaseException:
            if self._db is not None:
                self._db.close()
            raise

    def _check(self) -> int:
        """The file's schema version after checking it is a whole grasp database this
        graspline reads; GraspDatabaseError naming what is wrong otherwise."""
        tables = {r[0] for r in self._rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if missing == list(REQUIRED_TABLES):
            raise GraspDatabaseError(f"{self.path} is not a graspline grasp database: it has none "
                                     f"of the tables {', '.join(REQUIRED_TABLES)}")
        if missing:
            raise GraspDatabaseError(f"{self.path} is not a complete graspline grasp database: "
                                     f"table(s) {', '.join(missing)} missing (damaged, or "
                                     f"written by another program); build it again with "
                                     f"`graspline db build`")
        row = self._rows("SELECT value FROM meta WHERE key = 'schema_version'")
        found = row[0][0] if row else None
        try:
            version = int(found)
        except (TypeError, ValueError):
            version = None
        if version not in READABLE_VERSIONS:
            raise GraspDatabaseError(_schema_advice(self.path, found, version))
        return version

    def close(self) -> None:
        """Close the file. Safe to call twice."""
        self._db.close()

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """The rows of a query; a sqlite3 error (a truncated or damaged file, a table or
        column missing) becomes a GraspDatabaseError naming the path and what is wrong."""
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise GraspDatabaseError(f"{self.path} cannot be read ({exc}): the file is truncated, "
                                     f"damaged or not a graspline grasp database; build it again "
                                     f"with `graspline db build`") from exc

    def __enter__(self) -> "GraspDatabase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def objects(self) -> list[str]:
        """Names of the objects in the database."""
        return [r[0] for r in self._rows("SELECT name FROM objects ORDER BY name")]

    def hands(self) -> list[tuple[str, str]]:
        """(name, version) of the hands in the database."""
        return self._rows("SELECT name, version FROM hands ORDER BY name, version")

    def hand_params(self, hand: str) -> dict:
        """The hand model's parameters as written by the build (latest version)."""
        rows = self._rows("SELECT params FROM hands WHERE name = ? ORDER BY id DESC", (hand,))
        row = rows[0] if rows else None
        if row is None:
            raise GraspDatabaseError(f"{self.path} has no hand {hand!r}; it has {self.hands()}")
        return json.loads(row[0])

    def targets(self) -> list[TargetState]:
        """The build state of every (object, hand) target, ordered by object then hand."""
        rows = self._rows(
            """SELECT o.name, t.hand_name, t.version, t.n_candidates,
                      (SELECT COUNT(*) FROM grasps g JOIN results r ON r.grasp_id = g.id
                       JOIN hands h ON h.id = g.hand_id
                       WHERE g.object_id = t.object_id AND h.name = t.hand_name),
                      t.status
               FROM targets t JOIN objects o ON o.id = t.object_id
               ORDER BY o.name, t.hand_name""")
        return [TargetState(*row) for row in rows]

    def code_versions(self, hand: str) -> dict[str, str | None]:
        """The measures' code version each object's grasps for a hand were simulated with
        (``offline_sim.database.measures_code_version()`` when the build ran; the "code" input
        its target recorded), by object name; None where the build recorded none (a
        schema-1 file's grasps)."""
        out: dict[str, str | None] = {}
        for name, inputs in self._rows(
                """SELECT o.name, t.inputs FROM targets t JOIN objects o ON o.id = t.object_id
                   WHERE t.hand_name = ? ORDER BY o.name""", (hand,)):
            try:
                code = json.loads(inputs).get("code")
            except (TypeError, ValueError, AttributeError):
                code = None
            out[name] = code if isinstance(code, str) else None
        return out

    def builds(self) -> list[BuildLogEntry]:
        """Every build run on this file, oldest first."""
        return [BuildLogEntry(*row) for row in self._rows(
            "SELECT started_at, finished_at, status, command, host, pid FROM build_log ORDER BY id")]

    def grasps(self, object_name: str, hand: str, *, k: int | None = None,
               by: str = "quality") -> GraspTable:
        """The finished grasps of an object for a hand, best first by ``by`` ("quality", the
        simulated ranking, or "pfc", Weisz & Allen's re-ranking; grasps without P(fc) last),
        the top k if given."""
        if by not in ("quality", "pfc"):
            raise ValueError(f"by must be 'quality' or 'pfc', got {by!r}")
        if object_name not in self.objects():
            raise GraspDatabaseError(f"{self.path} has no object {object_name!r}; it has "
                                     f"{self.objects()}")
        if hand not in {h for h, _ in self.hands()}:
            raise GraspDatabaseError(f"{self.path} has no hand {hand!r}; it has {self.hands()}")
        rows = self._rows(
            """SELECT g.candidate, g.T_object_hand, g.approach, r.quality, r.success_rate,
                      r.a_mean, r.b_mean, r.c_mean, r.pfc, r.samples_run, r.discarded_early, g.preshape
               FROM grasps g JOIN results r ON r.grasp_id = g.id
               JOIN objects o ON o.id = g.object_id JOIN hands h ON h.id = g.hand_id
               WHERE o.name = ? AND h.name = ?
               ORDER BY """ + ("r.pfc IS NULL, r.pfc DESC, r.quality DESC" if by == "pfc" else "r.quality DESC")
            + ", g.candidate ASC" + (" LIMIT ?" if k else ""),
            (object_name, hand, k) if k else (object_name, hand))
        n = len(rows)
        col = lambda i: np.array([np.nan if r[i] is None else r[i] for r in rows], np.float64)  # noqa: E731
        approach = [from_blob(r[2], (3,)) for r in rows]
        return GraspTable(
            object_name, hand,
            candidate=np.array([r[0] for r in rows], np.int64),
            T_object_hand=np.array([from_blob(r[1], (4, 4)) for r in rows]).reshape(n, 4, 4),
            approach=np.array([a if a is not None else np.full(3, np.nan) for a in approach]).reshape(n, 3),
            quality=col(3), success_rate=col(4), a_mean=col(5), b_mean=col(6), c_mean=col(7),
            pfc=col(8), samples_run=np.array([r[9] for r in rows], np.int64),
            discarded_early=np.array([bool(r[10]) for r in rows], bool),
            preshape=_preshapes([r[11] for r in rows]))

    def _object_row(self, object_name: str, column: str) -> bytes | None:
        """One column of an object's row; GraspDatabaseError naming the objects there if absent."""
        rows = self._rows(f"SELECT {column} FROM objects WHERE name = ?", (object_name,))
        row = rows[0] if rows else None
        if row is None:
            raise GraspDatabaseError(f"{self.path} has no object {object_name!r}; it has "
                                     f"{self.objects()}")
        return row[0]

    def stable_poses(self, object_name: str) -> np.ndarray:
        """(S, 4, 4) float64 resting poses ``T_table_object`` of an object, metres, most
        probable first (the table's z up); (0, 4, 4) when the build recorded none."""
        blob = self._object_row(object_name, "stable_poses")
        if blob is None:
            return np.zeros((0, 4, 4))
        return from_blob(blob, (-1, 4, 4))

    def object_points(self, object_name: str) -> np.ndarray:
        """(N, 3) float64 surface sample of an object, object frame, metres (area-weighted,
        seeded, written by the build: what onboard recognition registers depth points to)."""
        if self.schema_version < 3:
            raise GraspDatabaseError(
                f"{self.path} has schema version {self.schema_version}, which predates object "
                f"models: run the same `graspline db build` on it again (a resumed build adds "
                f"each object's surface sample and keeps every grasp)")
        blob = self._object_row(object_name, "points")
        if blob is None:
            raise GraspDatabaseError(
                f"{self.path}: object {object_name!r} has no surface sample (written by a build "
                f"that did not give one): run `graspline db build` on it again to add it")
        return from_blob(blob, (-1, 3))

    def object_models(self) -> list[ObjectShape]:
        """Every object's surface sample and stable poses, by name (``object_points``,
        ``stable_poses``); GraspDatabaseError for a file or object without samples."""
        return [ObjectShape(n, self.object_points(n), self.stable_poses(n)) for n in self.objects()]
