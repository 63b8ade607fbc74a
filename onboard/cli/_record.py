"""``graspline record``: record a live RealSense camera to a .db3 file for later playback."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._common import CliError, camera_errors, open_camera, read_frames


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``record`` subcommand."""
    p = subparsers.add_parser(
        "record", help="record a live RealSense camera (depth + colour) to a .db3 file",
        description="Record depth (z16) and colour (rgb8) from a live RealSense camera into a "
                    "librealsense .db3 recording, which RealSenseCamera(recording=...) plays "
                    "back.")
    p.add_argument("out", metavar="OUT.db3", help="the recording to write")
    p.add_argument("--seconds", type=float, required=True, help="how long to record")
    p.add_argument("--serial", help="serial number of the camera (default: the only one attached)")
    p.add_argument("--width", type=int, default=640, help="image width in pixels (default 640)")
    p.add_argument("--height", type=int, default=480, help="image height in pixels (default 480)")
    p.add_argument("--fps", type=int, default=30, help="frames per second (default 30)")
    p.add_argument("--force", action="store_true", help="replace OUT.db3 if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record for the given time; returns the exit status."""
    out = Path(args.out)
    if out.suffix != ".db3":
        raise CliError(f"{out}: the recording must be a .db3 file (librealsense 2.59 writes only "
                       f".db3)")
    if not args.seconds > 0:
        raise CliError(f"--seconds must be > 0, got {args.seconds}")
    if not out.parent.is_dir():
        raise CliError(f"folder {out.parent} of {out} does not exist")
    if out.exists() and not args.force:
        raise CliError(f"{out} exists: choose another name or pass --force to replace it")
    frames = 0
    with camera_errors(), open_camera(args.serial, width=args.width, height=args.height,
                                      fps=args.fps, record_to=out) as cam:
        t0 = time.monotonic()
        for _ in read_frames(cam):   # recorded as they are read, until --seconds have passed
            frames += 1
            if time.monotonic() - t0 >= args.seconds:
                break
        elapsed = time.monotonic() - t0
        serial = cam.serial
    print(f"recorded {frames} frames in {elapsed:.1f} s from RealSense {serial} to {out}")
    return 0
