"""Barrett BH8 hand in supervisory mode: ASCII commands with echo and the ``=>`` prompt.

A command is a line ending in CR. The hand echoes it, executes it (motions complete before
it answers), prints any result lines and then the prompt ``=> ``; an error prints ``ERR n``
where n is a bit mask. Fingers (motors 1-3, prefix ``G``) run 0 (open) .. 17800 encoder counts.
"""
from __future__ import annotations

import dataclasses
import statistics
import time

from ._base import SerialGripper
from ._errors import GripperFault
from ._specs import BARRETT, BARRETT_FINGER_MAX
from ._types import FingerStatus, GripperSpec, GripperStatus, LinearMap, Range

PROMPT = b"=> "
DEFAULT_BAUDRATE = 9600
CONTACT_TOLERANCE = 150     # counts short of the target that mean "stopped on something"

# ERR n is a bit mask of these.
ERRORS = {
    1: "no motor board found",
    2: "no motor found",
    4: "motor not initialized (send HI first)",
    16: "could not reach position",
    32: "unknown command",
    64: "unknown parameter name",
    128: "invalid value",
    256: "write to a read-only parameter",
    1024: "too many arguments",
    2048: "invalid real-time header",
    4096: "invalid motor prefix",
    8192: "over temperature",
    16384: "aborted by Ctrl-C",
}


def decode_barrett_error(code: int) -> str:
    """Meaning of an ``ERR n`` bit mask, bits joined with '; '."""
    parts = [text for bit, text in ERRORS.items() if code & bit]
    rest = code & ~sum(ERRORS)
    if rest:
        parts.append(f"unknown error bits 0x{rest:X}")
    return "; ".join(parts) or "no error"


class BarrettHand(SerialGripper):
    """Barrett BH8 (262/280) in supervisory mode; ``baudrate`` as set on the hand."""

    model = "barrett"

    def __init__(self, port: str, *, spec: GripperSpec = BARRETT,
                 baudrate: int = DEFAULT_BAUDRATE, timeout_s: float = 0.5, retries: int = 2,
                 reconnect_s: float = 3.0, poll_interval_s: float = 0.01,
                 width_map: LinearMap | None = None, force_map: LinearMap | None = None) -> None:
        """width_map, force_map : calibrated maps (calibration's gripper map) replacing the
        spec's nominal ones, with their ranges."""
        if width_map is not None:
            spec = dataclasses.replace(spec, width_map=width_map,
                                       width=Range(min(width_map.si), max(width_map.si), "m"))
        if force_map is not None:
            spec = dataclasses.replace(spec, force_map=force_map,
                                       force=Range(min(force_map.si), max(force_map.si), "N"))
        self._echo_seen = False
        self._target: int | None = None
        # No keep-alive: the hand has no communication watchdog.
        super().__init__(port, spec, baudrate=baudrate, timeout_s=timeout_s, retries=retries,
                         reconnect_s=reconnect_s, keepalive_s=None,
                         poll_interval_s=poll_interval_s)

    # ------------------------------------------------------------------ the exchange
    def command(self, line: str, *, timeout_s: float | None = None,
                verify_motion: int | None = None) -> str:
        """Send one supervisory command; return its result text (echo and prompt removed).

        verify_motion: the command moves the fingers to that count; if its reply is lost it is
        not re-sent when the echo was seen or the fingers already moved towards the target.
        """
        if "\r" in line or "\n" in line or not line.isascii():
            raise ValueError(f"line must be one ASCII line without CR/LF, got {line!r}")
        echo = line.encode() + b"\r"

        def parse(buf: bytearray) -> tuple[str | None, int, bool]:
            at = buf.find(echo)
            if at < 0:
                return None, 0, False
            self._echo_seen = True
            end = buf.find(PROMPT, at + len(echo))
            if end < 0:
                return None, 0, False
            text = bytes(buf[at + len(echo):end]).decode("ascii", "replace").strip()
            return text, end + len(PROMPT), False

        verify = progress = None
        if verify_motion is not None:
            before = self._positions()
            verify = lambda: self._motion_done_already(before, verify_motion, timeout_s)  # noqa: E731
            progress = self._motion_progress(timeout_s or self._timeout_s)
        self._echo_seen = False
        # A motion is acknowledged by its echo at once but answered only when it ends: wait
        # timeout_s for the echo, then the motion's own time for the prompt.
        text = self._exchange(echo, parse, what=f"command {line!r}", verify=verify,
                              timeout_s=self._timeout_s if verify_motion is not None else timeout_s,
                              progress=progress)
        if text is None:          # verified as executed after a lost reply
            return ""
        if text.startswith("ERR"):
            try:
                code = int(text.split()[1])
            except (IndexError, ValueError):
                code = 0
            raise GripperFault(code, f"{line!r}: {decode_barrett_error(code)}", port=self._port)
        return text

    def _motion_progress(self, motion_s: float):
        """Attempt extension for a motion: after the echo, allow motion_s for the prompt.

        If the prompt is late, one empty line is sent: the hand answers it (with a prompt)
        only after the motion, so a lost prompt cannot leave us waiting for the full motion_s.
        """
        state = {"echo_at": None, "nudged": False}

        def progress() -> float | None:
            if not self._echo_seen:
                state["echo_at"] = None
                return None
            now = time.monotonic()
            if state["echo_at"] is None:
                state["echo_at"] = now
            if not state["nudged"] and now - state["echo_at"] > self._timeout_s:
                state["nudged"] = True
                self._serial.write(b"\r")
            return state["echo_at"] + motion_s

        return progress

    def _motion_done_already(self, before: list[int], target: int,
                             timeout_s: float | None) -> bool:
        """After a lost reply: did the motion command reach the hand? (then do not re-send)"""
        echoed = self._echo_seen
        # An empty line answers with a prompt once the hand is idle, i.e. after the motion.
        self.command("", timeout_s=timeout_s)
        if echoed:
            return True
        after = self._positions()
        for b, a in zip(before, after):
            toward = (target - b) * (a - b) > 0 and abs(a - b) > CONTACT_TOLERANCE // 3
            if toward or abs(a - target) <= CONTACT_TOLERANCE // 3 and abs(b - target) > 0:
                return True
        return False

    def _positions(self) -> list[int]:
        """Finger 1-3 positions in encoder counts (FGET P answers all four motors)."""
        text = self.command("FGET P")
        try:
            values = [int(v) for v in text.split()]
        except ValueError as exc:
            raise GripperFault(0, f"unreadable FGET P answer {text!r}", port=self._port) from exc
        if len(values) != 4:
            raise GripperFault(0, f"FGET P answered {len(values)} values, expected 4",
                               port=self._port)
        return values[:3]

    # ------------------------------------------------------------------------- hooks
    def _activate(self, timeout_s: float) -> None:
        self.command("HI", timeout_s=timeout_s)
        self._target = 0

    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        spec = self._spec
        counts = spec.width_map.to_counts(width_m)
        # Position limits of the fingers, checked again in counts after a calibrated map.
        Range(0, BARRETT_FINGER_MAX, "counts").check("finger target", counts)
        velocity = spec.speed_map.to_counts(speed_mps)
        torque = spec.force_map.to_counts(force_n)
        self.command(f"GFSET MCV {velocity}")
        self.command(f"GFSET MOV {velocity}")
        self.command(f"GFSET MT {torque}")
        self._target = counts
        if counts == 0:
            line = "GO"
        elif counts >= BARRETT_FINGER_MAX:
            line = "GC"
        else:
            line = f"GM {counts}"
        self.command(line, timeout_s=timeout_s, verify_motion=counts)

    def _read_status(self) -> GripperStatus:
        pos = self._positions()
        target = self._target
        contact = [target is not None and target - p > CONTACT_TOLERANCE for p in pos]
        mean = statistics.fmean(pos)
        return GripperStatus(
            activated=target is not None,
            moving=False,           # supervisory motions finish before the hand answers
            object_detected=any(contact),
            width_m=self._spec.width_map.to_si(round(mean)),
            fingers=tuple(FingerStatus(str(i + 1), p, p / BARRETT_FINGER_MAX, c)
                          for i, (p, c) in enumerate(zip(pos, contact))),
            raw=" ".join(map(str, pos)).encode(),
        )

    def _stop(self) -> None:
        # Ctrl-C aborts a running supervisory command (its caller then gets ERR 16384);
        # written without the lock on purpose, since the lock is held by that command.
        self._serial.write(b"\x03")
