"""Fixtures shared by the test packages: gripper emulators in their own processes on real ptys,
one Ray runtime at a time, and the three-finger demo database built once per run."""
from __future__ import annotations

import fcntl
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

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


# The three-finger demo database the slow tests build: smaller than the demo's own (40
# candidates, 10 samples), chosen with --db-candidates and --db-samples as a user on a slow
# machine would. Its grasps still hold seed 0's cylinder (test_multi_finger_cell).
DEMO_TEST_CANDIDATES = 20
DEMO_TEST_SAMPLES = 4


@dataclass(frozen=True)
class DemoCache:
    """The cache folder holding a demo database and the command-line flags that find it."""

    path: Path
    args: tuple[str, ...]


@pytest.fixture(scope="session")
def three_finger_demo_cache(tmp_path_factory) -> DemoCache:
    """A cache folder holding the three-finger hand's demo database of the built-in objects
    (DEMO_TEST_CANDIDATES, DEMO_TEST_SAMPLES), built once per test run however many
    pytest-xdist workers ask (a file lock: the first builds, the others wait and reuse it);
    ``graspline demo|serve --hand three_finger`` with its args then find it there. A minute
    or more on two cores, so only slow tests use it."""
    pytest.importorskip("mujoco")
    from offline_sim.database import ensure_demo_database

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "demo-cache"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ensure_demo_database("three_finger", root, candidates=DEMO_TEST_CANDIDATES,
                             samples=DEMO_TEST_SAMPLES, progress=False)
    return DemoCache(root, ("--cache", str(root), "--db-candidates", str(DEMO_TEST_CANDIDATES),
                            "--db-samples", str(DEMO_TEST_SAMPLES)))
