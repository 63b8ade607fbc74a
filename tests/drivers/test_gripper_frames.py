"""Modbus RTU frames and unit maps: exact bytes, CRC, reply scanning, SI <-> counts."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, strategies as st

from drivers.gripper import SPECS, LinearMap
from drivers.gripper import modbus as mb

ROBOTIQ_2F85, ROBOTIQ_2F140 = SPECS["robotiq2f85"], SPECS["robotiq2f140"]

regs = st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=20)


# The Robotiq manual's example frames, byte for byte.
@pytest.mark.parametrize("data, frame", [
    (bytes(6), "09 10 03 E8 00 03 06 00 00 00 00 00 00 73 30"),            # clear rACT
    (bytes([1, 0, 0, 0, 0, 0]), "09 10 03 E8 00 03 06 01 00 00 00 00 00 72 E1"),  # activate
    (bytes([9, 0, 0, 255, 255, 255]), "09 10 03 E8 00 03 06 09 00 00 FF FF FF 42 29"),  # close
])
def test_write_request_matches_manual_bytes(data, frame):
    assert mb.write_request(9, 0x03E8, mb.pack_bytes(data)) == bytes.fromhex(frame)


def test_status_read_request_matches_manual_bytes():
    assert mb.read_request(9, 0x07D0, 1) == bytes.fromhex("09 03 07 D0 00 01 85 CF")
    assert mb.read_request(9, 0x07D0, 3) == bytes.fromhex("09 03 07 D0 00 03 04 0E")


@pytest.mark.parametrize("reply", ["09 03 06 B9 00 00 FF BD 00 1D 7C", "09 03 02 31 00 4C 15",
                                   "09 04 06 B9 00 00 FF BD 00 5C 9A"])
def test_manual_replies_pass_the_crc_check(reply):
    assert mb.crc_ok(bytes.fromhex(reply))


@given(slave=st.integers(1, 247), address=st.integers(0, 0xFFFF), values=regs)
def test_write_frame_equals_pymodbus_encoding(slave, address, values):
    from pymodbus.framer import FramerRTU
    from pymodbus.pdu.register_message import WriteMultipleRegistersRequest

    pdu = WriteMultipleRegistersRequest(address=address, registers=values, dev_id=slave)
    body = struct.pack(">B", pdu.function_code) + pdu.encode()
    assert mb.write_request(slave, address, values) == FramerRTU(None).encode(body, slave, 0)


@given(body=st.binary(min_size=1, max_size=64))
def test_crc_agrees_with_pymodbus(body):
    from pymodbus.framer import FramerRTU

    assert mb.with_crc(body)[-2:] == FramerRTU.compute_CRC(body).to_bytes(2, "big")


@given(body=st.binary(min_size=2, max_size=40), pos=st.integers(0, 1000), flip=st.integers(1, 255))
def test_any_single_byte_corruption_fails_the_crc(body, pos, flip):
    frame = bytearray(mb.with_crc(body))
    frame[pos % len(frame)] ^= flip
    assert not mb.crc_ok(bytes(frame))


@given(values=st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=8),
       before=st.binary(max_size=30), after=st.binary(max_size=10))
def test_scanner_finds_the_reply_behind_garbage(values, before, after):
    request = mb.read_request(9, 0x07D0, len(values))
    reply = mb.with_crc(struct.pack(f">BBB{len(values)}H", 9, 3, 2 * len(values), *values))
    scan = mb.scan_reply(before + reply + after, request)
    assert scan.frame == reply
    assert mb.registers_of(scan.frame) == values


@given(values=st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=8), flip=st.integers(1, 255))
def test_scanner_rejects_a_reply_with_a_bad_crc(values, flip):
    request = mb.read_request(9, 0x07D0, len(values))
    reply = bytearray(mb.with_crc(struct.pack(f">BBB{len(values)}H", 9, 3, 2 * len(values),
                                              *values)))
    reply[-1] ^= flip
    scan = mb.scan_reply(bytes(reply), request)
    assert scan.frame is None and scan.corrupt


def test_scanner_waits_for_an_incomplete_reply():
    request = mb.read_request(9, 0x07D0, 3)
    reply = bytes.fromhex("09 03 06 B9 00 00 FF BD 00 1D 7C")
    assert mb.scan_reply(reply[:-1], request).frame is None
    assert mb.scan_reply(reply, request).frame == reply


def test_scanner_reports_modbus_exception_replies():
    request = mb.read_request(9, 0x07D0, 3)
    exc = mb.with_crc(bytes([9, 0x83, 0x02]))
    scan = mb.scan_reply(b"\x00" + exc, request)
    assert mb.exception_code(scan.frame) == 2


@given(raw=st.binary(min_size=2, max_size=32).filter(lambda b: len(b) % 2 == 0))
def test_register_packing_round_trips(raw):
    assert mb.unpack_registers(mb.pack_bytes(raw)) == raw


@pytest.mark.parametrize("spec", list(SPECS.values()), ids=list(SPECS))
@given(frac=st.floats(0.0, 1.0))
def test_width_map_round_trips_within_one_count(spec, frac):
    w = spec.width.low + frac * (spec.width.high - spec.width.low)
    counts = spec.width_map.to_counts(w)
    one_count = abs(spec.width_map.to_si(0) - spec.width_map.to_si(1))
    assert abs(spec.width_map.to_si(counts) - w) <= one_count / 2 + 1e-12


@pytest.mark.parametrize("spec", [ROBOTIQ_2F85, ROBOTIQ_2F140])
def test_robotiq_extremes_map_to_0_and_255(spec):
    assert spec.width_map.to_counts(0.0) == 255 and spec.width_map.to_counts(spec.width.high) == 0
    assert spec.speed_map.to_counts(spec.speed.high) == 255
    assert spec.force_map.to_counts(spec.force.low) == 0


@given(a=st.floats(0.0, 0.085), b=st.floats(0.0, 0.085))
def test_width_map_is_monotonic_decreasing(a, b):
    m = ROBOTIQ_2F85.width_map
    if a < b:
        assert m.to_counts(a) >= m.to_counts(b)


def test_a_calibrated_map_with_several_breakpoints_interpolates():
    m = LinearMap((0.085, 0.040, 0.0), (3, 120, 230))
    assert m.to_counts(0.0625) == round(3 + (120 - 3) / 2)
    assert m.to_si(230) == 0.0 and m.to_si(255) == 0.0   # clamped past the last breakpoint


def test_linear_map_rejects_mismatched_breakpoints():
    with pytest.raises(ValueError, match="matching breakpoints"):
        LinearMap((0.0, 1.0), (0,))
