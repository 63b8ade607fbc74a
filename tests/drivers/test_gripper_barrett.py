"""Barrett BH8 supervisory-mode driver against its ASCII emulator over a real pty: the
protocol (echo, prompt, ERR bits, properties) and its retries. The common contract is in
test_gripper_contract.py."""
from __future__ import annotations

import pytest

from drivers.gripper import (GripperFault, GripperProtocolError, decode_barrett_error,
                             open_gripper)

FAST = {"timeout_s": 0.3, "retries": 2}
# An object near the open width keeps travel (and test time) short at 0.1 m/s.
OBJECT_M = 0.16


@pytest.fixture
def emubh(emulator):
    return emulator("barrett", object_width_m=OBJECT_M)


@pytest.fixture
def hand(emubh):
    with open_gripper("barrett", emubh.port, baudrate=38400, **FAST) as g:
        g.activate(timeout_s=5)
        yield g


def test_activation_sends_hi_and_echo_and_prompt_are_stripped(hand, emubh):
    assert emubh.stats()["executed"][0] == "HI"
    assert hand.command("FGET P") == "0 0 0 0"


def test_grasp_closes_with_gc_and_detects_the_object(hand, emubh):
    result = hand.grasp(0.0, speed_mps=0.1, force_n=10, timeout_s=10)
    assert "GC" in emubh.stats()["executed"]
    assert result.object_detected
    assert result.width_m == pytest.approx(OBJECT_M, abs=0.001)
    assert all(f.contact for f in result.status.fingers)


def test_open_uses_go_and_speed_and_force_set_the_properties(hand, emubh):
    hand.grasp(0.0, timeout_s=10)
    result = hand.open(speed_mps=0.1, force_n=20, timeout_s=10)
    stats = emubh.stats()
    assert stats["executed"][-2:] == ["GO", "FGET P"]
    assert stats["props"][0] == {"MCV": 89, "MOV": 89, "MT": 1500}
    assert not result.object_detected and result.width_m == pytest.approx(0.2)


def test_move_to_a_width_uses_m_within_the_position_limits(hand, emubh):
    result = hand.grasp(0.18, timeout_s=10)
    assert "GM 1780" in emubh.stats()["executed"]
    assert not result.object_detected
    assert emubh.stats()["positions"][:3] == [1780] * 3


def test_positions_beyond_the_limits_are_refused_before_sending(hand, emubh):
    n = len(emubh.stats()["lines"])
    with pytest.raises(ValueError, match=r"width_m must be within \[0, 0.2\] m, got 0.3"):
        hand.grasp(0.3)
    assert len(emubh.stats()["lines"]) == n


def test_err_reply_is_decoded_into_a_fault(hand, emubh):
    emubh.device_fault(8192 | 16)
    with pytest.raises(GripperFault) as info:
        hand.grasp(0.0, timeout_s=10)
    assert info.value.code == 8208
    assert "over temperature" in info.value.meaning and "reach position" in info.value.meaning


def test_commands_before_hi_get_err_4(emubh):
    with open_gripper("barrett", emubh.port, **FAST) as g:
        with pytest.raises(GripperFault, match="motor not initialized"):
            g.command("GC")


def test_unknown_command_is_err_32(hand):
    with pytest.raises(GripperFault, match="unknown command"):
        hand.command("XYZZY")


def test_decode_barrett_error_lists_every_bit():
    assert decode_barrett_error(4 | 32) == "motor not initialized (send HI first); unknown command"
    assert "unknown error bits 0x8" in decode_barrett_error(8)


def test_garbled_reply_raises_protocol_error(hand, emubh):
    emubh.faults(corrupt=-1)
    with pytest.raises(GripperProtocolError):
        hand.status()


def test_garbage_before_the_echo_is_skipped(hand, emubh):
    emubh.faults(garbage=1)
    assert hand.command("FGET P") == "0 0 0 0"


@pytest.mark.parametrize("fault", ["drop_reply", "garbage_only"])
def test_a_motion_whose_reply_was_lost_is_not_executed_twice(hand, emubh, fault):
    emubh.faults(**{fault: 1}, only="write")
    result = hand.grasp(0.0, timeout_s=10)
    assert result.object_detected
    assert emubh.stats()["executed"].count("GC") == 1


def test_a_motion_lost_before_the_hand_is_sent_again(hand, emubh):
    emubh.faults(drop_request=1, only="write")
    result = hand.grasp(0.0, timeout_s=10)
    stats = emubh.stats()
    assert result.object_detected
    assert stats["lines"].count("GC") == 2 and stats["executed"].count("GC") == 1


def test_stop_aborts_a_running_motion(emulator):
    import threading

    emu = emulator("barrett")                         # nothing to stop the fingers early
    with open_gripper("barrett", emu.port, **FAST) as g:
        g.activate(timeout_s=5)
        threading.Timer(0.3, g.stop).start()
        with pytest.raises(GripperFault, match="aborted by Ctrl-C"):
            g.grasp(0.0, speed_mps=0.01, timeout_s=30)
        assert 0 < emu.stats()["positions"][0] < 17800
