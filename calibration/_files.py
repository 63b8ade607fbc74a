"""Calibration files: versioned YAML with the date, a summary of the inputs, the residuals and
the result; loading validates every key and names the key and the file of anything wrong."""
from __future__ import annotations

import datetime as _dt
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from drivers.camera import DISTORTION_MODELS, Intrinsics
from drivers.gripper import MODELS as GRIPPER_MODELS
from scoring import check_pose

from ._depth import DepthCalibration, DepthSample
from ._errors import CalibrationError, CalibrationFileError
from ._gripper import GripperCalibration
from ._handeye import SETUPS, HandEyeCalibration, MethodResult
from ._intrinsics import IntrinsicsCalibration

VERSION = 1
KINDS = ("intrinsics", "hand_eye", "depth", "gripper")
# Names of the hand-eye transforms in the file, by setup: (the result, the fixed board pose).
HAND_EYE_KEYS = {"eye_in_hand": ("T_tcp_camera", "T_base_board"),
                 "eye_to_hand": ("T_base_camera", "T_tcp_board")}

Calibration = IntrinsicsCalibration | HandEyeCalibration | DepthCalibration | GripperCalibration


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second (the files' date)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace(
        "+00:00", "Z")


# ---------------------------------------------------------------------------------- writing

def _plain(x: Any) -> Any:
    """x with numpy scalars and arrays turned into Python floats, ints and lists (for YAML)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return x


def _document(cal: Calibration) -> dict:
    """The file's content for a calibration result."""
    if isinstance(cal, IntrinsicsCalibration):
        i = cal.intrinsics
        kind = "intrinsics"
        result = {"width": i.width, "height": i.height, "fx": i.fx, "fy": i.fy, "cx": i.cx,
                  "cy": i.cy, "model": i.model, "coeffs": list(i.coeffs)}
        residuals = {"rms_px": cal.rms_px,
                     "views": [{"name": n, "error_px": e}
                               for n, e in zip(cal.view_names, cal.view_errors_px)],
                     "rejected": [{"name": n, "error_px": e} for n, e in cal.rejected],
                     "std_px": dict(zip(("fx", "fy", "cx", "cy"), cal.std_px)),
                     "coverage": cal.coverage}
        inputs = {"board": cal.board, **cal.inputs}
    elif isinstance(cal, HandEyeCalibration):
        kind = "hand_eye"
        key, fixed = HAND_EYE_KEYS[cal.setup]
        result = {"setup": cal.setup, "method": cal.method, key: cal.T, fixed: cal.T_fixed}
        residuals = {"rms_translation_m": cal.rms_translation_m,
                     "rms_rotation_rad": cal.rms_rotation_rad,
                     "max_translation_m": cal.max_translation_m,
                     "max_rotation_rad": cal.max_rotation_rad,
                     "method_spread_m": cal.method_spread_m,
                     "method_spread_rad": cal.method_spread_rad,
                     "methods": [{"method": m.method, "rms_translation_m": m.rms_translation_m,
                                  "rms_rotation_rad": m.rms_rotation_rad, "T": m.T}
                                 for m in cal.methods],
                     "warnings": list(cal.warnings)}
        inputs = {"n_poses": cal.n_poses, **cal.inputs}
    elif isinstance(cal, DepthCalibration):
        kind = "depth"
        result = {"scale": cal.scale}
        residuals = {"rms_bias_m": cal.rms_bias_m,
                     "rms_bias_corrected_m": cal.rms_bias_corrected_m,
                     "samples": [{"reference_m": s.reference_m, "measured_m": s.measured_m,
                                  "bias_m": s.bias_m, "noise_m": s.noise_m,
                                  "expected_noise_m": s.expected_noise_m,
                                  "n_points": s.n_points} for s in cal.samples],
                     "warnings": list(cal.warnings)}
        inputs = dict(cal.inputs)
    elif isinstance(cal, GripperCalibration):
        kind = "gripper"
        result = {"model": cal.model, "mode": cal.mode, "finger_width_m": cal.finger_width_m,
                  "width": {"counts": list(cal.counts), "width_m": list(cal.width_m)}}
        if cal.force_counts:
            result["force"] = {"counts": list(cal.force_counts), "force_n": list(cal.force_n)}
        residuals = {"rms_width_m": cal.rms_width_m, "max_width_m": cal.max_width_m,
                     "rms_force_n": cal.rms_force_n}
        inputs = dict(cal.inputs)
    else:
        raise TypeError(f"not a calibration result: {type(cal).__name__}")
    return {"graspline_calibration": kind, "version": VERSION, "date": cal.date or now_iso(),
            "inputs": _plain(inputs), "residuals": _plain(residuals), "result": _plain(result)}


def save_calibration(cal: Calibration, path: str | os.PathLike) -> Path:
    """Write a calibration result as a versioned YAML file (atomically: a crash leaves the old
    file or the new one, never half of one); returns the path."""
    import yaml

    path = Path(path)
    if not path.parent.is_dir():
        raise CalibrationError(f"cannot write {path}: folder {path.parent} does not exist")
    text = yaml.safe_dump(_document(cal), sort_keys=False, default_flow_style=None, width=100)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"# graspline calibration ({_document_kind(cal)}); see docs/calibration.md "
                    f"in graspline's repository\n{text}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _document_kind(cal: Calibration) -> str:
    return {IntrinsicsCalibration: "intrinsics", HandEyeCalibration: "hand_eye",
            DepthCalibration: "depth", GripperCalibration: "gripper"}[type(cal)]


# ---------------------------------------------------------------------------------- reading

class _Doc:
    """Typed access to a loaded YAML mapping; every error names the file and the dotted key."""

    def __init__(self, path: Path, data: Any, key: str = "") -> None:
        self.path, self.data, self.key = path, data, key

    def _fail(self, key: str, message: str) -> CalibrationFileError:
        return CalibrationFileError(self.path, message, key)

    def _full(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.key}[{name}]"
        return f"{self.key}.{name}" if self.key else name

    def get(self, name: str, default: Any = ...) -> Any:
        if not isinstance(self.data, dict):
            raise self._fail(self.key, f"must be a mapping, got {_kind(self.data)}")
        if name not in self.data:
            if default is not ...:
                return default
            raise self._fail(self._full(name), "missing (the file is partial or not a "
                                               "graspline calibration file)")
        return self.data[name]

    def sub(self, name: str | int) -> "_Doc":
        value = self.data[name] if isinstance(name, int) else self.get(name)
        return _Doc(self.path, value, self._full(name))

    def mapping(self, name: str) -> "_Doc":
        d = self.sub(name)
        if not isinstance(d.data, dict):
            raise self._fail(d.key, f"must be a mapping, got {_kind(d.data)}")
        return d

    def items(self, name: str) -> list["_Doc"]:
        d = self.sub(name)
        if not isinstance(d.data, list):
            raise self._fail(d.key, f"must be a list, got {_kind(d.data)}")
        return [d.sub(i) for i in range(len(d.data))]

    def number(self, name: str, *, low: float | None = None, positive: bool = False,
               default: Any = ...) -> float:
        v = self.get(name, default)
        key = self._full(name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self._fail(key, f"must be a finite number, got {v!r}")
        if positive and v <= 0:
            raise self._fail(key, f"must be > 0, got {v!r}")
        if low is not None and v < low:
            raise self._fail(key, f"must be >= {low}, got {v!r}")
        return float(v)

    def integer(self, name: str, *, low: int = 0) -> int:
        v = self.get(name)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self._fail(self._full(name), f"must be an integer >= {low}, got {v!r}")
        return int(v)

    def string(self, name: str, choices: tuple[str, ...] | None = None,
               default: Any = ...) -> str:
        v = self.get(name, default)
        if not isinstance(v, str):
            raise self._fail(self._full(name), f"must be text, got {_kind(v)} {v!r}")
        if choices is not None and v not in choices:
            raise self._fail(self._full(name), f"must be one of {', '.join(choices)}, got {v!r}")
        return v

    def numbers(self, name: str, length: int | None = None, *, min_length: int = 0,
                low: float | None = None) -> tuple:
        v = self.get(name)
        key = self._full(name)
        if not isinstance(v, list) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in v):
            raise self._fail(key, f"must be a list of finite numbers, got {v!r}")
        if length is not None and len(v) != length:
            raise self._fail(key, f"must have {length} values, got {len(v)}")
        if len(v) < min_length:
            raise self._fail(key, f"must have at least {min_length} values, got {len(v)}")
        below = [i for i, x in enumerate(v) if low is not None and x < low]
        if below:
            raise self._fail(key, f"values must be >= {low:g}, got {v[below[0]]!r} at index "
                                  f"{below[0]}")
        return tuple(float(x) for x in v)

    def transform(self, name: str) -> np.ndarray:
        v = self.get(name)
        key = self._full(name)
        try:
            T = np.array(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise self._fail(key, "must be a 4 x 4 matrix of numbers (4 rows of 4)") from None
        try:
            return check_pose(T, key)
        except ValueError as exc:   # its message starts with the key, which _fail names
            raise self._fail(key, str(exc).removeprefix(f"{key} ")) from None

    def summary(self, name: str) -> dict:
        v = self.get(name, {})
        if not isinstance(v, dict):
            raise self._fail(self._full(name), f"must be a mapping, got {_kind(v)}")
        return v


def _kind(v: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", type(None): "nothing"}.get(
        type(v), type(v).__name__)


def _open(path: str | os.PathLike, kind: str | None) -> tuple[_Doc, str]:
    """The validated envelope of a calibration file: (document, kind)."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationFileError(path, "does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationFileError(path, f"cannot be read ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CalibrationFileError(path, f"is not valid YAML{where}: {problem} (corrupt or "
                                         f"truncated?)") from None
    if not isinstance(data, dict):
        raise CalibrationFileError(path, f"must hold a mapping at the top level, got "
                                         f"{_kind(data)} (empty, truncated or not a calibration "
                                         f"file)")
    doc = _Doc(path, data)
    found = doc.string("graspline_calibration", KINDS)
    if kind is not None and found != kind:
        raise CalibrationFileError(path, f"is a {found} calibration, expected {kind}",
                                   "graspline_calibration")
    version = doc.integer("version", low=1)
    if version > VERSION:
        raise CalibrationFileError(path, f"version {version} is newer than this graspline "
                                         f"reads ({VERSION}); update graspline", "version")
    date = doc.get("date")
    if not isinstance(date, _dt.date) and not _is_iso_date(date):
        raise CalibrationFileError(path, f"must be an ISO 8601 date (2026-11-23 or "
                                         f"2026-11-23T10:00:00Z), got {date!r}", "date")
    doc.mapping("result")
    doc.mapping("residuals")
    return doc, found


def _is_iso_date(text: object) -> bool:
    """True for an ISO 8601 date or date and time (a trailing Z for UTC allowed)."""
    if not isinstance(text, str):
        return False
    try:
        _dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _date(doc: _Doc) -> str:
    d = doc.get("date")
    return d.isoformat() if isinstance(d, _dt.date) else d


def load_intrinsics(path: str | os.PathLike) -> IntrinsicsCalibration:
    """Camera intrinsics from a calibration file (CalibrationFileError when invalid)."""
    doc, _ = _open(path, "intrinsics")
    r, res = doc.mapping("result"), doc.mapping("residuals")
    try:
        intr = Intrinsics(r.integer("width", low=1), r.integer("height", low=1),
                          r.number("fx", positive=True), r.number("fy", positive=True),
                          r.number("cx"), r.number("cy"), r.string("model", DISTORTION_MODELS),
                          r.numbers("coeffs", 5))
    except ValueError as exc:
        if isinstance(exc, CalibrationFileError):
            raise
        raise CalibrationFileError(doc.path, str(exc), "result") from None
    views = res.items("views") if "views" in res.data else []
    rejected = res.items("rejected") if "rejected" in res.data else []
    std = res.mapping("std_px") if "std_px" in res.data else None
    inputs = doc.summary("inputs")
    return IntrinsicsCalibration(
        intrinsics=intr, rms_px=res.number("rms_px", low=0.0),
        view_names=tuple(str(v.get("name")) for v in views),
        view_errors_px=tuple(v.number("error_px", low=0.0) for v in views),
        rejected=tuple((str(v.get("name")), v.number("error_px", low=0.0)) for v in rejected),
        std_px=tuple(std.number(k, low=0.0) for k in ("fx", "fy", "cx", "cy")) if std
        else (0.0, 0.0, 0.0, 0.0),
        coverage=res.number("coverage", low=0.0, default=0.0),
        board=dict(inputs.get("board") or {}), date=_date(doc),
        inputs={k: v for k, v in inputs.items() if k != "board"})


def load_hand_eye(path: str | os.PathLike) -> HandEyeCalibration:
    """A hand-eye calibration (T_tcp_camera or T_base_camera) from a calibration file."""
    doc, _ = _open(path, "hand_eye")
    r, res = doc.mapping("result"), doc.mapping("residuals")
    setup = r.string("setup", SETUPS)
    key, fixed = HAND_EYE_KEYS[setup]
    methods = tuple(MethodResult(m.string("method"), m.transform("T"),
                                 m.number("rms_translation_m", low=0.0),
                                 m.number("rms_rotation_rad", low=0.0))
                    for m in (res.items("methods") if "methods" in res.data else []))
    warns = res.get("warnings", [])
    if not isinstance(warns, list):
        raise CalibrationFileError(doc.path, "must be a list of text", "residuals.warnings")
    inputs = doc.summary("inputs")
    n = inputs.get("n_poses", 0)
    return HandEyeCalibration(
        setup=setup, T=r.transform(key), T_fixed=r.transform(fixed),
        method=r.string("method"),
        rms_translation_m=res.number("rms_translation_m", low=0.0),
        rms_rotation_rad=res.number("rms_rotation_rad", low=0.0),
        max_translation_m=res.number("max_translation_m", low=0.0),
        max_rotation_rad=res.number("max_rotation_rad", low=0.0),
        method_spread_m=res.number("method_spread_m", low=0.0),
        method_spread_rad=res.number("method_spread_rad", low=0.0),
        n_poses=n if isinstance(n, int) and not isinstance(n, bool) else 0,
        methods=methods, warnings=tuple(map(str, warns)), date=_date(doc),
        inputs={k: v for k, v in inputs.items() if k != "n_poses"})


def load_depth_correction(path: str | os.PathLike) -> DepthCalibration:
    """A depth check and its scale correction from a calibration file."""
    doc, _ = _open(path, "depth")
    r, res = doc.mapping("result"), doc.mapping("residuals")
    scale = r.number("scale", positive=True)
    if not 0.5 <= scale <= 2.0:
        raise CalibrationFileError(doc.path, f"must be within [0.5, 2] (a depth scale error "
                                             f"beyond that is a fault, not a calibration), got "
                                             f"{scale}", "result.scale")
    samples = tuple(DepthSample(s.number("reference_m", positive=True), s.number("measured_m"),
                                s.number("bias_m"), s.number("noise_m", low=0.0),
                                s.number("expected_noise_m", low=0.0),
                                s.integer("n_points"))
                    for s in res.items("samples"))
    warns = res.get("warnings", [])
    if not isinstance(warns, list):
        raise CalibrationFileError(doc.path, "must be a list of text", "residuals.warnings")
    return DepthCalibration(samples, scale, res.number("rms_bias_m", low=0.0),
                            res.number("rms_bias_corrected_m", low=0.0),
                            tuple(map(str, warns)), _date(doc), doc.summary("inputs"))


def load_gripper_map(path: str | os.PathLike) -> GripperCalibration:
    """A gripper's calibrated width (and force) map from a calibration file."""
    doc, _ = _open(path, "gripper")
    r, res = doc.mapping("result"), doc.mapping("residuals")
    width = r.mapping("width")
    force = r.mapping("force") if "force" in r.data else None
    fields = dict(
        model=r.string("model", tuple(GRIPPER_MODELS)), mode=r.string("mode", default=""),
        finger_width_m=r.number("finger_width_m", positive=True),
        counts=width.numbers("counts", min_length=2), width_m=width.numbers("width_m", low=0.0),
        force_counts=force.numbers("counts", min_length=2) if force else (),
        force_n=force.numbers("force_n", low=0.0) if force else (),
        rms_width_m=res.number("rms_width_m", low=0.0),
        max_width_m=res.number("max_width_m", low=0.0),
        rms_force_n=res.number("rms_force_n", low=0.0, default=0.0),
        date=_date(doc), inputs=doc.summary("inputs"))
    try:
        return GripperCalibration(**fields)
    except CalibrationError as exc:
        raise CalibrationFileError(doc.path, str(exc), "result") from None


def load_calibration(path: str | os.PathLike) -> Calibration:
    """Any calibration file, by the kind it declares."""
    _, kind = _open(path, None)
    return {"intrinsics": load_intrinsics, "hand_eye": load_hand_eye,
            "depth": load_depth_correction, "gripper": load_gripper_map}[kind](path)
