"""Robotiq 3-Finger driver against its emulator: modes, per-finger detection and positions."""
from __future__ import annotations

import pytest

from drivers.gripper import open_gripper

FAST = {"timeout_s": 0.2, "retries": 2}


@pytest.fixture
def emu3f(emulator):
    return emulator("robotiq3f", object_width_m=0.06, activation_s=0.1, mode_change_s=0.3)


@pytest.fixture
def hand(emu3f):
    with open_gripper("robotiq3f", emu3f.port, **FAST) as g:
        g.activate(timeout_s=5)
        yield g


def test_activation_reaches_basic_mode(hand):
    st = hand.status()
    assert st.activated and st.mode == "basic"


def test_basic_grasp_detects_the_object_on_every_finger(hand):
    result = hand.grasp(0.0, speed_mps=0.11, timeout_s=10)
    assert result.object_detected
    assert result.width_m == pytest.approx(0.06, abs=0.001)
    a, b, c, s = result.status.fingers
    assert a.contact and b.contact and c.contact and not s.contact
    assert a.position_raw == b.position_raw == c.position_raw


def test_a_finger_that_misses_the_object_is_reported_per_finger(emulator):
    emu = emulator("robotiq3f", object_width_m=0.06, activation_s=0.1, missing_fingers="C")
    with open_gripper("robotiq3f", emu.port, **FAST) as g:
        g.activate(timeout_s=5)
        result = g.grasp(0.0, speed_mps=0.11, timeout_s=10)
    a, b, c, _ = result.status.fingers
    assert a.contact and b.contact and not c.contact
    assert c.position_raw == 255 and a.position_raw < 255
    assert (result.status.raw[0] >> 6) == 1       # gSTA: one or two fingers stopped early


def test_mode_change_is_waited_for(hand, emu3f):
    hand.set_mode("pinch", timeout_s=5)
    st = hand.status()
    assert st.mode == "pinch" and st.activated          # gIMC back to 3: change complete
    assert hand.spec.width.high == pytest.approx(0.110)


@pytest.mark.parametrize("mode", ["wide", "scissor"])
def test_grasp_in_other_modes_uses_that_modes_axes(hand, emu3f, mode):
    hand.set_mode(mode, timeout_s=5)
    result = hand.grasp(0.0, speed_mps=0.11, timeout_s=10)
    fingers = result.status.fingers
    if mode == "scissor":
        assert fingers[3].contact and not any(f.contact for f in fingers[:3])
    else:
        assert all(f.contact for f in fingers[:3])
    assert result.object_detected


def test_unknown_mode_is_rejected_naming_the_choices(hand):
    with pytest.raises(ValueError, match="mode must be one of basic, pinch, wide, scissor"):
        hand.set_mode("claw")


def test_lost_write_reply_does_not_repeat_the_motion(hand, emu3f):
    emu3f.faults(drop_reply=1, only="write")
    assert hand.grasp(0.0, timeout_s=10).object_detected
    assert len([w for w in emu3f.stats()["writes"] if w[0] & 0x08]) == 1
