"""The ``graspline calibrate`` flows end to end: the board sheet at true scale, hand-eye from
rendered images and a robot poses file, the gripper map from points, file checks."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from calibration import (BoardDetector, CharucoBoardSpec, IntrinsicsCalibration, load_gripper_map,
                         load_hand_eye, save_calibration)
from geometry import invert, matrix_to_rotvec, pose_difference, pose_from_rvec
from drivers.camera import Intrinsics
from onboard.cli import main

from .synth import BoardRenderer, board_poses

# librealsense is not safe in two processes at once (an xdist worker crashed when two test
# files played recordings side by side): `make test` runs these files in a process of their own
pytestmark = pytest.mark.realsense



def test_board_sheet_is_printed_at_true_scale_with_its_parameters_in_the_name(tmp_path, capsys):
    import cv2

    assert main(["calibrate", "board", "--squares", "7x5", "--square", "0.03", "--marker",
                 "0.022", "--out", str(tmp_path)]) == 0
    stem = "charuco_7x5_sq30mm_mk22mm_DICT_5X5_100"
    png, pdf = tmp_path / f"{stem}.png", tmp_path / f"{stem}.pdf"
    assert png.is_file() and pdf.is_file() and str(pdf) in capsys.readouterr().out
    img = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    # A4 at 300 dpi (matplotlib rounds the page down to whole pixels)
    assert img.shape == (pytest.approx(210 / 25.4 * 300, abs=1),
                         pytest.approx(297 / 25.4 * 300, abs=1))
    view = BoardDetector(CharucoBoardSpec()).detect(img)
    assert view is not None and len(view.ids) == 24
    # Neighbouring corners one square apart: 30 mm at 300 dpi.
    step = np.linalg.norm(np.diff(view.corners_px[np.argsort(view.ids)][:6], axis=0), axis=1)
    assert step == pytest.approx(0.030 / 0.0254 * 300, rel=0.005)
    media = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)", pdf.read_bytes())
    assert media and float(media[1]) == pytest.approx(841.89, abs=0.1)   # 297 mm in points
    assert float(media[2]) == pytest.approx(595.28, abs=0.1)


def test_board_that_does_not_fit_the_paper_is_refused_naming_one_that_does(tmp_path, capsys):
    assert main(["calibrate", "board", "--squares", "12x9", "--square", "0.03", "--marker",
                 "0.022", "--out", str(tmp_path)]) == 2
    assert "does not fit on a4" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_hand_eye_flow_from_rendered_images_and_a_poses_file(tmp_path, capsys):
    import cv2

    W, H = 640, 480
    K = np.array([[600.0, 0, 319.5], [0, 600.0, 239.5], [0, 0, 1]])
    dist = np.array([0.05, -0.1, 0.0, 0.0, 0.0])
    spec = CharucoBoardSpec(9, 6, 0.025, 0.018)
    intr = IntrinsicsCalibration(Intrinsics(W, H, 600.0, 600.0, 319.5, 239.5, "brown_conrady",
                                            tuple(dist)), 0.1, (), ())
    save_calibration(intr, tmp_path / "intr.yaml")
    T_tcp_camera = pose_from_rvec([0.02, -0.03, 1.5], [0.04, -0.06, 0.05])
    T_base_board = pose_from_rvec([math.pi, 0, 0.1], [0.6, 0.1, 0.0])
    renderer = BoardRenderer(K, dist, W, H)
    (tmp_path / "imgs").mkdir()
    rows = ["image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad"]
    for i, T_camera_board in enumerate(board_poses(spec, 12, seed=5, tilt_deg=40)):
        T_base_tcp = T_base_board @ invert(T_camera_board) @ invert(T_tcp_camera)
        name = f"pose{i:02d}.png"
        cv2.imwrite(str(tmp_path / "imgs" / name), renderer.render(spec, T_camera_board, seed=i))
        rv = matrix_to_rotvec(T_base_tcp[:3, :3])
        rows.append(",".join([name, *(f"{v:.6f}" for v in T_base_tcp[:3, 3]),
                              *(f"{v:.7f}" for v in rv)]))
    (tmp_path / "poses.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "he.yaml"
    assert main(["calibrate", "hand-eye", "--setup", "eye_in_hand", "--images",
                 str(tmp_path / "imgs"), "--poses", str(tmp_path / "poses.csv"), "--intrinsics",
                 str(tmp_path / "intr.yaml"), "--squares", "9x6", "--square", "0.025",
                 "--marker", "0.018", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "eye_in_hand: refined, 12 poses" in printed and "T_tcp_camera" in printed
    cal = load_hand_eye(out)
    dt, dr = pose_difference(cal.T_tcp_camera, T_tcp_camera)
    assert dt < 0.002 and math.degrees(dr) < 0.5
    assert pose_difference(cal.T_fixed, T_base_board)[0] < 0.002


def test_gripper_flow_from_a_points_file(tmp_path, capsys):
    pts = tmp_path / "pts.csv"
    pts.write_text("counts,width_m\n0,0.150\n64,0.112\n128,0.074\n192,0.037\n255,0.0\n")
    out = tmp_path / "g.yaml"
    assert main(["calibrate", "gripper", "--model", "robotiq3f", "--mode", "basic", "--points",
                 str(pts), "--finger-width", "0.022", "--out", str(out)]) == 0
    assert "opening 0.1500 m" in capsys.readouterr().out
    cal = load_gripper_map(out)
    assert cal.counts_at(0.074) == pytest.approx(128) and cal.mode == "basic"
    pts.write_text("counts,width_m\n0,0.150\n64,wide\n")
    assert main(["calibrate", "gripper", "--model", "robotiq3f", "--points", str(pts),
                 "--finger-width", "0.022", "--out", str(out)]) == 2
    assert "line 3: counts and width_m must be numbers" in capsys.readouterr().err


def test_check_names_the_file_and_key_of_a_broken_calibration(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graspline_calibration: gripper\nversion: 1\ndate: 2026-01-01\n"
                   "result: {model: barrett, finger_width_m: 0.02}\nresiduals: {}\n")
    assert main(["calibrate", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"calibration file {bad}: key 'result.width': missing" in err


def test_hand_eye_capture_asks_for_each_pose_keeps_views_with_a_board_and_calibrates(
        tmp_path, monkeypatch, capsys):
    """--capture-recording: a RealSense recording stands in for the live camera, one frame
    per pose; the operator types the pendant's pose (one typo, one view without the board)."""
    pytest.importorskip("pyrealsense2")
    from drivers.camera import RGBDFrame, record_frames

    W, H = 640, 480
    K = np.array([[600.0, 0, 319.5], [0, 600.0, 239.5], [0, 0, 1]])
    spec = CharucoBoardSpec(9, 6, 0.025, 0.018)
    intr = Intrinsics(W, H, 600.0, 600.0, 319.5, 239.5)
    save_calibration(IntrinsicsCalibration(intr, 0.1, (), ()), tmp_path / "intr.yaml")
    T_base_camera = pose_from_rvec([2.3, 0.0, 0.0], [0.9, 0.0, 0.6])
    T_tcp_board = pose_from_rvec([0.0, 0.0, 0.0], [-0.11, -0.075, 0.02])
    renderer = BoardRenderer(K, np.zeros(5), W, H)
    seen = board_poses(spec, 10, seed=9, tilt_deg=40)
    frames = [renderer.render(spec, T, seed=i) for i, T in enumerate(seen)]
    frames.insert(3, np.full((H, W, 3), 255, np.uint8))           # the board out of view
    record_frames((RGBDFrame(c, np.zeros((H, W), np.float32), intr) for c in frames),
                  tmp_path / "cam.db3")
    typed = []
    for T_cb in seen:
        T = T_base_camera @ T_cb @ invert(T_tcp_board)
        typed.append(" ".join(f"{v:.7f}" for v in [*T[:3, 3], *matrix_to_rotvec(T[:3, :3])]))
    typed.insert(3, typed[3])          # typed again for the view without the board
    answers = iter(["0.5 0.1 oops", *typed, ""])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    out = tmp_path / "he.yaml"
    assert main(["calibrate", "hand-eye", "--setup", "eye_to_hand", "--capture-recording",
                 str(tmp_path / "cam.db3"), "--images", str(tmp_path / "cap"), "--poses",
                 str(tmp_path / "poses.csv"), "--intrinsics", str(tmp_path / "intr.yaml"),
                 "--squares", "9x6", "--square", "0.025", "--marker", "0.018",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "type six numbers" in printed and "no board in view" in printed
    assert len(list((tmp_path / "cap").glob("pose_*.png"))) == 10
    assert (tmp_path / "poses.csv").read_text().count("\n") == 11
    cal = load_hand_eye(out)
    dt, dr = pose_difference(cal.T_base_camera, T_base_camera)
    assert dt < 0.002 and math.degrees(dr) < 0.5
