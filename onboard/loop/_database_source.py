"""The grasp database as a grasp source (multi-finger hands): recognise the object under a
mask, place its database grasps by the estimated pose, keep those that work in the scene
(reach, collision with the height map, image consistency), and propose the best kept one.

A symmetric object (a box: half turns; a cylinder: any yaw) can be recognised in any of the
poses its shape makes equivalent, and a grasp placed by the wrong one of them lands mirrored
(from below instead of above). So the grasps are placed under every equivalent pose the
recognition names (``Recognition.symmetries``: G object-frame rotations, a continuous axis
every 15 degrees), G * N rows filtered and ranked together; the detail keeps which pose each
row came from (``PlacedGrasps.equivalent``) and the trial log the chosen one's.

The cell file's ``database`` section turns it on (``_planner.grasp_sources``); without it
the loop plans with the image search alone, as before.
"""
from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import RGBDFrame
from geometry import rotation_angle
from scoring import GraspDatabase, GraspDatabaseError, GraspTable
from vision import (ObjectMask, Recognition, Silhouette, models_from_database, prepare_models,
                    recognise, silhouette)

from .._cellfile import carried_hand_name
from .._types import GraspChoice
from ._clock import StageClock
from ._db_grasps import (KEPT, REJECT_KEYS, DatabaseFilterSettings, FilterResult, HandVolume,
                         PlacedGrasps, filter_grasps, height_map, place_grasps)
from ._draws import draw_rank_level
from ._source import Proposal, SourceSetup
from ._types import DatabaseGraspView

log = logging.getLogger("graspline.loop")


Recogniser = Callable[[RGBDFrame, ObjectMask], Recognition]
# most rows placed and filtered per object (grasps x equivalent poses): bench_db_filter's
# place + filter of 10,000 rows takes 1.7 ms (goal 2 ms), of 20,000 3.5 ms (2-core x86-64)
MAX_PLACED_ROWS = 10_000
# where the code version of the simulation that ranks a database's grasps is computed: imported
# by name, as the simulated cell is (it loads no MuJoCo: it hashes offline_sim's source)
MEASURES_VERSION = ("offline_sim.database", "measures_code_version")


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
    recogniser : frame, mask -> Recognition; None: vision.recognise over the database's
    objects (their surface samples, prepared once here), on the segmenter's support plane.
    hand : the hand's volume; default the built-in one named by the section's ``hand``, else
    the one the database's build wrote for it (a user's MJCF hand).
    """

    name = "database"
    # an object it cannot serve (unknown, not in the database, no grasp works) goes into the
    # trial's note with what stands in for it (the planner's fallbacks)
    reports_fallbacks = True

    def __init__(self, setup: SourceSetup, *, recogniser: Recogniser | None = None,
                 hand: HandVolume | None = None) -> None:
        db = setup.config.database
        if db is None:
            raise ValueError("DatabaseSource needs the cell file's 'database' section")
        self.config = setup.config
        self._segmenter = setup.segmenter
        self._failed = setup.failed
        self._rng = setup.rng   # the loop's one stream: validate mode's draws repeat with its seed
        # read everything at start-up and close the file (docs/design.md: onboard reads the
        # database into arrays once; an sqlite3 connection is also bound to its thread, and
        # the endpoint plans on others)
        try:
            database = GraspDatabase(db.path)
        except GraspDatabaseError as exc:
            raise GraspDatabaseError(f"cell file key 'database.path': {exc}") from exc
        with database:
            try:
                _check_hand(database, db.hand, carried_hand_name(setup.config))
                self.hand = hand or _hand_volume(database, db.hand)
                self._tables: dict[str, GraspTable] = {
                    name: database.grasps(name, db.hand, by=db.rank_by)
                    for name in database.objects()}
                self._points = {name: _surface_points(database, name) for name in self._tables}
                _warn_if_ranked_by_other_code(database, db.hand)
            except _WrongHand:
                raise
            except GraspDatabaseError as exc:  # a damaged file: its line, and the key naming it
                raise GraspDatabaseError(f"cell file key 'database.path': {exc}") from exc
            if recogniser is None:  # vision.recognise over the database's objects, built once
                try:
                    library = prepare_models(models_from_database(database))
                except GraspDatabaseError as exc:
                    raise GraspDatabaseError(f"cell file key 'database.path' (recogniser "
                                             f"vision): {exc}") from exc
                recogniser = self._vision_recogniser(library)
        self._recognise = recogniser
        # the grasp the last choose() gave, as the trial's panel draws it (the planner reads
        # it right after choose, on the same thread)
        self.last_view: DatabaseGraspView | None = None

    def _vision_recogniser(self, library) -> Recogniser:
        """vision.recognise over the prepared library, on the segmenter's support plane."""

        def recognise_object(frame: RGBDFrame, mask: ObjectMask) -> Recognition:
            return recognise(frame, mask, library,
                             support=getattr(self._segmenter, "last_plane", None))

        return recognise_object

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
            rec = self._recognised(frame, masks[i], i)
        if rec.name is None or rec.T_base_object is None:
            return f"object {i}: not recognised ({rec.why or 'no reason given'})"
        if rec.name not in self._tables:
            return f"object {i}: {rec.name!r} is not in the grasp database"
        if len(self._tables[rec.name]) == 0:   # the file has it, with grasps of other hands only
            return (f"object {i}: {rec.name!r} has no grasps for the {self.config.database.hand} "
                    f"hand in the grasp database")
        with clock.stage("silhouette"):
            sil = self._silhouette(frame, masks, i)
        with clock.stage("search"):
            placed, result = self.place_and_filter(frame, masks[i], rec, sil)
        row = next((int(j) for j in result.order
                    if not self._failed.near(placed.T_base_hand[j])), None)
        if row is None:
            return f"object {i} ({rec.name}): no database grasp works here: {result.summary()}"
        score = float(np.clip(result.rank_value[row], 0.0, 1.0))
        preshape = _preshape(self.table(rec.name), int(placed.candidate[row]))
        detail = DatabaseDetail(rec, placed, result, row, preshape,
                                _features(rec, placed, result, row, preshape))
        return Proposal(score, i, self, f", database {self.settings.rank_by} {score:.2f}", sil,
                        detail)

    def _recognised(self, frame: RGBDFrame, mask: ObjectMask, i: int) -> Recognition:
        """The recogniser's answer for object i; an unknown Recognition saying why when it
        raised (the loop never stops on one object's bad data: logged, and the object is
        treated as unknown)."""
        try:
            return self._recognise(frame, mask)
        except Exception as exc:  # noqa: BLE001 - any recogniser (vision, a user's) on any frame
            why = f"recognition failed: {type(exc).__name__}: {exc}"
            log.warning("object %d: %s", i, why)
            return Recognition(None, None, 0.0, None, None, why)

    def place_and_filter(self, frame: RGBDFrame, mask: ObjectMask, rec: Recognition,
                         sil: Silhouette | None) -> tuple[PlacedGrasps, FilterResult]:
        """The object's database grasps placed by rec's pose and by every pose its symmetries
        make equivalent (rec.symmetries; None: the pose alone), and filtered in this frame."""
        s = self.settings
        table = self.table(rec.name)
        placed = place_grasps(table, rec.T_base_object, _capped(rec.symmetries, len(table)))
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
        pose) and -1; with validate, a kept grasp drawn across the levels of the ranking
        value (quality or P(fc), as the cell file ranks) and its level (0..4)."""
        d: DatabaseDetail = proposal.detail
        level, score = -1, proposal.score
        if validate:
            d, level, score = self._draw(d)
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
                             force_n=self.config.gripper.force_n, score=score,
                             features=dict(d.features), source=self.name, x_px=x_px,
                             y_px=y_px, theta_rad=theta, n_candidates=len(d.placed),
                             stage_s=clock.stage_s, preshape=d.preshape)
        self.last_view = self._view(d, T)
        return choice, level

    def _view(self, d: DatabaseDetail, T_base_hand: np.ndarray) -> DatabaseGraspView:
        """The chosen grasp in the recognised object's frame, for the trial's panel."""
        rec = d.recognition
        T_object_hand = np.linalg.inv(rec.T_base_object) @ T_base_hand
        return DatabaseGraspView(rec.name, self._points[rec.name], T_object_hand,
                                 self.hand.centre, self.hand.half, self.hand.closing_half_m,
                                 int(d.placed.candidate[d.row]), float(d.placed.quality[d.row]),
                                 float(d.placed.pfc[d.row]), self.settings.rank_by,
                                 float(rec.confidence))

    def _draw(self, d: DatabaseDetail) -> tuple[DatabaseDetail, int, float]:
        """Validate mode (Tan et al.'s protocol, as the jaw's draws): a grasp drawn from the
        kept ones that are not near a failed grasp and have a preshape, across the levels of
        the ranking value; the detail of that grasp, its level and its value (0..1). The
        features name the level (db_level) and the pool's top level (db_top_level)."""
        table = self.table(d.recognition.name)
        pool = np.array([j for j in d.result.order
                         if not self._failed.near(d.placed.T_base_hand[j])], np.int64)
        if table.preshape is not None and table.preshape.shape[1] > 0:
            ok = table.candidate[np.all(np.isfinite(table.preshape), axis=1)]
            pool = pool[np.isin(d.placed.candidate[pool], ok)]
        if len(pool) == 0:   # only the proposed grasp itself is left to carry out
            pool = np.array([d.row], np.int64)
        draw = draw_rank_level(d.result.rank_value, pool, self._rng)
        preshape = _preshape(table, int(d.placed.candidate[draw.row]))
        feats = _features(d.recognition, d.placed, d.result, draw.row, preshape)
        feats["db_level"], feats["db_top_level"] = float(draw.level), float(draw.top_level)
        drawn = DatabaseDetail(d.recognition, d.placed, d.result, draw.row, preshape, feats)
        return drawn, draw.level, float(np.clip(draw.value, 0.0, 1.0))


class _WrongHand(GraspDatabaseError):
    """The database has no grasps for the hand the cell file asks for (its line says so)."""


def _check_hand(database: GraspDatabase, wanted: str, carried: str | None) -> None:
    """GraspDatabaseError, one line naming the hand asked for, the database's hands and its
    path, when the database has no grasps for the cell file's ``database.hand`` or that is not
    the hand the simulated cell carries (``sim.hand``; carried None: no such hand)."""
    hands = sorted({h for h, _ in database.hands()})
    have = f"it has grasps for {', '.join(map(repr, hands))}" if hands else "it has no hands"
    if carried is not None and carried != wanted:
        raise _WrongHand(
            f"grasp database {database.path}: the simulated cell carries the {carried!r} hand "
            f"(cell file key 'sim.hand') but key 'database.hand' asks for {wanted!r}; {have}")
    if wanted not in hands:
        raise _WrongHand(
            f"grasp database {database.path} has no grasps for the {wanted!r} hand (cell file "
            f"key 'database.hand'); {have}")


def current_measures_version() -> str | None:
    """The code version of this graspline's grasp simulation (``offline_sim.database.
    measures_code_version``: a digest of its source, MuJoCo's and CoACD's versions); None
    where offline_sim cannot be imported."""
    module, name = MEASURES_VERSION
    try:
        return getattr(importlib.import_module(module), name)()
    except ImportError:
        return None


def _warn_if_ranked_by_other_code(database: GraspDatabase, hand: str) -> str | None:
    """Log one warning line (the console shows it where logging is not set up otherwise)
    when the database's grasps for hand were ranked by another code version of the
    simulation than this graspline's; the line, or None. The loop uses them as they are."""
    current = current_measures_version()
    if current is None:
        return None
    by_version: dict[str, list[str]] = {}
    for name, code in database.code_versions(hand).items():
        if code != current:
            by_version.setdefault(code or "unrecorded", []).append(name)
    if not by_version:
        return None
    older = "; ".join(f"{v} ({', '.join(names)})" for v, names in sorted(by_version.items()))
    line = (f"grasp database {database.path}: the {hand} hand's grasps were ranked by the "
            f"simulation's code version {older}, this graspline's is {current}; the loop uses "
            f"them as they are (re-rank them with `graspline db build ... --out "
            f"{database.path} --on-change restart`)")
    log.warning(line)
    return line


def _features(rec: Recognition, placed: PlacedGrasps, result: FilterResult, row: int,
              preshape: np.ndarray | None) -> dict[str, float]:
    """The trial log's features of a database grasp: its row, candidate and scores, which of
    the object's equivalent poses placed it (db_equivalent, an index into rec.symmetries, and
    its turn in degrees; db_equivalents: how many), the recognition's confidence, its
    preshape (preshape_0, ...), and how many grasps each reason rejected (db_reject_<key>;
    REJECT_REASONS has the texts; each grasp counts once per equivalent pose)."""
    g = int(placed.equivalent[row])
    turn = math.degrees(rotation_angle(placed.symmetries[g]))
    f = {"db_row": float(row), "db_candidate": float(placed.candidate[row]),
         "db_equivalent": float(g), "db_equivalent_deg": turn,
         "db_equivalents": float(len(placed.symmetries)),
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


def _surface_points(database: GraspDatabase, name: str) -> np.ndarray:
    """(N, 3) surface sample of an object, its frame, metres; (0, 3) for a database built
    without one (the trial's panel then draws the grasp alone)."""
    try:
        return database.object_points(name)
    except GraspDatabaseError:
        return np.zeros((0, 3))


def _hand_volume(database: GraspDatabase, name: str) -> HandVolume:
    """The volume of the database's hand: the built-in one of that name, else the one the
    build wrote with the hand's parameters (a user's MJCF hand); GraspDatabaseError if none."""
    try:
        return HandVolume.for_hand(name)
    except ValueError:
        pass
    volume = database.hand_params(name).get("volume")
    if not volume:
        raise GraspDatabaseError(
            f"{database.path}: hand {name!r} is not built in and its database keeps no hand "
            f"volume (built before graspline wrote one): rebuild it with graspline db build "
            f"--on-change restart")
    return HandVolume.from_extents(name, [tuple(map(tuple, b)) for b in volume["boxes"]],
                                   float(volume["closing_half_m"]))


def _capped(symmetries: np.ndarray | None, n: int) -> np.ndarray | None:
    """The symmetry rotations to place n grasps under: all of them while G * n stays within
    MAX_PLACED_ROWS (the filter's 2 ms goal holds for 10,000 rows), else every k-th,
    evenly, the identity first (a cylinder's yaws sampled more coarsely)."""
    if symmetries is None or len(symmetries) * n <= MAX_PLACED_ROWS:
        return symmetries
    k = math.ceil(len(symmetries) / max(1, MAX_PLACED_ROWS // max(n, 1)))
    log.info("placing %d grasps under every %d-th of %d equivalent poses (cap %d rows)",
             n, k, len(symmetries), MAX_PLACED_ROWS)
    return symmetries[::k]


def _preshape(table: GraspTable, candidate: int) -> np.ndarray | None:
    """The preshape (joint targets, rad or m) of a database candidate of a table: empty for a
    hand without preshape joints (the underactuated one), None for a grasp stored without
    one (a NaN row)."""
    if table.preshape is None or table.preshape.shape[1] == 0:
        return np.zeros(0)
    rows = np.flatnonzero(table.candidate == candidate)
    if len(rows) == 0:
        return None
    q = np.asarray(table.preshape[rows[0]], np.float64)
    return None if not np.all(np.isfinite(q)) else q.copy()


def ground_truth_recogniser(truth, names: list[str] | None = None) -> Recogniser:
    """A recogniser reading the simulated cell's ground truth (truth : the loop's
    SimulatedTruth port): the true name and pose of the object under a mask, confidence 1.
    A real simulated part with vision.recognise's signature, for diagnosis and benchmarks.

    names : the database's objects. The cell names a YCB scan ``ycb_<name>`` (to tell it from a
    built-in shape of the same name) while a database built from a YCB folder names it
    ``<name>``: a cell name not in the database is looked up without its ``ycb_``."""
    known = None if names is None else set(names)

    def recognise_truth(frame: RGBDFrame, mask: ObjectMask) -> Recognition:
        k = truth.object_index(frame, mask)
        if k is None:
            return Recognition(None, None, 0.0, None, None, "no simulated object under the mask")
        sim = truth.sim
        return Recognition(database_name(sim.object_name(k), known),
                           sim.world.T_world_object(k), 1.0, None, 0.0)

    return recognise_truth


def database_name(cell_name: str, known: set[str] | None) -> str:
    """The database's name of a simulated object: ``ycb_<name>`` -> ``<name>`` when only the
    latter is in the database (known: its objects; None keeps the cell's name)."""
    if known is None or cell_name in known or not cell_name.startswith("ycb_"):
        return cell_name
    bare = cell_name[len("ycb_"):]
    return bare if bare in known else cell_name


def database_source(setup: SourceSetup) -> DatabaseSource:
    """The database source of a loop's SourceSetup. Its recogniser: setup.recogniser when
    given, else the cell file's ``database.recogniser``: "vision" (vision.recognise over the
    database's objects, the default) or "truth" (the simulated cell's ground truth; a
    ValueError on a cell without one)."""
    db = setup.config.database
    if setup.recogniser is not None:
        return DatabaseSource(setup, recogniser=setup.recogniser)
    if db is not None and db.recogniser == "truth":
        if not hasattr(setup.truth, "sim"):
            raise ValueError("cell file key 'database.recogniser' is 'truth', which only the "
                             "simulated cell has; use 'vision' on hardware")
        try:
            with GraspDatabase(db.path) as database:
                names = database.objects()
        except GraspDatabaseError as exc:
            raise GraspDatabaseError(f"cell file key 'database.path': {exc}") from exc
        return DatabaseSource(setup, recogniser=ground_truth_recogniser(setup.truth, names))
    return DatabaseSource(setup)
