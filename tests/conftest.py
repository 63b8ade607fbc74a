"""Fixtures shared by the test packages: gripper emulators in their own processes on real ptys,
one Ray runtime at a time, and the three-finger demo database built once per run."""
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


@pytest.fixture(scope="session")
def three_finger_demo_cache(tmp_path_factory):
    """A cache folder holding the three-finger hand's demo database of the built-in objects,
    built once per test run however many pytest-xdist workers ask (a file lock: the first
    builds, the others wait and reuse it); ``graspline demo|serve --hand three_finger --cache``
    then find it there. Minutes on two cores, so only slow tests use it."""
    pytest.importorskip("mujoco")
    from offline_sim.database import ensure_demo_database

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "demo-cache"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ensure_demo_database("three_finger", root, progress=False)
    return root
