"""Intrinsics from board views rendered by MuJoCo: a textured board plane in a MuJoCo scene,
seen by a MuJoCo camera of known field of view (a second source, besides the synthetic
renderer). SimCamera ray-casts flat geom colours and draws no textures, so the colour views
come from MuJoCo's own OpenGL renderer (offscreen, EGL or OSMesa); the test is skipped where
no OpenGL context can be made."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from calibration import BoardDetector, CharucoBoardSpec, calibrate_intrinsics

from .synth import board_poses

mujoco = pytest.importorskip("mujoco")

SPEC = CharucoBoardSpec(9, 6, 0.025, 0.018)
W, H, FOVY_DEG = 640, 480, 50.0
PX_PER_M = 4000.0


def _scene(tmp_path: Path) -> str:
    """MJCF of the board (with a white margin of one square) as a textured plane."""
    import cv2

    margin = round(SPEC.square_m * PX_PER_M)
    img = cv2.copyMakeBorder(SPEC.image(PX_PER_M), margin, margin, margin, margin,
                             cv2.BORDER_CONSTANT, value=255)
    tex = tmp_path / "board.png"
    cv2.imwrite(str(tex), img)
    w, h = SPEC.size_m
    s = SPEC.square_m
    return f"""<mujoco>
  <asset>
    <texture name="board" type="2d" file="{tex}"/>
    <material name="board" texture="board" emission="1" specular="0" texrepeat="1 1"/>
  </asset>
  <visual><global offwidth="{W}" offheight="{H}"/></visual>
  <worldbody>
    <geom type="plane" size="{w / 2 + s} {h / 2 + s} 0.01" pos="{w / 2} {h / 2} 0"
          material="board"/>
    <camera name="cam" pos="0 0 1" fovy="{FOVY_DEG}"/>
  </worldbody>
</mujoco>"""


NO_GL_MARK = "no-gl-context:"


def _render(model, data, r, T_camera_board: np.ndarray) -> np.ndarray:
    """RGB view of the board with the camera at T_camera_board."""
    # The texture's rows run along the plane's -y: the board frame (y down the sheet, z into
    # the board) is the plane's frame turned half a turn about x, its origin at the top edge.
    T_world_board = np.diag([1.0, -1.0, -1.0, 1.0])
    T_world_board[1, 3] = SPEC.size_m[1]
    T_world_camera = T_world_board @ np.linalg.inv(T_camera_board)
    # A MuJoCo camera looks along its -z with y up; the optical frame along z with y down.
    R = T_world_camera[:3, :3] @ np.diag([1.0, -1.0, -1.0])
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, R.ravel())
    model.cam_pos[0], model.cam_quat[0] = T_world_camera[:3, 3], quat
    mujoco.mj_forward(model, data)
    r.update_scene(data, camera="cam")
    return r.render().copy()


def render_views(out_dir: str) -> None:
    """Render a view per pose in out_dir/poses.npy ((N, 4, 4) T_camera_board) into
    out_dir/view_XX.png (run in its own process, see below)."""
    import cv2

    out = Path(out_dir)
    model = mujoco.MjModel.from_xml_string(_scene(out))
    data = mujoco.MjData(model)
    try:
        renderer = mujoco.Renderer(model, H, W)
    except Exception as exc:  # no OpenGL context here: the parent skips on this line alone
        print(f"{NO_GL_MARK} {type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(3) from exc
    with renderer as r:
        for i, T in enumerate(np.load(out / "poses.npy")):
            cv2.imwrite(str(out / f"view_{i:02d}.png"), _render(model, data, r, T)[..., ::-1])


@pytest.fixture(scope="module")
def mujoco_render(tmp_path_factory):
    """render(poses) -> paths of board views rendered by MuJoCo, in a child process: MuJoCo
    picks its OpenGL platform (MUJOCO_GL, EGL by default here) when first imported, which in
    this process may already have happened without one."""
    def render(poses: list[np.ndarray]) -> list[Path]:
        out = tmp_path_factory.mktemp("mujoco_views")
        np.save(out / "poses.npy", np.array(poses))
        env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
        # MuJoCo loads its GL platform (MUJOCO_GL) on import: a failure there is a missing
        # renderer too, so the child marks it as the renderer's own failure is marked
        code = ("import sys\ntry:\n    import mujoco\nexcept Exception as exc:\n"
                f"    print('{NO_GL_MARK}', repr(exc), file=sys.stderr)\n    sys.exit(3)\n"
                "from tests.calibration.test_sim_board import render_views\n"
                "render_views(sys.argv[1])")
        proc = subprocess.run([sys.executable, "-c", code, str(out)], env=env,
                              capture_output=True, text=True, timeout=300,
                              cwd=Path(__file__).resolve().parents[2])
        if proc.returncode != 0:
            # only a failure to make the GL context is a missing renderer; anything after it
            # (a wrong scene, a crash while rendering) is a failure of the test
            no_gl = [ln for ln in proc.stderr.splitlines() if ln.startswith(NO_GL_MARK)]
            if no_gl:
                pytest.skip(f"no offscreen OpenGL for MuJoCo's renderer: "
                            f"{(no_gl or ['?'])[-1][len(NO_GL_MARK):].strip()}")
            raise AssertionError(f"rendering the MuJoCo views failed:\n{proc.stderr}")
        return sorted(out.glob("view_*.png"))

    return render


def test_intrinsics_from_mujoco_rendered_board_views_match_the_camera_fov(mujoco_render):
    import cv2

    det = BoardDetector(SPEC)
    views = []
    for path in mujoco_render(board_poses(SPEC, 14, seed=11, distance_m=(0.3, 0.5))):
        v = det.detect(cv2.imread(str(path), cv2.IMREAD_GRAYSCALE), path.name)
        if v is not None:
            views.append(v)
    assert len(views) >= 12
    cal = calibrate_intrinsics(views, W, H)
    # MuJoCo's pinhole: square pixels, the principal point at the image centre.
    f = (H / 2) / math.tan(math.radians(FOVY_DEG) / 2)
    assert cal.intrinsics.fx == pytest.approx(f, rel=0.005)
    assert cal.intrinsics.fy == pytest.approx(f, rel=0.005)
    assert abs(cal.intrinsics.cx - (W - 1) / 2) < 2 and abs(cal.intrinsics.cy - (H - 1) / 2) < 2
    assert cal.rms_px < 0.3
    assert max(abs(c) for c in cal.intrinsics.coeffs) < 0.02   # no lens distortion


def test_a_camera_mounted_5_mm_and_1_degree_off_is_found_by_hand_eye_from_mujoco_views(
        mujoco_render):
    """Eye-to-hand in simulation: the camera sits 5 mm and 1 degree away from where the cell
    thinks it is; the board rides on the flange through 15 robot poses; hand-eye from the
    MuJoCo-rendered views finds the true pose."""
    import cv2

    from calibration import board_pose, calibrate_hand_eye
    from geometry import invert, pose_difference, pose_from_rvec
    from drivers.camera import Intrinsics, look_at

    nominal = look_at([1.0, 0.0, 0.9], [0.45, 0.0, 0.25])            # T_base_camera assumed
    actual = nominal @ pose_from_rvec([0.0, math.radians(1.0), 0.0], [0.005, 0.0, 0.0])
    T_tcp_board = pose_from_rvec([0.0, 0.0, 0.0], [-0.1125, -0.075, 0.02])   # board centred
    seen = board_poses(SPEC, 15, seed=21, distance_m=(0.35, 0.55), tilt_deg=35)
    robot = [actual @ T_cb @ invert(T_tcp_board) for T_cb in seen]   # T_base_tcp
    f = (H / 2) / math.tan(math.radians(FOVY_DEG) / 2)
    intr = Intrinsics(W, H, f, f, (W - 1) / 2, (H - 1) / 2)
    det = BoardDetector(SPEC)
    A, B = [], []
    for T_base_tcp, path in zip(robot, mujoco_render(seen)):
        view = det.detect(cv2.imread(str(path), cv2.IMREAD_GRAYSCALE), path.name)
        if view is not None:
            A.append(T_base_tcp)
            B.append(board_pose(view, intr))
    assert len(A) >= 13
    cal = calibrate_hand_eye(A, B, setup="eye_to_hand")
    before = pose_difference(nominal, actual)
    after = pose_difference(cal.T_base_camera, actual)
    assert before[0] == pytest.approx(0.005, abs=1e-4) and math.degrees(before[1]) > 0.99
    print(f"camera pose error before {before[0] * 1000:.2f} mm {math.degrees(before[1]):.3f} deg,"
          f" after hand-eye {after[0] * 1000:.2f} mm {math.degrees(after[1]):.3f} deg")
    assert after[0] < 0.001 and math.degrees(after[1]) < 0.1
