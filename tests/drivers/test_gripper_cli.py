"""``graspline gripper``: actions against an emulator started by ``gripper emulate``."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

import onboard.cli as cli

# The graspline command line, run by the interpreter of the tests (the console script's code).
RUN_CLI = "import sys, onboard.cli as c; sys.exit(c.main(sys.argv[1:]))"


@pytest.fixture
def graspline():
    return cli.main


def _start_emulator(link: str) -> subprocess.Popen:
    """``graspline gripper emulate`` on link, in its own process, once it says it is ready."""
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_CLI, "gripper", "emulate", "--model", "robotiq2f85",
         "--port", link, "--object-width", "0.05"],
        stdout=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert f"robotiq2f85 emulator on {link}" in first, first
    return proc


def _stop(proc: subprocess.Popen, sig: int) -> int | None:
    """Send sig and wait up to 10 s: the exit status, or None where it had to be killed."""
    proc.send_signal(sig)
    try:
        return proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
        return None


@pytest.fixture
def emulated_port(tmp_path):
    """A robotiq2f85 emulator run by ``graspline gripper emulate`` in its own process."""
    link = str(tmp_path / "ttyGRIP")
    proc = _start_emulator(link)
    try:
        yield link
    finally:
        _stop(proc, signal.SIGINT)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_emulator_stops_cleanly_on_ctrl_c_or_sigterm_even_started_in_the_background(
        tmp_path, sig):
    # started as a shell's `&` or a test worker starts it: SIGINT ignored on the way in
    link = str(tmp_path / "ttyGRIP")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = _start_emulator(link)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert _stop(proc, sig) == 0     # not killed after 10 s, and a clean exit
    assert not os.path.lexists(link)   # its port closed and the link taken away


def test_activate_grasp_and_status_through_the_cli(graspline, emulated_port, capsys):
    base = ["gripper", "--model", "robotiq2f85", "--port", emulated_port]
    assert graspline(base + ["activate"]) == 0
    assert graspline(base + ["grasp", "--activate", "--width", "0.0", "--force", "40"]) == 0
    out = capsys.readouterr().out
    assert "activated" in out and "object detected: yes; width 0.0500 m" in out
    assert graspline(base + ["status"]) == 0
    out = capsys.readouterr().out
    assert "object detected: yes" in out and "width: 0.0500 m" in out


def test_missing_port_is_a_one_line_error(graspline, tmp_path, capsys):
    port = str(tmp_path / "ttyUSB9")
    assert graspline(["gripper", "--model", "barrett", "--port", port, "status"]) == 2
    err = capsys.readouterr().err
    assert f"port {port} does not exist" in err and err.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root may open any file")
def test_unreadable_port_names_the_dialout_group(graspline, tmp_path, capsys):
    port = tmp_path / "ttyS9"
    port.write_text("")
    port.chmod(0)
    assert graspline(["gripper", "--model", "robotiq2f85", "--port", str(port), "status"]) == 2
    assert "dialout" in capsys.readouterr().err


def test_permission_message_names_the_dialout_group(tmp_path, monkeypatch, capsys, graspline):
    # As root every file is accessible, so make access() report what a normal user gets.
    port = tmp_path / "ttyS9"
    port.write_text("")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert graspline(["gripper", "--model", "robotiq2f85", "--port", str(port), "status"]) == 2
    err = capsys.readouterr().err
    assert "permission denied" in err and "dialout" in err


def test_grasp_without_width_is_refused(graspline, emulated_port, capsys):
    assert graspline(["gripper", "--model", "robotiq2f85", "--port", emulated_port,
                      "grasp"]) == 2
    assert "grasp needs --width" in capsys.readouterr().err


def test_out_of_range_width_is_a_cli_error_naming_the_range(graspline, emulated_port, capsys):
    assert graspline(["gripper", "--model", "robotiq2f85", "--port", emulated_port, "grasp",
                      "--activate", "--width", "0.5"]) == 2
    assert "width_m must be within [0, 0.085] m" in capsys.readouterr().err


def test_a_device_fault_is_reported_with_its_meaning(graspline, emulated_port, capsys):
    # Grasping a gripper that was never activated: the device's own fault, decoded.
    assert graspline(["gripper", "--model", "robotiq2f85", "--port", emulated_port, "grasp",
                      "--width", "0.01"]) == 2
    assert "activation" in capsys.readouterr().err
