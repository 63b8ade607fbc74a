"""Numba's OpenMP threads wait passively unless the user says otherwise: spinning threads made
the loop's planning ten times slower on a machine running anything else."""
from __future__ import annotations

import os
import subprocess
import sys

SHOW = "import scoring, os; print(os.environ['OMP_WAIT_POLICY'])"


def _policy_after_import(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_value is not None:
        env["OMP_WAIT_POLICY"] = env_value
    return subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True,
                          text=True, check=True, timeout=120).stdout.strip()


def test_importing_scoring_makes_openmp_threads_wait_passively():
    assert _policy_after_import(None) == "PASSIVE"


def test_a_wait_policy_the_user_set_is_kept():
    assert _policy_after_import("ACTIVE") == "ACTIVE"
