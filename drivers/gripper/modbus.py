"""Modbus RTU frames written by hand: CRC-16, the requests the grippers use, reply scanning.

We write the frames ourselves rather than drive pymodbus's client so that the driver owns every
byte on the wire: retries must not re-send a write blindly (see ``_base.SerialGripper``), and
pymodbus's client retries on its own. pymodbus is the peer in the emulator and in the tests.

A public module (``drivers.gripper.modbus``) so that a driver for another Modbus RTU device can
build on the same frames: bytes in, bytes out, no port and no pymodbus.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "EXCEPTION_MEANINGS",
    "READ_HOLDING",
    "READ_INPUT",
    "WRITE_MULTIPLE",
    "WRITE_SINGLE",
    "Scan",
    "crc16",
    "crc_ok",
    "exception_code",
    "expected_reply_length",
    "pack_bytes",
    "read_request",
    "registers_of",
    "reply_length",
    "request_length",
    "scan_reply",
    "unpack_registers",
    "with_crc",
    "write_request",
]

READ_HOLDING = 0x03
READ_INPUT = 0x04
WRITE_SINGLE = 0x06
WRITE_MULTIPLE = 0x10

EXCEPTION_MEANINGS = {
    0x01: "illegal function",
    0x02: "illegal data address",
    0x03: "illegal data value",
    0x04: "server device failure",
    0x05: "acknowledge",
    0x06: "server device busy",
}


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            # Reflected polynomial 0xA001 = 0x8005 bit-reversed (CRC-16/MODBUS).
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc16(data: bytes) -> int:
    """CRC-16/MODBUS of data (initial 0xFFFF); sent on the wire low byte first."""
    crc = 0xFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc


def with_crc(body: bytes) -> bytes:
    """body followed by its CRC, low byte first."""
    return bytes(body) + struct.pack("<H", crc16(body))


def crc_ok(frame: bytes) -> bool:
    """True when the last two bytes of frame are the CRC of the rest."""
    return len(frame) >= 4 and crc16(frame[:-2]) == struct.unpack("<H", frame[-2:])[0]


def read_request(slave: int, address: int, count: int, function: int = READ_HOLDING) -> bytes:
    """Read Holding (0x03) or Input (0x04) Registers request frame."""
    return with_crc(struct.pack(">BBHH", slave, function, address, count))


def write_request(slave: int, address: int, values: list[int] | tuple[int, ...]) -> bytes:
    """Preset Multiple Registers (0x10) request frame for 16-bit values."""
    n = len(values)
    return with_crc(struct.pack(f">BBHHB{n}H", slave, WRITE_MULTIPLE, address, n, 2 * n, *values))


def request_length(buf: bytes | bytearray) -> int | None:
    """Length of the request frame starting at buf[0], or None if not yet known/unsupported."""
    if len(buf) < 2:
        return None
    fc = buf[1]
    if fc in (READ_HOLDING, READ_INPUT, WRITE_SINGLE):
        return 8
    if fc == WRITE_MULTIPLE:
        return 9 + buf[6] if len(buf) >= 7 else None
    return None


def reply_length(buf: bytes | bytearray) -> int | None:
    """Length of the reply frame starting at buf[0], or None if not yet known/unsupported."""
    if len(buf) < 3:
        return None
    fc = buf[1]
    if fc & 0x80:
        return 5
    if fc in (READ_HOLDING, READ_INPUT):
        return 5 + buf[2]
    if fc in (WRITE_SINGLE, WRITE_MULTIPLE):
        return 8
    return None


@dataclass(frozen=True)
class Scan:
    """Result of scanning received bytes for the reply to one request."""

    frame: bytes | None     # the reply frame (CRC checked), or None if not (yet) there
    end: int                # bytes of the buffer consumed by the frame
    corrupt: bool           # a frame of the right shape with a bad CRC was seen


def expected_reply_length(request: bytes) -> int:
    """Exact length of the normal reply to request (a frame built by this module)."""
    fc = request[1]
    if fc in (READ_HOLDING, READ_INPUT):
        return 5 + 2 * struct.unpack(">H", request[4:6])[0]
    return 8


def scan_reply(buf: bytes | bytearray, request: bytes) -> Scan:
    """Find the reply to request in buf, skipping garbage before it.

    A candidate must start with the request's slave id and function code (or its exception
    code) and have the exact length the request implies, so garbage cannot make the scanner
    wait for a long bogus frame. A write reply must also echo the request's address and count.
    """
    slave, fc = request[0], request[1]
    n = expected_reply_length(request)
    corrupt = False
    for i in range(len(buf) - 1):
        if buf[i] != slave or buf[i + 1] not in (fc, fc | 0x80):
            continue
        size = 5 if buf[i + 1] & 0x80 else n
        if i + size > len(buf):
            continue
        cand = bytes(buf[i:i + size])
        if not crc_ok(cand):
            corrupt = True
            continue
        if fc == WRITE_MULTIPLE and not cand[1] & 0x80 and cand[2:6] != request[2:6]:
            continue
        if fc in (READ_HOLDING, READ_INPUT) and not cand[1] & 0x80 and cand[2] != n - 5:
            continue
        return Scan(cand, i + size, corrupt)
    return Scan(None, 0, corrupt)


def registers_of(frame: bytes) -> list[int]:
    """The 16-bit register values carried by a read reply frame."""
    count = frame[2] // 2
    return list(struct.unpack(f">{count}H", frame[3:3 + 2 * count]))


def exception_code(frame: bytes) -> int | None:
    """The Modbus exception code of an exception reply, or None for a normal reply."""
    return frame[2] if frame[1] & 0x80 else None


def pack_bytes(data: bytes | list[int]) -> list[int]:
    """Device byte layout -> 16-bit registers (byte 0 is the high byte of register 0)."""
    data = bytes(data) + (b"\x00" if len(data) % 2 else b"")
    return list(struct.unpack(f">{len(data) // 2}H", data))


def unpack_registers(regs: list[int] | tuple[int, ...]) -> bytes:
    """16-bit registers -> device byte layout (high byte first)."""
    return struct.pack(f">{len(regs)}H", *regs)
