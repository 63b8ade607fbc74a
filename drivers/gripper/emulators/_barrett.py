"""Barrett BH8 emulator: supervisory-mode ASCII with echo, ``=>`` prompt and ``ERR n``.

The subset spoken: HI, GO, GC, GM n, SO, SC, SM n, [G|S]FSET prop value, [G|S]FGET prop,
FGET P, T, an empty line, and Ctrl-C (abort a running motion). A motion's answer (result and
prompt) comes when the motion ends, as in supervisory mode.
"""
from __future__ import annotations

import random
from typing import Any

from .._specs import BARRETT, BARRETT_FINGER_MAX, BARRETT_SPREAD_MAX
from ._faults import FaultPlan, garbage_bytes
from ._physics import MOVING, Axis
from ._pty import VirtualPort

NOT_INITIALIZED, UNKNOWN_COMMAND, UNKNOWN_PARAMETER, INVALID_VALUE, ABORTED = 4, 32, 64, 128, 16384
PROPS = {"MCV": (1, 255), "MOV": (1, 255), "MT": (0, 3000), "P": None}
ACTIONS = ("HI", "GO", "GC", "GM", "SO", "SC", "SM")


class BarrettDevice:
    """Four motors (fingers 1-3, spread 4) with supervisory semantics."""

    def __init__(self, *, object_width_m: float | None = None, init_s: float = 0.3) -> None:
        self.object_width_m = object_width_m
        self.init_s = init_s
        self.axes = [Axis(limit=BARRETT_FINGER_MAX) for _ in range(3)]
        self.axes.append(Axis(limit=BARRETT_SPREAD_MAX))
        self.props = [{"MCV": 50, "MOV": 50, "MT": 1000} for _ in range(4)]
        self.initialized = False
        self.fault = 0                      # injected: the next command answers ERR fault
        self.executed: list[str] = []       # every command line executed, in order

    def set_fault(self, code: int) -> None:
        """The next command answers ``ERR code``."""
        self.fault = code

    def busy(self) -> bool:
        """A motion is running."""
        return any(a.state == MOVING for a in self.axes)

    def step(self, dt: float) -> None:
        for a in self.axes:
            a.step(dt)

    def abort(self) -> None:
        for a in self.axes:
            a.hold()

    def _motors(self, prefix: str) -> list[int]:
        return {"G": [0, 1, 2], "S": [3], "": [0, 1, 2, 3]}[prefix]

    def _contact(self) -> float | None:
        if self.object_width_m is None:
            return None
        return float(BARRETT.width_map.to_counts(self.object_width_m))

    def _move(self, motors: list[int], target: float) -> None:
        for m in motors:
            a = self.axes[m]
            closing = target > a.position
            speed = self.props[m]["MCV" if closing else "MOV"] * 100.0   # counts per 10 ms
            a.contact = self._contact() if m < 3 else None
            a.command(target, speed)

    def execute(self, line: str) -> str | int:
        """Run one command line; return its result text or an ERR code."""
        if self.fault:
            code, self.fault = self.fault, 0
            return code
        words = line.upper().split()
        if not words:
            return ""
        self.executed.append(line)
        head, args = words[0], words[1:]
        if head in ("GO", "GC", "GM", "SO", "SC", "SM"):
            prefix, head = head[0], head[1:]
        elif head[:1] in ("G", "S") and head[1:] in ("FSET", "FGET"):
            prefix, head = head[0], head[1:]
        else:
            prefix = ""
        motors = self._motors(prefix)
        if head == "HI":
            for a in self.axes:
                a.command(0.0, 50000.0 * 0.3 / max(self.init_s, 1e-3))
            self.initialized = True
            return ""
        if head == "T":
            return ""
        if head in ("O", "C", "M"):
            if not self.initialized:
                return NOT_INITIALIZED
            limit = BARRETT_FINGER_MAX if prefix != "S" else BARRETT_SPREAD_MAX
            if head == "M":
                if len(args) != 1 or not args[0].lstrip("-").isdigit():
                    return INVALID_VALUE
                target = int(args[0])
                if not 0 <= target <= limit:
                    return INVALID_VALUE
            else:
                target = 0 if head == "O" else limit
            self._move(motors, target)
            return ""
        if head == "FSET":
            if len(args) != 2 or args[0] not in PROPS or PROPS[args[0]] is None:
                return UNKNOWN_PARAMETER
            lo, hi = PROPS[args[0]]
            if not args[1].isdigit() or not lo <= int(args[1]) <= hi:
                return INVALID_VALUE
            for m in motors:
                self.props[m][args[0]] = int(args[1])
            return ""
        if head == "FGET":
            if len(args) != 1 or args[0] not in PROPS:
                return UNKNOWN_PARAMETER
            if args[0] == "P":
                return " ".join(str(int(round(self.axes[m].position))) for m in motors)
            return " ".join(str(self.props[m][args[0]]) for m in motors)
        return UNKNOWN_COMMAND


class BarrettEmulator:
    """The hand on the driver's pty: line input, echo, deferred answers, faults."""

    def __init__(self, port: VirtualPort, *, seed: int = 0, **device_options: Any) -> None:
        self.port = port
        self.device = BarrettDevice(**device_options)
        self.faults = FaultPlan()
        self.lines: list[str] = []          # every line received
        self._rng = random.Random(seed)
        self._rx = bytearray()
        self._queue: list[str] = []
        self._answer: tuple[bytes, str | None] | None = None   # held until the motion ends

    async def start(self) -> None:
        self.attach()

    async def stop(self) -> None:
        self.detach()

    def attach(self) -> None:
        """(Re)attach to the driver's pty (after start or restore)."""
        self.port.watch(self._on_driver)
        self._rx.clear()

    def detach(self) -> None:
        """Stop reading the driver's pty (before it vanishes)."""
        self.port.unwatch()

    def _on_driver(self) -> None:
        data = self.port.read()
        if b"\x03" in data:
            data = data.replace(b"\x03", b"")
            if self._answer is not None:
                self.device.abort()
                self._answer = (f"ERR {ABORTED}\r\n".encode(), self._answer[1])
        self._rx += data
        while b"\r" in self._rx:
            line, _, rest = bytes(self._rx).partition(b"\r")
            self._rx[:] = rest
            self._queue.append(line.decode("ascii", "replace"))
        self._run_queue()

    def _run_queue(self) -> None:
        # The hand reads the next line only after answering the previous one.
        while self._queue and self._answer is None:
            line = self._queue.pop(0)
            self.lines.append(line)
            # "write" faults aim at actions (motions), the commands a retry must not repeat.
            is_write = bool(line.strip()) and line.upper().split()[0] in ACTIONS
            fault = self.faults.take(is_write)
            if fault == "drop_request":
                continue
            echo = line.encode() + b"\r\n"
            result = self.device.execute(line)
            if isinstance(result, int):
                text = f"ERR {result}\r\n".encode()
            else:
                text = (result + "\r\n").encode() if result else b""
            if fault == "garbage":
                echo = garbage_bytes(self._rng) + echo
            if fault == "garbage_only":
                self.port.write(garbage_bytes(self._rng, 12))
                echo = b""
            self.port.write(echo)
            self._answer = (text, fault)
            self._finish_if_idle()

    def _finish_if_idle(self) -> None:
        if self._answer is None or self.device.busy():
            return
        text, fault = self._answer
        self._answer = None
        if fault == "corrupt":
            self.port.write(text.replace(b"0", b"#") + b"=) ")
        elif fault not in ("drop_reply", "garbage_only"):
            self.port.write(text + b"=> ")

    def step(self, dt: float) -> None:
        self.device.step(dt)
        self._finish_if_idle()
        self._run_queue()

    def stats(self) -> dict[str, Any]:
        d = self.device
        return {"executed": list(d.executed), "lines": list(self.lines),
                "positions": [int(round(a.position)) for a in d.axes],
                "props": [dict(p) for p in d.props], "initialized": d.initialized}
