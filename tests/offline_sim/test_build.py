"""Database builds: parallel workers, the same results for any worker count, resume."""
import functools
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("scipy")

from offline_sim import (BuildTarget, GraspRecord, MonteCarloSettings, TrialMeasures,  # noqa: E402
                         build_database, evaluate_under_uncertainty, ferrari_canny)
from scoring import GraspDatabase  # noqa: E402


@dataclass(frozen=True)
class PlanarJawEvaluator:
    """A quasi-static parallel jaw on a 2-D box: candidate k squeezes across the box at an
    offset along it; each trial moves the box by a pose error and checks force closure of
    the two contacts that result (ε > 0.001). Real arithmetic, cheap enough for build tests."""

    seed: int
    half_length_m: float = 0.05
    half_width_m: float = 0.02
    mu: float = 0.4
    samples: int = 20
    delay_s: float = 0.0

    def __call__(self, k: int) -> GraspRecord:
        offset = -self.half_length_m + 2 * self.half_length_m * (k % 20) / 19

        def trial(T):
            angle = 0.0 if T is None else math.atan2(T[1, 0], T[0, 0])
            shift = 0.0 if T is None else T[1, 3]
            y = offset - shift  # contact line in the box frame
            tilt = math.tan(angle)
            if abs(y) > self.half_length_m:
                return TrialMeasures(b=0.0, c=0.0, a=0.0)
            p = np.array([[-self.half_width_m, y - tilt * self.half_width_m],
                          [self.half_width_m, y + tilt * self.half_width_m]])
            n = np.array([[math.cos(angle), math.sin(angle)], [-math.cos(angle), -math.sin(angle)]])
            eps = ferrari_canny(p, n, mu=self.mu, torque_scale_m=self.half_length_m)
            ok = eps > 0.001 and abs(angle) < math.atan(self.mu)
            return TrialMeasures(b=1.0 if ok else 0.0, c=1.0 - abs(y) / self.half_length_m, a=eps)

        if self.delay_s:
            time.sleep(self.delay_s)
        r = evaluate_under_uncertainty(trial, MonteCarloSettings(n_samples=self.samples,
                                                                 seed=self.seed * 100003 + k))
        T = np.eye(4)
        T[1, 3] = offset
        return GraspRecord(candidate=k, T_object_hand=T, nominal_ok=r.nominal.b > 0,
                           samples_run=r.samples_run, discarded_early=r.discarded_early,
                           success_rate=r.success_rate, quality=r.success_rate * r.c_mean,
                           a_mean=r.a_mean, b_mean=r.b_mean, c_mean=r.c_mean, seed=self.seed)


def target(n=40, seed=1, delay_s=0.0):
    return BuildTarget("bar", "planar_jaw", "1", {"mu": 0.4}, n,
                       functools.partial(PlanarJawEvaluator, seed=seed, delay_s=delay_s),
                       {"radius_m": 0.05})


def table(path):
    with GraspDatabase(path) as db:
        return db.grasps("bar", "planar_jaw")


def test_same_results_whatever_the_number_of_workers(tmp_path):
    build_database([target()], tmp_path / "a.db", workers=0, progress=False)
    build_database([target()], tmp_path / "b.db", workers=2, progress=False)
    a, b = table(tmp_path / "a.db"), table(tmp_path / "b.db")
    order_a, order_b = np.argsort(a.candidate), np.argsort(b.candidate)
    np.testing.assert_array_equal(a.candidate[order_a], np.arange(40))
    np.testing.assert_array_equal(a.candidate[order_a], b.candidate[order_b])
    np.testing.assert_array_equal(a.quality[order_a], b.quality[order_b])
    np.testing.assert_array_equal(a.samples_run[order_a], b.samples_run[order_b])


def test_centred_grasps_rank_above_grasps_at_the_ends_and_fragile_ones_are_discarded(tmp_path):
    s = build_database([target()], tmp_path / "g.db", workers=0, progress=False,
                       samples_planned=20)
    t = table(tmp_path / "g.db")
    best_offsets = np.abs(t.T_object_hand[:5, 1, 3])
    assert best_offsets.max() < 0.03
    assert s.discarded_early > 0 and s.trials_run < s.trials_planned
    assert t.discarded_early.sum() == s.discarded_early


def test_builds_in_one_process_with_other_settings_do_not_share_an_evaluator(tmp_path):
    build_database([target(n=20, seed=1)], tmp_path / "a.db", workers=0, progress=False)
    build_database([target(n=20, seed=2)], tmp_path / "b.db", workers=0, progress=False)
    b = table(tmp_path / "b.db")
    want = [PlanarJawEvaluator(seed=2)(int(k)).seed for k in b.candidate]
    with GraspDatabase(tmp_path / "b.db") as db:
        seeds = [r[0] for r in db._db.execute("SELECT seed FROM results")]
    assert set(seeds) == set(want) == {2}


def test_second_build_skips_finished_candidates(tmp_path):
    build_database([target(n=10)], tmp_path / "g.db", workers=0, progress=False)
    s = build_database([target(n=25)], tmp_path / "g.db", workers=0, progress=False)
    assert (s.skipped, s.evaluated) == (10, 15)
    assert sorted(table(tmp_path / "g.db").candidate) == list(range(25))


BUILD = """
import sys
sys.path.insert(0, {root!r})
from offline_sim import build_database
from tests.offline_sim.test_build import target
build_database([target(n=60, delay_s=0.05)], sys.argv[1], workers=2, progress=False)
print("finished", flush=True)
"""


def test_build_killed_with_sigkill_resumes_to_the_same_database(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = tmp_path / "g.db"
    script = BUILD.format(root=root)
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.1)
        try:
            if len(table(path)) >= 8:
                break
        except Exception:  # noqa: BLE001 - the file is still being created
            pass
    os.killpg(proc.pid, signal.SIGKILL)  # the build and its workers, as a crash would
    proc.wait()
    partial = len(table(path))
    assert 8 <= partial < 60
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, timeout=300)
    assert "finished" in out.stdout, out.stderr
    resumed = table(path)
    assert sorted(resumed.candidate) == list(range(60))
    build_database([target(n=60)], tmp_path / "ref.db", workers=0, progress=False)
    ref = table(tmp_path / "ref.db")
    np.testing.assert_array_equal(np.sort(resumed.quality), np.sort(ref.quality))
    con = sqlite3.connect(path)
    statuses = [r[0] for r in con.execute("SELECT status FROM build_log ORDER BY id")]
    assert statuses == ["running", "finished"]  # the killed run never got to write its end


def test_ray_build_matches_the_local_build(tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        build_database([target(n=20)], tmp_path / "ray.db", ray_address="local", progress=False)
    finally:
        ray.shutdown()
    build_database([target(n=20)], tmp_path / "local.db", workers=0, progress=False)
    a, b = table(tmp_path / "ray.db"), table(tmp_path / "local.db")
    assert sorted(a.candidate) == list(range(20))
    np.testing.assert_array_equal(a.quality[np.argsort(a.candidate)], b.quality[np.argsort(b.candidate)])
