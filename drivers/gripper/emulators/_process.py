"""Running an emulator: an asyncio loop (physics, relay, control), in its own process.

``EmulatorProcess`` starts one in a child process and talks to it over a pipe; the tests and
the benchmark use it. ``serve`` runs one in the foreground (``graspline gripper emulate``).
"""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from typing import Any

from .._registry import SERIAL_MODELS
from ._pty import VirtualPort

MODELS = SERIAL_MODELS  # every serial model has an emulator
TICK_S = 0.005


def _make(model: str, port: VirtualPort, options: dict[str, Any]) -> Any:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    if model == "barrett":
        from ._barrett import BarrettEmulator
        return BarrettEmulator(port, **options)
    from ._robotiq import RobotiqEmulator
    return RobotiqEmulator(model, port, **options)


class _Runner:
    """The emulator's event loop: physics ticks, the relay, control commands, vanishing."""

    def __init__(self, model: str, link: str | None, options: dict[str, Any]) -> None:
        self.port = VirtualPort(link)
        self.emu = _make(model, self.port, options)
        self.done = asyncio.Event()
        self._restore_task: asyncio.Task | None = None

    async def run(self, conn: Connection | None, on_ready: Any = None) -> None:
        loop = asyncio.get_running_loop()
        await self.emu.start()
        if conn is not None:
            loop.add_reader(conn.fileno(), self._on_control, conn)
            conn.send(("ready", self.port.name))
        if on_ready:
            on_ready(self.port.name)
        last = time.monotonic()
        while not self.done.is_set():
            await asyncio.sleep(TICK_S)
            now = time.monotonic()
            self.emu.step(now - last)
            last = now
        await self.emu.stop()
        self.port.close()

    # control ----------------------------------------------------------------------
    def _on_control(self, conn: Connection) -> None:
        try:
            cmd, kwargs = conn.recv()
        except (EOFError, OSError):
            self.done.set()
            asyncio.get_running_loop().remove_reader(conn.fileno())
            return
        try:
            result = getattr(self, f"cmd_{cmd}")(**kwargs)
            conn.send(("ok", result))
        except Exception as exc:  # noqa: BLE001 - reported to the caller as is
            conn.send(("error", f"{type(exc).__name__}: {exc}"))

    def cmd_faults(self, **counts: Any) -> None:
        self.emu.faults.update(**counts)

    def cmd_clear_faults(self) -> None:
        from ._faults import FaultPlan
        self.emu.faults = FaultPlan()

    def cmd_device_fault(self, code: int) -> None:
        self.emu.device.set_fault(code)

    def cmd_set(self, **attrs: Any) -> None:
        for k, v in attrs.items():
            if not hasattr(self.emu.device, k):
                raise ValueError(f"device has no attribute {k!r}")
            setattr(self.emu.device, k, v)

    def cmd_stats(self) -> dict[str, Any]:
        return self.emu.stats()

    def cmd_vanish(self, seconds: float | None = None) -> None:
        self.emu.detach()
        self.port.vanish()
        if seconds is not None:
            self._restore_task = asyncio.get_running_loop().create_task(self._later(seconds))

    async def _later(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.cmd_restore()

    def cmd_restore(self) -> None:
        if not self.port.present:
            self.port.open()
            self.emu.attach()

    def cmd_stop(self) -> None:
        self.done.set()


def _child_main(argv: list[str]) -> None:
    """Entry of the emulator process: ``python -m drivers.gripper.emulators FD MODEL LINK OPTIONS``."""
    import json

    # The parent ends us through the pipe; a Ctrl-C meant for the test run must not.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fd, model, link, options = int(argv[0]), argv[1], argv[2], json.loads(argv[3])
    conn = Connection(fd)
    runner = _Runner(model, link, options)
    asyncio.run(runner.run(conn))


class EmulatorProcess:
    """An emulated gripper in a child process, reachable at ``.port`` (a pty symlink).

    Options go to the emulator and its device model (e.g. ``object_width_m``,
    ``activation_s``, ``missing_fingers``). Use as a context manager; ``stop()`` is safe twice.
    The child is a fresh interpreter (not a fork), so it shares no threads or ports with us.
    """

    def __init__(self, model: str, *, link: str | None = None, start_timeout_s: float = 20.0,
                 **options: Any) -> None:
        import json

        if model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
        self.model = model
        self._tmp: str | None = None
        if link is None:
            self._tmp = tempfile.mkdtemp(prefix="graspline-emu-")
            link = os.path.join(self._tmp, "tty")
        parent_sock, child_sock = socket.socketpair()
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", __package__, str(child_sock.fileno()), model, link,
             json.dumps(options)],
            pass_fds=(child_sock.fileno(),), env=env, stdin=subprocess.DEVNULL)
        child_sock.close()
        self._conn = Connection(parent_sock.detach())
        try:
            if not self._conn.poll(start_timeout_s):
                raise RuntimeError(f"{model} emulator did not start within {start_timeout_s} s")
            tag, port = self._conn.recv()
        except (EOFError, OSError, RuntimeError) as exc:
            self.stop()
            raise RuntimeError(f"{model} emulator failed to start "
                               f"(exit status {self._proc.poll()})") from exc
        assert tag == "ready", (tag, port)
        self.port: str = port

    def call(self, cmd: str, **kwargs: Any) -> Any:
        """Run a control command in the emulator and return its result."""
        self._conn.send((cmd, kwargs))
        if not self._conn.poll(20.0):
            raise RuntimeError(f"emulator did not answer {cmd!r}")
        tag, result = self._conn.recv()
        if tag != "ok":
            raise RuntimeError(f"emulator {cmd!r} failed: {result}")
        return result

    def faults(self, **counts: Any) -> None:
        """Inject faults into the next replies (see FaultPlan)."""
        self.call("faults", **counts)

    def clear_faults(self) -> None:
        """Remove every pending injected fault."""
        self.call("clear_faults")

    def device_fault(self, code: int) -> None:
        """Make the device report fault ``code`` (Robotiq gFLT, Barrett ERR bits)."""
        self.call("device_fault", code=code)

    def set(self, **attrs: Any) -> None:
        """Change device parameters, e.g. ``object_width_m``."""
        self.call("set", **attrs)

    def stats(self) -> dict[str, Any]:
        """Counters and logs: writes/commands executed, requests received, status."""
        return self.call("stats")

    def vanish(self, seconds: float | None = None) -> None:
        """Make the port disappear; it comes back after ``seconds`` (None: on restore())."""
        self.call("vanish", seconds=seconds)

    def restore(self) -> None:
        """Bring a vanished port back (same path)."""
        self.call("restore")

    def stop(self) -> None:
        """End the emulator process."""
        if self._proc.poll() is None:
            try:
                self._conn.send(("stop", {}))
            except (BrokenPipeError, OSError):
                pass
            try:
                self._proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5.0)
        self._conn.close()
        if self._tmp:
            for name in os.listdir(self._tmp):
                os.unlink(os.path.join(self._tmp, name))
            os.rmdir(self._tmp)
            self._tmp = None

    def __enter__(self) -> "EmulatorProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(model: str, link: str | None = None, on_ready: Any = None,
          **options: Any) -> None:
    """Run an emulator in this process until Ctrl-C or SIGTERM, then stop it cleanly."""
    runner = _Runner(model, link, options)

    async def main() -> None:
        # handlers of the loop's own, not Python's default: a process started in the
        # background (a shell's `&`, a test worker) inherits SIGINT ignored, and SIGTERM
        # would otherwise end it without closing its port
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, runner.done.set)
        await runner.run(None, on_ready)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        runner.port.close()
