"""Hand-eye calibration, eye-in-hand and eye-to-hand, from (robot pose, board pose) pairs with
OpenCV's methods, cross-checked against each other, with residuals and degeneracy warnings."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from scoring import check_pose

from ._errors import CalibrationError, DegeneratePosesWarning
from geometry import invert, pose, pose_difference, rotation_angle

SETUPS = ("eye_in_hand", "eye_to_hand")
MIN_POSES = 3             # OpenCV's minimum
FEW_POSES = 8             # fewer than this: warn
MIN_ROTATION_DEG = 10.0   # relative rotations smaller than this carry little information
PARALLEL_AXES_DEG = 10.0  # rotation axes all within this of one line: degenerate


@dataclass(frozen=True)
class MethodResult:
    """One OpenCV method's transform and its residuals (metres, radians)."""

    method: str
    T: np.ndarray
    rms_translation_m: float
    rms_rotation_rad: float


@dataclass(frozen=True)
class HandEyeCalibration:
    """A hand-eye result.

    setup : "eye_in_hand" (camera on the flange: T is T_tcp_camera, T_fixed is T_base_board)
    or "eye_to_hand" (camera fixed: T is T_base_camera, T_fixed is T_tcp_board). method : the
    OpenCV method chosen (smallest residual). rms_translation_m / rms_rotation_rad : how far
    the board's pose, chained through each pair, strays from its mean (the board is fixed in
    the base or on the flange, so a perfect calibration gives zero); max_* the worst pair.
    method_spread_m / _rad : the largest difference between any two methods' transforms.
    methods : every method's result. n_poses, warnings : inputs and what was suspicious.
    """

    setup: str
    T: np.ndarray
    T_fixed: np.ndarray
    method: str
    rms_translation_m: float
    rms_rotation_rad: float
    max_translation_m: float
    max_rotation_rad: float
    method_spread_m: float
    method_spread_rad: float
    n_poses: int
    methods: tuple[MethodResult, ...] = ()
    warnings: tuple[str, ...] = ()
    date: str = ""
    inputs: dict = field(default_factory=dict)

    @property
    def T_tcp_camera(self) -> np.ndarray:
        """Pose of the camera on the flange (eye-in-hand only)."""
        if self.setup != "eye_in_hand":
            raise AttributeError("T_tcp_camera: this is an eye-to-hand calibration "
                                 "(use T_base_camera)")
        return self.T.copy()

    @property
    def T_base_camera(self) -> np.ndarray:
        """Pose of the fixed camera in the robot base (eye-to-hand only)."""
        if self.setup != "eye_to_hand":
            raise AttributeError("T_base_camera: this is an eye-in-hand calibration "
                                 "(use T_tcp_camera, chained with the robot pose)")
        return self.T.copy()

    def text(self) -> str:
        """A summary for the terminal."""
        lines = [f"{self.setup}: {self.method}, {self.n_poses} poses",
                 f"  residual RMS {self.rms_translation_m * 1000:.2f} mm, "
                 f"{math.degrees(self.rms_rotation_rad):.3f} deg (worst "
                 f"{self.max_translation_m * 1000:.2f} mm, "
                 f"{math.degrees(self.max_rotation_rad):.3f} deg)",
                 f"  methods agree within {self.method_spread_m * 1000:.2f} mm, "
                 f"{math.degrees(self.method_spread_rad):.3f} deg"]
        for m in self.methods:
            lines.append(f"    {m.method:<11} {m.rms_translation_m * 1000:8.2f} mm "
                         f"{math.degrees(m.rms_rotation_rad):8.3f} deg")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _methods() -> dict[str, tuple[str, int]]:
    """Method name -> (which OpenCV function, flag)."""
    import cv2

    return {"tsai": ("hand_eye", cv2.CALIB_HAND_EYE_TSAI),
            "park": ("hand_eye", cv2.CALIB_HAND_EYE_PARK),
            "horaud": ("hand_eye", cv2.CALIB_HAND_EYE_HORAUD),
            "andreff": ("hand_eye", cv2.CALIB_HAND_EYE_ANDREFF),
            "daniilidis": ("hand_eye", cv2.CALIB_HAND_EYE_DANIILIDIS),
            "shah": ("robot_world", cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH),
            "li": ("robot_world", cv2.CALIB_ROBOT_WORLD_HAND_EYE_LI)}


def _chain(setup: str, T_base_tcp: np.ndarray, X: np.ndarray,
           T_camera_board: np.ndarray) -> np.ndarray:
    """The board's pose in its fixed frame for one pair, given the hand-eye transform X."""
    if setup == "eye_in_hand":
        return T_base_tcp @ X @ T_camera_board           # T_base_board
    return invert(T_base_tcp) @ X @ T_camera_board       # T_tcp_board


def _mean_pose(poses: list[np.ndarray]) -> np.ndarray:
    """Mean of rigid poses: mean translation, rotation projected back onto SO(3) by SVD."""
    M = sum(T[:3, :3] for T in poses)
    U, _, Vt = np.linalg.svd(M)
    R = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return pose(R, np.mean([T[:3, 3] for T in poses], axis=0))


def hand_eye_residuals(setup: str, T_base_tcp: list[np.ndarray], T_camera_board: list[np.ndarray],
                       X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair, the translation (m) and rotation (rad) by which the chained board pose
    misses their mean; and that mean (T_base_board or T_tcp_board)."""
    chained = [_chain(setup, A, X, B) for A, B in zip(T_base_tcp, T_camera_board)]
    mean = _mean_pose(chained)
    diffs = np.array([pose_difference(T, mean) for T in chained])
    return diffs[:, 0], diffs[:, 1], mean


def _solve(setup: str, kind: str, flag: int, T_base_tcp: list[np.ndarray],
           T_camera_board: list[np.ndarray]) -> np.ndarray:
    """The hand-eye transform X by one OpenCV method."""
    import cv2

    Rb = [T[:3, :3] for T in T_camera_board]
    tb = [T[:3, 3].reshape(3, 1) for T in T_camera_board]
    if kind == "hand_eye":
        # calibrateHandEye solves for the camera in the "gripper" frame from gripper->base
        # poses; fed base->gripper (the inverse poses), it gives the camera in the base frame.
        robot = T_base_tcp if setup == "eye_in_hand" else [invert(T) for T in T_base_tcp]
        R, t = cv2.calibrateHandEye([T[:3, :3] for T in robot],
                                    [T[:3, 3].reshape(3, 1) for T in robot], Rb, tb, method=flag)
        return pose(R, t)
    # calibrateRobotWorldHandEye solves T_cam_world = X T_gripper_base Z for X = T_cam_gripper:
    # eye-in-hand, the board is the world and the flange the gripper; eye-to-hand, the base
    # plays the gripper and the flange the base, the board (on the flange) the world.
    robot = [invert(T) for T in T_base_tcp] if setup == "eye_in_hand" else T_base_tcp
    _, _, R, t = cv2.calibrateRobotWorldHandEye(Rb, tb, [T[:3, :3] for T in robot],
                                                [T[:3, 3].reshape(3, 1) for T in robot],
                                                method=flag)
    return invert(pose(R, t))


def _predicted_board(setup: str, A: np.ndarray, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """T_camera_board predicted from a robot pose, the hand-eye X and the fixed board pose Z."""
    if setup == "eye_in_hand":
        return invert(X) @ invert(A) @ Z
    return invert(X) @ A @ Z


def refine(setup: str, T_base_tcp: list[np.ndarray], T_camera_board: list[np.ndarray],
           X0: np.ndarray, Z0: np.ndarray, *, sigma_m: float = 0.001,
           sigma_rad: float = math.radians(0.2)) -> tuple[np.ndarray, np.ndarray]:
    """X and Z refined together by nonlinear least squares (scipy) on every board pose at once:
    the board poses the camera measured against those predicted through the robot, translation
    and rotation weighted by their expected noise (sigma_m, sigma_rad). The closed-form
    methods use relative motions between pairs; this uses each pose once, as measured."""
    from scipy.optimize import least_squares

    from geometry import matrix_to_rotvec, pose_from_rvec

    def unpack(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return X0 @ pose_from_rvec(p[0:3], p[3:6]), Z0 @ pose_from_rvec(p[6:9], p[9:12])

    def residuals(p: np.ndarray) -> np.ndarray:
        X, Z = unpack(p)
        out = []
        for A, B in zip(T_base_tcp, T_camera_board):
            P = _predicted_board(setup, A, X, Z)
            out.append((P[:3, 3] - B[:3, 3]) / sigma_m)
            out.append(matrix_to_rotvec(B[:3, :3].T @ P[:3, :3]) / sigma_rad)
        return np.concatenate(out)

    sol = least_squares(residuals, np.zeros(12), method="lm", x_scale="jac")
    return unpack(sol.x)


def pose_set_warnings(T_base_tcp: list[np.ndarray]) -> list[str]:
    """What makes a set of robot poses poor for hand-eye: too few, too little rotation between
    them, or rotation axes nearly parallel (the translation along that axis is then unknown)."""
    out = []
    n = len(T_base_tcp)
    if n < FEW_POSES:
        out.append(f"only {n} poses; use {FEW_POSES} or more for a trustworthy result")
    axes, angles = [], []
    for i in range(n):
        for j in range(i + 1, n):
            R = T_base_tcp[i][:3, :3].T @ T_base_tcp[j][:3, :3]
            a = rotation_angle(R)
            angles.append(a)
            if a > math.radians(MIN_ROTATION_DEG / 2):
                axis = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
                axes.append(axis / np.linalg.norm(axis))
    if angles and max(angles) < math.radians(MIN_ROTATION_DEG):
        out.append(f"the flange rotates at most {math.degrees(max(angles)):.1f} deg between "
                   f"poses; tilt it by {MIN_ROTATION_DEG:.0f}-40 deg about different axes")
    if len(axes) >= 2:
        # Spread of the (sign-free) axes: the second eigenvalue of their scatter matrix.
        A = np.array(axes)
        ev = np.sort(np.linalg.eigvalsh(A.T @ A / len(A)))[::-1]
        if ev[1] < math.sin(math.radians(PARALLEL_AXES_DEG)) ** 2:
            main = np.linalg.eigh(A.T @ A)[1][:, -1]
            out.append(f"the rotations between poses are nearly all about one axis "
                       f"({np.round(main, 2).tolist()} in the flange frame); rotate the "
                       f"flange about at least two different axes")
    return out


def calibrate_hand_eye(T_base_tcp: list[np.ndarray], T_camera_board: list[np.ndarray], *,
                       setup: str = "eye_in_hand", methods: tuple[str, ...] | None = None,
                       agree_m: float = 0.002, agree_rad: float = math.radians(0.5),
                       refined: bool = True, date: str = "",
                       inputs: dict | None = None) -> HandEyeCalibration:
    """Hand-eye calibration from matching lists of robot poses (T_base_tcp, metres) and board
    poses seen by the camera (T_camera_board).

    Every method in ``methods`` (default: tsai, park, horaud, andreff, daniilidis, shah, li)
    is run and cross-checked; with ``refined`` (default) the one with the smallest residual
    is refined by least squares over all poses (``refine``, method "refined") and that is the
    result, else the closed-form one with the smallest residual. Warns
    (DegeneratePosesWarning) on a poor pose set and when methods disagree by more than
    agree_m / agree_rad (the spread is over the closed-form methods).
    """
    if setup not in SETUPS:
        raise CalibrationError(f"setup must be one of {', '.join(SETUPS)}, got {setup!r}")
    if len(T_base_tcp) != len(T_camera_board):
        raise CalibrationError(f"hand-eye needs one board pose per robot pose, got "
                               f"{len(T_base_tcp)} robot poses and {len(T_camera_board)} board "
                               f"poses")
    if len(T_base_tcp) < MIN_POSES:
        raise CalibrationError(f"hand-eye needs at least {MIN_POSES} pose pairs, got "
                               f"{len(T_base_tcp)}; capture {FEW_POSES} or more")
    A = [check_pose(T, f"robot pose {i} (T_base_tcp)") for i, T in enumerate(T_base_tcp)]
    B = [check_pose(T, f"board pose {i} (T_camera_board)") for i, T in enumerate(T_camera_board)]
    table = _methods()
    names = tuple(methods) if methods else tuple(table)
    for m in names:
        if m not in table:
            raise CalibrationError(f"unknown hand-eye method {m!r}; one of {', '.join(table)}")
    notes = pose_set_warnings(A)
    results = []
    import cv2

    for m in names:
        try:
            X = _solve(setup, *table[m], A, B)
        except cv2.error as exc:   # OpenCV gives up on some degenerate sets
            notes.append(f"method {m} failed: {exc.err}")
            continue
        if not np.isfinite(X).all():
            notes.append(f"method {m} gave no finite result")
            continue
        dt, dr, _ = hand_eye_residuals(setup, A, B, X)
        results.append(MethodResult(m, X, float(np.sqrt((dt ** 2).mean())),
                                    float(np.sqrt((dr ** 2).mean()))))
    if not results:
        raise CalibrationError("no hand-eye method gave a result; the poses are degenerate: "
                               + "; ".join(notes))
    if refined:
        # Start from the closed-form result with the smallest residual.
        start = min(results, key=lambda r: r.rms_translation_m / 0.001 + r.rms_rotation_rad
                    / math.radians(0.1))
        X, _ = refine(setup, A, B, start.T, hand_eye_residuals(setup, A, B, start.T)[2])
        dt, dr, _ = hand_eye_residuals(setup, A, B, X)
        refined_result = MethodResult("refined", X, float(np.sqrt((dt ** 2).mean())),
                                      float(np.sqrt((dr ** 2).mean())))
    # The refined result when asked for, else the closed-form one with the smallest residual
    # (a millimetre weighing as much as a tenth of a degree).
    best = refined_result if refined else min(
        results, key=lambda r: r.rms_translation_m / 0.001 + r.rms_rotation_rad
        / math.radians(0.1))
    spread_t = max((pose_difference(a.T, b.T)[0] for a in results for b in results), default=0.0)
    spread_r = max((pose_difference(a.T, b.T)[1] for a in results for b in results), default=0.0)
    if spread_t > agree_m or spread_r > agree_rad:
        notes.append(f"the methods disagree by up to {spread_t * 1000:.1f} mm and "
                     f"{math.degrees(spread_r):.2f} deg (more than {agree_m * 1000:.1f} mm / "
                     f"{math.degrees(agree_rad):.2f} deg): check the poses' frames and units")
    for note in notes:
        warnings.warn(note, DegeneratePosesWarning, stacklevel=2)
    if refined:
        results.append(refined_result)
    dt, dr, fixed = hand_eye_residuals(setup, A, B, best.T)
    return HandEyeCalibration(
        setup=setup, T=best.T, T_fixed=fixed, method=best.method,
        rms_translation_m=best.rms_translation_m, rms_rotation_rad=best.rms_rotation_rad,
        max_translation_m=float(dt.max()), max_rotation_rad=float(dr.max()),
        method_spread_m=float(spread_t), method_spread_rad=float(spread_r),
        n_poses=len(A), methods=tuple(results), warnings=tuple(notes), date=date,
        inputs=dict(inputs or {}))
