"""The contract every Gripper implementation keeps, run on each (see gripper_rigs.RIGS):
each driver against its emulator on a real pseudo-terminal, and the simulated grippers.

Open, close with a force, width and status read back, range checks before anything is sent,
timeouts, device faults, disconnection and the lifecycle. What an implementation cannot
produce is skipped with its rig's reason.
"""
from __future__ import annotations

import gc
import time
import warnings

import pytest

from drivers.gripper import GripperDisconnected, GripperFault, GripperTimeout

from .gripper_rigs import RIGS

#: slack for process scheduling on a shared machine, on top of a documented time budget (s)
SLACK_S = 2.0


@pytest.fixture(params=RIGS, ids=lambda f: getattr(f, "name", f.__name__))
def rig(request, emulator):
    r = request.param(emulator)
    yield r
    r.close()


# ---------------------------------------------------------------- activation and status
def test_motion_before_activation_raises_a_device_fault(rig):
    g = rig.open(activate=False)
    with pytest.raises(GripperFault) as info:
        g.grasp(0.0, timeout_s=5)
    assert info.value.code != 0 and info.value.port == g.port


def test_activation_leaves_the_fingers_open_idle_and_without_fault(rig):
    g = rig.open()
    st = g.status()
    assert st.activated and not st.moving and not st.object_detected and not st.faulted
    assert st.width_m == pytest.approx(g.spec.width.high, abs=rig.width_tolerance_m(g))


# ------------------------------------------------------------------------- open, close
def test_grasp_stops_on_the_object_and_reports_its_width(rig):
    g = rig.open()
    speed = g.spec.speed.high
    result = g.grasp(0.0, speed_mps=speed, timeout_s=10)
    assert result.object_detected
    assert result.width_m == pytest.approx(rig.object_width_m, abs=rig.width_tolerance_m(g))
    # the fingers really travelled from open to the object at the commanded speed
    travel_s = (g.spec.width.high - rig.object_width_m) / speed
    assert 0.8 * travel_s <= result.elapsed_s <= travel_s + SLACK_S
    # and the status read afterwards says the same
    st = g.status()
    assert st.object_detected and not st.moving and not st.faulted
    assert st.width_m == pytest.approx(result.width_m, abs=rig.width_tolerance_m(g))
    assert result.status.object_detected and result.status.width_m == result.width_m


def test_grasp_sends_the_commanded_force_and_the_lowest_by_default(rig):
    rig.needs("force")
    g = rig.open()
    spec = g.spec.force
    per_count = abs(g.spec.force_map.to_si(1) - g.spec.force_map.to_si(0))
    g.grasp(0.0, timeout_s=10)
    assert rig.commanded_force_n(g) == pytest.approx(spec.low, abs=per_count)
    g.open(timeout_s=10)
    force = spec.low + 0.6 * (spec.high - spec.low)
    assert g.grasp(0.0, force_n=force, timeout_s=10).object_detected
    assert rig.commanded_force_n(g) == pytest.approx(force, abs=per_count)


def test_open_after_a_grasp_returns_to_full_width_without_detection(rig):
    g = rig.open()
    assert g.grasp(0.0, timeout_s=10).object_detected
    result = g.open(timeout_s=10)
    assert not result.object_detected
    assert result.width_m == pytest.approx(g.spec.width.high, abs=rig.width_tolerance_m(g))
    assert not g.status().object_detected


def test_grasp_to_a_width_above_the_object_reaches_it_without_detection(rig):
    g = rig.open()
    width = (rig.object_width_m + g.spec.width.high) / 2
    result = g.grasp(width, timeout_s=10)
    assert not result.object_detected
    assert result.width_m == pytest.approx(width, abs=rig.width_tolerance_m(g))


def test_values_out_of_range_raise_before_anything_is_sent(rig):
    g = rig.open()
    spec = g.spec
    before = rig.commands_executed(g)
    with pytest.raises(ValueError, match=rf"width_m must be within \[0, {spec.width.high:g}\] m"):
        g.grasp(spec.width.high + 0.01)
    with pytest.raises(ValueError, match=r"speed_mps must be within .* m/s, got"):
        g.grasp(0.0, speed_mps=spec.speed.high * 2)
    with pytest.raises(ValueError, match=rf"force_n must be within \[{spec.force.low:g}, "):
        g.open(force_n=spec.force.low / 2)
    with pytest.raises(ValueError, match="width_m must be a number"):
        g.grasp("wide")
    with pytest.raises(ValueError, match="timeout_s must be within"):
        g.grasp(0.0, timeout_s=-1)
    assert rig.commands_executed(g) == before


# -------------------------------------------------------------------------- timeouts
def test_motion_that_does_not_finish_in_time_raises_timeout(rig):
    g = rig.open()
    t0 = time.monotonic()
    with pytest.raises(GripperTimeout) as info:
        g.grasp(0.0, speed_mps=g.spec.speed.low, timeout_s=0.05)
    assert isinstance(info.value, TimeoutError) and info.value.port == g.port
    assert g.port in str(info.value)
    assert time.monotonic() - t0 <= 0.05 + (rig.retries + 1) * rig.timeout_s + SLACK_S


def test_no_reply_raises_timeout_naming_the_port_within_the_budget(rig):
    rig.needs("replies")
    g = rig.open()
    rig.drop_replies()
    t0 = time.monotonic()
    with pytest.raises(GripperTimeout, match=g.port) as info:
        g.status()
    elapsed = time.monotonic() - t0
    budget = (rig.retries + 1) * rig.timeout_s
    assert budget * 0.9 <= elapsed <= budget + SLACK_S
    assert isinstance(info.value, TimeoutError) and info.value.port == g.port


# ---------------------------------------------------------------------------- faults
def test_device_fault_raises_gripper_fault_and_reactivation_clears_it(rig):
    rig.needs("device_fault")
    g = rig.open()
    code, word = rig.device_fault()
    with pytest.raises(GripperFault) as info:
        g.grasp(0.0, timeout_s=5)
    assert info.value.code == code and word in info.value.meaning
    assert info.value.port == g.port and g.port in str(info.value)
    g.activate(timeout_s=5)
    assert g.grasp(0.0, timeout_s=10).object_detected


# ---------------------------------------------------------------------- disconnection
def test_reconnects_when_the_port_vanishes_and_returns(rig):
    rig.needs("port")
    g = rig.open()
    rig.vanish(seconds=0.3)
    time.sleep(0.05)
    result = g.grasp(0.0, timeout_s=10)
    assert result.object_detected
    assert g.status().activated          # the same device state behind the new pty


def test_port_gone_for_good_raises_disconnected_within_the_budget(rig):
    rig.needs("disconnect")
    g = rig.open()
    rig.vanish(seconds=None)
    t0 = time.monotonic()
    with pytest.raises(GripperDisconnected, match=rig.link_lost) as info:
        g.status()
    assert isinstance(info.value, ConnectionError) and info.value.port == g.port
    assert time.monotonic() - t0 <= rig.reconnect_s + SLACK_S


def test_opening_a_missing_port_raises_disconnected(rig, tmp_path):
    rig.needs("port")
    with pytest.raises(GripperDisconnected, match="cannot open serial port"):
        rig.missing_port(tmp_path)


# -------------------------------------------------------------------------- lifecycle
def test_close_is_safe_twice_and_commands_after_close_raise_disconnected(rig):
    g = rig.open()
    with g:
        pass
    g.close()
    assert g.closed
    with pytest.raises(GripperDisconnected, match="closed"):
        g.status()
    with pytest.raises(GripperDisconnected, match="closed"):
        g.grasp(0.0)


def test_a_gripper_garbage_collected_open_warns(rig):
    g = rig.open(activate=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del g
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) and "not closed" in str(w.message)
               for w in caught)
