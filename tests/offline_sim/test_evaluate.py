"""Candidates evaluated by simulation under pose uncertainty, and the `db build` command."""
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from geometry import invert  # noqa: E402
from offline_sim.database import HandSource, ObjectSource, SimEvaluatorFactory  # noqa: E402
from offline_sim.dynamics import (build_grasp_world, place_hand, simulate_grasp,  # noqa: E402
                                  start_collisions)
from offline_sim.hands import parallel_jaw  # noqa: E402
from offline_sim.quality import (MonteCarloSettings, TrialMeasures,  # noqa: E402
                                 evaluate_under_uncertainty, ferrari_canny)
from onboard.cli import PFC_GRIDS, main  # noqa: E402
from scoring import GraspDatabase  # noqa: E402
from tests.offline_sim.test_grasp_sim import BOX, PAD_HALF_M, top_down  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_edge_grasp_scores_lower_than_centred_under_pose_error():
    world = build_grasp_world(BOX, parallel_jaw())

    def under_error(T0):
        def trial(T_err):
            T = T0 if T_err is None else invert(T_err) @ T0
            place_hand(world, T)
            if T_err is not None and start_collisions(world):
                return TrialMeasures(0.0, 0.0, 0.0)
            out = simulate_grasp(world, T)
            a = ferrari_canny(out.contacts.positions, out.contacts.normals, mu=0.8,
                              torque_scale_m=0.05) if len(out.contacts.positions) else 0.0
            return TrialMeasures(out.measure_b, out.measure_c, a)
        return evaluate_under_uncertainty(trial, MonteCarloSettings(n_samples=12, seed=4,
                                                                    early_discard=False))

    centred = under_error(top_down(0.08, PAD_HALF_M))
    edge = under_error(top_down(0.08, -PAD_HALF_M + 0.003))  # fingertips just over the edges
    assert centred.success_rate > edge.success_rate
    assert centred.success_rate * centred.c_mean > edge.success_rate * edge.c_mean
    assert centred.a_mean > 0


def test_evaluator_is_deterministic_and_records_its_diagnostics():
    f = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 3, seed=2,
                            monte_carlo=MonteCarloSettings(n_samples=4))
    a, b = f(), f()
    assert len(a) == 3
    ra, rb = a(1), b(1)
    assert ra.quality == rb.quality and ra.samples_run == rb.samples_run
    assert ra.seed == 2 * 1_000_003 + 1
    assert ra.samples_run == 4 and not ra.discarded_early
    # quality is the reliable share times the pose measure C, each over the samples run
    assert ra.quality == pytest.approx(ra.success_rate * ra.c_mean, abs=1e-12)
    # success is the mean of measure B (0, 0.5 or 1 per sample) over the 4 samples
    assert ra.success_rate * 8 == pytest.approx(round(ra.success_rate * 8), abs=1e-9)
    # the diagnostics are those of candidate 1's nominal grasp, simulated here on its own
    c = f()
    out = simulate_grasp(c.world, c.candidates.T_object_hand[1], preshape=c.candidates.preshape[1])
    assert ra.nominal_ok == (out.measure_b > 0)
    assert (ra.force_var, ra.position_var, ra.normal_var) == pytest.approx(
        (out.hold.force_variation, out.hold.position_variation_m, out.hold.normal_variation),
        rel=1e-9, abs=1e-15)
    np.testing.assert_array_equal(ra.T_object_hand, c.candidates.T_object_hand[1])
    with pytest.raises(IndexError, match="only 3 collision-free candidates"):
        a(3)


def build(*extra, out, objects="box"):
    return main(["db", "build", "--objects", f"builtin:{objects}", "--hand", "parallel",
                 "--out", str(out), *extra])


def test_db_build_writes_a_ranked_database_whatever_the_worker_count(tmp_path):
    both = "box,wedge"
    assert build("--candidates", "3", "--samples", "3", "--workers", "0", out=tmp_path / "a.db",
                 objects=both) == 0
    assert build("--candidates", "3", "--samples", "3", "--workers", "2", out=tmp_path / "b.db",
                 objects=both) == 0
    with GraspDatabase(tmp_path / "a.db") as a, GraspDatabase(tmp_path / "b.db") as b:
        assert a.objects() == ["box", "wedge"]
        for obj in ("box", "wedge"):
            ta, tb = a.grasps(obj, "parallel"), b.grasps(obj, "parallel")
            assert len(ta) == 3
            np.testing.assert_array_equal(ta.candidate, tb.candidate)
            np.testing.assert_array_equal(ta.quality, tb.quality)
            # ranked best first, and the candidates' qualities differ (all zeros also sort)
            assert (np.diff(ta.quality) <= 0).all() and ta.quality[0] > ta.quality[-1]


def test_db_build_with_pfc_stores_it_and_db_top_ranks_by_it(tmp_path, monkeypatch, capsys):
    # a tiny grid keeps the test short; the CLI's choices are the coarse and full grids
    monkeypatch.setitem(PFC_GRIDS, "coarse", (0.01, np.radians(20.0)))
    out = tmp_path / "pfc.db"
    assert build("--candidates", "4", "--samples", "2", "--workers", "0", "--pfc", "coarse",
                 out=out) == 0
    with GraspDatabase(out) as db:
        t = db.grasps("box", "parallel", by="pfc")
    assert np.all((t.pfc >= 0) & (t.pfc <= 1))
    # ranked by it, and the ranking means something: the candidates' P(fc) differ
    assert (np.diff(t.pfc) <= 0).all() and t.pfc[0] > t.pfc[-1]
    # P(fc) is a share of 27 grid poses
    np.testing.assert_allclose(t.pfc * 27, np.round(t.pfc * 27), atol=1e-9)
    capsys.readouterr()
    assert main(["db", "top", str(out), "box", "--hand", "parallel", "--by", "pfc"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()[1:]
    printed = [float(line.split()[7]) for line in lines]
    assert printed == pytest.approx(sorted(t.pfc.tolist(), reverse=True), abs=5e-4)


def test_db_build_refuses_bad_arguments_in_one_line(tmp_path, capsys):
    assert build("--hand", "robotiq", out=tmp_path / "x.db") == 2
    assert "--hand must be one of parallel, three_finger, underactuated" in capsys.readouterr().err
    assert main(["db", "build", "--objects", str(tmp_path), "--hand", "parallel",
                 "--out", str(tmp_path / "x.db")]) == 2
    assert "no meshes" in capsys.readouterr().err
    assert build("--candidates", "0", out=tmp_path / "x.db") == 2
    assert "--candidates must be >= 1, got 0" in capsys.readouterr().err
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("")
    assert build("--cache", str(not_a_folder), out=tmp_path / "x.db") == 2
    err = capsys.readouterr().err
    assert f"--cache {not_a_folder}: cannot be used as a folder" in err and "Traceback" not in err


BUILD = """
import sys
sys.path.insert(0, {root!r})
from onboard.cli import main
sys.exit(main(["db", "build", "--objects", "builtin:box", "--hand", "parallel", "--candidates", "16",
               "--samples", "6", "--workers", "1", "--out", sys.argv[1]]))
"""


def count(path):
    try:
        with GraspDatabase(path) as db:
            return len(db.grasps("box", "parallel")) if "box" in db.objects() else 0
    except Exception:  # noqa: BLE001 - not created yet
        return 0


def test_db_build_killed_and_run_again_loses_and_duplicates_nothing(tmp_path):
    path = tmp_path / "g.db"
    script = BUILD.format(root=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], start_new_session=True,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and count(path) < 1 and proc.poll() is None:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = count(path)
    assert partial >= 1
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"{partial} already there" in out.stdout
    n = len(SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 16)())
    with GraspDatabase(path) as db:
        assert sorted(db.grasps("box", "parallel").candidate) == list(range(n))
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM grasps").fetchone()[0] == n


def _box_obj(path: Path, half: tuple[float, float, float]) -> None:
    """A closed box mesh (OBJ, metres) centred at the origin."""
    hx, hy, hz = half
    v = [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)]
    faces = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in v)
                    + "".join("f " + " ".join(map(str, f)) + "\n" for f in faces))


@pytest.mark.slow
def test_db_build_on_a_ray_cluster_started_by_the_test_matches_the_local_build(tmp_path,
                                                                               one_ray_at_a_time):
    pytest.importorskip("ray")
    pytest.importorskip("coacd")
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    _box_obj(meshes / "brick.obj", (0.025, 0.04, 0.03))
    from benchmarks.bench_ray_scale import free_port  # clear of Ray's own ports

    port = free_port()
    # a throwaway cluster on this machine: no usage reports, and no token authentication
    # (Ray's default for a `ray start` cluster; a real one passes RAY_AUTH_TOKEN instead)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    ray_bin = Path(sys.executable).parent / "ray"
    started = subprocess.run([str(ray_bin), "start", "--head", f"--port={port}", "--num-cpus=2",
                              "--include-dashboard=false", "--disable-usage-stats"],
                             capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)
    assert started.returncode == 0, started.stderr
    args = ["-m", "onboard.cli", "db", "build", "--objects", str(meshes), "--hand", "parallel",
            "--candidates", "6", "--samples", "3", "--cache", str(tmp_path / "cache")]
    try:
        on_ray = subprocess.run([sys.executable, *args, "--ray", f"127.0.0.1:{port}",
                                 "--out", str(tmp_path / "ray.db")],
                                capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    finally:
        subprocess.run([str(ray_bin), "stop", "--force"], capture_output=True, timeout=120, env=env)
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    local = subprocess.run([sys.executable, *args, "--workers", "0", "--out", str(tmp_path / "local.db")],
                           capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert local.returncode == 0, local.stderr[-2000:]
    with GraspDatabase(tmp_path / "ray.db") as a, GraspDatabase(tmp_path / "local.db") as b:
        ta, tb = a.grasps("brick", "parallel"), b.grasps("brick", "parallel")
    assert len(ta) == len(tb) >= 1
    np.testing.assert_array_equal(ta.candidate, tb.candidate)
    np.testing.assert_array_equal(ta.quality, tb.quality)


def test_evaluators_with_a_candidates_cache_draw_once_and_get_the_same_candidates(tmp_path,
                                                                                  monkeypatch):
    import offline_sim.database._candidates as candidates_module  # counts the evaluators' draws

    draws = []
    real = candidates_module.pregrasp_candidates
    monkeypatch.setattr(candidates_module, "pregrasp_candidates",
                        lambda *a, **k: draws.append(1) or real(*a, **k))
    plain = SimEvaluatorFactory(ObjectSource("box"), HandSource("three_finger"), 12, seed=3)()
    assert len(draws) == 1
    cached = SimEvaluatorFactory(ObjectSource("box"), HandSource("three_finger"), 12, seed=3,
                                 candidates_cache_dir=str(tmp_path))
    first, second = cached(), cached()
    assert len(draws) == 2  # the second evaluator (another worker) read the file
    (path,) = (tmp_path / "candidates").glob("*.npz")
    for ev in (first, second):
        for name in ("T_object_hand", "approach", "depth_m", "roll_rad", "source", "preshape"):
            np.testing.assert_array_equal(getattr(ev.candidates, name),
                                          getattr(plain.candidates, name))
    # another seed is another draw, in its own file
    SimEvaluatorFactory(ObjectSource("box"), HandSource("three_finger"), 12, seed=4,
                        candidates_cache_dir=str(tmp_path))()
    assert len(draws) == 3 and len(list((tmp_path / "candidates").glob("*.npz"))) == 2
    # a torn file is drawn again and replaced
    path.write_bytes(path.read_bytes()[:100])
    again = cached()
    assert len(draws) == 4
    np.testing.assert_array_equal(again.candidates.T_object_hand, plain.candidates.T_object_hand)
    cached()
    assert len(draws) == 4


def test_a_candidates_cache_that_cannot_be_written_is_named_and_the_evaluator_still_works(tmp_path,
                                                                                          capsys):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    ev = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 4, seed=3,
                             candidates_cache_dir=str(blocked))()
    assert len(ev) == 4 and ev(0).candidate == 0
    err = capsys.readouterr().err
    assert "not cached in" in err and str(blocked) in err
