"""What the Robotiq 2-Finger and 3-Finger drivers share: the Modbus RTU register I/O.

Both grippers are Modbus RTU slaves (115200 8N1, slave 9 by default) with request registers
from 0x03E8 (written with function 0x10) and status registers from 0x07D0 (read with 0x03).
Registers carry the device's byte layout, byte 0 in the high half of the first register.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from . import modbus
from ._base import SerialGripper
from ._errors import GripperFault, GripperProtocolError, GripperTimeout
from ._types import GripperSpec

REQUEST_ADDRESS = 0x03E8
STATUS_ADDRESS = 0x07D0
DEFAULT_SLAVE = 9
DEFAULT_BAUDRATE = 115200

# Action request bits (byte 0 of the request registers).
rACT = 0x01
rGTO = 0x08
rATR = 0x10

# gFLT of the 2-Finger grippers (low nibble of the fault byte).
FAULTS_2F = {
    0x05: "action delayed: the (re)activation must complete first",
    0x07: "the activation bit must be set before an action",
    0x08: "maximum operating temperature exceeded; let the gripper cool down",
    0x09: "no communication during at least 1 second; re-activate",
    0x0A: "under minimum operating voltage",
    0x0B: "automatic release in progress",
    0x0C: "internal fault; contact Robotiq support",
    0x0D: "activation fault; check for interference",
    0x0E: "overcurrent triggered",
    0x0F: "automatic release completed",
}

# gFLT of the 3-Finger gripper.
FAULTS_3F = {
    0x05: "action delayed: the activation must complete first",
    0x06: "action delayed: the mode change must complete first",
    0x07: "the activation bit must be set before an action",
    0x09: "the communication chip is not ready, or no communication during 1 second",
    0x0A: "mode change fault: interference on the scissor axis (< 20 s)",
    0x0B: "automatic release in progress",
    0x0D: "activation fault; check for interference",
    0x0E: "mode change fault: interference on the scissor axis (> 20 s)",
    0x0F: "automatic release completed",
}


def decode_fault(table: dict[int, str], code: int) -> str:
    """Meaning of a gFLT code ('' for 0)."""
    if code == 0:
        return ""
    return table.get(code, f"unknown fault code 0x{code:02X}")


class RobotiqGripper(SerialGripper):
    """Register I/O of a Robotiq gripper over Modbus RTU; models add the byte meanings."""

    _status_registers = 3

    def __init__(self, port: str, spec: GripperSpec, *, slave: int = DEFAULT_SLAVE,
                 baudrate: int = DEFAULT_BAUDRATE, timeout_s: float = 0.2, retries: int = 2,
                 reconnect_s: float = 3.0, keepalive_s: float | None = 0.25,
                 poll_interval_s: float = 0.01) -> None:
        if int(slave) != slave or not 1 <= slave <= 247:
            raise ValueError(f"slave must be an integer within [1, 247], got {slave!r}")
        self._slave = int(slave)
        # The keep-alive poll is what keeps the device's 1-second communication watchdog
        # (fault 0x09) quiet while the cell is idle; 0.25 s leaves margin for a busy PC.
        super().__init__(port, spec, baudrate=baudrate, timeout_s=timeout_s, retries=retries,
                         reconnect_s=reconnect_s, keepalive_s=keepalive_s,
                         poll_interval_s=poll_interval_s)

    def _modbus(self, request: bytes, *, what: str,
                verify: Callable[[], bool] | None = None) -> bytes | None:
        """One Modbus transaction with retries; Modbus exception replies raise."""

        def parse(buf: bytearray) -> tuple[bytes | None, int, bool]:
            s = modbus.scan_reply(buf, request)
            return s.frame, s.end, s.corrupt

        frame = self._exchange(request, parse, what=what, verify=verify)
        if frame is not None and (code := modbus.exception_code(frame)) is not None:
            meaning = modbus.EXCEPTION_MEANINGS.get(code, "unknown")
            raise GripperProtocolError(
                f"device answered {what} with Modbus exception 0x{code:02X} ({meaning})",
                port=self._port)
        return frame

    def _read_raw(self) -> bytes:
        """The status registers as the device's bytes (byte 0 = gripper status)."""
        req = modbus.read_request(self._slave, STATUS_ADDRESS, self._status_registers)
        frame = self._modbus(req, what="status read")
        assert frame is not None
        return modbus.unpack_registers(modbus.registers_of(frame))

    def _write_raw(self, data: bytes, *, what: str, applied: Callable[[bytes], bool]) -> None:
        """Write the request registers; if a reply is lost, read the status before re-sending.

        applied(status bytes) tells whether the write is visible in the status (echo bits and
        the position request echo), i.e. already executed; then it is not sent again.
        """
        req = modbus.write_request(self._slave, REQUEST_ADDRESS, modbus.pack_bytes(data))
        self._modbus(req, what=what, verify=lambda: applied(self._read_raw()))

    def _wait_raw(self, done: Callable[[bytes], bool], timeout_s: float, what: str,
                  faults: dict[int, str], fault_of: Callable[[bytes], int]) -> bytes:
        """Poll the status until done(raw), a fault, or timeout_s."""
        deadline = time.monotonic() + timeout_s
        while True:
            raw = self._read_raw()
            code = fault_of(raw)
            if code:
                raise GripperFault(code, decode_fault(faults, code), port=self._port)
            if done(raw):
                return raw
            if time.monotonic() >= deadline:
                raise GripperTimeout(f"{what} not completed within {timeout_s:g} s",
                                     port=self._port)
            time.sleep(self._poll_interval_s)
