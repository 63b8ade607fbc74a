"""Robotiq 3-Finger adaptive gripper over Modbus RTU, with its four grasping modes.

Request bytes: 0 action (rACT bit 0, rMOD bits 1-2, rGTO bit 3, rATR bit 4), 1 options,
2 reserved, 3-5 rPRA/rSPA/rFRA (all fingers when individual control is off). Status bytes:
0 gripper status (gACT bit 0, gMOD bits 1-2, gGTO bit 3, gIMC bits 4-5, gSTA bits 6-7),
1 object status (gDTA, gDTB, gDTC, gDTS, two bits each), 2 gFLT, then per axis A, B, C and
scissor S: request echo, position, current (bytes 3-14).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ._robotiq import FAULTS_3F, RobotiqGripper, decode_fault, rACT, rGTO
from ._specs import ROBOTIQ_3F, ROBOTIQ_3F_MODE_WIDTH_M, robotiq3f_width_map
from ._types import FingerStatus, GripperSpec, GripperStatus, LinearMap, Range

MODES = ("basic", "pinch", "wide", "scissor")


@dataclass(frozen=True)
class Raw3F:
    """The 3-Finger status bytes, field by field (device units)."""

    gACT: int
    gMOD: int
    gGTO: int
    gIMC: int
    gSTA: int
    gDT: tuple[int, int, int, int]      # A, B, C, scissor
    gFLT: int
    gPR: tuple[int, int, int, int]      # request echoes
    gPO: tuple[int, int, int, int]      # positions
    gCU: tuple[int, int, int, int]      # currents

    @classmethod
    def decode(cls, raw: bytes) -> "Raw3F":
        """Decode the sixteen status bytes."""
        s, o = raw[0], raw[1]
        axes = [raw[3 + 3 * i:6 + 3 * i] for i in range(4)]
        return cls(gACT=s & 1, gMOD=(s >> 1) & 3, gGTO=(s >> 3) & 1, gIMC=(s >> 4) & 3,
                   gSTA=(s >> 6) & 3, gDT=tuple((o >> (2 * i)) & 3 for i in range(4)),
                   gFLT=raw[2], gPR=tuple(a[0] for a in axes), gPO=tuple(a[1] for a in axes),
                   gCU=tuple(a[2] for a in axes))


def _spec_for(mode: str, base: GripperSpec = ROBOTIQ_3F,
              width_maps: dict[str, LinearMap] | None = None) -> GripperSpec:
    # A calibrated map of the mode replaces the nominal one, and its range the nominal range.
    wmap = (width_maps or {}).get(mode) or robotiq3f_width_map(mode)
    return dataclasses.replace(base, width=Range(min(wmap.si), max(wmap.si), "m"),
                               width_map=wmap)


def _check_mode(mode: str) -> int:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return MODES.index(mode)


class Robotiq3F(RobotiqGripper):
    """Robotiq 3-Finger gripper; widths follow the current grasping mode's map."""

    model = "robotiq3f"
    _status_registers = 8

    def __init__(self, port: str, *, mode: str = "basic",
                 width_maps: dict[str, LinearMap] | None = None,
                 force_map: LinearMap | None = None, **options: object) -> None:
        """width_maps : calibrated width maps by grasping mode (calibration's gripper map),
        replacing the nominal ones; force_map : a calibrated force map."""
        self._mode_index = _check_mode(mode)
        for m in width_maps or {}:
            _check_mode(m)
        self._width_maps = dict(width_maps or {})
        self._target: int | None = None
        base = ROBOTIQ_3F if force_map is None else dataclasses.replace(
            ROBOTIQ_3F, force=Range(min(force_map.si), max(force_map.si), "N"),
            force_map=force_map)
        super().__init__(port, _spec_for(mode, base, self._width_maps),  # type: ignore[arg-type]
                         **options)

    @property
    def mode(self) -> str:
        """The grasping mode commanded last (basic, pinch, wide or scissor)."""
        return MODES[self._mode_index]

    def set_mode(self, mode: str, timeout_s: float = 15.0) -> None:
        """Change the grasping mode and wait (at most timeout_s) until the change completes."""
        m = _check_mode(mode)
        timeout_s = Range(0.001, 3600.0, "s").check("timeout_s", timeout_s)
        self._check_usable()
        now = Raw3F.decode(self._read_raw())
        self._write_raw(bytes([rACT | m << 1, 0, 0, now.gPR[0], 0, 0]), what=f"mode {mode}",
                        applied=lambda raw: Raw3F.decode(raw).gMOD == m)
        self._wait_mode(m, timeout_s, f"mode change to {mode}")
        self._mode_index = m
        self._spec = _spec_for(mode, self._spec, self._width_maps)

    def _wait_mode(self, m: int, timeout_s: float, what: str) -> None:
        self._wait_raw(lambda raw: (r := Raw3F.decode(raw)).gIMC == 3 and r.gMOD == m,
                       timeout_s, what, FAULTS_3F, lambda raw: raw[2])

    # ------------------------------------------------------------------------- hooks
    def _activate(self, timeout_s: float) -> None:
        m = self._mode_index
        self._write_raw(bytes(6), what="clear",
                        applied=lambda raw: Raw3F.decode(raw).gACT == 0)
        self._write_raw(bytes([rACT | m << 1, 0, 0, 0, 0, 0]), what="activate",
                        applied=lambda raw: Raw3F.decode(raw).gACT == 1)
        self._target = None
        self._wait_mode(m, timeout_s, "activation")

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        spec, m = self._spec, self._mode_index
        pr = spec.width_map.to_counts(width_m)
        sp = spec.speed_map.to_counts(speed_mps)
        fr = spec.force_map.to_counts(force_n)
        now = Raw3F.decode(self._read_raw())
        echo = self._axes()[0]      # the request echo of the axis this mode moves
        if now.gGTO == 1 and now.gPR[echo] == pr:
            self._write_raw(bytes([rACT | m << 1, 0, 0, pr, sp, fr]), what="stop before move",
                            applied=lambda raw: Raw3F.decode(raw).gGTO == 0)
        self._target = pr

        def applied(raw: bytes) -> bool:
            r = Raw3F.decode(raw)
            return r.gGTO == 1 and r.gPR[echo] == pr

        self._write_raw(bytes([rACT | m << 1 | rGTO, 0, 0, pr, sp, fr]),
                        what=f"go to position {pr}", applied=applied)

    def _axes(self) -> tuple[int, ...]:
        # In scissor mode the commanded axis is the scissor; otherwise the three fingers.
        return (3,) if self.mode == "scissor" else (0, 1, 2)

    def _read_status(self) -> GripperStatus:
        raw = self._read_raw()
        r = Raw3F.decode(raw)
        names = ("A", "B", "C", "S")
        fingers = tuple(FingerStatus(names[i], r.gPO[i], r.gPO[i] / 255.0,
                                     r.gGTO == 1 and r.gDT[i] in (1, 2)) for i in range(4))
        axes = self._axes()
        detected = any(fingers[i].contact for i in axes)
        # Width from the mean commanded-axis position through the mode's map.
        mean_pos = sum(r.gPO[i] for i in axes) / len(axes)
        return GripperStatus(
            activated=r.gACT == 1 and r.gIMC == 3,
            moving=r.gGTO == 1 and r.gSTA == 0,
            object_detected=detected,
            width_m=self._spec.width_map.to_si(round(mean_pos)),
            fault_code=r.gFLT,
            fault_message=decode_fault(FAULTS_3F, r.gFLT),
            mode=MODES[r.gMOD],
            fingers=fingers,
            raw=raw,
        )

    def _motion_finished(self, st: GripperStatus) -> bool:
        r = Raw3F.decode(st.raw)
        return r.gGTO == 1 and r.gPR[self._axes()[0]] == self._target and r.gSTA != 0

    def _stop(self) -> None:
        r = Raw3F.decode(self._read_raw())
        self._write_raw(bytes([(rACT if r.gACT else 0) | r.gMOD << 1, 0, 0, r.gPR[0], 0, 0]),
                        what="stop", applied=lambda raw: Raw3F.decode(raw).gGTO == 0)
