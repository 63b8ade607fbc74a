"""PickingCell: a cell file's devices, trial log and picking loop, opened together. It is the
one service facade: the PickingService the endpoint drives and what ``graspline demo`` /
``run`` / ``serve`` use; cycles go to the loop, device commands straight to the devices."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from drivers.arm import MoveResult, MoveStatus, check_tcp_pose
from drivers.gripper import GraspResult, GripperError
from drivers.hand import HandError
from scoring import GraspDatabaseError

from ._cellfile import CellConfig, config_hash, load_cell_file, sim_cell_file
from ._devices import CellDevices, CellSetupError, open_cell
from ._service import GripReply, TrialSummary
from ._trials import TrialLog, TrialRecord
from ._types import CellStatus, GraspChoice, KernelWarmUp, NoGrasp
from .loop import PickingLoop, SimulatedTruth


class PickingCell:
    """A running cell. Thread-safe: one cycle at a time (the endpoint serialises too)."""

    def __init__(self, config: CellConfig, cell_hash: str, *, mode: str = "best") -> None:
        self.devices: CellDevices = open_cell(config)
        try:
            self.log = TrialLog(config.log_dir)
        except Exception:
            self.devices.close()
            raise
        d = self.devices
        truth = None if d.truth is None else SimulatedTruth(d.truth)
        try:
            self.loop = PickingLoop(config, camera=d.camera, segmenter=d.segmenter,
                                    gripper=d.gripper, arm=d.arm, trial_log=self.log,
                                    cell_hash=cell_hash, truth=truth, mode=mode,
                                    seed=config.scoring.seed, hand=d.hand)
        except (GraspDatabaseError, ValueError) as exc:
            # a grasp database the cell file names that cannot be read, or a hand without one:
            # one line, and nothing left open
            self.log.close()
            self.devices.close()
            raise CellSetupError(str(exc)) from exc
        # poses the controller reported at hand-eye calibration stops: (T_base_tcp, label)
        self.robot_poses: list[tuple[np.ndarray, str | None]] = []
        self.endpoint_address = (config.server.host, config.server.port)
        self._lock = threading.RLock()
        self._closed = False
        self.kernel_warm_up: KernelWarmUp | None = None  # set by warm_up()

    @property
    def config(self) -> CellConfig:
        """The cell file the cell runs with (the loop's: an experiment may replace it)."""
        return self.loop.config

    def warm_up(self) -> KernelWarmUp:
        """Compile (or load from numba's cache) every kernel the loop's planning uses, before
        the first frame: numba compiles on first use, up to a minute on a fresh install, and
        its cache makes later starts fast. The warm-up goes to the trial log (the report
        shows it apart from the cycles) and stays in ``kernel_warm_up``."""
        with self._lock:
            self.kernel_warm_up = self.loop.warm_up()
            self.log.record_warm_up(self.kernel_warm_up)
            return self.kernel_warm_up

    # the PickingService of the endpoint ------------------------------------------
    def status(self) -> CellStatus:
        """The loop's state, each device's state and the trial count."""
        with self._lock:
            d = self.devices
            cam = getattr(d.camera, "state", lambda: "open")()
            grip = _gripper_state(d.gripper) if d.gripper is not None else _hand_state(d.hand)
            arm = "none (the controller moves it)" if d.arm is None else d.arm.state()
            return CellStatus(self.loop.state.text, cam, grip, arm, self.log.count())

    def best_grasp(self, object_label: str | None = None,
                   timeout_s: float | None = None) -> GraspChoice | NoGrasp:
        """Plan on a fresh frame; the grasp (its trial stays pending) or why there is none."""
        with self._lock:
            return self.loop.best_grasp(object_label, timeout_s)

    def move(self, T_base_tcp: np.ndarray, speed_mps: float | None = None) -> MoveResult:
        """Move graspline's arm (simulated, or a real arm behind ArmController); refused when
        the controller owns the arm. An arm that reports FAULTED faults the cell."""
        with self._lock:
            arm, state = self.devices.arm, self.loop.state
            if arm is None:
                raise RuntimeError("this cell has no arm of graspline's (arm.kind: none)")
            state.activity = "moving"
            try:
                r = arm.move(T_base_tcp, speed_mps or self.config.arm.speed_mps)
            finally:
                state.activity = "idle"
            if r.status is MoveStatus.FAULTED:
                state.fault = f"arm faulted: {r.message}"
            return r

    def grip(self, width_m: float | None = None, force_n: float | None = None,
             speed_mps: float | None = None) -> GripReply:
        """Close the gripper towards width_m (default fully) with force_n; its result."""
        with self._lock:
            g = self.config.gripper
            self._check_jaw("grip")
            r = self.devices.gripper.grasp(0.0 if width_m is None else width_m,
                                           speed_mps or g.speed_mps, force_n or g.force_n,
                                           timeout_s=g.timeout_s)
            return _grip_reply(r)

    def release(self, width_m: float | None = None, speed_mps: float | None = None) -> GripReply:
        """Open the gripper (to width_m, default fully); its result."""
        with self._lock:
            self._check_jaw("release")
            g, gripper = self.config.gripper, self.devices.gripper
            if width_m is None:
                r = gripper.open(speed_mps or g.speed_mps, timeout_s=g.timeout_s)
            else:
                r = gripper.grasp(width_m, speed_mps or g.speed_mps, timeout_s=g.timeout_s)
            return _grip_reply(r)

    def _check_jaw(self, what: str) -> None:
        """RuntimeError naming the hand when the cell has a multi-finger hand, not a jaw."""
        if self.devices.gripper is None:
            raise RuntimeError(f"{what} commands a parallel-jaw gripper; this cell carries the "
                               f"{self.devices.hand.name} hand (the loop's picks drive it)")

    def pick(self, object_label: str | None = None) -> TrialSummary:
        """One whole cycle with the cell's own arm; the trial."""
        with self._lock:
            return trial_summary(self.loop.pick(object_label))

    def pick_record(self, object_label: str | None = None) -> TrialRecord:
        """One whole cycle; the full trial record (for the CLI)."""
        with self._lock:
            return self.loop.pick(object_label)

    def report_outcome(self, trial_id: int, success: bool, note: str | None = None,
                       approach_stopped_at: np.ndarray | None = None) -> TrialSummary:
        """Close a pending trial with the controller's verdict; approach_stopped_at: the TCP
        pose (4 x 4, metres, base frame) where its approach stopped short, read against the
        trial's frame (what it shows goes into the note; a run of stops on nothing seen faults
        the cell for a look at the hand)."""
        with self._lock:
            reading = None
            if approach_stopped_at is not None:
                T = check_tcp_pose(approach_stopped_at, "approach_stopped_at")
                reading = self.loop.read_stop(trial_id, T)
                if reading is not None:
                    note = "; ".join(n for n in (note, reading.text()) if n)
            summary = trial_summary(self.log.report_outcome(trial_id, success, note or "",
                                                            source="controller"))
            if reading is not None:  # counted once the trial is known to the log
                self.loop.count_stop(reading, "the controller's approach stopped")
            return summary

    def record_robot_pose(self, T_base_tcp: np.ndarray, label: str | None = None) -> int:
        """A robot pose the controller reports at a hand-eye calibration stop: the camera's
        image now and the pose are saved to LOG/hand_eye/ (NNN.png and poses.csv, the files
        ``graspline calibrate hand-eye --images ... --poses ...`` reads); its index."""
        with self._lock:
            T = check_tcp_pose(T_base_tcp, "T_base_tcp")
            self.robot_poses.append((T, label))
            k = len(self.robot_poses) - 1
            frame = self.devices.camera.read(self.config.camera.timeout_s)
            save_hand_eye_stop(Path(self.config.log_dir) / "hand_eye", k, frame.color, T, label)
            return k

    def clear_fault(self) -> None:
        """Leave the faulted state (after the operator has seen to the arm or the hand)."""
        with self._lock:
            self.loop.state.clear_fault()

    def close(self) -> None:
        """Close the devices and the log; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.devices.close()
        self.log.close()

    def __enter__(self) -> "PickingCell":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def save_hand_eye_stop(folder: Path, index: int, color: np.ndarray, T_base_tcp: np.ndarray,
                       label: str | None) -> None:
    """Write one hand-eye stop: the image (PNG) and a row of poses.csv (metres, rotation
    vector in radians, as a UR controller reports a pose)."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    name = f"{index:03d}.png"
    if not cv2.imwrite(str(folder / name), np.ascontiguousarray(color[..., ::-1])):
        raise OSError(f"cannot write {folder / name}")
    rvec = cv2.Rodrigues(np.ascontiguousarray(T_base_tcp[:3, :3]))[0].ravel()
    csv = folder / "poses.csv"
    new = not csv.exists()
    with open(csv, "a", encoding="utf-8") as f:
        if new:
            f.write("image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad\n")
        if label:
            f.write(f"# {label}\n")
        x, y, z = T_base_tcp[:3, 3]
        f.write(f"{name},{x:.6f},{y:.6f},{z:.6f},{rvec[0]:.8f},{rvec[1]:.8f},{rvec[2]:.8f}\n")


def trial_summary(r: TrialRecord) -> TrialSummary:
    """The endpoint's view of a trial record."""
    return TrialSummary(r.trial_id, r.object_label, r.outcome, r.success, r.score, r.T_base_tcp,
                        r.width_m, dict(r.stage_s), r.note, r.error)


def _gripper_state(gripper) -> str:
    """The gripper's state as a short text."""
    try:
        st = gripper.status()
    except GripperError as exc:
        return f"error: {exc}"
    return f"faulted: {st.fault_message}" if st.faulted else (
        "holding" if st.object_detected else f"open {st.width_m * 1e3:.0f} mm")


def _hand_state(hand) -> str:
    """A multi-finger hand's state as a short text (named: the status's gripper slot)."""
    try:
        st = hand.status()
    except HandError as exc:
        return f"{hand.name} hand error: {exc}"
    if st.faulted:
        return f"{hand.name} hand faulted: {st.fault_message}"
    return f"{hand.name} hand {'holding' if st.object_detected else 'empty'}"


def _grip_reply(r: GraspResult) -> GripReply:
    st = r.status
    return GripReply(r.object_detected, r.width_m, r.elapsed_s,
                     "holding" if r.object_detected else "empty",
                     st.fault_message if st.faulted else "")


def open_picking_cell(config_path: str | Path | None = None, *, sim: bool = False,
                      seed: int | None = None, log_dir: str | None = None,
                      mode: str = "best", ycb_dir: str | None = None,
                      hand: str = "parallel", database_path: str | None = None,
                      recogniser: str = "vision") -> PickingCell:
    """A PickingCell from a cell file, or (sim=True, no file) the built-in simulated cell
    carrying hand (sim.hand: "parallel", "three_finger", "underactuated" or a JSON hand);
    a multi-finger hand plans with the grasp database at database_path (its database
    section, hand named as the hand, recogniser "vision" or "truth")."""
    if config_path is not None:
        config, digest = load_cell_file(config_path)
        if log_dir is not None:
            import msgspec

            config = msgspec.structs.replace(config, log_dir=log_dir)
        try:
            return PickingCell(config, digest, mode=mode)
        except CellSetupError as exc:  # name the cell file whose device failed
            raise CellSetupError(f"{config_path}: {exc}") from exc
    elif sim:
        config = sim_cell_file(seed=seed or 0, log_dir=log_dir or "out/trials", ycb_dir=ycb_dir,
                               hand=hand, database=database_path, recogniser=recogniser)
        digest = config_hash(config)
    else:
        raise ValueError("give a cell file, or sim=True for the built-in simulated cell")
    return PickingCell(config, digest, mode=mode)


def make_picking_service(config_path: str | Path | None = None, *, sim: bool = False,
                         seed: int | None = None, log_dir: str | None = None,
                         hand: str = "parallel", database_path: str | None = None) -> PickingCell:
    """The endpoint's factory (``graspline serve``): the cell the arguments name, its kernels
    compiled before it is served. log_dir : the trial log's folder instead of the cell
    file's log_dir (or, for the simulated cell, out/trials). hand, database_path : the
    simulated cell's hand and, for a multi-finger one, its grasp database (open_picking_cell)."""
    cell = open_picking_cell(config_path, sim=sim, seed=seed, log_dir=log_dir, hand=hand,
                             database_path=database_path)
    cell.warm_up()
    return cell
