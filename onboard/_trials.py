"""The trial log: one SQLite row (WAL) and one folder of images per grasp trial.

Layout of a log directory::

    DIR/trials.sqlite                 one row per trial (schema version in PRAGMA user_version);
                                      table warm_ups: one row per start of the cell (its
                                      kernels' warm-up), added by the first one
    DIR/images/<trial_id>/<name>.png  before_color, before_depth (16-bit, millimetres),
                                      after_color, after_depth, silhouette, overlay,
                                      db_grasp (a database grasp's panel)

A trial is begun (a "pending" row, so a controller or an operator can report its outcome
later), then finished in one transaction: its images are written under temporary names and
renamed into place first, then the row is committed. A crash at any moment therefore leaves
every earlier trial whole and never a finished row pointing at half-written files.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import cv2
import numpy as np

from ._types import GraspChoice, KernelWarmUp

SCHEMA_VERSION = 1
DB_NAME = "trials.sqlite"
IMAGE_NAMES = ("before_color", "before_depth", "after_color", "after_depth", "silhouette",
               "overlay", "db_grasp")
OUTCOMES = ("pending", "success", "failure", "no_grasp", "error")
OUTCOME_SOURCES = ("gripper+image", "simulator", "operator", "controller")
MODES = ("best", "validate")
_IMAGE_ATTRS = ("before_color", "before_depth_m", "after_color", "after_depth_m", "silhouette",
                "overlay", "db_grasp")  # the TrialImages field of each name in IMAGE_NAMES
_DEPTH_MAX_MM = 65535  # 16-bit PNG: depth beyond 65.535 m is clipped


class TrialLogError(ValueError):
    """A trial log cannot be opened, or a trial cannot be written or closed as asked."""


@dataclass
class TrialRecord:
    """Everything logged about one grasp trial. SI units; pixels only in ``*_px`` names.

    started_at_s / finished_at_s : unix time, seconds (finished None while only begun).
    cell_hash : hash of the cell file the trial ran with. mode : "best" (the top grasp) or
    "validate" (a grasp drawn across the score levels, Tan et al.'s protocol).
    n_candidates : candidates scored; score, features (name -> value), source of the chosen
    grasp; x_px, y_px, theta_rad : the grasp in the silhouette image; T_base_tcp : (4, 4) TCP
    at the grasp in the base frame, None when there was no grasp; width_m, force_n : opening
    and force commanded. stage_s : stage name -> seconds. gripper_status : the driver's short
    status text; gripper_width_m : finger opening after closing; object_detected : the
    gripper's own object detection, None where it has none.
    outcome : "pending", "success", "failure", "no_grasp" or "error"; success : True/False
    for success/failure, else None; outcome_source : who decided ("gripper+image",
    "simulator", "operator", "controller").
    movement_m / movement_rad : the object's signed translation along the closing direction
    and its rotation while the fingers closed, from before/after depth (object_movement);
    truth_movement_m / truth_movement_rad : the same from the simulator's ground truth.
    images : image name -> file path of the images the log holds for the trial (filled in
        by the log; ignored in a record given to finish).
    """

    trial_id: int
    started_at_s: float
    finished_at_s: float | None = None
    cell_hash: str = ""
    object_label: str = ""
    mode: str = "best"
    n_candidates: int = 0
    score: float | None = None
    features: dict[str, float] = field(default_factory=dict)
    source: str = ""
    x_px: float | None = None
    y_px: float | None = None
    theta_rad: float | None = None
    T_base_tcp: np.ndarray | None = None
    width_m: float | None = None
    force_n: float | None = None
    stage_s: dict[str, float] = field(default_factory=dict)
    gripper_status: str = ""
    gripper_width_m: float | None = None
    object_detected: bool | None = None
    outcome: str = "pending"
    success: bool | None = None
    outcome_source: str = "gripper+image"
    movement_m: float | None = None
    movement_rad: float | None = None
    truth_movement_m: float | None = None
    truth_movement_rad: float | None = None
    note: str = ""
    error: str = ""
    images: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def from_choice(cls, choice: GraspChoice, *, started_at_s: float, cell_hash: str = "",
                    mode: str = "best") -> TrialRecord:
        """A record holding the chosen grasp (pose, width, force, score, features, image pose,
        candidates, stage timings so far); the outcome fields are left to fill in."""
        return cls(trial_id=choice.trial_id, started_at_s=started_at_s, cell_hash=cell_hash,
                   object_label=choice.object_label, mode=mode,
                   n_candidates=choice.n_candidates, score=float(choice.score),
                   features=dict(choice.features), source=choice.source,
                   x_px=float(choice.x_px), y_px=float(choice.y_px),
                   theta_rad=float(choice.theta_rad),
                   T_base_tcp=np.array(choice.T_base_tcp, np.float64),
                   width_m=float(choice.width_m), force_n=float(choice.force_n),
                   stage_s=dict(choice.stage_s))

    @property
    def closed(self) -> bool:
        """True once the outcome is known (anything but "pending")."""
        return self.outcome != "pending"


@dataclass
class TrialImages:
    """The pictures of one trial; any may be None (not taken).

    before_color / after_color : (H, W, 3) uint8 RGB, as the camera gives them.
    before_depth_m / after_depth_m : (H, W) float metres, 0 or NaN = no reading; stored as
        16-bit PNG in millimetres (rounded, so read back to within 0.5 mm).
    silhouette : (H, W) bool or uint8, the object's silhouette the grasp was searched on.
    overlay : (H, W, 3) uint8 BGR, the chosen grasp drawn over the silhouette (as OpenCV
        draws it, e.g. onboard's grasp overlay).
    db_grasp : (H, W, 3) uint8 BGR, a multi-finger database grasp in its object's frame (the
        panel the report shows beside the overlay); None for the parallel jaw.
    """

    before_color: np.ndarray | None = None
    before_depth_m: np.ndarray | None = None
    after_color: np.ndarray | None = None
    after_depth_m: np.ndarray | None = None
    silhouette: np.ndarray | None = None
    overlay: np.ndarray | None = None
    db_grasp: np.ndarray | None = None


_SCHEMA = """
CREATE TABLE trials (
    trial_id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at_s REAL NOT NULL,
    finished_at_s REAL,
    cell_hash TEXT NOT NULL DEFAULT '',
    object_label TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL DEFAULT 'best',
    n_candidates INTEGER NOT NULL DEFAULT 0,
    score REAL,
    features TEXT NOT NULL DEFAULT '{}',
    source TEXT NOT NULL DEFAULT '',
    x_px REAL, y_px REAL, theta_rad REAL,
    T_base_tcp TEXT,
    width_m REAL, force_n REAL,
    stage_s TEXT NOT NULL DEFAULT '{}',
    gripper_status TEXT NOT NULL DEFAULT '',
    gripper_width_m REAL,
    object_detected INTEGER,
    outcome TEXT NOT NULL DEFAULT 'pending',
    success INTEGER,
    outcome_source TEXT NOT NULL DEFAULT 'gripper+image',
    movement_m REAL, movement_rad REAL, truth_movement_m REAL, truth_movement_rad REAL,
    note TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    images TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX trials_outcome ON trials(outcome);
"""
# Added beside the trials by the first warm-up a log records, so a log without it (written
# before warm-ups were recorded) keeps its schema version and reads as before.
_WARM_UP_SCHEMA = """
CREATE TABLE IF NOT EXISTS warm_ups (
    at_s REAL NOT NULL,
    seconds REAL NOT NULL,
    kernels INTEGER NOT NULL,
    compiled INTEGER NOT NULL,
    from_cache INTEGER NOT NULL
)"""
_COLUMNS = [f.name for f in fields(TrialRecord)]
_JSON = {"features", "stage_s", "T_base_tcp", "images"}


def _expected_success(outcome: str) -> bool | None:
    """The success flag an outcome implies."""
    return {"success": True, "failure": False}.get(outcome)


def _check_record(r: TrialRecord) -> None:
    """TrialLogError naming the field and the trial if a record cannot be logged."""
    where = f"trial {r.trial_id}"
    if r.outcome not in OUTCOMES:
        raise TrialLogError(f"{where}: outcome must be one of {', '.join(OUTCOMES)}, got "
                            f"{r.outcome!r}")
    if r.outcome_source not in OUTCOME_SOURCES:
        raise TrialLogError(f"{where}: outcome_source must be one of "
                            f"{', '.join(OUTCOME_SOURCES)}, got {r.outcome_source!r}")
    if r.mode not in MODES:
        raise TrialLogError(f"{where}: mode must be 'best' or 'validate', got {r.mode!r}")
    if r.success != _expected_success(r.outcome):
        raise TrialLogError(f"{where}: success={r.success!r} contradicts outcome "
                            f"{r.outcome!r}")
    if r.T_base_tcp is not None:
        T = np.asarray(r.T_base_tcp, np.float64)
        if T.shape != (4, 4) or not np.isfinite(T).all():
            raise TrialLogError(f"{where}: T_base_tcp must be a finite 4 x 4 array or None, "
                                f"got shape {T.shape}")
    for name in ("score", "x_px", "y_px", "theta_rad", "width_m", "force_n", "gripper_width_m",
                 "movement_m", "movement_rad", "truth_movement_m", "truth_movement_rad"):
        v = getattr(r, name)
        if v is not None and not _finite(v):
            raise TrialLogError(f"{where}: {name} must be a finite number or None, got {v!r}")
    for name in ("features", "stage_s"):
        for k, v in getattr(r, name).items():
            if not isinstance(k, str) or not _finite(v):
                raise TrialLogError(f"{where}: {name}[{k!r}] must be a finite number, got {v!r}")


def _finite(v: object) -> bool:
    """True for a finite real number (bools and strings are not numbers here)."""
    if isinstance(v, (bool, str, bytes)):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _to_row(r: TrialRecord) -> dict[str, object]:
    """SQLite column values of a record (JSON for the mappings and the pose)."""
    row = asdict(r)
    row["features"] = json.dumps({k: float(v) for k, v in r.features.items()})
    row["stage_s"] = json.dumps({k: float(v) for k, v in r.stage_s.items()})
    row["T_base_tcp"] = None if r.T_base_tcp is None else \
        json.dumps(np.asarray(r.T_base_tcp, np.float64).tolist())
    row["images"] = json.dumps(sorted(r.images))
    for name in ("object_detected", "success"):
        row[name] = None if row[name] is None else int(bool(row[name]))
    for name, v in row.items():  # numpy scalars -> Python numbers for sqlite3
        if isinstance(v, np.generic):
            row[name] = v.item()
    return row


def _write_png_atomic(path: Path, image: np.ndarray) -> None:
    """Encode an image as PNG and put it at ``path`` all at once (temporary name, fsync,
    rename), so a reader never sees half a file."""
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise TrialLogError(f"could not encode {path.name} ({image.shape} {image.dtype}) as PNG")
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(buf.tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _encode(name: str, image: np.ndarray, trial_id: int) -> np.ndarray:
    """The array written for image ``name``: BGR for colour, uint16 mm for depth, 0/255 for
    the silhouette; TrialLogError naming the image and the trial if its shape is wrong."""
    a = np.asarray(image)
    where = f"trial {trial_id}: image {name}"
    if name in ("before_color", "after_color", "overlay", "db_grasp"):
        if a.ndim != 3 or a.shape[2] != 3 or a.dtype != np.uint8:
            raise TrialLogError(f"{where} must be (H, W, 3) uint8, got {a.shape} {a.dtype}")
        return a if name in ("overlay", "db_grasp") else cv2.cvtColor(a, cv2.COLOR_RGB2BGR)
    if a.ndim != 2:
        raise TrialLogError(f"{where} must be a 2-D array, got shape {a.shape}")
    if name == "silhouette":
        return np.where(a != 0, np.uint8(255), np.uint8(0))
    mm = np.nan_to_num(a.astype(np.float64) * 1000.0, nan=0.0, posinf=0.0, neginf=0.0)
    return np.clip(np.rint(mm), 0, _DEPTH_MAX_MM).astype(np.uint16)


class TrialLog:
    """Trial records and their images under one directory; see the module docstring.

    Safe to share between threads (one connection behind a lock) and between processes
    (SQLite WAL: the CLI may record an operator's outcome while the loop runs). Use as a
    context manager or call close().
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / "images").mkdir(exist_ok=True)
            con = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False,
                                  isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise TrialLogError(f"cannot open trial log {self.path}: {exc}") from exc
        try:
            self._con = con
            self._open_schema()
        except BaseException:
            con.close()
            self._con = None
            raise

    def _open_schema(self) -> None:
        """Create the schema in a new file, or check the version of an existing one."""
        con = self._con
        try:
            con.execute("PRAGMA journal_mode=WAL")
            # FULL: a committed trial survives a power cut too, not only a killed process
            con.execute("PRAGMA synchronous=FULL")
            con.execute("BEGIN IMMEDIATE")
            try:
                version = con.execute("PRAGMA user_version").fetchone()[0]
                tables = sorted(r[0] for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"))
                if version == 0 and not tables:
                    for stmt in _SCHEMA.split(";"):
                        if stmt.strip():
                            con.execute(stmt)
                    con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                elif version == 0:
                    raise TrialLogError(f"{self.path} is an SQLite file but not a trial log "
                                        f"(tables: {', '.join(tables)})")
                elif version != SCHEMA_VERSION:
                    raise TrialLogError(f"{self.path} has trial-log schema version {version}; "
                                        f"this graspline reads version {SCHEMA_VERSION}")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            raise TrialLogError(f"{self.path} is not a trial log ({exc})") from exc

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database; safe to call twice."""
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def __enter__(self) -> TrialLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        if self._con is None:
            raise TrialLogError(f"trial log {self.path} is closed")
        return self._con

    # -- writing ---------------------------------------------------------------------------

    def begin(self, *, object_label: str = "", cell_hash: str = "", mode: str = "best",
              started_at_s: float | None = None) -> int:
        """Start a trial: write a pending row now (so its outcome can be reported later, even
        from another process) and return its trial id."""
        if mode not in MODES:
            raise TrialLogError(f"begin: mode must be 'best' or 'validate', got {mode!r}")
        t = time.time() if started_at_s is None else float(started_at_s)
        with self._lock:
            cur = self._db().execute(
                "INSERT INTO trials (started_at_s, object_label, cell_hash, mode) "
                "VALUES (?, ?, ?, ?)", (t, object_label, cell_hash, mode))
            return int(cur.lastrowid)

    def finish(self, record: TrialRecord, images: TrialImages | None = None, *,
               before_write: Callable[[TrialRecord], None] | None = None) -> TrialRecord:
        """Write a begun trial's record and images in one step; return the record as stored
        (finished_at_s set, images filled in).

        Images go to files first (each all at once), then the row is committed; so a crash
        leaves either the whole trial or the pending row, never a row naming missing files.
        An outcome already reported (report_outcome) is kept when the record's is "pending".
        before_write : called with the record to be stored once the images are written, just
        before the row is (the loop closes its ``log`` stage's timing there); it may change
        stage_s and note, which are checked again.
        """
        _check_record(record)
        tid = record.trial_id
        with self._lock:
            con = self._db()
            row = con.execute("SELECT finished_at_s, outcome, success, outcome_source, note "
                              "FROM trials WHERE trial_id = ?", (tid,)).fetchone()
            if row is None:
                raise TrialLogError(f"trial {tid} was never begun in {self.path}")
            if row[0] is not None:
                raise TrialLogError(f"trial {tid} is already finished in {self.path}")
            # the images are the ones written here; record.images is ignored
            stored = replace(record, finished_at_s=record.finished_at_s or time.time(),
                             images={})
            if record.outcome == "pending" and row[1] != "pending":
                stored.outcome, stored.success = row[1], None if row[2] is None else bool(row[2])
                stored.outcome_source, stored.note = row[3], row[4] or record.note
            if images is not None:
                stored.images.update(self._write_images(tid, images))
            if before_write is not None:
                before_write(stored)
                _check_record(stored)
            values = _to_row(stored)
            cols = [c for c in _COLUMNS if c != "trial_id"]
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute(f"UPDATE trials SET {', '.join(f'{c} = ?' for c in cols)} "
                            f"WHERE trial_id = ?", [values[c] for c in cols] + [tid])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        stored.images = {k: self.directory / "images" / str(tid) / f"{k}.png"
                         for k in stored.images}
        return stored

    def _write_images(self, trial_id: int, images: TrialImages) -> dict[str, Path]:
        """Write the given images of a trial (each atomically); name -> path. All are
        encoded before the first is written, so a bad one leaves no files behind."""
        encoded = {name: _encode(name, getattr(images, attr), trial_id)
                   for name, attr in zip(IMAGE_NAMES, _IMAGE_ATTRS)
                   if getattr(images, attr) is not None}
        folder = self.directory / "images" / str(trial_id)
        folder.mkdir(parents=True, exist_ok=True)
        written = {}
        for name, img in encoded.items():
            written[name] = folder / f"{name}.png"
            _write_png_atomic(written[name], img)
        if written:  # the renames themselves reach the disk before the row commits
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return written

    def report_outcome(self, trial_id: int, success: bool, note: str = "",
                       source: str = "operator") -> TrialRecord:
        """Close a pending trial with the outcome an operator or the controller confirmed;
        TrialLogError naming the trial if it is unknown or already closed."""
        if source not in OUTCOME_SOURCES:
            raise TrialLogError(f"report_outcome: source must be one of "
                                f"{', '.join(OUTCOME_SOURCES)}, got {source!r}")
        outcome = "success" if success else "failure"
        with self._lock:
            con = self._db()
            con.execute("BEGIN IMMEDIATE")
            try:
                row = con.execute("SELECT outcome FROM trials WHERE trial_id = ?",
                                  (int(trial_id),)).fetchone()
                if row is None:
                    raise TrialLogError(f"no trial {trial_id} in {self.path}")
                if row[0] != "pending":
                    raise TrialLogError(f"trial {trial_id} is already closed ({row[0]}) in "
                                        f"{self.path}")
                con.execute("UPDATE trials SET outcome = ?, success = ?, outcome_source = ?, "
                            "note = CASE WHEN ? = '' THEN note ELSE ? END WHERE trial_id = ?",
                            (outcome, int(bool(success)), source, note, note, int(trial_id)))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return self.get(trial_id)

    # -- reading ---------------------------------------------------------------------------

    def _record(self, row: sqlite3.Row) -> TrialRecord:
        """A record from a database row."""
        d = dict(row)
        d["features"] = json.loads(d["features"])
        d["stage_s"] = json.loads(d["stage_s"])
        d["T_base_tcp"] = None if d["T_base_tcp"] is None else np.array(
            json.loads(d["T_base_tcp"]), np.float64)
        d["images"] = {k: self.directory / "images" / str(d["trial_id"]) / f"{k}.png"
                       for k in json.loads(d["images"])}
        for name in ("object_detected", "success"):
            d[name] = None if d[name] is None else bool(d[name])
        return TrialRecord(**d)

    def _query(self, sql: str, args: tuple = ()) -> list[TrialRecord]:
        with self._lock:
            con = self._db()
            con.row_factory = sqlite3.Row
            try:
                rows = con.execute(sql, args).fetchall()
            finally:
                con.row_factory = None
        return [self._record(r) for r in rows]

    def get(self, trial_id: int) -> TrialRecord:
        """The record of one trial; TrialLogError naming it if there is none."""
        found = self._query("SELECT * FROM trials WHERE trial_id = ?", (int(trial_id),))
        if not found:
            raise TrialLogError(f"no trial {trial_id} in {self.path}")
        return found[0]

    def records(self) -> list[TrialRecord]:
        """Every trial, begun or finished, in trial-id order."""
        return self._query("SELECT * FROM trials ORDER BY trial_id")

    def record_warm_up(self, warm_up: KernelWarmUp) -> None:
        """Keep the kernels' warm-up of a start of the cell (before its first cycle)."""
        with self._lock:
            con = self._db()
            con.execute(_WARM_UP_SCHEMA)
            con.execute("INSERT INTO warm_ups (at_s, seconds, kernels, compiled, from_cache) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (float(warm_up.at_s), float(warm_up.seconds), int(warm_up.kernels),
                         int(warm_up.compiled), int(warm_up.from_cache)))

    def warm_ups(self) -> list[KernelWarmUp]:
        """The warm-ups recorded, oldest first; none in a log written without them."""
        with self._lock:
            con = self._db()
            if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                           "name = 'warm_ups'").fetchone() is None:
                return []
            rows = con.execute("SELECT seconds, kernels, compiled, from_cache, at_s "
                               "FROM warm_ups ORDER BY at_s, rowid").fetchall()
        return [KernelWarmUp(float(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]))
                for r in rows]

    def count(self) -> int:
        """Number of trials in the log (begun or finished)."""
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM trials").fetchone()[0])

    def image(self, trial_id: int, name: str) -> np.ndarray:
        """One stored image of a trial as it was given: colour RGB, depth float32 metres,
        silhouette bool, overlay BGR. TrialLogError if the trial has no such image."""
        if name not in IMAGE_NAMES:
            raise TrialLogError(f"image name must be one of {', '.join(IMAGE_NAMES)}, got "
                                f"{name!r}")
        rec = self.get(trial_id)
        if name not in rec.images:
            raise TrialLogError(f"trial {trial_id} has no {name} image in {self.path}")
        path = rec.images[name]
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise TrialLogError(f"cannot read {path} (trial {trial_id}, {name})")
        if name in ("before_color", "after_color"):
            return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        if name in ("before_depth", "after_depth"):
            return img.astype(np.float32) / 1000.0
        if name == "silhouette":
            return img != 0
        return img
