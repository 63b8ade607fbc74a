"""Data types of the gripper interface: results, status, ranges and unit maps (SI units)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FingerStatus:
    """One finger (or jaw pair, or axis): raw device position, closure 0..1, contact flag."""

    name: str
    position_raw: int          # the device's own units (0-255 counts, encoder counts)
    closure: float             # 0 = fully open, 1 = fully closed
    contact: bool              # stopped on an object before its target


@dataclass(frozen=True)
class GripperStatus:
    """A decoded status read: width in metres, motion and detection flags, fault code."""

    activated: bool
    moving: bool
    object_detected: bool
    width_m: float
    fault_code: int = 0
    fault_message: str = ""
    mode: str = ""
    fingers: tuple[FingerStatus, ...] = ()
    raw: bytes = field(default=b"", repr=False)   # the device's status bytes, undecoded

    @property
    def faulted(self) -> bool:
        """True when the device reports a fault that stops it."""
        return self.fault_code != 0


@dataclass(frozen=True)
class GraspResult:
    """Outcome of grasp(): object detected or not, final width (m) and time taken (s)."""

    object_detected: bool
    width_m: float
    elapsed_s: float
    status: GripperStatus


@dataclass(frozen=True)
class Range:
    """A closed interval with its unit, used to check every commanded value before sending."""

    low: float
    high: float
    unit: str

    def check(self, name: str, value: float) -> float:
        """Return value as float, or raise ValueError naming the argument, value and range."""
        try:
            v = float(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a number in [{self.low:g}, {self.high:g}] "
                             f"{self.unit}, got {value!r}") from exc
        if not math.isfinite(v) or not (self.low <= v <= self.high):
            raise ValueError(f"{name} must be within [{self.low:g}, {self.high:g}] {self.unit}, "
                             f"got {value!r}")
        return v


@dataclass(frozen=True)
class LinearMap:
    """Piecewise-linear map between SI values and device counts; calibration may replace it.

    ``si`` and ``counts`` are matching breakpoints, monotonic (either direction) in both.
    """

    si: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.si) != len(self.counts) or len(self.si) < 2:
            raise ValueError(f"LinearMap needs >= 2 matching breakpoints, got {len(self.si)} si "
                             f"and {len(self.counts)} counts")

    def _pairs(self, xs: tuple[float, ...], ys: tuple[float, ...], x: float) -> float:
        # Sort by x so the interpolation works whichever way the device counts run.
        pts = sorted(zip(xs, ys))
        if x <= pts[0][0]:
            return pts[0][1]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            if x <= x1:
                return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return pts[-1][1]

    def to_counts(self, value_si: float) -> int:
        """SI value -> nearest device count, clamped to the map's count range."""
        return int(round(self._pairs(self.si, tuple(float(c) for c in self.counts), value_si)))

    def to_si(self, counts: int) -> float:
        """Device count -> SI value (clamped to the map's range)."""
        return self._pairs(tuple(float(c) for c in self.counts), self.si, float(counts))


@dataclass(frozen=True)
class GripperSpec:
    """A model's ranges and unit maps: width (m), speed (m/s), force (N)."""

    model: str
    width: Range
    speed: Range
    force: Range
    width_map: LinearMap
    speed_map: LinearMap
    force_map: LinearMap
    extra: dict = field(default_factory=dict)
