"""``graspline gripper``: command a gripper on a serial port, or run a device emulator."""
from __future__ import annotations

import argparse
import errno
import os

from drivers.gripper import SERIAL_MODELS as MODELS

from ._common import CliError, reported

ACTIONS = ("activate", "open", "grasp", "status", "emulate")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``gripper`` subcommand."""
    p = subparsers.add_parser(
        "gripper", help="command a gripper (activate, open, grasp, status) or emulate one",
        description="Command a gripper over its serial protocol, or run an emulator of it on a "
                    "pseudo-terminal (emulate) to try a cell without hardware.")
    p.add_argument("action", choices=ACTIONS, help="what to do")
    p.add_argument("--model", required=True, choices=MODELS, help="gripper model")
    p.add_argument("--port", help="serial port, e.g. /dev/ttyUSB0 (for emulate: the path of "
                                  "the link to create; default: a temporary one)")
    p.add_argument("--width", type=float, help="grasp: target width in metres")
    p.add_argument("--force", type=float, help="open/grasp: force in newtons")
    p.add_argument("--speed", type=float, help="open/grasp: speed in m/s")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for activation or a motion (default 10)")
    p.add_argument("--baudrate", type=int, help="serial baud rate (default: the model's)")
    p.add_argument("--activate", action="store_true",
                   help="open/grasp/status: activate first (a Robotiq faults 1 s after the last "
                        "command, so separate invocations need this)")
    p.add_argument("--mode", choices=("basic", "pinch", "wide", "scissor"),
                   help="robotiq3f: grasping mode")
    p.add_argument("--object-width", type=float,
                   help="emulate: width in metres of the object between the fingers")
    p.add_argument("--no-watchdog", action="store_true",
                   help="emulate (Robotiq): disable the 1-second communication fault")
    p.set_defaults(func=run)


def _check_port(port: str | None) -> str:
    if not port:
        raise CliError("--port is required (e.g. --port /dev/ttyUSB0)")
    if not os.path.exists(port):
        raise CliError(f"port {port} does not exist: is the gripper's adapter plugged in? "
                       f"(ls /dev/ttyUSB* /dev/ttyACM*)")
    if not os.access(port, os.R_OK | os.W_OK):
        raise CliError(f"permission denied on {port}: add your user to the dialout group "
                       f"(sudo usermod -aG dialout $USER) and log in again")
    return port


def _print_status(st) -> None:
    print(f"activated: {'yes' if st.activated else 'no'}")
    print(f"moving: {'yes' if st.moving else 'no'}")
    print(f"object detected: {'yes' if st.object_detected else 'no'}")
    print(f"width: {st.width_m:.4f} m")
    if st.mode:
        print(f"mode: {st.mode}")
    for f in st.fingers:
        print(f"finger {f.name}: position {f.position_raw}, closure {f.closure:.2f}, "
              f"contact {'yes' if f.contact else 'no'}")
    print(f"fault: 0x{st.fault_code:02X} {st.fault_message}".rstrip())


def _emulate(args: argparse.Namespace) -> int:
    from drivers.gripper.emulators import serve

    options: dict = {}
    if args.object_width is not None:
        options["object_width_m"] = args.object_width
    if args.no_watchdog and args.model != "barrett":
        options["watchdog"] = False

    def ready(port: str) -> None:
        print(f"{args.model} emulator on {port} (Ctrl-C to stop)", flush=True)
        print(f"try: graspline gripper --model {args.model} --port {port} activate", flush=True)

    with reported(ValueError, OSError):
        serve(args.model, args.port, on_ready=ready, **options)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run one gripper action; returns the exit status."""
    if args.action == "emulate":
        return _emulate(args)
    port = _check_port(args.port)
    if args.action == "grasp" and args.width is None:
        raise CliError("grasp needs --width (metres)")
    from drivers.gripper import GripperError, open_gripper

    options: dict = {}
    if args.baudrate:
        options["baudrate"] = args.baudrate
    if args.mode:
        if args.model != "robotiq3f":
            raise CliError("--mode applies to robotiq3f only")
        options["mode"] = args.mode
    try:
        with open_gripper(args.model, port, **options) as g:
            if args.action == "activate" or args.activate:
                g.activate(timeout_s=args.timeout)
                print(f"{args.model} on {port}: activated")
            if args.action == "status":
                _print_status(g.status())
            elif args.action in ("open", "grasp"):
                if args.action == "open":
                    r = g.open(args.speed, args.force, timeout_s=args.timeout)
                else:
                    r = g.grasp(args.width, args.speed, args.force, timeout_s=args.timeout)
                print(f"object detected: {'yes' if r.object_detected else 'no'}; "
                      f"width {r.width_m:.4f} m; {r.elapsed_s:.2f} s")
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    except GripperError as exc:
        cause = exc.__cause__
        if getattr(cause, "errno", None) == errno.EACCES:
            raise CliError(f"permission denied on {port}: add your user to the dialout "
                           f"group (sudo usermod -aG dialout $USER)") from exc
        raise CliError(str(exc)) from exc
    return 0
