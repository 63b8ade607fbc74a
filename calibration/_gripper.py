"""Gripper calibration: the map from command units (device counts) to opening in metres and
to force in newtons, fitted monotonic to measured points, with its inverse."""
from __future__ import annotations

import csv
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drivers.gripper import Gripper, LinearMap
from scoring import GripperProjection, check_positive

from ._errors import CalibrationError


@dataclass(frozen=True)
class GripperCalibration:
    """A gripper's calibrated maps.

    model : the driver's model name (robotiq3f, barrett, ...). mode : the grasping mode the
    map holds for (robotiq3f; "" otherwise). counts, width_m : breakpoints of the width map,
    counts strictly increasing, widths strictly monotonic (metres between the fingers); the
    map is linear between them and clamped outside. force_counts, force_n : the same for the
    force (newtons), empty when not calibrated. finger_width_m : the finger's width across the
    closing direction (the scorer's w). rms_width_m, max_width_m : residuals of the measured
    points about the map (metres); rms_force_n likewise.
    """

    model: str
    counts: tuple[float, ...]
    width_m: tuple[float, ...]
    finger_width_m: float
    mode: str = ""
    force_counts: tuple[float, ...] = ()
    force_n: tuple[float, ...] = ()
    rms_width_m: float = 0.0
    max_width_m: float = 0.0
    rms_force_n: float = 0.0
    date: str = ""
    inputs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_breakpoints("counts", self.counts, "width_m", self.width_m)
        if self.force_counts or self.force_n:
            _check_breakpoints("force_counts", self.force_counts, "force_n", self.force_n)
        try:
            check_positive(self.finger_width_m, "finger_width_m", "GripperCalibration")
        except ValueError as exc:
            raise CalibrationError(str(exc)) from None

    @property
    def opening_m(self) -> float:
        """The widest opening, metres (the scorer's open width r)."""
        return float(max(self.width_m))

    def width_at(self, counts: float | np.ndarray) -> float | np.ndarray:
        """Opening (metres) at a command in counts; clamped to the calibrated range."""
        return np.interp(counts, self.counts, self.width_m)

    def counts_at(self, width_m: float | np.ndarray) -> float | np.ndarray:
        """The command (counts, not rounded) that gives an opening of width_m metres; the
        inverse of width_at over the calibrated range, clamped outside it."""
        w, c = np.asarray(self.width_m), np.asarray(self.counts)
        order = np.argsort(w)
        return np.interp(width_m, w[order], c[order])

    def force_at(self, counts: float | np.ndarray) -> float | np.ndarray:
        """Grip force (newtons) at a force command in counts."""
        self._need_force()
        return np.interp(counts, self.force_counts, self.force_n)

    def counts_for_force(self, force_n: float | np.ndarray) -> float | np.ndarray:
        """The force command (counts) that gives force_n newtons."""
        self._need_force()
        return np.interp(force_n, self.force_n, self.force_counts)

    def _need_force(self) -> None:
        if not self.force_counts:
            raise CalibrationError(f"the {self.model} calibration has no force map (no force "
                                   f"points were measured)")

    def width_map(self) -> LinearMap:
        """The width map as the drivers take it (SI breakpoints, integer counts)."""
        return _linear_map(self.width_m, self.counts)

    def force_map(self) -> LinearMap | None:
        """The force map as the drivers take it, or None when not calibrated."""
        return _linear_map(self.force_n, self.force_counts) if self.force_counts else None

    def projection(self, metres_per_px: float, n_lines: int = 5) -> GripperProjection:
        """The scorer's gripper projection in a silhouette of metres_per_px: finger width and
        open width from this calibration."""
        try:
            check_positive(metres_per_px, "metres_per_px", "GripperCalibration.projection")
        except ValueError as exc:
            raise CalibrationError(str(exc)) from None
        return GripperProjection(self.finger_width_m / metres_per_px,
                                 self.opening_m / metres_per_px, n_lines)


def _check_breakpoints(xname: str, xs: Sequence[float], yname: str, ys: Sequence[float]) -> None:
    if len(xs) != len(ys) or len(xs) < 2:
        raise CalibrationError(f"{xname} and {yname} need >= 2 matching breakpoints, got "
                               f"{len(xs)} and {len(ys)}")
    x, y = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise CalibrationError(f"{xname} and {yname} must be finite numbers")
    if not (np.diff(x) > 0).all():
        raise CalibrationError(f"{xname} must be strictly increasing, got {list(xs)}")
    dy = np.diff(y)
    if not ((dy > 0).all() or (dy < 0).all()):
        raise CalibrationError(f"{yname} must be strictly monotonic (one value per "
                               f"{xname}, so the map has an inverse), got {list(ys)}")


def _linear_map(si: Sequence[float], counts: Sequence[float]) -> LinearMap:
    """A driver LinearMap; breakpoints whose counts round to the same integer are merged."""
    pairs: dict[int, list[float]] = {}
    for c, s in zip(counts, si):
        pairs.setdefault(int(round(c)), []).append(float(s))
    keys = sorted(pairs)
    return LinearMap(tuple(float(np.mean(pairs[k])) for k in keys), tuple(keys))


def fit_monotonic(x: Sequence[float], y: Sequence[float], *, what: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strictly monotonic breakpoints through measured (x, y) points.

    Repeated x are averaged; an isotonic regression (scipy) in the data's own direction makes
    the values monotonic; runs it flattened to one value become one breakpoint at their mean
    x. Returns (x breakpoints, y breakpoints, residual of each input point).
    """
    from scipy.optimize import isotonic_regression

    xa, ya = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise CalibrationError(f"{what}: commands and values must be two lists of equal length, "
                               f"got {xa.shape} and {ya.shape}")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise CalibrationError(f"{what}: the points must be finite numbers")
    ux, inv = np.unique(xa, return_inverse=True)
    if len(ux) < 2:
        raise CalibrationError(f"{what}: need points at two or more different commands, got "
                               f"{len(ux)}")
    weight = np.bincount(inv).astype(np.float64)
    mean_y = np.bincount(inv, ya) / weight
    increasing = np.polyfit(ux, mean_y, 1, w=np.sqrt(weight))[0] >= 0
    fit = isotonic_regression(mean_y, weights=weight, increasing=bool(increasing)).x
    # Merge the flat runs: one breakpoint per distinct fitted value.
    starts = np.flatnonzero(np.r_[True, np.diff(fit) != 0])
    bx = np.add.reduceat(ux * weight, starts) / np.add.reduceat(weight, starts)
    by = fit[starts]
    if len(bx) < 2:
        raise CalibrationError(f"{what}: the measured values do not change with the command "
                               f"({mean_y.tolist()}); is the gripper moving?")
    residual = ya - np.interp(xa, bx, by)
    return bx, by, residual


def fit_gripper_map(counts: Sequence[float], width_m: Sequence[float], *, model: str,
                    finger_width_m: float, mode: str = "",
                    force_counts: Sequence[float] = (), force_n: Sequence[float] = (),
                    date: str = "", inputs: dict | None = None) -> GripperCalibration:
    """A GripperCalibration from measured points: (command counts, opening in metres) from
    gauge blocks or the device's position feedback, and optionally (force counts, newtons)."""
    if not model:
        raise CalibrationError("gripper calibration: model must be named (e.g. barrett)")
    cx, wy, wres = fit_monotonic(counts, width_m, what="width points")
    if (np.asarray(width_m) < 0).any():
        raise CalibrationError(f"width points: openings must be >= 0 metres, got "
                               f"{min(width_m)!r}")
    fc, fy, fres = (fit_monotonic(force_counts, force_n, what="force points")
                    if len(force_counts) or len(force_n) else ((), (), np.zeros(1)))
    return GripperCalibration(
        model=model, mode=mode, counts=tuple(map(float, cx)), width_m=tuple(map(float, wy)),
        finger_width_m=float(finger_width_m), force_counts=tuple(map(float, fc)),
        force_n=tuple(map(float, fy)), rms_width_m=float(np.sqrt((wres ** 2).mean())),
        max_width_m=float(np.abs(wres).max()), rms_force_n=float(np.sqrt((fres ** 2).mean())),
        date=date, inputs=dict(inputs or {}))


def measure_gauge_blocks(gripper: Gripper, widths_m: Sequence[float],
                         place: Callable[[float], None], *, force_n: float | None = None,
                         timeout_s: float = 20.0) -> list[tuple[float, float]]:
    """(counts, width_m) points from gauge blocks: for each width, ``place(width)`` asks for
    the block (a prompt on screen, or an emulator told the object's width), the gripper
    opens, closes on the block and its mean finger position is read back in counts."""
    points = []
    for w in widths_m:
        gripper.open(timeout_s=timeout_s)
        place(float(w))
        result = gripper.grasp(gripper.spec.width.low, force_n=force_n, timeout_s=timeout_s)
        fingers = result.status.fingers
        if not fingers:
            raise CalibrationError(f"{gripper.model}: its status carries no finger positions")
        axes = [f for f in fingers if f.contact] or list(fingers)
        if not result.object_detected:
            raise CalibrationError(f"{gripper.model} closed on no block at width {w} m: was "
                                   f"the block between the fingers?")
        points.append((float(np.mean([f.position_raw for f in axes])), float(w)))
    gripper.open(timeout_s=timeout_s)
    return points


def gripper_driver_options(calibrations: Sequence[GripperCalibration]) -> dict:
    """Keyword arguments for ``drivers.gripper.open_gripper`` that replace a model's nominal
    maps by calibrated ones (Robotiq 3-Finger: one width map per grasping mode; Barrett)."""
    cals = list(calibrations)
    if not cals:
        return {}
    models = {c.model for c in cals}
    if len(models) != 1:
        raise CalibrationError(f"gripper calibrations of several models: {sorted(models)}")
    model = cals[0].model
    force = next((c.force_map() for c in cals if c.force_counts), None)
    if model == "robotiq3f":
        maps = {c.mode or "basic": c.width_map() for c in cals}
        return {"width_maps": maps, "force_map": force}
    if model == "barrett":
        if len(cals) > 1:
            raise CalibrationError("barrett: one calibration file, got several")
        return {"width_map": cals[0].width_map(), "force_map": force}
    raise CalibrationError(f"calibrated maps are taken by the robotiq3f and barrett drivers, "
                           f"not by {model}")


def read_gripper_points(path: str | os.PathLike,
                        value: str = "width_m") -> tuple[list[float], list[float]]:
    """Measured points (counts, value) from a CSV file with a header row naming ``counts``
    and ``value``: ``width_m`` (opening, metres) or ``force_n`` (grip force, newtons). Raises
    CalibrationError naming the file and line of anything wrong."""
    try:
        rows = list(csv.DictReader(Path(path).read_text(encoding="utf-8").splitlines()))
    except OSError as exc:
        raise CalibrationError(f"{path}: cannot read ({exc.strerror})") from exc
    xs, ys = [], []
    for line, row in enumerate(rows, start=2):
        try:
            xs.append(float(row["counts"]))
            ys.append(float(row[value]))
        except KeyError:
            raise CalibrationError(f"{path}: needs a header with columns counts,{value}") from None
        except (TypeError, ValueError):
            raise CalibrationError(f"{path}, line {line}: counts and {value} must be numbers, "
                                   f"got {row.get('counts')!r}, {row.get(value)!r}") from None
    return xs, ys
