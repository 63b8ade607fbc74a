"""Database builds: parallel workers, the same results for any worker count, resume."""
import functools
import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("scipy")

from offline_sim.database import (BuildInputsChanged, BuildTarget,  # noqa: E402
                                  GraspDatabaseWriter, GraspRecord, MAX_EVALUATORS, build_database)
from offline_sim.quality import (MonteCarloSettings, TrialMeasures,  # noqa: E402
                                 evaluate_under_uncertainty, ferrari_canny)
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
    delay_from: int = 0  # candidates from this index on take delay_s longer
    mark_dir: str | None = None  # touch a file named k here when candidate k is evaluated
    fail_at: int | None = None  # this candidate raises, as a broken mesh or model would

    def __call__(self, k: int) -> GraspRecord:
        if k == self.fail_at:
            raise ValueError(f"candidate {k}: the evaluator failed")
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

        if self.delay_s and k >= self.delay_from:
            time.sleep(self.delay_s)
        r = evaluate_under_uncertainty(trial, MonteCarloSettings(n_samples=self.samples,
                                                                 seed=self.seed * 100003 + k))
        T = np.eye(4)
        T[1, 3] = offset
        if self.mark_dir:
            open(os.path.join(self.mark_dir, str(k)), "w").close()
        return GraspRecord(candidate=k, T_object_hand=T, nominal_ok=r.nominal.b > 0,
                           samples_run=r.samples_run, discarded_early=r.discarded_early,
                           success_rate=r.success_rate, quality=r.success_rate * r.c_mean,
                           a_mean=r.a_mean, b_mean=r.b_mean, c_mean=r.c_mean, seed=self.seed)


def target(n=40, seed=1, delay_s=0.0, delay_from=0, *, obj="bar", hand="planar_jaw",
           mu=0.4, mesh="bar-mesh-v1", mark_dir=None):
    """A build target of the planar jaw on a bar; its recorded inputs are the hand's mu, the
    mesh digest and the seed (the Monte Carlo settings)."""
    return BuildTarget(obj, hand, "1", {"mu": mu}, n,
                       functools.partial(PlanarJawEvaluator, seed=seed, mu=mu, delay_s=delay_s,
                                         delay_from=delay_from, mark_dir=mark_dir),
                       {"radius_m": 0.05, "mesh_sha256": mesh}, {"monte_carlo": f"seed={seed}"})


@dataclass(frozen=True)
class BuildCountingFactory:
    """Builds PlanarJawEvaluator and leaves a file in mark_dir per build, so that a test
    counts how often a process built the evaluator of a target."""

    mark_dir: str
    seed: int = 1

    def __call__(self) -> PlanarJawEvaluator:
        n = len(os.listdir(self.mark_dir))
        open(os.path.join(self.mark_dir, f"seed{self.seed}-{n}"), "w").close()
        return PlanarJawEvaluator(seed=self.seed)


def table(path, obj="bar", hand="planar_jaw"):
    with GraspDatabase(path) as db:
        return db.grasps(obj, hand)


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
from offline_sim.database import build_database
from tests.offline_sim.test_build import target
build_database([target(n=60, delay_s=0.05)], sys.argv[1], workers=2, progress=False)
print("finished", flush=True)
"""


def _shell_sigint() -> None:
    """In a build's child process before exec: Ctrl-C as a shell leaves it (the default), not
    as the test worker that starts it may have it (ignored), which the child would inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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


def test_ray_build_matches_the_local_build_and_shuts_down_the_runtime_it_started(tmp_path,
                                                                                one_ray_at_a_time):
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    build_database([target(n=20)], tmp_path / "ray.db", ray_address="local", progress=False)
    assert not ray.is_initialized()  # the build started it, the build shut it down
    build_database([target(n=20)], tmp_path / "local.db", workers=0, progress=False)
    a, b = table(tmp_path / "ray.db"), table(tmp_path / "local.db")
    assert sorted(a.candidate) == list(range(20))
    np.testing.assert_array_equal(a.quality[np.argsort(a.candidate)], b.quality[np.argsort(b.candidate)])


def test_resume_with_changed_inputs_stops_naming_each_changed_input_and_keeps_the_rows(tmp_path):
    path = tmp_path / "g.db"
    build_database([target(n=10), target(n=5, obj="cup")], path, workers=0, progress=False)
    before = table(path)
    with pytest.raises(BuildInputsChanged) as info:
        build_database([target(n=10, seed=2, mu=0.5), target(n=5, obj="cup", mesh="bar-mesh-v2")],
                       path, workers=0, progress=False)
    assert info.value.changes == {"bar/planar_jaw": ["hand", "monte_carlo"],
                                  "cup/planar_jaw": ["mesh"]}
    assert "bar/planar_jaw changed hand, monte_carlo; cup/planar_jaw changed mesh" in str(info.value)
    after = table(path)
    np.testing.assert_array_equal(after.candidate, before.candidate)
    np.testing.assert_array_equal(after.quality, before.quality)
    con = sqlite3.connect(path)
    # refused before it started: no build was logged for it
    assert [r[0] for r in con.execute("SELECT status FROM build_log")] == ["finished"]


def test_resume_with_changed_inputs_and_restart_rebuilds_only_the_changed_target(tmp_path):
    path = tmp_path / "g.db"
    build_database([target(n=10), target(n=5, obj="cup")], path, workers=0, progress=False)
    cup_before = table(path, "cup")
    s = build_database([target(n=10, seed=2, mu=0.5), target(n=5, obj="cup")], path, workers=0,
                       progress=False, on_change="restart")
    assert s.restarted == ["bar/planar_jaw"] and (s.evaluated, s.skipped) == (10, 5)
    bar = table(path)
    assert sorted(bar.candidate) == list(range(10))
    ref = tmp_path / "ref.db"
    build_database([target(n=10, seed=2, mu=0.5)], ref, workers=0, progress=False)
    want = table(ref)
    np.testing.assert_array_equal(bar.quality, want.quality)  # the new inputs' results alone
    np.testing.assert_array_equal(table(path, "cup").quality, cup_before.quality)
    with GraspDatabase(path) as db:
        assert db.hand_params("planar_jaw") == {"mu": 0.5}
        state = {(t.object_name, t.status, t.done, t.n_candidates) for t in db.targets()}
    assert state == {("bar", "finished", 10, 10), ("cup", "finished", 5, 5)}
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM grasps").fetchone()[0] == 15
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 15
    # the same inputs again: nothing to do, nothing restarted
    s = build_database([target(n=10, seed=2, mu=0.5)], path, workers=0, progress=False)
    assert (s.evaluated, s.skipped, s.restarted) == (0, 10, [])


def test_schema_1_database_is_migrated_and_its_unrecorded_grasps_are_not_reused(tmp_path):
    path = tmp_path / "old.db"
    build_database([target(n=4)], path, workers=0, progress=False)
    con = sqlite3.connect(path)  # make it what a schema-1 build left
    con.executescript("DROP TABLE targets; ALTER TABLE build_log DROP COLUMN pid; "
                      "UPDATE meta SET value='1' WHERE key='schema_version';")
    con.close()
    with pytest.raises(BuildInputsChanged, match="bar/planar_jaw was built before inputs were recorded"):
        build_database([target(n=4)], path, workers=0, progress=False)
    s = build_database([target(n=4)], path, workers=0, progress=False, on_change="restart")
    assert s.restarted == ["bar/planar_jaw"] and s.evaluated == 4
    with GraspDatabase(path) as db:
        assert [(t.done, t.status) for t in db.targets()] == [(4, "finished")]


SLOW = """
import sys
sys.path.insert(0, {root!r})
from offline_sim.database import build_database
from tests.offline_sim.test_build import target
# candidate 0 returns at once, every other one takes a minute: no second result arrives soon
build_database([target(n=6, delay_s=60.0, delay_from=1, mark_dir=sys.argv[2])], sys.argv[1],
               workers=2, chunk=1, progress=False)
"""


def test_ctrl_c_writes_the_result_that_waits_for_its_batch(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path, marks = tmp_path / "g.db", tmp_path / "marks"
    marks.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", SLOW.format(root=root), str(path), str(marks)],
                            start_new_session=True, preexec_fn=_shell_sigint,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (marks / "0").exists():
            time.sleep(0.02)
        time.sleep(0.3)  # candidate 0 reaches the main process, well before its timed flush
        before = written(path)
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert before == 0
    assert list(table(path).candidate) == [0]
    con = sqlite3.connect(path)
    assert con.execute("SELECT status FROM build_log").fetchall() == [("interrupted",)]


def test_a_finished_result_is_written_on_a_timer_when_no_other_result_arrives(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = tmp_path / "g.db"
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", SLOW.format(root=root), str(path), str(marks)],
                            start_new_session=True)
    try:
        deadline = time.time() + 40  # start-up (imports, the pool) on a loaded machine
        while time.time() < deadline and not (marks / "0").exists():
            time.sleep(0.02)
        assert (marks / "0").exists(), "candidate 0 was never evaluated"
        finished = time.time()  # the worker touches the mark as it returns the result
        written = []
        # the promise: written within FLUSH_EVERY_S (2 s) + a tick of the main loop, though no
        # other result arrives (the next one is 60 s away); stop looking well after that
        while time.time() < finished + 10 and not written:
            time.sleep(0.05)
            try:
                written = list(table(path).candidate)
            except Exception:  # noqa: BLE001 - the file or its target is not there yet
                pass
        took = time.time() - finished
        assert proc.poll() is None  # still busy with the slow candidates
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert written == [0]
    # 2 s + 0.25 s tick, with a margin for a loaded 2-core machine (a 30 s flush fails here)
    assert took < 5.0, f"the finished grasp was written {took:.1f} s after it was evaluated"



def test_hand_digest_follows_the_hand_parameters_and_mjcf(tmp_path):
    pytest.importorskip("mujoco")
    from offline_sim.database import hand_digest
    from offline_sim.hands import parallel_jaw

    base = hand_digest(parallel_jaw())
    assert hand_digest(parallel_jaw()) == base
    assert hand_digest(parallel_jaw(pad_friction=0.9)) != base  # only in the MJCF text
    assert hand_digest(parallel_jaw(force_limit_n=50.0)) != base  # the drive and the MJCF
    # and the same in another process (what a resumed build compares against)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); "
                          "from offline_sim.database import hand_digest; "
                          "from offline_sim.hands import parallel_jaw; "
                          "print(hand_digest(parallel_jaw()))"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == base, out.stderr


HANDS = ("jaw_a", "jaw_b", "jaw_c")


def targets_10x3(n=8, delay_s=0.0):
    """Ten objects x three hands, each target with its own seed (so rows cannot be swapped)."""
    return [target(n=n, seed=3 * i + j, delay_s=delay_s, obj=f"obj{i}", hand=h, mesh=f"m{i}")
            for i in range(10) for j, h in enumerate(HANDS)]


MULTI = """
import sys
sys.path.insert(0, {root!r})
from offline_sim.database import build_database
from tests.offline_sim.test_build import targets_10x3
mode = sys.argv[2]
kw = dict(ray_address="local") if mode == "ray" else dict(workers=2)
build_database(targets_10x3(delay_s=0.04), sys.argv[1], chunk=1, progress=False, **kw)
print("finished", flush=True)
"""


def written(path) -> int:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:  # not created yet
        return 0


def interrupt_at(path, mode, at_least, sig):
    """Start the 10 x 3 build, send sig to its process group once at_least grasps are written
    (as a crash or a terminal's Ctrl-C would), and wait for it to end."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen([sys.executable, "-c", MULTI.format(root=root), str(path), mode],
                            start_new_session=True, preexec_fn=_shell_sigint, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    deadline = time.time() + 240
    while time.time() < deadline and written(path) < at_least and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return written(path)


def resume(path, mode):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", MULTI.format(root=root), str(path), mode],
                         capture_output=True, text=True, timeout=600)
    assert "finished" in out.stdout, out.stderr[-3000:]


def assert_same_as_a_clean_build(path, tmp_path):
    ref = tmp_path / "ref.db"
    build_database(targets_10x3(), ref, workers=0, progress=False)
    for t in targets_10x3():
        got, want = table(path, t.object_name, t.hand_name), table(ref, t.object_name, t.hand_name)
        assert sorted(got.candidate) == list(range(8)), t.key
        np.testing.assert_array_equal(got.candidate, want.candidate)
        np.testing.assert_array_equal(got.quality, want.quality)
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM grasps").fetchone()[0] == 240  # nothing twice
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 240
    with GraspDatabase(path) as db:
        assert {(t.status, t.done) for t in db.targets()} == {("finished", 8)}
    return [r[0] for r in con.execute("SELECT status FROM build_log ORDER BY id")]


def test_10_objects_x_3_hands_killed_and_interrupted_at_several_points_resume_without_loss(tmp_path):
    path = tmp_path / "g.db"
    counts = [interrupt_at(path, "processes", 1, signal.SIGKILL),
              interrupt_at(path, "processes", 90, signal.SIGINT),
              interrupt_at(path, "processes", 200, signal.SIGKILL)]
    assert counts[0] >= 1 and counts[1] >= 90 and counts[2] >= 200
    # Ctrl-C wrote every grasp that build had received before it ended
    con = sqlite3.connect(path)
    message = con.execute("SELECT message FROM build_log WHERE status='interrupted'").fetchone()[0]
    con.close()
    assert json.loads(message)["evaluated"] == counts[1] - counts[0]
    resume(path, "processes")
    statuses = assert_same_as_a_clean_build(path, tmp_path)
    assert statuses == ["running", "interrupted", "running", "finished"]


@pytest.mark.slow
def test_10_objects_x_3_hands_on_ray_killed_and_interrupted_resume_without_loss(tmp_path,
                                                                               one_ray_at_a_time):
    pytest.importorskip("ray")
    path = tmp_path / "g.db"
    counts = [interrupt_at(path, "ray", 40, signal.SIGKILL),
              interrupt_at(path, "ray", 150, signal.SIGINT)]
    assert counts[0] >= 40 and counts[1] >= 150
    resume(path, "ray")
    statuses = assert_same_as_a_clean_build(path, tmp_path)
    assert statuses == ["running", "interrupted", "finished"]


def test_progress_is_one_bar_over_all_targets_with_rate_eta_and_targets_finished(tmp_path, capsys):
    build_database(targets_10x3(n=2)[:4], tmp_path / "g.db", workers=0, progress=True)
    err = capsys.readouterr().err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("build: 100%") and "8/8" in last and "grasp/s" in last
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", last)  # elapsed < ETA
    assert "targets=4/4" in last
    assert "obj1/jaw_a: finished (2 grasps now, 2 in all)" in err


def test_a_failing_candidate_fails_the_build_with_its_message_and_keeps_the_rest(tmp_path):
    t = target(n=12)
    broken = BuildTarget(t.object_name, t.hand_name, t.hand_version, t.hand_params, 12,
                         functools.partial(PlanarJawEvaluator, seed=1, fail_at=9), t.object_info,
                         t.inputs)
    with pytest.raises(ValueError, match="candidate 9: the evaluator failed"):
        build_database([broken], tmp_path / "g.db", workers=2, chunk=1, progress=False)
    con = sqlite3.connect(tmp_path / "g.db")
    status, message = con.execute("SELECT status, message FROM build_log").fetchone()
    assert status == "failed" and "candidate 9" in message
    kept = written(tmp_path / "g.db")
    assert kept >= 1 and 9 not in table(tmp_path / "g.db").candidate
    s = build_database([t], tmp_path / "g.db", workers=2, progress=False)
    assert s.skipped == kept and s.evaluated == 12 - kept


def test_ctrl_c_inside_a_database_transaction_ends_the_build_at_the_next_batch_with_all_written(
        tmp_path, monkeypatch):
    """A SIGINT that arrives between SQLite's BEGIN and COMMIT (the window that once left the
    connection mid-transaction and the build's status 'running') is honoured between batches."""
    from offline_sim.database import _writer  # the writer's private transaction is what is patched

    begin = _writer._Transaction.__enter__
    entered = []

    def begin_then_ctrl_c(self):
        begin(self)
        entered.append(1)
        if len(entered) == 6:  # a few batches in: as if the user pressed Ctrl-C right now
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(_writer._Transaction, "__enter__", begin_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            build_database([target(n=40)], tmp_path / "g.db", workers=0, chunk=1, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    con = sqlite3.connect(tmp_path / "g.db")
    status, message = con.execute("SELECT status, message FROM build_log").fetchone()
    kept = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert status == "interrupted" and json.loads(message)["evaluated"] == kept
    assert 1 <= kept < 40  # stopped early, and what was evaluated was written
    s = build_database([target(n=40)], tmp_path / "g.db", workers=0, progress=False)
    assert s.skipped == kept and s.evaluated == 40 - kept


def test_a_worker_keeps_the_evaluators_of_its_last_targets_only(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()

    def counted(seed):
        return BuildTarget(f"bar{seed}", "planar_jaw", "1", {"mu": 0.4}, 2,
                           BuildCountingFactory(str(marks), seed),
                           {"radius_m": 0.05, "mesh_sha256": "bar-mesh-v1"},
                           {"monte_carlo": f"seed={seed}"})

    def builds(seed):
        return sum(p.name.startswith(f"seed{seed}-") for p in marks.iterdir())

    seeds = range(100, 101 + MAX_EVALUATORS)  # one more target than a process keeps
    build_database([counted(s) for s in seeds], tmp_path / "a.db", workers=0, progress=False)
    assert [builds(s) for s in seeds] == [1] * len(seeds)
    # built again in another database: the last targets' evaluators are still there, the
    # first one's was let go
    build_database([counted(seeds[-1])], tmp_path / "b.db", workers=0, progress=False)
    build_database([counted(seeds[0])], tmp_path / "c.db", workers=0, progress=False)
    assert builds(seeds[-1]) == 1 and builds(seeds[0]) == 2
