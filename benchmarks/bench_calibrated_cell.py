"""Hand-eye calibration pays: the simulated cell with its camera pose 5 mm and 1 degree off,
then calibrated back by eye-to-hand calibration from simulated robot poses.

The arm carries a ChArUco-sized point board through 15 poses over the table (real motions of
the simulated arm; the poses are what the arm reports), the camera's view of the board is
simulated by projecting its corners through the true camera with 0.2 px noise and solvePnP,
and ``calibration.calibrate_hand_eye`` (eye-to-hand) gives the camera pose back. Printed:
the pose error and the best-policy success rate before and after, on the same tables.

Run from the repository root:

    .venv/bin/python -m benchmarks.bench_calibrated_cell --trials 40
"""
from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile

import numpy as np


def perturbed(T: np.ndarray, offset_m: float, angle_rad: float) -> np.ndarray:
    """T moved offset_m along its x axis and turned angle_rad about its y axis."""
    from scipy.spatial.transform import Rotation

    D = np.eye(4)
    D[:3, :3] = Rotation.from_rotvec([0.0, angle_rad, 0.0]).as_matrix()
    D[:3, 3] = (offset_m, 0.0, 0.0)
    return T @ D


def pose_error(A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    """(translation m, rotation rad) between two poses."""
    R = A[:3, :3].T @ B[:3, :3]
    return float(np.linalg.norm(A[:3, 3] - B[:3, 3])), math.acos(np.clip((np.trace(R) - 1) / 2, -1, 1))


def board_observations(cell, n: int, seed: int):
    """(T_base_tcp as the arm reports it, T_camera_board as the camera measures it) at n poses."""
    import cv2

    rng = np.random.default_rng(seed)
    cam, arm = cell.devices.camera, cell.devices.arm
    T_true = cam.T_base_camera  # where the simulated camera really is
    K = np.array([[cam.intrinsics.fx, 0, cam.intrinsics.cx], [0, cam.intrinsics.fy, cam.intrinsics.cy],
                  [0, 0, 1.0]])
    grid = np.array([(0.03 * i, 0.03 * j, 0.0) for i in range(7) for j in range(5)]) - (0.09, 0.06, 0)
    T_tcp_board = np.eye(4)
    T_tcp_board[:3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]   # board faces up, at the TCP
    T_tcp_board[2, 3] = 0.02
    A, B = [], []
    from scipy.spatial.transform import Rotation

    for _ in range(n):
        T = np.eye(4)
        tilt = Rotation.from_rotvec(np.append(rng.uniform(-0.45, 0.45, 2), rng.uniform(-np.pi, np.pi)))
        T[:3, :3] = tilt.as_matrix() @ np.diag([1.0, -1.0, -1.0])
        T[:3, 3] = (rng.uniform(-0.15, 0.15), rng.uniform(-0.12, 0.12), rng.uniform(0.3, 0.42))
        r = arm.move(T, 0.3)
        if not r.reached:
            continue
        T_base_tcp = arm.T_base_tcp
        T_cb = np.linalg.inv(T_true) @ T_base_tcp @ T_tcp_board
        pts_cam = grid @ T_cb[:3, :3].T + T_cb[:3, 3]
        px = pts_cam @ K.T
        px = px[:, :2] / px[:, 2:] + rng.normal(0.0, 0.2, (len(grid), 2))
        ok, rvec, tvec = cv2.solvePnP(grid, px, K, None, flags=cv2.SOLVEPNP_ITERATIVE)
        if not ok:
            continue
        M = np.eye(4)
        M[:3, :3] = cv2.Rodrigues(rvec)[0]
        M[:3, 3] = tvec.ravel()
        A.append(T_base_tcp)
        B.append(M)
    arm.move(cell.loop.home, 0.3)
    return A, B


def success_rate(cell, n: int) -> tuple[float, int]:
    """Share of n best-policy cycles whose grasp held, and how many grasps were tried."""
    tried = held = 0
    for _ in range(n):
        r = cell.pick_record()
        if r.success is not None:
            tried += 1
            held += bool(r.success)
    return held / max(tried, 1), tried


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=40, help="trials before and after")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    from calibration import calibrate_hand_eye
    from onboard import open_picking_cell

    results = {}
    cal_err = None
    for phase in ("wrong pose", "calibrated"):
        # the same tables for both phases: a fresh cell from the same seed
        with open_picking_cell(sim=True, seed=args.seed, log_dir=tempfile.mkdtemp()) as cell:
            cam = cell.devices.camera
            true = cam.T_base_camera
            wrong = perturbed(true, 0.005, math.radians(1.0))
            if phase == "wrong pose":
                cam.reported_T_base_camera = wrong
                err = pose_error(wrong, true)
            else:
                A, B = board_observations(cell, 15, args.seed)
                cal = calibrate_hand_eye(A, B, setup="eye_to_hand")
                cam.reported_T_base_camera = cal.T_base_camera
                err = cal_err = pose_error(cal.T_base_camera, true)
            results[phase] = (err, *success_rate(cell, args.trials))
    print("| camera pose | error (mm) | error (deg) | grasps held | of |")
    print("|---|---|---|---|---|")
    for phase, ((dt, dr), rate, n) in results.items():
        print(f"| {phase} | {dt * 1e3:.2f} | {math.degrees(dr):.3f} | {rate:.0%} | {n} |")
    print(f"\nhand-eye from 15 simulated robot poses: residual pose error "
          f"{cal_err[0] * 1e3:.2f} mm, {math.degrees(cal_err[1]):.3f} deg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
