"""Kim's closing law as native MuJoCo actuation, and a batch of trials rolled out by ``mujoco.rollout``.

The Python path (_controller.ClosingLaw) advances position-servo targets at v = v0 (1 - τ/τm)
every control period. Here each closing actuator is instead the motor curve of Kim eq. 1
itself: an affine actuator with gain τm on ctrl = 1 and bias -τm/v0 on its own velocity
(joint, or tendon length for the tendon hand), so that τ = τm (1 - v/v0): full torque at
stall, none at the free speed v0. It has no force range (see native_closing_spec): the force
exceeds τm only while the finger is back-driven, which Kim's non-back-drivable fingers allow.
A drive that moves several actuators gets one motor curve per actuator, each at v0 times its
ratio (the gain's sign is the closing direction). The lift, hold and shake are the carrier
servos' targets, precomputed per step from LiftSchedule exactly as the Python path sets them
once per control period. A trial then
needs no Python per control step: a batch of trials is one ``mujoco.rollout`` call per closing
chunk and one for the whole lift.

Where it departs from the Python law (validated against it in tests/offline_sim/test_native.py
and the table in docs/figures.md, "The native closing against the Python
one"):

- BH8 breakaway clutch: the proximal and distal joints of a finger have a motor curve each
  (τm 1.5 and 0.8 N·m; v0 and v0/3, the drive's ratio). A clutch cannot slip inside an
  open-loop rollout, so the closing runs in chunks of CLOSE_CHUNK_STEPS and reads every
  leader's force at every step (actuatorfrc sensors): at the first step where a leader reaches
  the breakaway torque (from MIN_SLIP_S on), that trial rewinds to the state of that step and,
  in its own model copy, the leader's motor becomes the hand's position servo with its target
  breakaway/kp ahead of the joint: locked where the Python law leaves it, pressing with the
  breakaway torque and holding up to the servo's τm. The distal motor goes on alone. Two
  departures remain: before the slip the two joints are not geared together (a distal link
  blocked first does not slow the proximal one, as the Python drive's shared speed does), and
  a motor starts at full torque, so a slip before MIN_SLIP_S is not seen. A first version
  without the lock (the proximal motor running on at τm, or capped at the breakaway torque)
  pushed the object across the hand: measure C fell from 0.45 to 0.06 on a cylinder grasp the
  Python law holds still, which is why the lock is there.
- Closing ends when every closing actuator's force is at stall_torque_fraction of its curve's
  gain (a slipped leader counts as stalled, as in the Python law), after 0.05 s as in the
  Python path; the trial goes on to the lift from the state of that step. So Python runs
  between chunks of 10 steps while a batch closes, never per step, and not at all in the lift.
- The drop test looks at the last state only (the Python path stops a trial early once the
  object's COM is drop_distance_m from the TCP): a dropped object lies on the table, which
  fails the lift test either way.
- Contacts and poses are read after mj_setState + mj_forward of a rolled-out state, one step
  later than the Python path reads them (it reads the contacts of the forward pass inside the
  last mj_step).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from ._controller import LiftSchedule, shake_direction
from ..hands import HandModel
from ._measures import HoldDiagnostics, HoldSampler
from ._sim_settings import SimSettings

CLOSINGS = ("python", "native")
CLOSE_CHUNK_STEPS = 10   # closing rollout length (30 ms at 3 ms): stall and slip are read at every step
MIN_CLOSE_S = 0.05       # the Python path's: the first steps of a drive have no torque yet
# A motor curve starts at full torque (v = 0) and falls as the finger speeds up to v0 (a time
# constant of I v0/τm, 7 ms on the BH8 proximal); a clutch slips on load, not on that start,
# so it may slip from this time on. The Python servo reaches 0.9 N·m after ~15-20 ms at v0.
MIN_SLIP_S = 0.02
SENSOR_PREFIX = "closing_force/"


def check_closing(closing: str) -> str:
    """closing if it names a closing implementation (CLOSINGS), else ValueError naming it."""
    if closing not in CLOSINGS:
        raise ValueError(f"closing must be one of {', '.join(CLOSINGS)}, got {closing!r}")
    return closing


@dataclass(frozen=True)
class MotorCurve:
    """One closing actuator as Kim's motor curve τ = gain (1 - v/v0), in the actuator's units.

    name : actuator name in the hand; gain : stall torque or force (N·m or N, signed to close);
    free_speed : v0 at this actuator (rad/s or m/s, > 0).
    """

    name: str
    gain: float
    free_speed: float


def motor_curves(hand: HandModel) -> list[MotorCurve]:
    """The motor curves of the hand's closing actuators, in drive order: τm at v0 x ratio."""
    out = []
    for drive in hand.drives:
        for name, ratio, tau in zip(drive.actuators, drive.ratios, drive.torque_limits):
            out.append(MotorCurve(name, math.copysign(tau, ratio), abs(drive.closing_speed * ratio)))
    return out


def native_closing_spec(spec, hand: HandModel, prefix: str) -> list[MotorCurve]:
    """Turn the hand's closing servos in spec (a mujoco.MjSpec, names prefixed) into motor
    curves switched on by ctrl = 1, and add an actuatorfrc sensor for each; returns the curves."""
    import mujoco

    curves = motor_curves(hand)
    for c in curves:
        a = spec.actuator(prefix + c.name)
        if a is None:
            raise ValueError(f"hand {hand.name!r}: no closing actuator named {c.name!r}")
        a.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        a.gainprm = [c.gain] + [0.0] * 9
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        a.biasprm = [0.0, 0.0, -abs(c.gain) / c.free_speed] + [0.0] * 7  # damping τm/v0
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        a.ctrlrange = [0.0, 1.0]
        # No force range: MuJoCo drops the implicit derivative of a clamped actuator, and the
        # curve's damping τm/v0 (1200 N·s/m on the jaw) is far too stiff for explicit 3 ms steps
        # (it rings between the limits). Unclamped, the motor gives τm at stall exactly and more
        # only while back-driven (Kim: the fingers are not back-drivable). A pull-only servo (a
        # tendon) stays pull-only.
        lo, hi = a.forcerange
        pull_only = (a.forcelimited != mujoco.mjtLimited.mjLIMITED_FALSE
                     and hi > lo and lo * c.gain >= 0 and hi * c.gain >= 0)
        if pull_only:
            a.forcerange = [0.0, 1e10] if c.gain > 0 else [-1e10, 0.0]
        else:
            a.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        spec.add_sensor(name=SENSOR_PREFIX + c.name, type=mujoco.mjtSensor.mjSENS_ACTUATORFRC,
                        objtype=mujoco.mjtObj.mjOBJ_ACTUATOR, objname=prefix + c.name)
    return curves


@dataclass(frozen=True)
class ClutchServos:
    """Per closing actuator (drive order): breakaway (N·m, inf where no clutch slips: not a
    leader, or no clutch), and the hand's own position servo (kp, kv, forcerange (A, 2)) that
    holds a slipped leader as the Python law's servo does."""

    breakaway: np.ndarray
    kp: np.ndarray
    kv: np.ndarray
    forcerange: np.ndarray


def clutch_servos(world) -> ClutchServos:
    """The ClutchServos of a world's hand, read from the hand's MJCF compiled alone (its
    closing actuators there are still the position servos)."""
    import mujoco

    hand = world.hand
    m = hand.spec().compile()
    breakaway, kp, kv, fr = [], [], [], []
    for drive in hand.drives:
        for k, name in enumerate(drive.actuators):
            i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
            clutch = k == 0 and drive.breakaway_torque_nm is not None and len(drive.actuators) > 1
            breakaway.append(drive.breakaway_torque_nm if clutch else np.inf)
            kp.append(m.actuator_gainprm[i, 0])
            kv.append(-m.actuator_biasprm[i, 2])
            fr.append(m.actuator_forcerange[i] if m.actuator_forcelimited[i] else (-np.inf, np.inf))
    return ClutchServos(np.array(breakaway), np.array(kp), np.array(kv), np.array(fr, np.float64))


@dataclass(frozen=True)
class NativeTrial:
    """What a rolled-out trial leaves for the measures.

    collided : the hand penetrated the object at the start (not simulated); model : the
    MjModel it ran in (its own mount pose; the runner reuses it, so it holds this trial's
    pose only until the runner's next run); state : (nstate,) full physics state at its end;
    T_ref : (4, 4) object in the TCP frame at the start; com_ref : (3,) object COM in the TCP
    frame at the start (m); close_time_s, sim_time_s : closing end and trial end (s);
    hold : BLEM diagnostics over the hold (only where asked for).
    """

    collided: bool
    model: object
    state: np.ndarray
    T_ref: np.ndarray
    com_ref: np.ndarray
    close_time_s: float
    sim_time_s: float
    hold: HoldDiagnostics | None


class NativeRunner:
    """Rolls out batches of grasp trials of one native world (build_grasp_world(closing="native")).

    nthread : threads of the rollout pool (one MjData each); persistent_pool : keep MuJoCo's
    pool between calls. Each trial of a batch gets its own copy of the model (the hand's mount
    pose is a model parameter), kept and reused across batches.
    """

    def __init__(self, world, settings: SimSettings = SimSettings(), *, nthread: int = 1,
                 persistent_pool: bool = False) -> None:
        import mujoco

        if getattr(world, "closing", "python") != "native":
            raise ValueError("NativeRunner needs a world built with closing='native', got "
                             f"closing={getattr(world, 'closing', None)!r}")
        if isinstance(nthread, bool) or not isinstance(nthread, int) or nthread < 1:
            raise ValueError(f"nthread must be an integer >= 1, got {nthread!r}")
        self.world, self.settings = world, settings
        self.nthread, self.persistent_pool = nthread, persistent_pool
        m = world.model
        m.opt.timestep, m.opt.impratio = settings.timestep_s, settings.impratio
        self._models: list = []
        self._datas = [mujoco.MjData(m) for _ in range(nthread)]
        self._spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self._nstate = mujoco.mj_stateSize(m, self._spec)
        self._gain = m.actuator_gainprm[world.drives.act_ids, 0].copy()
        # the closing forces' places in sensordata (a user's hand may bring sensors of its own)
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, int(i)) for i in world.drives.act_ids]
        self._sensor_adr = np.array([m.sensor_adr[mujoco.mj_name2id(
            m, mujoco.mjtObj.mjOBJ_SENSOR, SENSOR_PREFIX + n[len(world.hand_prefix):])] for n in names])
        self._spp = max(1, round(settings.control_period_s / settings.timestep_s))
        self._clutch = clutch_servos(world)

    def _model(self, j: int):
        """The j-th trial model of a batch (a copy of the world's, made once), its clutches
        engaged (every closing actuator a motor curve again)."""
        while len(self._models) <= j:
            self._models.append(copy.deepcopy(self.world.model))
        m, w = self._models[j], self.world.model
        ids = self.world.drives.act_ids
        for name in ("actuator_gainprm", "actuator_biasprm", "actuator_forcelimited", "actuator_forcerange"):
            getattr(m, name)[ids] = getattr(w, name)[ids]
        return m

    def _start(self, T_object_hand: np.ndarray, preshape, j: int, check: bool):
        """Place the hand for trial j; (collided, state, ctrl, T_ref, com_ref) of its start."""
        import mujoco

        from ._grasp_world import place_hand, start_collisions

        w = self.world
        place_hand(w, T_object_hand, preshape, self.settings)
        collided = check and bool(start_collisions(w))
        m = self._model(j)
        m.body_pos[w.mount_body] = w.model.body_pos[w.mount_body]
        m.body_quat[w.mount_body] = w.model.body_quat[w.mount_body]
        m.opt.timestep, m.opt.impratio = w.model.opt.timestep, w.model.opt.impratio
        state = np.empty(self._nstate)
        mujoco.mj_getState(w.model, w.data, state, self._spec)
        ctrl = w.data.ctrl.copy()
        ctrl[w.drives.act_ids] = 1.0  # the motors run from the start
        probe = w.probe
        return collided, state, ctrl, probe.T_hand_object(w.data), probe.com_in_hand(w.data)

    def _rollout(self, models: list, states: np.ndarray, control: np.ndarray, nstep: int):
        """(states (n, nstep, nstate), sensordata (n, nstep, nsensor)) of one rollout call."""
        from mujoco import rollout

        return rollout.rollout(models, self._datas, states, control, nstep=nstep,
                               persistent_pool=self.persistent_pool)

    def _events(self, force: np.ndarray, slipped: np.ndarray, t0_s: np.ndarray,
                left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per trial of a chunk: (first step of a stall, first step of a clutch slip), -1 for
        none, in force (n, nstep, A) of which each trial's first left (n,) steps count (a trial
        closing less than the chunk stops at the cap); t0_s (n,) : closing time at each
        trial's chunk start.

        Stall: every motor at the stall fraction of its gain after MIN_CLOSE_S, a slipped
        leader counting as stalled (the Python law stops it). Slip: a leader of a drive with a
        clutch, not slipped yet (slipped (n, A) bool), at its breakaway torque. The whole
        chunk of the batch at once (one trial at a time cost ~27 µs of numpy per trial and chunk)."""
        dt = self.settings.timestep_s
        k = np.arange(force.shape[1])
        t = t0_s[:, None] + dt * (k + 1)[None, :]            # (n, nstep) time at each step's end
        counts = k[None, :] < left[:, None]                   # (n, nstep) steps within the cap
        sl = slipped[:, None, :]
        ok = np.all((force / self._gain >= self.settings.stall_torque_fraction) | sl, axis=2)
        stall = ok & (t > MIN_CLOSE_S) & counts
        slip = (np.any((force * np.sign(self._gain) >= self._clutch.breakaway) & ~sl, axis=2)
                & (t >= MIN_SLIP_S) & counts)
        return (np.where(stall.any(axis=1), stall.argmax(axis=1), -1),
                np.where(slip.any(axis=1), slip.argmax(axis=1), -1))

    def _slip(self, model, state: np.ndarray, ctrl: np.ndarray, force: np.ndarray,
              slipped: np.ndarray) -> None:
        """The clutch of every leader at its breakaway torque in force (A,) slips: in model its
        motor becomes the Python path's servo, its target (in ctrl) where the Python law left
        it, breakaway/kp ahead of the joint; slipped (A,) is updated in place."""
        c, ids = self._clutch, self.world.drives.act_ids
        now = np.flatnonzero((force * np.sign(self._gain) >= c.breakaway) & ~slipped)
        d = self.set_state(model, state)
        for a in now:
            i = ids[a]
            model.actuator_gainprm[i, :3] = (c.kp[a], 0.0, 0.0)
            model.actuator_biasprm[i, :3] = (0.0, -c.kp[a], -c.kv[a])
            model.actuator_forcelimited[i] = 1
            model.actuator_forcerange[i] = c.forcerange[a]
            ctrl[i] = d.actuator_length[i] + math.copysign(c.breakaway[a] / c.kp[a], self._gain[a])
            slipped[a] = True

    def _close(self, models: list, states: np.ndarray, ctrl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Close every trial until it stalls or close_max_s; (end states, close times (s)).
        ctrl (n, nu) is updated where a clutch slips (the leader's servo target)."""
        s, dt = self.settings, self.settings.timestep_s
        n_max = int(round(s.close_max_s / dt))
        states = states.copy()
        n = len(states)
        t_close = np.full(n, s.close_max_s)
        steps = np.zeros(n, np.int64)       # steps each trial has closed
        slipped = np.zeros((n, len(self._gain)), bool)
        active = np.arange(n)
        while active.size:
            nstep = int(min(CLOSE_CHUNK_STEPS, n_max - steps[active].min()))
            st, sens = self._rollout([models[i] for i in active], states[active],
                                     ctrl[active][:, None, :], nstep)
            still = []
            forces = sens[:, :, self._sensor_adr]
            lefts = n_max - steps[active]  # a trial closing less than the chunk stops at the cap
            stalls, slips = self._events(forces, slipped[active], steps[active] * dt, lefts)
            for row, i in enumerate(active):
                force, left, stall, slip = forces[row], lefts[row], int(stalls[row]), int(slips[row])
                if slip >= 0 and (stall < 0 or slip < stall):
                    # rewind to the slip, switch the leader to its locked servo, go on from there
                    states[i] = st[row, slip]
                    self._slip(models[i], states[i], ctrl[i], force[slip], slipped[i])
                    steps[i] += slip + 1
                elif stall >= 0:
                    states[i], steps[i] = st[row, stall], steps[i] + stall + 1
                    t_close[i] = steps[i] * dt
                    continue
                else:
                    k = min(nstep, left) - 1
                    states[i], steps[i] = st[row, k], steps[i] + k + 1
                if steps[i] < n_max:
                    still.append(i)
            active = np.array(still, np.int64)
        return states, t_close

    def _lift_controls(self, schedule: LiftSchedule, ctrl: np.ndarray, n_periods: int) -> np.ndarray:
        """(n, n_periods x steps per period, nu) controls of the lift: each trial's ctrl with the
        carrier targets LiftSchedule writes at the start of each control period."""
        carrier = self.world.carrier_actuators
        period_s = self._spp * self.settings.timestep_s
        row = np.zeros(self.world.model.nu)
        targets = np.empty((n_periods, 3))
        for p in range(n_periods):
            schedule.command(schedule.t0_s + p * period_s, row, carrier)
            targets[p] = row[carrier]
        out = np.repeat(ctrl[:, None, :], n_periods * self._spp, axis=1)
        out[:, :, carrier] = np.repeat(targets, self._spp, axis=0)[None]
        return out

    def run(self, T_object_hand: np.ndarray, preshape: np.ndarray | None = None, *,
            seed: int | None = None, shake: bool = False, hold_for: tuple[int, ...] = (),
            check_start: bool = True) -> list[NativeTrial]:
        """Roll out one trial per pose in T_object_hand (n, 4, 4; TCP in the object frame, m),
        all with preshape; seed : shake direction (None: vertical); hold_for : indices of the
        trials whose BLEM hold diagnostics to take; check_start : skip (collided) the trials
        whose hand starts inside the object."""
        T = np.asarray(T_object_hand, np.float64)
        if T.ndim != 3 or T.shape[1:] != (4, 4):
            raise ValueError(f"T_object_hand must be (n, 4, 4), got shape {T.shape}")
        starts = [self._start(T[j], preshape, j, check_start) for j in range(len(T))]
        run = [j for j, st in enumerate(starts) if not st[0]]
        out = [NativeTrial(True, self._model(j), st[1], st[3], st[4], 0.0, 0.0, None)
               for j, st in enumerate(starts)]
        if not run:
            return out
        models = [self._models[j] for j in run]
        states = np.array([starts[j][1] for j in run])
        ctrl = np.array([starts[j][2] for j in run])
        states, t_close = self._close(models, states, ctrl)
        s = self.settings
        schedule = LiftSchedule(0.0, s, shake_direction(seed), shake)
        period_s = self._spp * s.timestep_s
        n_periods = int(math.ceil(schedule.end_s / period_s - 0.5 - 1e-9))
        lift_states, _ = self._rollout(models, states, self._lift_controls(schedule, ctrl, n_periods),
                                       n_periods * self._spp)
        for row, j in enumerate(run):
            hold = (self._hold(models[row], lift_states[row], schedule, t_close[row])
                    if j in hold_for else None)
            out[j] = NativeTrial(False, models[row], lift_states[row, -1].copy(), starts[j][3],
                                 starts[j][4], float(t_close[row]),
                                 float(t_close[row] + n_periods * period_s), hold)
        return out

    def _hold(self, model, states: np.ndarray, schedule: LiftSchedule, t_close_s: float) -> HoldDiagnostics:
        """BLEM diagnostics from the lift's states (nstep, nstate) at the control periods the
        Python path samples (in the hold, every hold_sample_every steps of the trial)."""
        s, dt = self.settings, self.settings.timestep_s
        close_steps = int(round(t_close_s / dt))
        sampler = HoldSampler()
        for p in range(len(states) // self._spp):
            k = (p + 1) * self._spp  # steps into the lift at the end of period p
            if schedule.holding(k * dt) and (close_steps + k) % s.hold_sample_every < self._spp:
                data = self.set_state(model, states[k - 1])
                sampler.add(self.world.probe.contacts(model, data, True)[0])
        return sampler.diagnostics()

    def set_state(self, model, state: np.ndarray):
        """A scratch MjData of model holding state (nstate,) after mj_forward (for the measures)."""
        import mujoco

        d = self._datas[0]
        mujoco.mj_setState(model, d, state, self._spec)
        mujoco.mj_forward(model, d)
        return d


def native_end_measures(runner: NativeRunner, trial: NativeTrial):
    """EndMeasures (_grasp_sim) of a rolled-out trial that ran (not collided): its last state
    set into a scratch MjData, dropped when the object's COM is drop_distance_m from where it
    started in the hand."""
    from ._grasp_sim import end_measures

    d = runner.set_state(trial.model, trial.state)
    s = runner.settings
    dropped = bool(np.linalg.norm(runner.world.probe.com_in_hand(d) - trial.com_ref) > s.drop_distance_m)
    return end_measures(runner.world, trial.model, d, trial.T_ref, trial.com_ref, dropped, s)
