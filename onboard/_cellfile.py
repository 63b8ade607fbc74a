"""The cell file: one YAML file per picking cell, checked once at load by a msgspec schema.

Every error names the file, the key (as a path such as ``gripper.force_n``) and the value.
Lengths in metres, forces in newtons, times in seconds; angles, where a person writes them,
in degrees with ``_deg`` in the key (converted at load).
"""
from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any, Literal

import msgspec

from scoring import MEASURES

CELL_FILE_VERSION = 1
DEFAULT_PORT = 50600   # the endpoint's TCP port when neither --port nor the cell file names one
SIM_PALM_MARGIN_M = 0.02  # the simulated jaw's palm overhangs its fingers by 10 mm on each side
STAGES = ("capture", "segment", "silhouette", "search", "choose", "approach", "grip",
          "after_image", "lift", "place", "log")


class CellFileError(ValueError):
    """A cell file that cannot be used: the message names the file, the key and the value."""


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class CameraConfig(_Strict):
    """kind: "sim" (the simulated cell's camera), "realsense" (live, by serial) or
    "recording" (a .db3 file played back)."""

    kind: Literal["sim", "realsense", "recording"] = "sim"
    serial: str | None = None
    recording: str | None = None
    width_px: int = 640
    height_px: int = 480
    fps: int = 30
    timeout_s: float = 1.0
    retries: int = 2          # reads tried before a capture is given up


class SegmenterConfig(_Strict):
    """backend: a name of vision.BACKENDS; options: keyword arguments of that backend."""

    backend: str = "tabletop"
    options: dict[str, Any] = msgspec.field(default_factory=dict)


class GripperConfig(_Strict):
    """model: a drivers.gripper model name, or "sim_jaw" for the simulated cell's jaw.
    Geometry of the fingers as the scorer sees it (metres): finger_width_m across the closing
    direction, open_width_m between the pads, pad_length_m along the approach, tcp_to_tip_m
    from the TCP to the fingertips along the approach, finger_thickness_m from a pad's face to
    its finger's back along the closing direction (pad and finger body), pad_thickness_m the
    pad's part of it, finger_length_m from the fingertips to the palm along the approach,
    palm_width_m the hand's width across the closing direction where the fingers meet it (None:
    as wide as the fingers; the scorer keeps the palm off anything taller than the fingers
    under it) and palm_length_m its length along the closing direction (None: the open
    fingers with their bodies; read with palm_width_m only); the simulated jaw builds the
    palm these give, and without them its own, finger_width_m + 20 mm by open_width_m + 2
    finger_thickness_m + 20 mm, which its scorer then takes (palm_m);
    force_n per pad and the pads' friction coefficient (the depth terms of the score use
    both). pad_friction None: sim.pad_friction on the simulated jaw, else 1.0 (jaw_friction).
    On the simulated jaw ("sim_jaw") every one of these keys builds the jaw itself."""

    model: str = "sim_jaw"
    port: str = "sim"
    finger_width_m: float = 0.022
    open_width_m: float = 0.085
    pad_length_m: float = 0.035
    finger_thickness_m: float = 0.014
    pad_thickness_m: float = 0.004
    tcp_to_tip_m: float = 0.0175
    finger_length_m: float = 0.06
    palm_width_m: float | None = None
    palm_length_m: float | None = None
    force_n: float = 40.0
    pad_friction: float | None = None
    speed_mps: float = 0.1
    timeout_s: float = 5.0

    def palm_m(self) -> tuple[float, float]:
        """The palm the scorer keeps off tall things, (width, length) in metres: the keys when
        given (the length defaulting to the open fingers with their bodies); on the simulated
        jaw without them, the palm the simulator builds (20 mm wider than the fingers, 20 mm
        longer than the open fingers with their bodies); else NaN (as wide as the fingers)."""
        if self.palm_width_m is not None:
            return self.palm_width_m, math.nan if self.palm_length_m is None else self.palm_length_m
        if self.model == "sim_jaw":
            return (self.finger_width_m + SIM_PALM_MARGIN_M,
                    self.open_width_m + 2.0 * self.finger_thickness_m + SIM_PALM_MARGIN_M)
        return math.nan, math.nan


class ArmConfig(_Strict):
    """kind: "sim" (the simulated cell's arm) or "none" (the robot controller moves the arm
    itself through the endpoint). Poses as [x, y, z] (metres, base frame) with the TCP
    pointing straight down. unseen_stops_to_check: approaches in a row that stop where the
    planning frame shows nothing under the hand (a part hooked on a finger rides down with
    it) before the loop faults and asks the operator to see to the hand; 0: never."""

    kind: Literal["sim", "none"] = "sim"
    speed_mps: float = 0.25
    approach_speed_mps: float = 0.05
    pregrasp_m: float = 0.10
    lift_m: float = 0.10
    hold_s: float = 0.5
    home_m: list[float] = msgspec.field(default_factory=lambda: [0.0, -0.52, 0.36])
    place_m: list[float] = msgspec.field(default_factory=lambda: [0.0, -0.5, 0.25])
    unseen_stops_to_check: int = 2


class CalibrationConfig(_Strict):
    """Calibration files (paths relative to the cell file); None where not calibrated."""

    intrinsics: str | None = None
    hand_eye: str | None = None
    depth: str | None = None
    gripper: str | None = None


class ScoringConfig(_Strict):
    """Image-space search: silhouette resolution, insertion depth of the fingertips past the
    object's top (metres), grasp lines, candidates kept, the score below which the loop
    offers no grasp, and the search seed. measure: "graspline" (Tan's score times the depth
    terms) or "tan2024" (Tan et al.'s measure alone; "tan2021" is the same).
    masses_kg: known objects' masses by label; others weigh their seen volume times
    density_kg_m3, at most max_guessed_mass_kg (the torque term's guess).
    join_touching: masks that touch the target (no table seen between) count in its mass and
    mass centre for the torque term (a segmenter may cut one object in two at a depth step),
    when together they are a body the jaw could hold (somewhere narrower than its opening);
    otherwise the elongated body the target continues along its axis, if any (a lying
    bottle's cap: vision.axial_pieces).
    deep_insertion_m: a second search per object with the fingertips this far past its top,
    at most as deep as the fingers reach (onboard.loop.insertion_depths; the support's
    clearance permitting); the better grasp of the two searches wins (a lying can is held at
    its widest section); 0, or not more than insertion_depth_m: one search.
    search: "antipodal" (the default: pairs of boundary pixels whose normals oppose within
    a friction cone, then the refinement: scoring.SearchParams.sampler) or "tan" (Tan et
    al.'s planning loop: random global rounds, then refinement). scene_budget: plan for the
    scene's best grasp object by object in order of promise (narrow enough for the stroke,
    clear of neighbours: onboard.loop's promise_order) and stop at the first grasp scoring
    SCENE_GOOD_ENOUGH, instead of searching every object (best-grasp mode only); on by
    default. Both measured on the simulated cell beside Tan's loop over every object
    (docs/figures.md, "The antipodal search and the scene budget")."""

    metres_per_px: float = 0.001
    insertion_depth_m: float = 0.02
    clearance_m: float = 0.005
    n_lines: int = 15
    top_k: int = 5
    min_score: float = 0.2
    seed: int = 0
    measure: str = "graspline"
    density_kg_m3: float = 500.0
    max_guessed_mass_kg: float = 0.6
    masses_kg: dict[str, float] = msgspec.field(default_factory=dict)
    join_touching: bool = True
    deep_insertion_m: float = 0.05
    search: Literal["tan", "antipodal"] = "antipodal"
    scene_budget: bool = True


class DatabaseConfig(_Strict):
    """The grasp database as a grasp source for a multi-finger hand (docs/cell-file.md):
    path : the SQLite file (``graspline db build --out``); hand : the hand's name in it.
    rank_by : "quality" (Kim et al.'s simulated ranking) or "pfc" (Weisz & Allen's P(fc)).
    approach_cone_deg : a grasp's approach must lie within this angle of straight down.
    workspace_m : [[xmin, ymin, zmin], [xmax, ymax, zmax]], base frame: where a grasp's TCP
    may be. collision_margin_m : clearance the hand keeps from the scene (height map).
    recogniser : "vision" (vision.recognise over the database's objects, the default) or
    "truth" (the simulated cell's ground truth, for diagnosis and benchmarks; sim only)."""

    path: str
    hand: str
    rank_by: Literal["quality", "pfc"] = "quality"
    approach_cone_deg: float = 30.0
    workspace_m: list[list[float]] = msgspec.field(
        default_factory=lambda: [[-0.4, -0.3, 0.0], [0.4, 0.3, 0.5]])
    collision_margin_m: float = 0.005
    recogniser: Literal["vision", "truth"] = "vision"


class ApproachesConfig(_Strict):
    """Tilted approach axes for tall objects (docs/cell-file.md#approach-axes): the
    approach_search grasp source projects each object whose top stands at least min_height_m
    over the support along every approach a = (sin t cos phi, sin t sin phi, -cos t), t in
    tilts_deg (from straight down), phi at azimuths even steps around the vertical, and
    searches each projection with the image search's measure. max_tilt_deg : the steepest
    tilt the arm reaches (the simulated arm reaches any orientation). clearance_m : how far
    the hand (fingertips, finger bodies, palm) stays above the support, at the grasp and at
    the pre-grasp. hand_length_m : the palm and wrist's extent behind the finger roots along
    the approach. max_closing_slope_deg : the steepest the closing direction may run from
    horizontal (a camera above sees an object's sides only as its outline: fingers closing
    across it about horizontally meet the sides it saw). screen_candidates : candidates scored on each approach's projection to
    rank the approaches (one round, no refinement); full_searches : how many of the best
    ranked approaches then get the image search's whole search."""

    tilts_deg: list[float] = msgspec.field(default_factory=lambda: [30.0, 60.0])
    azimuths: int = 8
    min_height_m: float = 0.10
    max_tilt_deg: float = 90.0
    clearance_m: float = 0.01
    hand_length_m: float = 0.05
    max_closing_slope_deg: float = 30.0
    screen_candidates: int = 512
    full_searches: int = 1


class ServerConfig(_Strict):
    """The robot-controller endpoint: address to bind (loopback unless set) and port."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT


class SimConfig(_Strict):
    """The simulated cell (only read when the camera, gripper or arm is "sim")."""

    objects_per_table: list[int] = msgspec.field(default_factory=lambda: [3, 5])
    ycb_dir: str | None = None
    # the simulated pads' friction (1.0 rubber, 0.5 taped); None: gripper.pad_friction, else
    # 1.0. One of the two keys drives both the simulated jaw and the scorer (sim_pad_friction)
    pad_friction: float | None = None
    depth_noise: bool = True
    gripper_mjcf: str | None = None   # e.g. Menagerie's robotiq_2f85/2f85.xml; None: the built-in jaw
    seed: int = 0
    # the cell's hand: "parallel" (the jaw above), "three_finger", "underactuated" or a JSON
    # description of an MJCF hand (offline_sim.cell.SimCellSettings.hand)
    hand: str = "parallel"


class CellConfig(_Strict):
    """A whole cell file (see docs/cell-file.md)."""

    version: int = CELL_FILE_VERSION
    name: str = "cell"
    camera: CameraConfig = CameraConfig()
    segmenter: SegmenterConfig = SegmenterConfig()
    gripper: GripperConfig = GripperConfig()
    arm: ArmConfig = ArmConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    scoring: ScoringConfig = ScoringConfig()
    database: DatabaseConfig | None = None   # None: the parallel-jaw image search alone
    approaches: ApproachesConfig | None = None   # None: straight-down approaches only
    log_dir: str = "trials"
    budgets_s: dict[str, float] = msgspec.field(default_factory=dict)
    server: ServerConfig = ServerConfig()
    sim: SimConfig = SimConfig()


_POSITIVE = {
    "camera.timeout_s", "camera.fps", "camera.width_px", "camera.height_px",
    "gripper.finger_width_m", "gripper.open_width_m", "gripper.pad_length_m", "gripper.force_n",
    "gripper.finger_length_m", "gripper.palm_width_m", "gripper.palm_length_m",
    "gripper.speed_mps", "gripper.timeout_s", "arm.speed_mps", "arm.approach_speed_mps",
    "scoring.metres_per_px", "scoring.n_lines", "scoring.top_k", "sim.pad_friction",
    "gripper.pad_friction", "scoring.density_kg_m3", "scoring.max_guessed_mass_kg",
}
_NON_NEGATIVE = {"gripper.tcp_to_tip_m", "gripper.finger_thickness_m", "gripper.pad_thickness_m", "arm.pregrasp_m", "arm.lift_m", "arm.hold_s",
                 "arm.unseen_stops_to_check",
                 "scoring.insertion_depth_m", "scoring.deep_insertion_m", "scoring.clearance_m", "scoring.min_score",
                 "camera.retries"}


def load_cell_file(path: str | Path) -> tuple[CellConfig, str]:
    """(the checked CellConfig, sha256 of the file's bytes) of a cell file; CellFileError else."""
    path = Path(path)
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        raise CellFileError(f"cell file {str(path)!r} cannot be read: {exc.strerror}") from exc
    config = parse_cell_file(raw_bytes, str(path))
    return resolve_paths(config, path.parent), hashlib.sha256(raw_bytes).hexdigest()


def parse_cell_file(text: bytes | str, source: str = "<cell file>") -> CellConfig:
    """The CellConfig in YAML text; every error names ``source``, the key and the value."""
    import yaml

    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CellFileError(f"{source}: not valid YAML: {exc}") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CellFileError(f"{source}: the top level must be a mapping of keys, got "
                            f"{type(raw).__name__}")
    try:
        config = msgspec.convert(raw, CellConfig, strict=True)
    except msgspec.ValidationError as exc:
        raise CellFileError(_explain(str(exc), raw, source)) from exc
    _check_values(config, source)
    return config


def _explain(message: str, raw: dict, source: str) -> str:
    """msgspec's message rewritten as "FILE: key a.b: message (value: ...)"."""
    m = re.search(r" - at (`key` in )?`\$(.*)`$", message)
    where = m.group(2) if m else ""
    text = message[:m.start()] if m else message
    key = where.lstrip(".").replace("`", "")
    field = re.search(r"unknown field `([^`]+)`", text)
    if field:
        full = f"{key}.{field.group(1)}" if key else field.group(1)
        return f"{source}: unknown key {full!r} (a typo? see docs/cell-file.md)"
    if m and m.group(1):  # a mapping's key of the wrong type (YAML read `1:` as a number)
        bad = [k for k in _mapping_at(raw, key) if not isinstance(k, str)]
        name = f"{key}.{bad[0]}" if bad else key
        return f"{source}: key {name!r}: the names in {key} must be text: {text}"
    if key.endswith("[...]"):
        # msgspec names a mapping's bad value only as "[...]": find the entry itself
        key, value = _bad_entry(raw, key[:-len("[...]")])
    else:
        value = _lookup(raw, key)
    shown = "" if value is _MISSING else f" (value: {value!r})"
    return f"{source}: key {key or '(top level)'!r}: {text}{shown}"


def _mapping_at(raw: Any, key: str) -> dict:
    """The mapping at a key path of the parsed YAML, or {}."""
    d = _lookup(raw, key)
    return d if isinstance(d, dict) else {}


def _bad_entry(raw: Any, key: str) -> tuple[str, Any]:
    """(key path, value) of the first entry of the mapping at ``key`` that its schema type
    refuses (budgets_s.capture, 'fast'); (key, the whole mapping) when none is found."""
    import typing

    tp: Any = CellConfig
    for part in key.split("."):
        hints = typing.get_type_hints(tp) if isinstance(tp, type) else {}
        if part not in hints:
            return key, _lookup(raw, key)
        tp = hints[part]
    args = typing.get_args(tp)
    for name, value in _mapping_at(raw, key).items():
        try:
            msgspec.convert(value, args[1] if len(args) == 2 else Any, strict=True)
        except msgspec.ValidationError:
            return f"{key}.{name}", value
    return key, _lookup(raw, key)


_MISSING = object()


def _lookup(raw: Any, key: str) -> Any:
    """The value at a dotted/indexed key path in the parsed YAML, or _MISSING."""
    cur = raw
    for part in re.findall(r"[^.\[\]]+", key):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


def _get(config: CellConfig, key: str) -> Any:
    cur: Any = config
    for part in key.split("."):
        cur = getattr(cur, part)
    return cur


def _check_values(config: CellConfig, source: str) -> None:
    """Ranges msgspec's types do not express; CellFileError naming key and value."""
    if config.version != CELL_FILE_VERSION:
        raise CellFileError(f"{source}: key 'version': this graspline reads cell files of "
                            f"version {CELL_FILE_VERSION}, got {config.version!r}")
    for key in _POSITIVE:
        v = _get(config, key)
        if v is None and key.endswith("pad_friction"):
            continue  # taken from the other pad_friction key (jaw_friction)
        if v is None and key in ("gripper.palm_width_m", "gripper.palm_length_m"):
            continue  # the fingers' band
        if not (math.isfinite(v) and v > 0):
            raise CellFileError(f"{source}: key {key!r} must be > 0, got {v!r}")
    for key in _NON_NEGATIVE:
        v = _get(config, key)
        if not (math.isfinite(v) and v >= 0):
            raise CellFileError(f"{source}: key {key!r} must be >= 0, got {v!r}")
    _check_jaw(config.gripper, source)
    if not config.scoring.min_score <= 1.0:
        raise CellFileError(f"{source}: key 'scoring.min_score' must be in [0, 1], "
                            f"got {config.scoring.min_score!r}")
    for name, v in config.budgets_s.items():
        if name not in STAGES:
            raise CellFileError(f"{source}: key 'budgets_s.{name}': no such stage; stages are "
                                f"{', '.join(STAGES)}")
        if not (math.isfinite(v) and v > 0):
            raise CellFileError(f"{source}: key 'budgets_s.{name}' must be > 0, got {v!r}")
    for key in ("arm.home_m", "arm.place_m"):
        v = _get(config, key)
        if len(v) != 3 or not all(math.isfinite(c) for c in v):
            raise CellFileError(f"{source}: key {key!r} must be [x, y, z] in metres, got {v!r}")
    lo_hi = config.sim.objects_per_table
    if len(lo_hi) != 2 or not 1 <= lo_hi[0] <= lo_hi[1] <= 10:
        raise CellFileError(f"{source}: key 'sim.objects_per_table' must be [min, max] with "
                            f"1 <= min <= max <= 10, got {lo_hi!r}")
    if not 0 <= config.server.port <= 65535:
        raise CellFileError(f"{source}: key 'server.port' must be in 0..65535, got "
                            f"{config.server.port!r}")
    if config.scoring.measure not in MEASURES:
        raise CellFileError(f"{source}: key 'scoring.measure' must be one of "
                            f"{', '.join(MEASURES)}, got {config.scoring.measure!r}")
    for label, kg in config.scoring.masses_kg.items():
        if not (math.isfinite(kg) and kg > 0):
            raise CellFileError(f"{source}: key 'scoring.masses_kg.{label}' must be > 0, got {kg!r}")
    if config.database is not None:
        _check_database(config.database, source)
        if config.database.recogniser == "truth" and config.camera.kind != "sim":
            raise CellFileError(f"{source}: key 'database.recogniser' is 'truth', the simulated "
                                f"cell's ground truth, but camera.kind is "
                                f"{config.camera.kind!r}; use 'vision' on hardware")
    if config.approaches is not None:
        _check_approaches(config.approaches, source)
    if config.camera.kind == "recording" and not config.camera.recording:
        raise CellFileError(f"{source}: key 'camera.recording' must name a .db3 file when "
                            f"camera.kind is 'recording'")


def _check_jaw(g: GripperConfig, source: str) -> None:
    """The jaw's lengths against each other; CellFileError naming the keys and values."""
    if g.pad_length_m > g.finger_length_m:
        raise CellFileError(f"{source}: key 'gripper.pad_length_m' ({g.pad_length_m!r}) must not "
                            f"exceed gripper.finger_length_m ({g.finger_length_m!r})")
    if g.tcp_to_tip_m > g.finger_length_m:
        raise CellFileError(f"{source}: key 'gripper.tcp_to_tip_m' ({g.tcp_to_tip_m!r}) must not "
                            f"exceed gripper.finger_length_m ({g.finger_length_m!r})")
    # the simulated jaw builds a finger body behind the pad: it must have some thickness
    thin = g.finger_thickness_m <= g.pad_thickness_m if g.model == "sim_jaw" \
        else g.finger_thickness_m < g.pad_thickness_m
    if thin:
        raise CellFileError(f"{source}: key 'gripper.finger_thickness_m' ({g.finger_thickness_m!r},"
                            f" pad face to finger back) must exceed gripper.pad_thickness_m "
                            f"({g.pad_thickness_m!r})")


def jaw_friction(config: CellConfig) -> float:
    """The pads' friction coefficient the scorer assumes: gripper.pad_friction, else (on the
    simulated jaw) sim.pad_friction, else 1.0."""
    g, s = config.gripper, config.sim
    if g.pad_friction is not None:
        return g.pad_friction
    if g.model == "sim_jaw" and s.pad_friction is not None:
        return s.pad_friction
    return 1.0


def sim_pad_friction(config: CellConfig) -> float:
    """The simulated jaw's pad friction: sim.pad_friction, else gripper.pad_friction, else 1.0."""
    for v in (config.sim.pad_friction, config.gripper.pad_friction):
        if v is not None:
            return v
    return 1.0


def _check_database(db: DatabaseConfig, source: str) -> None:
    """The database section's ranges; CellFileError naming the key and the value."""
    if not db.path:
        raise CellFileError(f"{source}: key 'database.path' must name the grasp database file, "
                            f"got {db.path!r}")
    if not db.hand:
        raise CellFileError(f"{source}: key 'database.hand' must name a hand of the database, "
                            f"got {db.hand!r}")
    if not (math.isfinite(db.approach_cone_deg) and 0 <= db.approach_cone_deg <= 180):
        raise CellFileError(f"{source}: key 'database.approach_cone_deg' must be in [0, 180], "
                            f"got {db.approach_cone_deg!r}")
    if not (math.isfinite(db.collision_margin_m) and db.collision_margin_m >= 0):
        raise CellFileError(f"{source}: key 'database.collision_margin_m' must be >= 0, "
                            f"got {db.collision_margin_m!r}")
    box = db.workspace_m
    if (len(box) != 2 or any(len(c) != 3 for c in box)
            or not all(math.isfinite(v) for c in box for v in c)
            or not all(lo < hi for lo, hi in zip(*box))):
        raise CellFileError(f"{source}: key 'database.workspace_m' must be [[xmin, ymin, zmin], "
                            f"[xmax, ymax, zmax]] in metres with each min < max, got {box!r}")


def _check_approaches(a: ApproachesConfig, source: str) -> None:
    """The approaches section's ranges; CellFileError naming the key and the value."""
    if not a.tilts_deg or not all(math.isfinite(t) and 0 < t <= 90 for t in a.tilts_deg):
        raise CellFileError(f"{source}: key 'approaches.tilts_deg' must list tilts from straight "
                            f"down in (0, 90] degrees, got {a.tilts_deg!r}")
    if not 1 <= a.azimuths <= 36:
        raise CellFileError(f"{source}: key 'approaches.azimuths' must be in 1..36, "
                            f"got {a.azimuths!r}")
    if not (math.isfinite(a.max_tilt_deg) and 0 < a.max_tilt_deg <= 180):
        raise CellFileError(f"{source}: key 'approaches.max_tilt_deg' must be in (0, 180], "
                            f"got {a.max_tilt_deg!r}")
    if not (math.isfinite(a.max_closing_slope_deg) and 0 <= a.max_closing_slope_deg <= 90):
        raise CellFileError(f"{source}: key 'approaches.max_closing_slope_deg' must be in "
                            f"[0, 90], got {a.max_closing_slope_deg!r}")
    for key in ("min_height_m", "clearance_m", "hand_length_m"):
        v = getattr(a, key)
        if not (math.isfinite(v) and v >= 0):
            raise CellFileError(f"{source}: key 'approaches.{key}' must be >= 0, got {v!r}")
    for key in ("screen_candidates", "full_searches"):
        if getattr(a, key) < 1:
            raise CellFileError(f"{source}: key 'approaches.{key}' must be >= 1, "
                                f"got {getattr(a, key)!r}")


def resolve_paths(config: CellConfig, base: Path) -> CellConfig:
    """The config with relative file paths made relative to ``base`` (the cell file's folder)."""
    def fix(p: str | None) -> str | None:
        return None if p is None or Path(p).is_absolute() else str(base / p)

    cal = config.calibration
    return msgspec.structs.replace(
        config,
        calibration=msgspec.structs.replace(cal, intrinsics=fix(cal.intrinsics),
                                            hand_eye=fix(cal.hand_eye), depth=fix(cal.depth),
                                            gripper=fix(cal.gripper)),
        camera=msgspec.structs.replace(config.camera, recording=fix(config.camera.recording)),
        database=(None if config.database is None else
                  msgspec.structs.replace(config.database, path=fix(config.database.path)
                                          or config.database.path)),
        log_dir=fix(config.log_dir) or config.log_dir,
        sim=msgspec.structs.replace(config.sim, ycb_dir=fix(config.sim.ycb_dir),
                                    gripper_mjcf=fix(config.sim.gripper_mjcf)))


def sim_cell_file(*, seed: int = 0, log_dir: str = "out/trials", ycb_dir: str | None = None,
                  pad_friction: float = 1.0, port: int = DEFAULT_PORT, hand: str = "parallel",
                  database: str | None = None, recogniser: str = "vision") -> CellConfig:
    """The built-in cell file of the simulated cell (``graspline demo`` / ``serve --sim``).
    hand : the cell's hand (sim.hand); database : a grasp database file with grasps for that
    hand, which becomes the cell file's database section (its hand named as the cell's, the
    given recogniser); a multi-finger hand needs one."""
    if hand != "parallel" and database is None:
        raise ValueError(f"sim_cell_file: hand {hand!r} plans with a grasp database; give "
                         f"database= (the file)")
    section = None
    if database is not None:
        if recogniser not in ("vision", "truth"):
            raise ValueError(f"sim_cell_file: recogniser must be 'vision' or 'truth', got "
                             f"{recogniser!r}")
        section = DatabaseConfig(path=str(database), hand=_database_hand_name(hand),
                                 recogniser=recogniser)
    return CellConfig(name="simulated cell", log_dir=log_dir, server=ServerConfig(port=port),
                      sim=SimConfig(seed=seed, ycb_dir=ycb_dir, pad_friction=pad_friction,
                                    hand=hand),
                      gripper=GripperConfig(pad_friction=pad_friction),
                      scoring=ScoringConfig(seed=seed), database=section)


def carried_hand_name(config: CellConfig) -> str | None:
    """The database's name of the multi-finger hand the simulated cell carries (``sim.hand``
    where the cell's gripper is the simulated one and sim.hand is not the jaw); None
    otherwise (a jaw, or hardware, whose hand the cell file's ``database.hand`` names)."""
    if config.gripper.model != "sim_jaw" or config.sim.hand == "parallel":
        return None
    return _database_hand_name(config.sim.hand)


def _database_hand_name(hand: str) -> str:
    """The name a database gives a cell's hand: a built-in name as it is, a JSON hand
    description by its file's stem (as ``graspline db build --hand`` names it)."""
    return Path(hand).stem if hand.lower().endswith(".json") else hand


def config_hash(config: CellConfig) -> str:
    """sha256 of a config's canonical JSON (for built-in configs that have no file); a config
    without the approaches section hashes as it did before the section existed."""
    raw = msgspec.to_builtins(config)
    if raw.get("approaches") is None:
        raw.pop("approaches", None)
    return hashlib.sha256(msgspec.json.encode(raw)).hexdigest()
