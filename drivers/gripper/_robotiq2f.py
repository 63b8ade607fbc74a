"""Robotiq 2F-85 and 2F-140 adaptive grippers over Modbus RTU.

Request bytes: 0 action (rACT bit 0, rGTO bit 3, rATR bit 4), 1-2 reserved, 3 rPR position,
4 rSP speed, 5 rFR force. Status bytes: 0 gripper status (gACT bit 0, gGTO bit 3, gSTA bits
4-5, gOBJ bits 6-7), 1 reserved, 2 fault (gFLT low nibble, kFLT high nibble), 3 gPR position
request echo, 4 gPO position, 5 gCU current.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._robotiq import FAULTS_2F, RobotiqGripper, decode_fault, rACT, rGTO
from ._specs import ROBOTIQ_2F85, ROBOTIQ_2F140
from ._types import FingerStatus, GripperSpec, GripperStatus

_SPECS = {"robotiq2f85": ROBOTIQ_2F85, "robotiq2f140": ROBOTIQ_2F140}


@dataclass(frozen=True)
class Raw2F:
    """The 2-Finger status bytes, field by field (device units)."""

    gACT: int
    gGTO: int
    gSTA: int
    gOBJ: int
    gFLT: int
    kFLT: int
    gPR: int
    gPO: int
    gCU: int

    @classmethod
    def decode(cls, raw: bytes) -> "Raw2F":
        """Decode the six status bytes."""
        s = raw[0]
        return cls(gACT=s & 1, gGTO=(s >> 3) & 1, gSTA=(s >> 4) & 3, gOBJ=(s >> 6) & 3,
                   gFLT=raw[2] & 0x0F, kFLT=raw[2] >> 4, gPR=raw[3], gPO=raw[4], gCU=raw[5])


class Robotiq2F(RobotiqGripper):
    """Robotiq 2F-85 / 2F-140; ``model`` picks the ranges, ``spec`` may carry a calibration."""

    def __init__(self, port: str, model: str = "robotiq2f85", *, spec: GripperSpec | None = None,
                 **options: object) -> None:
        if model not in _SPECS:
            raise ValueError(f"model must be one of {sorted(_SPECS)}, got {model!r}")
        self.model = model
        self._target: int | None = None
        super().__init__(port, spec or _SPECS[model], **options)  # type: ignore[arg-type]

    # ------------------------------------------------------------------------- hooks
    def _activate(self, timeout_s: float) -> None:
        # The manual's sequence: clear rACT (also clears a latched fault), set it, poll gSTA.
        self._write_raw(bytes(6), what="clear",
                        applied=lambda raw: Raw2F.decode(raw).gACT == 0)
        self._write_raw(bytes([rACT, 0, 0, 0, 0, 0]), what="activate",
                        applied=lambda raw: Raw2F.decode(raw).gACT == 1)
        self._target = None
        self._wait_raw(lambda raw: Raw2F.decode(raw).gSTA == 3, timeout_s, "activation",
                       FAULTS_2F, lambda raw: raw[2] & 0x0F)

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        spec = self._spec
        pr = spec.width_map.to_counts(width_m)
        sp = spec.speed_map.to_counts(speed_mps)
        fr = spec.force_map.to_counts(force_n)
        now = Raw2F.decode(self._read_raw())
        if now.gGTO == 1 and now.gPR == pr:
            # The status would already look like "applied" to the retry check below; drop rGTO
            # first so the go command's echo is unambiguous.
            self._write_raw(bytes([rACT, 0, 0, pr, sp, fr]), what="stop before move",
                            applied=lambda raw: Raw2F.decode(raw).gGTO == 0)
        self._target = pr

        def applied(raw: bytes) -> bool:
            r = Raw2F.decode(raw)
            return r.gGTO == 1 and r.gPR == pr

        self._write_raw(bytes([rACT | rGTO, 0, 0, pr, sp, fr]), what=f"go to position {pr}",
                        applied=applied)

    def _read_status(self) -> GripperStatus:
        raw = self._read_raw()
        r = Raw2F.decode(raw)
        detected = r.gGTO == 1 and r.gOBJ in (1, 2)
        return GripperStatus(
            activated=r.gACT == 1 and r.gSTA == 3,
            moving=r.gGTO == 1 and r.gOBJ == 0,
            object_detected=detected,
            width_m=self._spec.width_map.to_si(r.gPO),
            fault_code=r.gFLT,
            fault_message=decode_fault(FAULTS_2F, r.gFLT),
            fingers=(FingerStatus("jaws", r.gPO, r.gPO / 255.0, detected),),
            raw=raw,
        )

    def _motion_finished(self, st: GripperStatus) -> bool:
        r = Raw2F.decode(st.raw)
        # gPR echoing our target is the manual's sign that the status reflects our command.
        return r.gGTO == 1 and r.gPR == self._target and r.gOBJ != 0

    def _stop(self) -> None:
        r = Raw2F.decode(self._read_raw())
        self._write_raw(bytes([rACT if r.gACT else 0, 0, 0, r.gPR, 0, 0]), what="stop",
                        applied=lambda raw: Raw2F.decode(raw).gGTO == 0)
