"""Robotiq 2F-85/2F-140 driver against the pymodbus emulator over a real pseudo-terminal:
the manual's frames, CRC and garbage handling, the watchdog, retries. What every gripper
does (open, grasp, ranges, timeouts, faults, reconnection, lifecycle) is in
test_gripper_contract.py."""
from __future__ import annotations

import time

import pytest

from drivers.gripper import GripperFault, GripperProtocolError, open_gripper

# Short per-attempt timeouts keep fault tests fast; assertions allow generous slack.
FAST = {"timeout_s": 0.2, "retries": 2, "reconnect_s": 3.0}

ACTIVATE = bytes.fromhex("09 10 03 E8 00 03 06 01 00 00 00 00 00 72 E1")
CLEAR = bytes.fromhex("09 10 03 E8 00 03 06 00 00 00 00 00 00 73 30")
FULL_CLOSE = bytes.fromhex("09 10 03 E8 00 03 06 09 00 00 FF FF FF 42 29")


def _writes(emu):
    return [r for r in emu.stats()["requests"] if r[1] == 0x10]


@pytest.fixture
def emu2f(emulator):
    return emulator("robotiq2f85", object_width_m=0.04, activation_s=0.1)


@pytest.fixture
def grip(emu2f):
    with open_gripper("robotiq2f85", emu2f.port, **FAST) as g:
        g.activate(timeout_s=5)
        yield g


def test_activation_sends_the_manuals_clear_then_activate_frames(emu2f):
    with open_gripper("robotiq2f85", emu2f.port, **FAST) as g:
        g.activate(timeout_s=5)
        assert g.status().activated
    assert _writes(emu2f)[:2] == [CLEAR, ACTIVATE]


def test_full_close_sends_the_manuals_frame_and_detects_no_object(emulator):
    emu = emulator("robotiq2f85", activation_s=0.1)          # nothing between the fingers
    with open_gripper("robotiq2f85", emu.port, **FAST) as g:
        g.activate(timeout_s=5)
        result = g.grasp(0.0, speed_mps=0.150, force_n=235.0, timeout_s=10)
    assert FULL_CLOSE in _writes(emu)
    assert not result.object_detected
    assert result.width_m == pytest.approx(0.0, abs=1e-3)


def test_two_grasps_to_the_same_width_both_move(grip, emu2f):
    grip.grasp(0.0, timeout_s=10)
    grip.open(timeout_s=10)
    emu2f.set(object_width_m=0.03)
    result = grip.grasp(0.0, timeout_s=10)
    assert result.object_detected and result.width_m == pytest.approx(0.03, abs=0.001)


def test_status_decodes_registers(grip, emu2f):
    grip.grasp(0.0, timeout_s=10)
    st = grip.status()
    raw = emu2f.stats()["status"]
    assert st.activated and not st.moving and st.object_detected
    assert raw[0] >> 6 == 2                                  # gOBJ: contact while closing
    assert st.fingers[0].position_raw == raw[4]              # gPO
    assert st.fault_code == 0 and st.fault_message == ""


def test_values_out_of_range_raise_before_any_byte_is_sent(grip, emu2f):
    before = len(emu2f.stats()["requests"])
    with pytest.raises(ValueError, match=r"width_m must be within \[0, 0.085\] m, got 0.1"):
        grip.grasp(0.1)
    with pytest.raises(ValueError, match=r"speed_mps must be within \[0.02, 0.15\] m/s, got 1"):
        grip.grasp(0.02, speed_mps=1)
    with pytest.raises(ValueError, match=r"force_n must be within \[20, 235\] N, got 5"):
        grip.open(force_n=5)
    with pytest.raises(ValueError, match="width_m must be a number"):
        grip.grasp("wide")
    time.sleep(0.05)
    # Only keep-alive status reads may have gone out meanwhile, never a write.
    assert all(r[1] == 0x03 for r in emu2f.stats()["requests"][before:])


def test_the_2f140_uses_its_own_ranges(emulator):
    emu = emulator("robotiq2f140", object_width_m=0.1, activation_s=0.1)
    with open_gripper("robotiq2f140", emu.port, **FAST) as g:
        g.activate(timeout_s=5)
        result = g.grasp(0.0, speed_mps=0.25, timeout_s=10)
        with pytest.raises(ValueError, match=r"\[0, 0.14\] m"):
            g.grasp(0.2)
    assert result.object_detected and result.width_m == pytest.approx(0.1, abs=0.001)


# ----------------------------------------------------------------------------- faults


def test_corrupt_crc_on_every_reply_raises_protocol_error(grip, emu2f):
    emu2f.faults(corrupt=-1)
    t0 = time.monotonic()
    with pytest.raises(GripperProtocolError, match="no valid reply"):
        grip.status()
    assert time.monotonic() - t0 <= (FAST["retries"] + 1) * FAST["timeout_s"] + 2.0


def test_garbage_instead_of_replies_raises_protocol_error(grip, emu2f):
    emu2f.faults(garbage_only=-1)
    with pytest.raises(GripperProtocolError):
        grip.status()


def test_one_corrupt_reply_is_retried_transparently(grip, emu2f):
    emu2f.faults(corrupt=1, only="read")
    assert grip.status().activated


def test_garbage_before_a_reply_is_skipped_without_a_retry(grip, emu2f):
    n0 = len(emu2f.stats()["requests"])
    emu2f.faults(garbage=1, only="read")
    assert grip.status().activated
    reads = [r for r in emu2f.stats()["requests"][n0:] if r[1] == 0x03]
    assert 1 <= len(reads) <= 2      # ours (+ at most one keep-alive), no retry


def test_reactivation_clears_a_device_fault(grip, emu2f):
    emu2f.device_fault(0x08)
    assert grip.status().fault_code == 0x08
    grip.activate(timeout_s=5)
    assert grip.grasp(0.0, timeout_s=10).object_detected


def test_injected_communication_fault_is_decoded(grip, emu2f):
    emu2f.device_fault(0x09)
    with pytest.raises(GripperFault, match="no communication during at least 1 second"):
        grip.grasp(0.0, timeout_s=5)


def test_keepalive_keeps_the_one_second_watchdog_quiet(grip):
    time.sleep(1.6)                  # idle longer than the device's watchdog
    assert grip.status().fault_code == 0


def test_without_keepalive_the_device_raises_its_communication_fault(emu2f):
    with open_gripper("robotiq2f85", emu2f.port, keepalive_s=None, **FAST) as g:
        g.activate(timeout_s=5)
        time.sleep(1.6)
        st = g.status()
    assert st.fault_code == 0x09


def test_grasp_before_activation_raises_the_devices_fault(emu2f):
    with open_gripper("robotiq2f85", emu2f.port, **FAST) as g:
        with pytest.raises(GripperFault) as info:
            g.grasp(0.0, timeout_s=5)
    assert info.value.code in (0x05, 0x07)


# ------------------------------------------------------------------- retries, reconnect
def test_a_lost_write_reply_is_not_executed_twice(grip, emu2f):
    emu2f.faults(drop_reply=1, only="write")
    result = grip.grasp(0.0, speed_mps=0.15, timeout_s=10)
    assert result.object_detected
    go_writes = [w for w in emu2f.stats()["writes"] if w[0] & 0x08]
    assert len(go_writes) == 1        # the device executed the go command exactly once


def test_a_lost_write_request_is_sent_again(grip, emu2f):
    emu2f.faults(drop_request=1, only="write")
    result = grip.grasp(0.0, timeout_s=10)
    assert result.object_detected
    sent = [r for r in emu2f.stats()["requests"] if r[1] == 0x10 and r[7] & 0x08]
    executed = [w for w in emu2f.stats()["writes"] if w[0] & 0x08]
    assert len(sent) == 2 and len(executed) == 1
