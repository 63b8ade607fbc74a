"""Fixtures shared by the test packages: gripper emulators in their own processes on real ptys,
and one Ray runtime at a time."""
from __future__ import annotations

import fcntl
import os
import tempfile

import pytest

from drivers.gripper.emulators import EmulatorProcess


@pytest.fixture
def emulator():
    """Factory: emulator(model, **options) -> a started EmulatorProcess, stopped after the test."""
    started: list[EmulatorProcess] = []

    def start(model: str, **options: object) -> EmulatorProcess:
        emu = EmulatorProcess(model, **options)
        started.append(emu)
        return emu

    yield start
    for emu in started:
        emu.stop()


@pytest.fixture
def one_ray_at_a_time():
    """Hold a lock shared by the test processes while a test runs Ray: two Ray runtimes
    starting at once on two cores (pytest-xdist runs two test files side by side) time out
    in Ray's own start-up ("the current node timed out during startup")."""
    path = os.path.join(tempfile.gettempdir(), f"graspline-tests-ray-{os.getuid()}.lock")
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
