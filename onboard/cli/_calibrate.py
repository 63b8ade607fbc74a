"""``graspline calibrate``: the printable board, camera intrinsics, hand-eye, the depth check,
the gripper maps, and a check of any calibration file. Each flow prints what to do, shows
progress, and writes a versioned YAML result (see docs/calibration.md)."""
from __future__ import annotations

import argparse
import functools
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import (CliError, open_camera, progress_bar, progress_note, read_frames,
                      reported)

if TYPE_CHECKING:
    import numpy as np

    from calibration import BoardDetector, BoardView, CharucoBoardSpec, DepthSample
    from drivers.camera import Intrinsics, RealSenseCamera

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def _board_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("board (as printed; the sheet's legend lists these)")
    g.add_argument("--squares", default="7x5", help="squares across x down (default 7x5)")
    g.add_argument("--square", type=float, default=0.030,
                   help="square side in metres, as measured on the print (default 0.030)")
    g.add_argument("--marker", type=float, default=0.022,
                   help="marker side in metres (default 0.022)")
    g.add_argument("--dict", default="DICT_5X5_100", dest="dictionary",
                   help="ArUco dictionary (default DICT_5X5_100)")
    g.add_argument("--legacy", action="store_true",
                   help="the board uses OpenCV's pattern before 4.6 (older prints)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``calibrate`` subcommand; each flow adds its own parser."""
    p = subparsers.add_parser(
        "calibrate", help="calibrate the cell: board sheet, intrinsics, hand-eye, depth, gripper",
        description="Calibrate a picking cell. Start with `calibrate board` and print the sheet.")
    sub = p.add_subparsers(dest="flow", metavar="FLOW")
    sub.required = True
    for add_flow in (_add_board, _add_intrinsics, _add_hand_eye, _add_depth, _add_gripper,
                     _add_check):
        add_flow(sub)


def _add_board(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("board", help="write the printable ChArUco board (PNG and PDF)")
    _board_args(b)
    b.add_argument("--paper", default="a4", help="a4, a3, a2 or letter (default a4)")
    b.add_argument("--dpi", type=int, default=300, help="PNG resolution (default 300)")
    b.add_argument("--out", default=".", help="folder to write to (default: here)")
    b.set_defaults(func=run_board)


def _add_intrinsics(sub: argparse._SubParsersAction) -> None:
    i = sub.add_parser("intrinsics", help="camera intrinsics from board views")
    src = i.add_mutually_exclusive_group(required=True)
    src.add_argument("--images", help="folder of board images")
    src.add_argument("--recording", help="RealSense recording (.db3) showing the board")
    src.add_argument("--live", action="store_true", help="a live RealSense camera")
    i.add_argument("--serial", help="--live: camera serial (default: the only one)")
    _board_args(i)
    i.add_argument("--views", type=int, default=25,
                   help="recording/live: views to capture (default 25)")
    i.add_argument("--min-motion", type=float, default=40.0,
                   help="recording/live: a new view must move the corners this many pixels "
                        "from every kept view (default 40)")
    i.add_argument("--save-views", help="recording/live: folder to keep the captured images in")
    i.add_argument("--fit-k3", action="store_true", help="also fit k3 (wide-angle lenses)")
    i.add_argument("--out", required=True, help="the calibration file to write (.yaml)")
    i.set_defaults(func=run_intrinsics)


def _add_hand_eye(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser("hand-eye", help="camera to robot, from (robot pose, image) pairs")
    h.add_argument("--setup", required=True, choices=("eye_in_hand", "eye_to_hand"),
                   help="eye_in_hand: camera on the flange, board fixed; eye_to_hand: camera "
                        "fixed, board on the flange")
    h.add_argument("--images", required=True, help="folder of the board images")
    h.add_argument("--poses", required=True,
                   help="CSV: image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad (or qx,qy,qz,qw), the "
                        "robot's TCP pose in the base frame when each image was taken")
    h.add_argument("--intrinsics", required=True, help="intrinsics calibration file")
    cap = h.add_mutually_exclusive_group()
    cap.add_argument("--capture", action="store_true",
                     help="capture first, from a live RealSense: at each robot pose you type the "
                          "TCP pose from the pendant; the images and the poses file are written "
                          "to --images and --poses")
    cap.add_argument("--capture-recording", metavar="F.db3",
                     help="as --capture, one frame of this recording per pose (a dry run)")
    h.add_argument("--serial", help="--capture: camera serial (default: the only one)")
    _board_args(h)
    h.add_argument("--out", required=True, help="the calibration file to write (.yaml)")
    h.set_defaults(func=run_hand_eye)


def _add_depth(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("depth", help="depth bias and noise on a flat target; scale correction")
    dsrc = d.add_mutually_exclusive_group(required=True)
    dsrc.add_argument("--recording", action="append",
                      help="a recording (.db3) of the flat target at one distance; repeat per "
                           "distance")
    dsrc.add_argument("--live", action="store_true",
                      help="a live RealSense camera: asks for the target at each distance")
    d.add_argument("--serial", help="--live: camera serial (default: the only one)")
    d.add_argument("--positions", type=int, default=4,
                   help="--live with --board-reference: how many distances (default 4)")
    d.add_argument("--distance", type=float, action="append",
                   help="true depth (m) of the target's centre in each recording, in order")
    d.add_argument("--board-reference", action="store_true",
                   help="take each reference from the ChArUco board's pose in the colour image "
                        "(the target is the board; needs --intrinsics)")
    d.add_argument("--intrinsics", help="intrinsics calibration file (for --board-reference)")
    _board_args(d)
    d.add_argument("--frames", type=int, default=10, help="frames per recording (default 10)")
    d.add_argument("--no-scale", action="store_true", help="report only; no scale correction")
    d.add_argument("--out", required=True, help="the calibration file to write (.yaml)")
    d.set_defaults(func=run_depth)


def _add_gripper(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("gripper", help="width and force maps from measured points")
    g.add_argument("--model", required=True, help="driver model (robotiq3f, barrett, ...)")
    g.add_argument("--mode", default="", help="robotiq3f: the grasping mode the map is for")
    g.add_argument("--points", help="CSV counts,width_m of measured openings")
    g.add_argument("--port", help="measure with gauge blocks on the gripper at this port")
    g.add_argument("--blocks", help="gauge block widths in metres, comma-separated")
    g.add_argument("--force-points", help="CSV counts,force_n of measured grip forces")
    g.add_argument("--finger-width", type=float, required=True,
                   help="finger width across the closing direction, metres (the scorer's w)")
    g.add_argument("--out", required=True, help="the calibration file to write (.yaml)")
    g.set_defaults(func=run_gripper)


def _add_check(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("check", help="validate a calibration file and print its summary")
    c.add_argument("file", help="a calibration file (.yaml)")
    c.set_defaults(func=run_check)


# ------------------------------------------------------------------------------- helpers

def _flow(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A calibration flow whose CalibrationErrors end it as one-line CliErrors (calibration
    is imported when the flow runs, not when the command line is built)."""
    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        from calibration import CalibrationError

        with reported(CalibrationError):
            return run(args)

    return wrapped


def _spec(args: argparse.Namespace) -> CharucoBoardSpec:
    """The board the --squares, --square, --marker, --dict and --legacy arguments describe."""
    from calibration import CharucoBoardSpec

    try:
        sx, sy = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise CliError(f"--squares must look like 7x5, got {args.squares!r}") from None
    return CharucoBoardSpec(sx, sy, args.square, args.marker, args.dictionary, args.legacy)


def _out_path(out: str) -> Path:
    """The --out file, checked before any work: a .yaml name in a folder that exists."""
    path = Path(out)
    if path.suffix not in (".yaml", ".yml"):
        raise CliError(f"--out {out}: calibration files are YAML; name it .yaml")
    if not path.parent.is_dir():
        raise CliError(f"--out {out}: folder {path.parent} does not exist")
    return path


def _save(cal, out: Path) -> None:
    """Write a calibration result to its file and say so."""
    from calibration import save_calibration

    save_calibration(cal, out)
    print(f"wrote {out}")


def _image_files(folder: str) -> list[Path]:
    """The image files in --images, sorted by name."""
    path = Path(folder)
    if not path.is_dir():
        raise CliError(f"--images {folder} is not a folder")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise CliError(f"--images {folder} holds no images ({', '.join(IMAGE_SUFFIXES)})")
    return files


def _read_rgb(path: Path) -> np.ndarray | None:
    """The image file as RGB uint8; None when OpenCV cannot read it."""
    import cv2

    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return None if bgr is None else cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


# ------------------------------------------------------------------------------- flows

@_flow
def run_board(args: argparse.Namespace) -> int:
    """Write the board sheet."""
    from calibration import write_board

    spec = _spec(args)
    png, pdf = write_board(spec, args.out, paper=args.paper, dpi=args.dpi)
    w, h = (s * 1000 for s in spec.size_m)
    print(f"wrote {pdf} and {png} ({w:.0f} x {h:.0f} mm board on {args.paper})")
    print("print the PDF at 100 % (no 'fit to page'), check the 100 mm bar with a ruler, and "
          "glue the sheet flat on a rigid plate")
    return 0


LIVE_HELP = """\
Hold the board in front of the camera. Views are kept automatically when the board is seen
in a new place; move it through the whole image (corners and edges too), tilt it 20-40 deg
towards and away from the camera, near and far. The map below shows where corners have been
seen ('.' = not yet): fill it. Ctrl-C stops early and calibrates with the views so far."""


def _collect_views(frames: Iterable[tuple[str, np.ndarray | None]], spec: CharucoBoardSpec,
                   args: argparse.Namespace, total: int | None,
                   live: bool) -> tuple[list[BoardView], tuple[int, int] | None]:
    """Detected views from (name, rgb) frames, with progress; returns (views, (width, height)
    of the images in pixels). From a stream (not --images) only views that moved at least
    --min-motion are kept, up to --views."""
    import cv2

    from calibration import BoardDetector, coverage_map, coverage_text, is_new_view

    detector = BoardDetector(spec)
    views, size, missed = [], None, []
    keep_dir = Path(args.save_views) if getattr(args, "save_views", None) else None
    if keep_dir is not None:
        keep_dir.mkdir(parents=True, exist_ok=True)
    dedupe = not getattr(args, "images", None)
    target = args.views if dedupe else None
    bar = progress_bar(target or total, "view" if dedupe else "image",
                       desc="views" if dedupe else "images")
    try:
        for name, rgb in frames:
            if rgb is None:
                progress_note(f"skipped {name}: not a readable image")
                bar.update(0 if dedupe else 1)
                continue
            this = (rgb.shape[1], rgb.shape[0])
            if size is None:
                size = this
            elif this != size:
                raise CliError(f"{name} is {this[0]} x {this[1]} pixels, the first image "
                               f"{size[0]} x {size[1]}: one calibration is for one resolution")
            view = detector.detect(rgb, name)
            if not dedupe:
                bar.update(1)
            if view is None:
                missed.append(name)
                continue
            if dedupe and not is_new_view(view, views, args.min_motion):
                continue
            views.append(view)
            if keep_dir is not None:
                cv2.imwrite(str(keep_dir / f"view_{len(views):03d}.png"),
                            cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
            if dedupe:
                bar.update(1)
                if live and len(views) % 5 == 0:
                    progress_note(coverage_text(coverage_map(views, *size)))
                if len(views) >= target:
                    break
    except KeyboardInterrupt:
        progress_note(f"stopped: calibrating with the {len(views)} views so far")
    finally:
        bar.close()
    if missed:
        print(f"no board found in {len(missed)} of the images"
              + (f": {', '.join(missed[:8])}{' ...' if len(missed) > 8 else ''}"
                 if not dedupe else ""))
    return views, size


@_flow
def run_intrinsics(args: argparse.Namespace) -> int:
    """Calibrate the intrinsics from a folder, a recording or a live camera."""
    from calibration import (CalibrationError, calibrate_intrinsics, compare_intrinsics,
                             coverage_map, coverage_text)

    spec = _spec(args)
    out = _out_path(args.out)
    factory, camera = None, None
    if args.images:
        files = _image_files(args.images)
        frames: Iterator[tuple[str, np.ndarray | None]] = ((p.name, _read_rgb(p))
                                                          for p in files)
        total, source = len(files), f"images {args.images} ({len(files)} files)"
    else:
        camera = open_camera(args.serial, recording=args.recording)
        factory = camera.intrinsics
        source = (f"recording {args.recording}" if args.recording
                  else f"live RealSense {camera.serial}")
        if args.live:
            print(LIVE_HELP)
        frames = ((f"frame {f.seq}", f.color) for f in read_frames(camera))
        total = None
    print(f"board: {spec.name}; source: {source}")
    try:
        views, size = _collect_views(frames, spec, args, total, bool(args.live))
    finally:
        if camera is not None:
            camera.close()
    if size is None:
        raise CliError("no images were read")
    cal = calibrate_intrinsics(views, *size, spec=spec, fit_k3=args.fit_k3,
                               inputs={"source": source, "views_offered": len(views)})
    i = cal.intrinsics
    print(f"\nfx {i.fx:.2f}  fy {i.fy:.2f}  cx {i.cx:.2f}  cy {i.cy:.2f} px "
          f"(std {cal.std_px[0]:.2f} {cal.std_px[1]:.2f} {cal.std_px[2]:.2f} "
          f"{cal.std_px[3]:.2f})")
    print("distortion k1 k2 p1 p2 k3: " + " ".join(f"{c:+.5f}" for c in i.coeffs))
    print(f"reprojection RMS {cal.rms_px:.3f} px over {len(cal.view_names)} views; worst views:")
    worst = sorted(zip(cal.view_errors_px, cal.view_names), reverse=True)[:5]
    for e, n in worst:
        print(f"  {n}: {e:.3f} px")
    for n, e in cal.rejected:
        print(f"  rejected as an outlier: {n} ({e:.3f} px)")
    print(f"coverage of the image: {cal.coverage:.0%}")
    print(coverage_text(coverage_map(views, *size)))
    if cal.coverage < 0.6:
        print("warning: the board covered little of the image; the distortion is only known "
              "where corners were seen: capture views near the edges and corners")
    if cal.rms_px > 0.5:
        print("warning: reprojection RMS above 0.5 px: blurred views, a board that is not "
              "flat, or a wrong --square")
    if factory is not None:
        try:
            print(compare_intrinsics(cal, factory, views).text())
        except CalibrationError as exc:
            print(f"no comparison with the factory intrinsics: {exc}")
    _save(cal, out)
    return 0


CAPTURE_HELP = """\
At each pose: move the robot so the camera sees the whole board, let it stop, then type the
TCP pose the pendant shows, in the robot base frame: x y z (metres) rx ry rz (rotation
vector, radians), e.g. 0.512 -0.104 0.433 3.1 0.2 -0.05. An empty line ends the capture.
Vary the flange's orientation by 20-40 deg about different axes; 10-20 poses."""


def _capture_hand_eye(args: argparse.Namespace, spec: CharucoBoardSpec) -> None:
    """Interactive capture: a board image and the typed robot pose per station, written to
    --images and --poses as they come (nothing is lost if it stops)."""
    import cv2

    from calibration import BoardDetector, CalibrationError, parse_robot_pose, pose_set_warnings

    folder, poses_path = Path(args.images), Path(args.poses)
    if poses_path.exists():
        raise CliError(f"{poses_path} exists: choose a new --poses file for a capture")
    folder.mkdir(parents=True, exist_ok=True)
    detector = BoardDetector(spec)
    robot: list = []
    # A live camera queues frames: take a fresh one, after the robot stopped.
    reads = 1 if args.capture_recording else 5
    print(CAPTURE_HELP)
    with open_camera(args.serial, recording=args.capture_recording) as cam, \
            open(poses_path, "w", encoding="utf-8") as csv_file:
        csv_file.write("image,x_m,y_m,z_m,rx_rad,ry_rad,rz_rad\n")
        csv_file.flush()
        while True:
            text = input(f"pose {len(robot) + 1}: ").strip()
            if not text:
                break
            try:
                T = parse_robot_pose(text)
            except CalibrationError:
                print("  type six numbers: x y z (m) rx ry rz (rad)")
                continue
            frames = list(read_frames(cam, reads))
            if len(frames) < reads:
                print("  the recording has no more frames")
                break
            frame = frames[-1]
            view = detector.detect(frame.color, f"pose {len(robot) + 1}")
            if view is None:
                print("  no board in view: move so that the camera sees the board; not kept")
                continue
            name = f"pose_{len(robot) + 1:02d}.png"
            cv2.imwrite(str(folder / name), cv2.cvtColor(frame.color, cv2.COLOR_RGB2BGR))
            # The numbers as typed (exactly: repr of each float round-trips).
            numbers = [repr(float(v)) for v in text.replace(",", " ").split()]
            csv_file.write(",".join([name, *numbers]) + "\n")
            csv_file.flush()
            robot.append(T)
            notes = pose_set_warnings(robot) if len(robot) >= 3 else []
            print(f"  kept ({len(view.ids)} corners); {len(robot)} poses"
                  + (f"; so far: {notes[-1]}" if notes else ""))
    print(f"wrote {poses_path} and {len(robot)} images in {folder}")


@_flow
def run_hand_eye(args: argparse.Namespace) -> int:
    """Hand-eye from a folder of images and the robot poses file (captured first with
    --capture)."""
    from calibration import (BoardDetector, DegeneratePosesWarning, board_pose,
                             calibrate_hand_eye, load_intrinsics, read_robot_poses)

    spec = _spec(args)
    out = _out_path(args.out)
    intr = load_intrinsics(args.intrinsics)
    if args.capture or args.capture_recording:
        _capture_hand_eye(args, spec)
    poses = read_robot_poses(args.poses)
    folder = Path(args.images)
    detector = BoardDetector(spec)
    robot, board, used, skipped = [], [], [], []
    for p in poses:
        path = folder / p.image
        rgb = _read_rgb(path) if path.is_file() else None
        if rgb is None:
            raise CliError(f"{args.poses} names image {p.image}, which is not a readable image "
                           f"in {folder}")
        view = detector.detect(rgb, p.image)
        if view is None:
            skipped.append(p.image)
            continue
        robot.append(p.T_base_tcp)
        board.append(board_pose(view, intr.intrinsics))
        used.append(p.image)
    if skipped:
        print(f"no board in {len(skipped)} images, not used: {', '.join(skipped)}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegeneratePosesWarning)
        cal = calibrate_hand_eye(robot, board, setup=args.setup,
                                 inputs={"images": str(folder), "poses": args.poses,
                                         "intrinsics": args.intrinsics, "board": spec.name})
    del caught   # the result carries the same warnings; printed with it
    print(cal.text())
    key = "T_tcp_camera" if args.setup == "eye_in_hand" else "T_base_camera"
    print(f"{key} (m):")
    for row in cal.T:
        print("  " + " ".join(f"{v:+.5f}" for v in row))
    _save(cal, out)
    return 0


def _depth_sample(cam: RealSenseCamera, label: str, frames: int, reference_m: float | None,
                  detector: BoardDetector | None, intrinsics: Intrinsics | None) -> DepthSample:
    """The mean sample over up to ``frames`` frames of the flat target at one position: with
    ``reference_m`` (metres) the target fills the image's centre; with a board ``detector``
    the target is the board and its pose from the colour image the reference."""
    from calibration import CalibrationError, board_hull_mask, board_pose, \
        mean_depth_sample, measure_flat_target

    per_frame = []
    for frame in read_frames(cam, frames):
        with reported(CalibrationError, prefix=f"{label}: "):
            if detector is None:
                per_frame.append(measure_flat_target(frame, reference_m=reference_m))
                continue
            view = detector.detect(frame.color, label)
            if view is None:
                continue
            # The board's plane is the reference; its corners' hull the target.
            per_frame.append(measure_flat_target(
                frame, T_camera_target=board_pose(view, intrinsics),
                mask=board_hull_mask(view, *frame.depth_m.shape)))
    if not per_frame:
        raise CliError(f"{label}: no usable frame (no board seen?)")
    print(f"{label}: {len(per_frame)} frames")
    return mean_depth_sample(per_frame)


@_flow
def run_depth(args: argparse.Namespace) -> int:
    """Depth check from recordings of a flat target, or a live camera."""
    from calibration import BoardDetector, depth_check, load_intrinsics

    out = _out_path(args.out)
    if args.board_reference == bool(args.distance):
        raise CliError("give either --distance once per --recording or --board-reference")
    if args.distance and args.recording and len(args.distance) != len(args.recording):
        raise CliError(f"{len(args.recording)} recordings but {len(args.distance)} distances")
    detector = intr = None
    if args.board_reference:
        if not args.intrinsics:
            raise CliError("--board-reference needs --intrinsics FILE")
        intr = load_intrinsics(args.intrinsics).intrinsics
        detector = BoardDetector(_spec(args))

    def measure(cam: RealSenseCamera, label: str, k: int) -> DepthSample:
        """The sample of the k-th target position."""
        reference = args.distance[k] if detector is None else None
        return _depth_sample(cam, label, args.frames, reference, detector, intr)

    samples = []
    if args.live:
        n = len(args.distance) if args.distance else args.positions
        with open_camera(args.serial) as cam:
            for k in range(n):
                where = (f"with its centre {args.distance[k]:.3f} m in front of the camera, on "
                         f"the optical axis" if args.distance else "filling the image")
                input(f"[{k + 1}/{n}] put the flat target {where}, facing the camera, then "
                      f"press Enter ")
                samples.append(measure(cam, f"position {k + 1}", k))
    else:
        for k, rec in enumerate(args.recording):
            with open_camera(recording=rec) as cam:
                samples.append(measure(cam, rec, k))
    cal = depth_check(samples, correct_scale=not args.no_scale,
                      inputs={"source": (f"live RealSense {args.serial or ''}".strip()
                                         if args.live else list(args.recording)),
                              "reference": "board" if args.board_reference else "distance",
                              "frames_per_recording": args.frames})
    print(cal.text())
    _save(cal, out)
    return 0


@_flow
def run_gripper(args: argparse.Namespace) -> int:
    """Fit the gripper map from a points file or gauge blocks on the device."""
    from calibration import fit_gripper_map, measure_gauge_blocks, read_gripper_points

    out = _out_path(args.out)
    if bool(args.points) == bool(args.port):
        raise CliError("give either --points FILE or --port PORT with --blocks")
    inputs: dict = {}
    if args.points:
        counts, widths = read_gripper_points(args.points, "width_m")
        inputs["points"] = args.points
    else:
        if not args.blocks:
            raise CliError("--port needs --blocks, the gauge block widths in metres")
        try:
            blocks = [float(b) for b in args.blocks.split(",")]
        except ValueError:
            raise CliError(f"--blocks must be numbers in metres, got {args.blocks!r}") from None
        from drivers.gripper import GripperError, open_gripper

        def place(width: float) -> None:
            input(f"put the {width * 1000:.1f} mm gauge block between the fingers, then "
                  f"press Enter ")

        options = {"mode": args.mode} if args.mode else {}
        with reported(GripperError, ValueError), \
                open_gripper(args.model, args.port, **options) as g:
            g.activate()
            points = measure_gauge_blocks(g, blocks, place)
        counts, widths = [c for c, _ in points], [w for _, w in points]
        inputs.update(port=args.port, blocks=blocks)
    fc, fn = (read_gripper_points(args.force_points, "force_n") if args.force_points
              else ([], []))
    cal = fit_gripper_map(counts, widths, model=args.model, mode=args.mode,
                          finger_width_m=args.finger_width, force_counts=fc, force_n=fn,
                          inputs=inputs)
    print(f"{args.model}: {len(cal.counts)} breakpoints, opening {cal.opening_m:.4f} m; "
          f"residual RMS {cal.rms_width_m * 1000:.2f} mm (worst {cal.max_width_m * 1000:.2f} mm)")
    for c, w in zip(cal.counts, cal.width_m):
        print(f"  {c:8.1f} counts -> {w:.4f} m")
    _save(cal, out)
    return 0


@_flow
def run_check(args: argparse.Namespace) -> int:
    """Load a calibration file, validating it, and print its summary."""
    from calibration import (DepthCalibration, GripperCalibration, HandEyeCalibration,
                             IntrinsicsCalibration, load_calibration)

    cal = load_calibration(args.file)
    print(f"{args.file}: valid, made {cal.date}")
    if isinstance(cal, IntrinsicsCalibration):
        i = cal.intrinsics
        print(f"intrinsics {i.width} x {i.height}: fx {i.fx:.2f} fy {i.fy:.2f} cx {i.cx:.2f} "
              f"cy {i.cy:.2f} px, RMS {cal.rms_px:.3f} px over {len(cal.view_names)} views")
    elif isinstance(cal, HandEyeCalibration):
        print(cal.text())
    elif isinstance(cal, DepthCalibration):
        print(cal.text())
    elif isinstance(cal, GripperCalibration):
        print(f"gripper {cal.model} {cal.mode}: opening {cal.opening_m:.4f} m, finger width "
              f"{cal.finger_width_m:.4f} m, {len(cal.counts)} breakpoints, RMS "
              f"{cal.rms_width_m * 1000:.2f} mm")
    return 0
