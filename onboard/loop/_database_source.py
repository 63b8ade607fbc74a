"""The grasp database as a grasp source (multi-finger hands): recognise the object under a
mask, place its database grasps by the estimated pose, keep those that work in the scene
(reach, collision with the height map, image consistency), and propose the best kept one.

The cell file's ``database`` section turns it on (``_planner.grasp_sources``); without it
the loop plans with the image search alone, as before.
"""
from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame
from scoring import GraspDatabase, GraspDatabaseError, GraspTable
from vision import ObjectMask, Silhouette, silhouette

from .._types import GraspChoice
from ._clock import StageClock
from ._db_grasps import (KEPT, REJECT_KEYS, DatabaseFilterSettings, FilterResult, HandVolume,
                         PlacedGrasps, filter_grasps, height_map, place_grasps)
from ._source import Proposal, SourceSetup

log = logging.getLogger("graspline.loop")


# replace with vision.Recognition at merge (STEP8 pinned interface 1: the same fields)
@dataclass(frozen=True)
class Recognition:
    """What a recogniser says of the object under a mask: its database name (None: unknown),
    its pose T_base_object (4 x 4, metres), confidence 0..1, the stable pose it rests in,
    the fit's residual (metres) and, for an unknown or doubtful object, why."""

    name: str | None
    T_base_object: np.ndarray | None
    confidence: float
    stable_pose: int | None
    fit_rmse_m: float | None
    why: str = ""


Recogniser = Callable[[RGBDFrame, ObjectMask], Recognition]


@dataclass(frozen=True)
class DatabaseDetail:
    """A database proposal's own data: the recognition, the placed grasps, the filter's
    verdicts with reasons, the chosen row and its preshape (joint targets, rad or m)."""

    recognition: Recognition
    placed: PlacedGrasps
    result: FilterResult
    row: int
    preshape: np.ndarray | None
    features: dict[str, float] = field(default_factory=dict)


class DatabaseSource:
    """Database grasps of the recognised object (source "database").

    setup : the loop's SourceSetup (the cell file's ``database`` section must be set).
    recogniser : frame, mask -> Recognition (vision.recognise over the database's objects on a
    real cell; the simulated cell's ground truth in tests). hand : the hand's volume; default
    the built-in one named by the section's ``hand``.
    """

    name = "database"

    def __init__(self, setup: SourceSetup, *, recogniser: Recogniser,
                 hand: HandVolume | None = None) -> None:
        db = setup.config.database
        if db is None:
            raise ValueError("DatabaseSource needs the cell file's 'database' section")
        self.config = setup.config
        self._recognise = recogniser
        self._segmenter = setup.segmenter
        self._failed = setup.failed
        self.hand = HandVolume.for_hand(db.hand) if hand is None else hand
        # read everything at start-up and close the file (docs/design.md: onboard reads the
        # database into arrays once; an sqlite3 connection is also bound to its thread, and
        # the endpoint plans on others)
        try:
            database = GraspDatabase(db.path)
        except GraspDatabaseError as exc:
            raise GraspDatabaseError(f"cell file key 'database.path': {exc}") from exc
        with database:
            if db.hand not in {h for h, _ in database.hands()}:
                raise GraspDatabaseError(f"{db.path} has no hand {db.hand!r} (cell file key "
                                         f"'database.hand'); it has {database.hands()}")
            self._tables: dict[str, GraspTable] = {
                name: database.grasps(name, db.hand, by=db.rank_by) for name in database.objects()}
        self._preshapes = {name: _read_preshapes(db.path, name, db.hand) for name in self._tables}

    @property
    def settings(self) -> DatabaseFilterSettings:
        """The filter's settings from the cell file (read each time: the config may change)."""
        return DatabaseFilterSettings.from_config(self.config.database,
                                                  pregrasp_m=self.config.arm.pregrasp_m)

    def objects(self) -> list[str]:
        """The database's objects (those with grasps for the hand or not)."""
        return sorted(self._tables)

    def table(self, name: str) -> GraspTable:
        """The database's grasps of an object for the cell's hand, best first by rank_by as
        the cell file had it at start-up (the filter ranks again by the current one)."""
        return self._tables[name]

    # ------------------------------------------------------------ the source
    def propose(self, frame: RGBDFrame, masks: list[ObjectMask], i: int,
                clock: StageClock) -> Proposal | str | None:
        """The best kept database grasp on object i; a string saying why when the object is
        unknown or no grasp of it works here."""
        with clock.stage("search"):
            rec = self._recognise(frame, masks[i])
        if rec.name is None or rec.T_base_object is None:
            return f"object {i}: not recognised ({rec.why or 'no reason given'})"
        if rec.name not in self._tables:
            return f"object {i}: {rec.name!r} is not in the grasp database"
        with clock.stage("silhouette"):
            sil = self._silhouette(frame, masks, i)
        with clock.stage("search"):
            placed, result = self.place_and_filter(frame, masks[i], rec, sil)
        row = next((int(j) for j in result.order
                    if not self._failed.near(placed.T_base_hand[j])), None)
        if row is None:
            return f"object {i} ({rec.name}): no database grasp works here: {result.summary()}"
        score = float(np.clip(result.rank_value[row], 0.0, 1.0))
        preshape = self._preshapes[rec.name].get(int(placed.candidate[row]))
        detail = DatabaseDetail(rec, placed, result, row, preshape,
                                _features(rec, placed, result, row, preshape))
        return Proposal(score, i, self, f", database {self.settings.rank_by} {score:.2f}", sil,
                        detail)

    def place_and_filter(self, frame: RGBDFrame, mask: ObjectMask, rec: Recognition,
                         sil: Silhouette | None) -> tuple[PlacedGrasps, FilterResult]:
        """The object's database grasps placed by rec's pose and filtered in this frame."""
        s = self.settings
        placed = place_grasps(self.table(rec.name), rec.T_base_object)
        bounds = np.array([s.workspace_lo[:2], s.workspace_hi[:2]])
        hmap = height_map(frame, bounds_xy=bounds, exclude=mask.mask,
                          floor_z_m=self._floor_z(frame, s))
        result = filter_grasps(placed, settings=s, height_map=hmap, hand=self.hand,
                               silhouette=sil, pose_confidence=rec.confidence)
        return placed, result

    def _floor_z(self, frame: RGBDFrame, s: DatabaseFilterSettings) -> float:
        """Base-frame z of the support (the segmenter's fitted plane at its foot point),
        else the workspace's floor."""
        plane = getattr(self._segmenter, "last_plane", None)
        if plane is None:
            return float(s.workspace_lo[2])
        p = -plane.offset_m * np.asarray(plane.normal, np.float64)
        return float((frame.T_base_camera[:3, :3] @ p + frame.T_base_camera[:3, 3])[2])

    def _silhouette(self, frame: RGBDFrame, masks: list[ObjectMask], i: int) -> Silhouette | None:
        """Object i's straight-down silhouette at the configured insertion depth (the image
        check projects each grasp's closing line into it along its own approach); None when
        it has none."""
        sc = self.config.scoring
        try:
            return silhouette(frame, masks[i], approach=(0.0, 0.0, -1.0),
                              insertion_depth_m=sc.insertion_depth_m,
                              metres_per_px=sc.metres_per_px,
                              margin_m=self.hand.closing_half_m + 0.02,
                              support=getattr(self._segmenter, "last_plane", None),
                              clearance_m=sc.clearance_m)
        except ValueError as exc:
            log.info("object %d: no silhouette for the database's image check (%s)", i, exc)
            return None

    def choose(self, proposal: Proposal, frame: RGBDFrame, masks: list[ObjectMask],
               clock: StageClock, *, validate: bool) -> tuple[GraspChoice, int]:
        """The proposed grasp as a GraspChoice (source "database", the hand's preshape and
        pose); validate mode draws no levels here (the database's grasps are not scored on
        Tan's levels), so the level is -1."""
        d: DatabaseDetail = proposal.detail
        T = d.placed.T_base_hand[d.row].copy()
        x_px = y_px = theta = 0.0   # no silhouette (rare): the trial log takes finite numbers only
        sil = proposal.sil
        if sil is not None:  # where the grasp lies in the silhouette image, for the overlay
            T_pb = np.linalg.inv(sil.T_base_plane)
            p = T_pb[:3, :3] @ T[:3, 3] + T_pb[:3, 3]
            xa = T_pb[:3, :3] @ T[:3, 0]
            x_px, y_px = p[0] / sil.metres_per_px, p[1] / sil.metres_per_px
            theta = math.atan2(xa[1], xa[0])
        choice = GraspChoice(trial_id=-1, object_label=d.recognition.name, T_base_tcp=T,
                             pregrasp_m=self.config.arm.pregrasp_m,
                             width_m=2.0 * self.hand.closing_half_m,
                             force_n=self.config.gripper.force_n, score=proposal.score,
                             features=dict(d.features), source=self.name, x_px=x_px,
                             y_px=y_px, theta_rad=theta, n_candidates=len(d.placed),
                             stage_s=clock.stage_s, preshape=d.preshape)
        return choice, -1


def _features(rec: Recognition, placed: PlacedGrasps, result: FilterResult, row: int,
              preshape: np.ndarray | None) -> dict[str, float]:
    """The trial log's features of a database grasp: its row, candidate and scores, the
    recognition's confidence, its preshape (preshape_0, ...), and how many grasps each reason
    rejected (db_reject_<key>; REJECT_REASONS has the texts)."""
    f = {"db_row": float(row), "db_candidate": float(placed.candidate[row]),
         "db_quality": float(placed.quality[row]), "db_pfc": float(placed.pfc[row]),
         "db_consistency": float(result.consistency[row]),
         "pose_confidence": float(rec.confidence), "db_grasps": float(len(placed)),
         "fit_rmse_m": math.nan if rec.fit_rmse_m is None else float(rec.fit_rmse_m)}
    f = {k: v for k, v in f.items() if math.isfinite(v)}   # the trial log keeps finite ones
    for k, q in enumerate(() if preshape is None else preshape):
        f[f"preshape_{k}"] = float(q)   # the joint targets, rad or m
    for code, n in result.counts().items():
        f["db_kept" if code == KEPT else f"db_reject_{REJECT_KEYS[code]}"] = float(n)
    return f


def _read_preshapes(path: str, object_name: str, hand: str) -> dict[int, np.ndarray]:
    """candidate -> preshape (joint targets, rad or m) of an object's grasps for a hand,
    read-only. (GraspTable has no preshape column yet: at merge this can move into
    scoring.GraspDatabase.grasps.)"""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        rows = con.execute(
            """SELECT g.candidate, g.preshape FROM grasps g
               JOIN objects o ON o.id = g.object_id JOIN hands h ON h.id = g.hand_id
               WHERE o.name = ? AND h.name = ?""", (object_name, hand)).fetchall()
    return {int(c): np.frombuffer(b, dtype="<f8").copy() for c, b in rows if b is not None}


def ground_truth_recogniser(truth) -> Recogniser:
    """A recogniser reading the simulated cell's ground truth (truth : the loop's
    SimulatedTruth port): the true name and pose of the object under a mask, confidence 1.
    A real simulated part with vision.recognise's signature, for the simulated cell and tests."""

    def recognise(frame: RGBDFrame, mask: ObjectMask) -> Recognition:
        k = truth.object_index(frame, mask)
        if k is None:
            return Recognition(None, None, 0.0, None, None, "no simulated object under the mask")
        sim = truth.sim
        return Recognition(sim.object_name(k), sim.world.T_world_object(k), 1.0, None, 0.0)

    return recognise


def database_source(setup: SourceSetup) -> DatabaseSource:
    """The database source of a loop's SourceSetup: its recogniser is setup.recogniser, else
    the simulated cell's ground truth where the loop has one; ValueError on a real cell
    without a recogniser."""
    recogniser = setup.recogniser
    if recogniser is None:
        if not hasattr(setup.truth, "sim"):
            raise ValueError("the cell file's 'database' section needs an object recogniser "
                             "(vision.recognise) on a real cell; none was given")
        recogniser = ground_truth_recogniser(setup.truth)
    return DatabaseSource(setup, recogniser=recogniser)
