"""Robotiq 2-Finger and 3-Finger emulators: the register map behind a pymodbus RTU server.

pymodbus serves the registers on its own pty; a relay copies bytes between that pty and the
driver's pty, frame by frame, which is where faults are injected and requests are logged.
"""
from __future__ import annotations

import asyncio
import os
import random
import time
import tty
from collections import deque
from typing import Any

from .. import modbus
from .._robotiq import REQUEST_ADDRESS, STATUS_ADDRESS
from .._specs import ROBOTIQ_2F85, ROBOTIQ_2F140, ROBOTIQ_3F, robotiq3f_width_map
from .._types import GripperSpec, LinearMap
from ._faults import FaultPlan, garbage_bytes
from ._physics import AT_TARGET, MOVING, Axis
from ._pty import VirtualPort

WATCHDOG_S = 1.0   # the device's communication watchdog (fault 0x09)


class RobotiqDevice:
    """Register-level model of a Robotiq gripper; subclasses give the byte meanings."""

    n_request = 6
    n_status = 6

    def __init__(self, spec: GripperSpec, *, object_width_m: float | None = None,
                 activation_s: float = 0.3, watchdog: bool = True) -> None:
        self.spec = spec
        self.object_width_m = object_width_m
        self.activation_s = activation_s
        self.watchdog = watchdog
        self.request = bytearray(16)
        self.writes: list[bytes] = []      # every request-register write applied, in order
        self.reads = 0
        self.fault = 0
        self.gACT = 0
        self.activation_left = 0.0
        self.last_request = time.monotonic()

    # called by the pymodbus context --------------------------------------------------
    def touch(self) -> None:
        """Any valid request for us resets the communication watchdog."""
        self.last_request = time.monotonic()

    def write_request(self, data: bytes) -> None:
        """Apply a write of the request registers (device byte layout)."""
        self.touch()
        self.writes.append(bytes(data))
        self.request[:len(data)] = data
        self.apply(bytes(self.request[:self.n_request]))

    def status_bytes(self) -> bytes:
        """The status registers' bytes now."""
        self.reads += 1
        self.touch()
        return self.status()

    # model ------------------------------------------------------------------------
    def apply(self, req: bytes) -> None:
        raise NotImplementedError

    def status(self) -> bytes:
        raise NotImplementedError

    def step(self, dt: float) -> None:
        """Advance time: activation, motion, the watchdog."""
        if self.watchdog and self.activated and not self.fault and \
                time.monotonic() - self.last_request > WATCHDOG_S:
            self.set_fault(0x09)

    @property
    def activated(self) -> bool:
        return bool(self.gACT) and self.activation_left <= 0

    def set_fault(self, code: int) -> None:
        """Raise a device fault (motion stops); cleared by resetting rACT."""
        self.fault = code
        for a in self.axes():
            a.hold()

    def axes(self) -> list[Axis]:
        raise NotImplementedError

    def counts_per_s(self, sp: int, width_map: LinearMap) -> float:
        """Speed count -> counts per second through the spec's maps."""
        mps = self.spec.speed_map.to_si(sp)
        w0, w1 = width_map.to_si(0), width_map.to_si(255)
        return mps * 255.0 / abs(w0 - w1)

    def contact_counts(self, width_map: LinearMap) -> float | None:
        if self.object_width_m is None:
            return None
        return float(width_map.to_counts(self.object_width_m))


class Robotiq2FDevice(RobotiqDevice):
    """The 2F-85 / 2F-140 register map (see drivers.gripper._robotiq2f)."""

    def __init__(self, spec: GripperSpec, **kw: Any) -> None:
        super().__init__(spec, **kw)
        self.axis = Axis()
        self.gGTO = 0
        self.gPR = 0
        self.go_commands = 0   # motions started by a write (rGTO rising or a new target)

    def axes(self) -> list[Axis]:
        return [self.axis]

    def apply(self, req: bytes) -> None:
        act, gto = req[0] & 1, (req[0] >> 3) & 1
        if not act:
            if gto:
                self.fault = 0x07
            else:
                # Reset: clears faults, stops, forgets activation.
                self.gACT, self.gGTO, self.fault, self.activation_left = 0, 0, 0, 0.0
                self.axis.hold()
            return
        if not self.gACT:
            self.gACT, self.fault = 1, 0
            self.activation_left = self.activation_s
        if self.fault:
            return
        if not gto:
            self.gGTO = 0
            self.axis.hold()
            return
        if not self.activated:
            self.fault = 0x05
            return
        pr, sp = req[3], req[4]
        if not self.gGTO or pr != self.gPR:
            self.go_commands += 1
        self.gGTO, self.gPR = 1, pr
        self.axis.contact = self.contact_counts(self.spec.width_map)
        self.axis.command(pr, self.counts_per_s(sp, self.spec.width_map))

    def step(self, dt: float) -> None:
        super().step(dt)
        if self.activation_left > 0:
            self.activation_left -= dt
            if self.activation_left <= 0:
                # Activation ends with the fingers open, as the real one does.
                self.axis = Axis(position=0.0, target=0.0)
        self.axis.step(dt)

    def status(self) -> bytes:
        sta = 0 if not self.gACT else (3 if self.activated else 1)
        s = self.gACT | self.gGTO << 3 | sta << 4 | self.axis.state << 6
        pos = int(round(self.axis.position))
        cur = 0x10 if self.axis.state == MOVING else (0x08 if self.axis.state != AT_TARGET else 0)
        return bytes([s, 0, self.fault, self.gPR, pos, cur])


class Robotiq3FDevice(RobotiqDevice):
    """The 3-Finger register map: modes, per-finger detection (see _robotiq3f)."""

    n_request = 15
    n_status = 16
    MODES = ("basic", "pinch", "wide", "scissor")

    def __init__(self, spec: GripperSpec, *, mode_change_s: float = 0.3,
                 missing_fingers: str = "", **kw: Any) -> None:
        super().__init__(spec, **kw)
        self.mode_change_s = mode_change_s
        self.missing = set(missing_fingers.upper())
        self.fingers = [Axis() for _ in range(4)]      # A, B, C, scissor
        self.gMOD = 0
        self.gGTO = 0
        self.mode_left = 0.0
        self.pr = 0
        self.go_commands = 0

    def axes(self) -> list[Axis]:
        return self.fingers

    def _moving_axes(self) -> list[int]:
        return [3] if self.gMOD == 3 else [0, 1, 2]

    def apply(self, req: bytes) -> None:
        act, mod, gto = req[0] & 1, (req[0] >> 1) & 3, (req[0] >> 3) & 1
        if not act:
            if gto:
                self.fault = 0x07
            else:
                self.gACT, self.gGTO, self.fault = 0, 0, 0
                self.activation_left = self.mode_left = 0.0
                for a in self.fingers:
                    a.hold()
            return
        if not self.gACT:
            self.gACT, self.fault, self.gMOD = 1, 0, mod
            self.activation_left = self.activation_s
        if self.fault:
            return
        if mod != self.gMOD:
            # Mode change: gMOD echoes the request at once, gIMC shows 2 until it is done.
            self.gMOD, self.mode_left, self.gGTO = mod, self.mode_change_s, 0
            for a in self.fingers:
                a.hold()
            return
        if not gto:
            self.gGTO = 0
            for a in self.fingers:
                a.hold()
            return
        if not self.activated:
            self.fault = 0x05
            return
        if self.mode_left > 0:
            self.fault = 0x06
            return
        pr, sp = req[3], req[4]
        if not self.gGTO or pr != self.pr:
            self.go_commands += 1
        self.gGTO, self.pr = 1, pr
        wmap = robotiq3f_width_map(self.MODES[self.gMOD])
        contact = self.contact_counts(wmap)
        speed = self.counts_per_s(sp, wmap)
        for i in self._moving_axes():
            a = self.fingers[i]
            a.contact = None if "ABCS"[i] in self.missing else contact
            a.command(pr, speed)

    def step(self, dt: float) -> None:
        super().step(dt)
        if self.activation_left > 0:
            self.activation_left -= dt
            if self.activation_left <= 0:
                self.fingers = [Axis() for _ in range(4)]
        if self.mode_left > 0:
            self.mode_left -= dt
        for a in self.fingers:
            a.step(dt)

    def status(self) -> bytes:
        if not self.gACT:
            imc = 0
        elif self.activation_left > 0:
            imc = 1
        elif self.mode_left > 0:
            imc = 2
        else:
            imc = 3
        axes = [self.fingers[i] for i in self._moving_axes()]
        states = [a.state for a in axes]
        if any(s == MOVING for s in states):
            sta = 0
        elif all(s == AT_TARGET for s in states):
            sta = 3
        elif all(s != AT_TARGET for s in states):
            sta = 2
        else:
            sta = 1
        s = self.gACT | self.gMOD << 1 | self.gGTO << 3 | imc << 4 | sta << 6
        obj = 0
        for i, a in enumerate(self.fingers):
            obj |= a.state << (2 * i)
        out = bytearray([s, obj, self.fault])
        for i, a in enumerate(self.fingers):
            moving_axis = i in self._moving_axes()
            out += bytes([self.pr if moving_axis else 0, int(round(a.position)),
                          0x10 if a.state == MOVING else 0])
        out.append(0)
        return bytes(out)


def make_device(model: str, **options: Any) -> RobotiqDevice:
    """The emulated device for a Robotiq model name."""
    if model == "robotiq3f":
        return Robotiq3FDevice(ROBOTIQ_3F, **options)
    spec = {"robotiq2f85": ROBOTIQ_2F85, "robotiq2f140": ROBOTIQ_2F140}[model]
    return Robotiq2FDevice(spec, **options)


def _context(device: RobotiqDevice) -> Any:
    """A pymodbus slave context whose registers are the device's request/status bytes."""
    from pymodbus.datastore import ModbusBaseSlaveContext

    n_req = (device.n_request + 1) // 2
    n_st = device.n_status // 2

    class RobotiqContext(ModbusBaseSlaveContext):
        # pymodbus asks validate() first and answers "illegal data address" on False.
        def reset(self) -> None:
            pass

        def validate(self, fc_as_hex: int, address: int, count: int = 1) -> bool:
            if fc_as_hex in (3, 4) and STATUS_ADDRESS <= address and \
                    address + count <= STATUS_ADDRESS + n_st:
                return True
            if fc_as_hex in (3, 4, 16) and REQUEST_ADDRESS <= address and \
                    address + count <= REQUEST_ADDRESS + n_req:
                return True
            return False

        def getValues(self, fc_as_hex: int, address: int, count: int = 1) -> list[int]:
            if address >= STATUS_ADDRESS:
                regs = modbus.pack_bytes(device.status_bytes())
                return regs[address - STATUS_ADDRESS:address - STATUS_ADDRESS + count]
            device.touch()
            regs = modbus.pack_bytes(bytes(device.request[:2 * n_req]))
            return regs[address - REQUEST_ADDRESS:address - REQUEST_ADDRESS + count]

        def setValues(self, fc_as_hex: int, address: int, values: list[int]) -> None:
            data = bytearray(device.request[:2 * n_req])
            off = 2 * (address - REQUEST_ADDRESS)
            data[off:off + 2 * len(values)] = modbus.unpack_registers(values)
            device.write_request(bytes(data))

    return RobotiqContext()


class RobotiqEmulator:
    """A Robotiq device served by pymodbus, relayed to the driver's pty with faults."""

    def __init__(self, model: str, port: VirtualPort, *, slave: int = 9, seed: int = 0,
                 **device_options: Any) -> None:
        self.model = model
        self.port = port
        self.slave = slave
        self.device = make_device(model, **device_options)
        self.faults = FaultPlan()
        self.requests: list[bytes] = []     # every frame the driver sent, as received
        self._rng = random.Random(seed)
        self._from_driver = bytearray()
        self._from_device = bytearray()
        self._pending: deque[str | None] = deque()
        self._server: Any = None
        self._inner: tuple[int, int] | None = None

    async def start(self) -> None:
        """Start the pymodbus server on an inner pty and the relay."""
        from pymodbus import FramerType
        from pymodbus.datastore import ModbusServerContext
        from pymodbus.server import ModbusSerialServer

        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._inner = (master, slave)
        context = ModbusServerContext(slaves={self.slave: _context(self.device)}, single=False)
        self._server = ModbusSerialServer(context, framer=FramerType.RTU,
                                          port=os.ttyname(slave), baudrate=115200,
                                          ignore_missing_slaves=True)
        await self._server.serve_forever(background=True)
        loop = asyncio.get_running_loop()
        loop.add_reader(master, self._on_device)
        self.attach()

    def attach(self) -> None:
        """(Re)attach the relay to the driver's pty (after start or restore)."""
        self.port.watch(self._on_driver)
        self._from_driver.clear()

    def detach(self) -> None:
        """Stop reading the driver's pty (before it vanishes)."""
        self.port.unwatch()

    async def stop(self) -> None:
        """Shut the server down."""
        if self._server is not None:
            await self._server.shutdown()
        if self._inner:
            asyncio.get_running_loop().remove_reader(self._inner[0])
            for fd in self._inner:
                os.close(fd)
            self._inner = None

    def step(self, dt: float) -> None:
        """Advance the device model."""
        self.device.step(dt)

    # relay --------------------------------------------------------------------------
    def _on_driver(self) -> None:
        self._from_driver += self.port.read()
        buf = self._from_driver
        while buf:
            n = modbus.request_length(buf)
            if n is None:
                if len(buf) >= 2:       # not a request we know: pass it on unchanged
                    self._to_device(bytes(buf), None)
                    buf.clear()
                return
            if len(buf) < n:
                return
            frame = bytes(buf[:n])
            del buf[:n]
            self.requests.append(frame)
            ours = frame[0] == self.slave and modbus.crc_ok(frame)
            fault = self.faults.take(frame[1] == modbus.WRITE_MULTIPLE) if ours else None
            if fault == "drop_request":
                continue
            self._to_device(frame, fault if ours else "none")

    def _to_device(self, data: bytes, fault: str | None) -> None:
        if fault != "none":
            # A frame for another slave gets no reply, so nothing is queued for it.
            self._pending.append(fault)
        assert self._inner is not None
        os.write(self._inner[0], data)

    def _on_device(self) -> None:
        assert self._inner is not None
        try:
            self._from_device += os.read(self._inner[0], 4096)
        except (BlockingIOError, OSError):
            return
        buf = self._from_device
        while buf:
            n = modbus.reply_length(buf)
            if n is None or len(buf) < n:
                return
            frame = bytes(buf[:n])
            del buf[:n]
            fault = self._pending.popleft() if self._pending else None
            if fault == "drop_reply":
                continue
            if fault == "corrupt":
                frame = frame[:-1] + bytes([frame[-1] ^ 0xFF])
            elif fault == "garbage_only":
                frame = garbage_bytes(self._rng, len(frame))
            elif fault == "garbage":
                frame = garbage_bytes(self._rng) + frame
            self.port.write(frame)

    def stats(self) -> dict[str, Any]:
        """Counters and logs for tests and the CLI."""
        d = self.device
        return {"writes": list(d.writes), "reads": d.reads, "requests": list(self.requests),
                "go_commands": getattr(d, "go_commands", 0), "fault": d.fault,
                "status": d.status()}
