"""The native closing: motor-curve actuators, batched rollouts, and agreement with the Python law."""
import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from offline_sim.database import HandSource, ObjectSource, SimEvaluatorFactory  # noqa: E402
from offline_sim.dynamics import (NativeRunner, SimSettings, build_grasp_world,  # noqa: E402
                                  motor_curves, native_end_measures, simulate_grasp)
from offline_sim.hands import BUILTIN_HANDS, builtin_hand, parallel_jaw, three_finger  # noqa: E402
from offline_sim.quality import (MonteCarloSettings, TrialMeasures, evaluate_batched,  # noqa: E402
                                 evaluate_under_uncertainty)
from tests.offline_sim.test_grasp_sim import BOX, CYLINDER, PAD_HALF_M, top_down  # noqa: E402


@pytest.mark.parametrize("hand", BUILTIN_HANDS)
def test_motor_curve_gives_tau_max_at_stall_and_nothing_at_free_speed(hand):
    import mujoco

    model = builtin_hand(hand)
    world = build_grasp_world(CYLINDER, model, closing="native")
    m, d = world.model, world.data
    for c, i in zip(motor_curves(model), world.drives.act_ids):
        d.ctrl[:] = 0.0
        d.ctrl[i] = 1.0
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        assert d.actuator_force[i] == pytest.approx(c.gain)  # full torque at stall
        # drive the actuator's own velocity to v0: the force falls to zero
        v0 = math.copysign(c.free_speed, c.gain)
        d.qvel[:] = np.linalg.lstsq(_moment_row(m, d, i)[None], [v0], rcond=None)[0]
        mujoco.mj_forward(m, d)
        assert d.actuator_force[i] == pytest.approx(0.0, abs=1e-9 * abs(c.gain) + 1e-9)


def _moment_row(m, d, i: int) -> np.ndarray:
    """(nv,) dense moment arm of actuator i (MuJoCo stores it sparse)."""
    import mujoco

    dense = np.zeros((m.nu, m.nv))
    mujoco.mju_sparse2dense(dense, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    return dense[i]


def test_three_finger_curves_follow_the_drive_ratio_and_limits():
    hand = three_finger()
    curves = {c.name: c for c in motor_curves(hand)}
    assert curves["f1_prox"].gain == pytest.approx(1.5) and curves["f1_prox"].free_speed == pytest.approx(2.0)
    assert curves["f1_dist"].gain == pytest.approx(0.8) and curves["f1_dist"].free_speed == pytest.approx(2.0 / 3)


def test_native_closing_lifts_the_box_like_the_python_law():
    T = top_down(0.08, PAD_HALF_M)
    python = simulate_grasp(build_grasp_world(BOX, parallel_jaw()), T)
    runner = NativeRunner(build_grasp_world(BOX, parallel_jaw(), closing="native"))
    trial = runner.run(T[None], hold_for=(0,))[0]
    e = native_end_measures(runner, trial)
    assert python.measure_b == e.measure_b == 1.0
    assert e.measure_c == pytest.approx(python.measure_c, abs=0.02)
    # the jaw stalls on the box long before the cap, and the hold was sampled as in Python
    assert 0.05 < trial.close_time_s < 0.4
    assert trial.hold.n_samples == python.hold.n_samples


def test_native_runner_refuses_a_python_world_and_bad_threads():
    with pytest.raises(ValueError, match="closing='native'"):
        NativeRunner(build_grasp_world(BOX, parallel_jaw()))
    with pytest.raises(ValueError, match="nthread must be an integer >= 1, got 0"):
        NativeRunner(build_grasp_world(BOX, parallel_jaw(), closing="native"), nthread=0)
    with pytest.raises(ValueError, match="closing must be one of python, native, got 'fast'"):
        build_grasp_world(BOX, parallel_jaw(), closing="fast")
    with pytest.raises(ValueError, match="closing must be one of python, native, got 'fast'"):
        SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2, closing="fast")


def test_closing_is_a_recorded_input_of_the_build():
    a = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2)
    b = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2, closing="native")
    c = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2, closing="native", nthread=2)
    assert a.inputs()["closing"] == "python" and b.inputs()["closing"] == "native"
    assert b.inputs() == c.inputs()  # threads do not change results


@pytest.mark.parametrize("n_samples, early", [(20, True), (20, False), (5, True), (10, True), (0, True)])
@pytest.mark.parametrize("b_of", [lambda i: 1.0, lambda i: 0.5 * (i % 3 == 0), lambda i: float(i % 10 != 3)])
def test_batched_monte_carlo_runs_the_same_samples_and_decides_the_same(n_samples, early, b_of):
    """Three batches (nominal, first 10, the rest) give the result of one trial at a time."""
    def measures(T):
        i = 0 if T is None else int(round(abs(T[0, 3]) * 1e6)) % 97  # a function of the sample
        return TrialMeasures(b=b_of(i), c=0.01 * i, a=0.001 * i)

    batches = []

    def batch(Ts):
        batches.append(1 if Ts is None else len(Ts))
        return [measures(None)] if Ts is None else [measures(T) for T in Ts]

    s = MonteCarloSettings(n_samples=n_samples, early_discard=early, seed=3)
    assert evaluate_batched(batch, s) == evaluate_under_uncertainty(measures, s)
    assert len(batches) <= 3 and batches[0] == 1


@pytest.mark.parametrize("hand, obj", [("parallel", "box"), ("three_finger", "cylinder"),
                                       ("underactuated", "cylinder")])
def test_native_agrees_with_python_on_the_same_candidates_and_samples(hand, obj):
    """A small version of benchmarks/validate_native.py: 3 candidates x (nominal + 5 samples)."""
    mc = MonteCarloSettings(n_samples=5, early_discard=False, seed=0)
    py = SimEvaluatorFactory(ObjectSource(obj), HandSource(hand), 3, 0, mc)()
    nat = SimEvaluatorFactory(ObjectSource(obj), HandSource(hand), 3, 0, mc, closing="native")()
    np.testing.assert_array_equal(py.candidates.T_object_hand, nat.candidates.T_object_hand)
    d_b, d_c = [], []
    for k in range(len(py)):
        p, q = py(k), nat(k)
        d_b.append(abs(p.b_mean - q.b_mean))
        d_c.append(abs(p.c_mean - q.c_mean))
        assert q.samples_run == p.samples_run == 5
    assert np.mean(d_b) <= 0.1, d_b
    assert np.mean(d_c) <= 0.1, d_c


def test_threads_do_not_change_the_results():
    mc = MonteCarloSettings(n_samples=4, early_discard=False, seed=1)
    one = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2, 0, mc, closing="native")()
    two = SimEvaluatorFactory(ObjectSource("box"), HandSource("parallel"), 2, 0, mc, closing="native",
                              nthread=2)()
    for k in range(len(one)):
        a, b = one(k), two(k)
        assert (a.b_mean, a.c_mean, a.a_mean) == (b.b_mean, b.c_mean, b.a_mean)


def test_settings_reach_the_rollout_timestep():
    world = build_grasp_world(BOX, parallel_jaw(), closing="native")
    NativeRunner(world, SimSettings(timestep_s=0.0015))
    assert world.model.opt.timestep == 0.0015


def test_shake_runs_the_scheduled_extra_time_and_a_held_box_stays():
    s = SimSettings()
    runner = NativeRunner(build_grasp_world(BOX, parallel_jaw(), closing="native"), s)
    T = top_down(0.08, PAD_HALF_M)
    still, shaken = runner.run(np.stack([T, T]), seed=None)[0], runner.run(T[None], seed=1, shake=True)[0]
    assert shaken.sim_time_s - still.sim_time_s == pytest.approx(s.shake_s, abs=s.control_period_s)
    assert native_end_measures(runner, shaken).measure_b == 1.0
