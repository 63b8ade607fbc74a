"""Fixtures shared by the test packages: gripper emulators in their own processes on real ptys."""
from __future__ import annotations

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
