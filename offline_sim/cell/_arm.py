"""SimArm: the simulated cell's arm behind drivers.arm.ArmController.

The arm moves the gripper's mount (a mocap body) along straight lines at the commanded speed,
its pose interpolated at every physics step as a servo loop interpolates its trajectory,
while the world steps, so the fingers, the object and the table interact as the TCP travels.
Like an industrial arm's protective stop, a motion stops when the hand presses on the table
or an object harder than ``stop_force_n`` and reports FAILED.
"""
from __future__ import annotations

import math

import numpy as np

from drivers.arm import ArmController, MoveResult, MoveStatus

from geometry import invert, matrix_to_quat, quat_to_matrix, rotation_angle
from ._scene import CellWorld

CONTROL_PERIOD_S = 0.01  # the wrist force monitor reads at 100 Hz (the pose moves every step)


class SimArm(ArmController):
    """The cell's arm; ``cell`` is the SimCell that owns the world and its clock."""

    name = "sim"

    def __init__(self, cell, *, stop_force_n: float = 150.0) -> None:
        self._cell = cell
        self.stop_force_n = stop_force_n
        self.reach_tolerance_m = 0.005
        self.fault: str | None = None      # set by fault injection: every motion then faults
        self.fail_next: str | None = None  # the next motion fails with this message

    @property
    def world(self) -> CellWorld:
        """The cell's current world (a new table gives a new one)."""
        return self._cell.world

    @property
    def T_base_tcp(self) -> np.ndarray:
        """The TCP's pose now (commanded mount pose, through the hand), 4 x 4, metres."""
        w = self.world
        T_mount = np.eye(4)
        T_mount[:3, :3] = quat_to_matrix(w.data.mocap_quat[w.mocap_id])
        T_mount[:3, 3] = w.data.mocap_pos[w.mocap_id]
        return T_mount @ w.T_root_tcp

    def state(self) -> str:
        """"ready" or "faulted: <why>"."""
        return f"faulted: {self.fault}" if self.fault else "ready"

    def _move_free(self, T_goal: np.ndarray, speed_mps: float) -> MoveResult:
        """Up to a safe height, across, and down: the sim's stand-in for a joint-space path."""
        T0 = self.T_base_tcp
        safe_z = max(T0[2, 3], T_goal[2, 3], self._cell.settings.safe_height_m)
        if T0[2, 3] < safe_z - 1e-6:
            up = T0.copy()
            up[2, 3] = safe_z
            r = self._move_linear(up, speed_mps)
            if not r.reached:
                return r
        mid = T_goal.copy()
        mid[2, 3] = safe_z
        r1 = self._move_linear(mid, speed_mps)
        if not r1.reached:
            return r1
        r2 = self._move_linear(T_goal, speed_mps)
        return MoveResult(r2.status, r2.T_base_tcp, r1.duration_s + r2.duration_s, r2.message)

    def _move_linear(self, T_goal: np.ndarray, speed_mps: float) -> MoveResult:
        """Straight line (position) and slerp (orientation) at speed_mps; stops on contact."""
        if self.fault:
            return MoveResult(MoveStatus.FAULTED, self.T_base_tcp, 0.0, self.fault)
        if self.fail_next:
            msg, self.fail_next = self.fail_next, None
            return MoveResult(MoveStatus.FAILED, self.T_base_tcp, 0.0, msg)
        w, cell = self.world, self._cell
        T0 = self.T_base_tcp
        if cell.slip_on_lift and T_goal[2, 3] > T0[2, 3] + 0.01:
            # injected fault: the grip weakens as the lift starts (a worn pad, a pressure drop)
            # to a tenth of the lightest object's weight, which no pad friction below 5 holds
            # (a fixed 1 N still held objects under about 200 g: the slip depended on the object)
            cell.slip_on_lift = False
            lightest_n = 9.81 * min(o.mass_kg for o in w.objects)
            limit = min(1.0, 0.1 * lightest_n)
            drives = [w.close_actuator] if w.fingers is None else w.fingers.drives.act_ids
            for a in drives:  # a multi-finger hand: every finger's drive weakens
                w.model.actuator_forcerange[a] = (-limit, limit)
        dist = float(np.linalg.norm(T_goal[:3, 3] - T0[:3, 3]))
        angle = rotation_angle(T0[:3, :3].T @ T_goal[:3, :3])
        # rotate at most 1 rad/s while translating at speed_mps; the smooth profile's peak
        # speed is 1.5 times its mean, so the mean is 2/3 of the commanded speed
        duration = max(1.5 * dist / speed_mps, 1.5 * angle / 1.0, w.model.opt.timestep)
        dt = w.model.opt.timestep
        k = max(1, int(round(CONTROL_PERIOD_S / dt)))
        n = max(1, int(math.ceil(duration / (k * dt))))  # control periods
        from scipy.spatial.transform import Rotation, Slerp

        slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([T0[:3, :3], T_goal[:3, :3]])))
        # the commanded pose is interpolated at every physics step, as an arm's servo loop
        # interpolates its trajectory: set once per 10 ms period, the stiff weld pulled the
        # flange after each 1 mm jump within 4 ms, and the hand's acceleration peaked at 5.7 g
        # every period of a 0.1 m/s lift (benchmarks/hold_physics.py), which shook dense
        # objects out of taped pads that a smooth lift holds
        u = np.arange(1, n * k + 1) / (n * k)
        s_all = u * u * (3.0 - 2.0 * u)  # smooth start and stop: no step in velocity
        R_all = slerp(s_all).as_matrix()
        T = T0.copy()
        for i in range(1, n + 1):
            for j in range((i - 1) * k, i * k):
                T[:3, :3] = R_all[j]
                T[:3, 3] = (1 - s_all[j]) * T0[:3, 3] + s_all[j] * T_goal[:3, 3]
                self._set_mount(T)
                cell.step(1)
            hit = self._pressing(T_goal[:3, 3] - T0[:3, 3])  # the wrist's monitor: 100 Hz
            if hit:
                return MoveResult(MoveStatus.FAILED, self.T_base_tcp, i * k * dt,
                                  f"protective stop: {hit}")
        cell.step(k)  # one more period for the flange to settle on the goal
        lag = float(np.linalg.norm(w.T_world_tcp()[:3, 3] - T_goal[:3, 3]))
        if lag > self.reach_tolerance_m:  # held back by something the force check let pass
            return MoveResult(MoveStatus.FAILED, self.T_base_tcp, (n + 1) * k * dt,
                              f"stopped {lag * 1e3:.1f} mm short of the goal")
        return MoveResult(MoveStatus.REACHED, self.T_base_tcp, (n + 1) * k * dt)

    def _set_mount(self, T_base_tcp: np.ndarray) -> None:
        """Put the hand so that its TCP is at T_base_tcp."""
        w = self.world
        T_mount = T_base_tcp @ invert(w.T_root_tcp)
        w.data.mocap_pos[w.mocap_id] = T_mount[:3, 3]
        w.data.mocap_quat[w.mocap_id] = matrix_to_quat(T_mount[:3, :3])

    def _pressing(self, travel: np.ndarray) -> str | None:
        """What the wrist's force monitoring sees, if over stop_force_n while resisting the
        travel (base-frame displacement of the move): the net contact force on the hand (a
        grip's squeeze cancels between the pads; a held object adds only its weight), with the
        thing that pushes hardest named ("the table", "object 3"). A force along the travel
        does not stop it: backing away from a contact that stopped the arm must be possible,
        as it is on an arm whose protective stop was cleared."""
        import mujoco

        w = self.world
        m, d = w.model, w.data
        f6 = np.zeros(6)
        net = np.zeros(3)
        by_other: dict[str, float] = {}
        for i in range(d.ncon):
            c = d.contact[i]
            h1, h2 = w.hand_geom[c.geom1], w.hand_geom[c.geom2]
            if h1 == h2:
                continue
            other = c.geom2 if h1 else c.geom1
            mujoco.mj_contactForce(m, d, i, f6)
            f_world = c.frame.reshape(3, 3).T @ f6[:3]   # on geom2, from geom1
            net += f_world if h2 else -f_world
            what = "the table" if other == w.table_geom else f"object {w.geom_instance[other]}"
            by_other[what] = by_other.get(what, 0.0) + abs(float(f6[0]))
        total = float(np.linalg.norm(net))
        if total > self.stop_force_n and float(net @ travel) <= 0.0:
            worst = max(by_other, key=by_other.get)
            return f"{total:.0f} N on the hand, pressing on {worst}"
        return None

    def home(self) -> None:
        """Put the hand at the cell's home pose at once (out of the camera's view)."""
        w = self.world
        w.teleport_flange(self._cell.home_pose @ invert(w.T_root_tcp))
