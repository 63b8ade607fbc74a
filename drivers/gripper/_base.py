"""The gripper interface and the serial transport every real driver shares.

``Gripper`` implements each public method once: range checks before any byte is sent, the
wait for a motion to finish, fault raising. A device implements small private hooks
(``_activate``, ``_start_motion``, ``_read_status``, ``_stop``, ``_close``).

``SerialGripper`` adds the port: one lock around each request/reply exchange, per-attempt reply
timeouts, retries, reconnection when the port vanishes, and a keep-alive status poll. Its retry
never re-sends a write blindly: before a write is repeated, the device is asked (``verify``)
whether the first one took effect.
"""
from __future__ import annotations

import abc
import logging
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ._errors import (GripperDisconnected, GripperError, GripperFault, GripperProtocolError,
                      GripperTimeout)
from ._types import GraspResult, GripperSpec, GripperStatus, Range

log = logging.getLogger("drivers.gripper")

_TIMEOUT_RANGE = Range(0.001, 3600.0, "s")


class Gripper(abc.ABC):
    """A gripper commanded in SI units (metres, m/s, newtons, seconds); a context manager."""

    #: model name as used by ``open_gripper`` and the CLI
    model: str = ""

    def __init__(self, port: str, spec: GripperSpec, *, poll_interval_s: float = 0.01) -> None:
        self._port = port
        self._spec = spec
        self._poll_interval_s = poll_interval_s
        self._closed = False

    # ----------------------------------------------------------------- public interface
    @property
    def port(self) -> str:
        """The port this gripper talks on."""
        return self._port

    @property
    def spec(self) -> GripperSpec:
        """Ranges and unit maps of this model (replace with ``set_spec`` after calibration)."""
        return self._spec

    def set_spec(self, spec: GripperSpec) -> None:
        """Use calibrated ranges and maps from now on."""
        self._spec = spec

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    def activate(self, timeout_s: float = 15.0) -> None:
        """Activate (initialise) the device and wait until it reports ready, at most timeout_s."""
        timeout_s = _TIMEOUT_RANGE.check("timeout_s", timeout_s)
        self._check_usable()
        self._activate(timeout_s)

    def open(self, speed_mps: float | None = None, force_n: float | None = None, *,
             timeout_s: float = 10.0) -> GraspResult:
        """Open fully at speed_mps (m/s) with force_n (N); waits until the fingers stop."""
        return self._move(self._spec.width.high, speed_mps, force_n, timeout_s)

    def grasp(self, width_m: float, speed_mps: float | None = None, force_n: float | None = None,
              timeout_s: float = 10.0) -> GraspResult:
        """Close towards width_m (m) at speed_mps (m/s) with force_n (N), wait, report.

        Defaults: the model's top speed and its lowest force. Raises GripperTimeout if the
        fingers have not stopped after timeout_s (s), GripperFault if the device faults.
        """
        return self._move(width_m, speed_mps, force_n, timeout_s)

    def status(self) -> GripperStatus:
        """Read and decode the device status now."""
        self._check_usable()
        return self._read_status()

    def stop(self) -> None:
        """Stop any motion now, holding the current position."""
        self._check_usable()
        self._stop()

    def close(self) -> None:
        """Release the port; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._close()

    def __enter__(self) -> "Gripper":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A port left open keeps the device busy; say so, as an open file would.
        if not getattr(self, "_closed", True):
            warnings.warn(f"{type(self).__name__} on {self._port} was not closed",
                          ResourceWarning, stacklevel=2)
            try:
                self.close()
            except Exception:  # noqa: BLE001 - nothing sensible to do in a finaliser
                pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<{type(self).__name__} {self.model} on {self._port} ({state})>"

    # ------------------------------------------------------------------------- helpers
    def _move(self, width_m: float, speed_mps: float | None, force_n: float | None,
              timeout_s: float) -> GraspResult:
        spec = self._spec
        width = spec.width.check("width_m", width_m)
        speed = spec.speed.check("speed_mps", spec.speed.high if speed_mps is None else speed_mps)
        force = spec.force.check("force_n", spec.force.low if force_n is None else force_n)
        timeout_s = _TIMEOUT_RANGE.check("timeout_s", timeout_s)
        self._check_usable()
        t0 = self._clock()
        deadline = t0 + timeout_s
        self._start_motion(width, speed, force, timeout_s)
        while True:
            st = self._read_status()
            self._raise_if_fault(st)
            if self._motion_finished(st):
                return GraspResult(st.object_detected, st.width_m, self._clock() - t0, st)
            if self._clock() >= deadline:
                raise GripperTimeout(
                    f"motion to width {width:g} m not finished within {timeout_s:g} s "
                    f"(width now {st.width_m:.4f} m)", port=self._port)
            self._wait()

    def _clock(self) -> float:
        """Seconds on the clock motions are timed by (a simulated device: its own clock)."""
        return time.monotonic()

    def _wait(self) -> None:
        """Pause between two status polls of a motion."""
        time.sleep(self._poll_interval_s)

    def _raise_if_fault(self, st: GripperStatus) -> None:
        if st.faulted:
            raise GripperFault(st.fault_code, st.fault_message, port=self._port)

    def _check_usable(self) -> None:
        if self._closed:
            raise GripperDisconnected("gripper was closed", port=self._port)

    # ------------------------------------------------------------------- device hooks
    @abc.abstractmethod
    def _activate(self, timeout_s: float) -> None:
        """Run the activation sequence; return when the device is ready."""

    @abc.abstractmethod
    def _start_motion(self, width_m: float, speed_mps: float, force_n: float,
                      timeout_s: float) -> None:
        """Command a motion towards width_m (values already range-checked)."""

    @abc.abstractmethod
    def _read_status(self) -> GripperStatus:
        """Read and decode the status."""

    def _motion_finished(self, st: GripperStatus) -> bool:
        """True when the motion commanded last has ended (reached, or stopped on an object)."""
        return not st.moving

    @abc.abstractmethod
    def _stop(self) -> None:
        """Stop motion."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Release resources."""


class _NoReply(Exception):
    """Internal: nothing usable arrived within the attempt's timeout."""


class _BadReply(Exception):
    """Internal: bytes arrived but did not make a valid reply (CRC, garbage)."""


class _PortLost(Exception):
    """Internal: the port raised an I/O error (vanished)."""


#: parse(buffer) -> (reply or None, bytes consumed, saw a corrupt frame)
Parser = Callable[[bytearray], tuple[Any, int, bool]]


class SerialGripper(Gripper):
    """A gripper on a serial port, with timeouts, retries, reconnection and keep-alive.

    Timeout semantics: ``timeout_s`` bounds one attempt (request sent -> reply complete);
    an exchange makes at most ``retries + 1`` attempts and, checks included, raises within
    about ``(retries + 1) * timeout_s``, plus up to ``reconnect_s`` when the port vanished.
    A reply arriving after its attempt's timeout is discarded before the next request.
    """

    def __init__(self, port: str, spec: GripperSpec, *, baudrate: int, timeout_s: float = 0.2,
                 retries: int = 2, reconnect_s: float = 3.0, keepalive_s: float | None = None,
                 poll_interval_s: float = 0.01) -> None:
        super().__init__(port, spec, poll_interval_s=poll_interval_s)
        self._closed = True            # until the port is open; __del__ must not warn before
        self._baudrate = int(baudrate)
        self._timeout_s = Range(0.001, 60.0, "s").check("timeout_s", timeout_s)
        if int(retries) != retries or not 0 <= retries <= 20:
            raise ValueError(f"retries must be an integer within [0, 20], got {retries!r}")
        self._retries = int(retries)
        self._reconnect_s = Range(0.0, 600.0, "s").check("reconnect_s", reconnect_s)
        self._lock = threading.RLock()
        self._serial: Any = None
        self._deadline: float | None = None   # budget of the outermost exchange in progress
        self._last_io = time.monotonic()
        self._rx = bytearray()
        self._open_port()
        self._closed = False
        self._keepalive_stop = threading.Event()
        self._keepalive_thread: threading.Thread | None = None
        if keepalive_s:
            self._start_keepalive(Range(0.01, 60.0, "s").check("keepalive_s", keepalive_s))

    # ------------------------------------------------------------------------ the port
    def _open_port(self) -> None:
        try:
            import serial  # pyserial: imported here so `import drivers` stays light
        except ImportError as exc:
            raise ImportError("serial grippers need pyserial: pip install 'graspline[gripper]'"
                              ) from exc

        try:
            self._serial = serial.Serial(self._port, baudrate=self._baudrate, bytesize=8,
                                         parity="N", stopbits=1, timeout=0)
        except (serial.SerialException, OSError) as exc:
            raise GripperDisconnected(f"cannot open serial port: {exc}", port=self._port) from exc
        self._serial.reset_input_buffer()
        self._rx.clear()

    def _reconnect(self, cause: BaseException) -> None:
        """Close the lost port and reopen it by name, for at most reconnect_s."""
        import serial

        try:
            self._serial.close()
        except (serial.SerialException, OSError):
            pass
        give_up = time.monotonic() + self._reconnect_s
        while True:
            try:
                self._open_port()
                log.info("gripper port %s reopened", self._port)
                return
            except GripperDisconnected:
                if time.monotonic() >= give_up:
                    raise GripperDisconnected(
                        f"port vanished and did not come back within {self._reconnect_s:g} s",
                        port=self._port) from cause
                time.sleep(0.05)

    def _close(self) -> None:
        self._keepalive_stop.set()
        t = self._keepalive_thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=5.0)
        with self._lock:
            if self._serial is not None:
                try:
                    self._serial.close()
                except Exception:  # noqa: BLE001 - the port may already be gone
                    pass

    # ---------------------------------------------------------------------- keep-alive
    def _start_keepalive(self, interval_s: float) -> None:
        # The thread holds only a weak reference, so a forgotten gripper can still be
        # garbage-collected (and warn) instead of living forever through its own thread.
        ref = weakref.ref(self)
        stop = self._keepalive_stop

        def run() -> None:
            while not stop.wait(interval_s):
                g = ref()
                if g is None:
                    return
                try:
                    g._keepalive_tick(interval_s)
                except GripperError as exc:
                    log.debug("keep-alive poll failed: %s", exc)
                del g

        self._keepalive_thread = threading.Thread(target=run, name=f"gripper-keepalive-{self._port}",
                                                  daemon=True)
        self._keepalive_thread.start()

    def _keepalive_tick(self, interval_s: float) -> None:
        """Poll the status when the port has been idle for interval_s (device watchdogs)."""
        if time.monotonic() - self._last_io < interval_s:
            return
        # Never queue behind a user command: it talks to the device anyway.
        if not self._lock.acquire(blocking=False):
            return
        try:
            if not self._closed:
                self._read_status()
        finally:
            self._lock.release()

    # ----------------------------------------------------------------------- exchanges
    def _exchange(self, request: bytes, parse: Parser, *, what: str,
                  verify: Callable[[], bool] | None = None,
                  timeout_s: float | None = None, attempts: int | None = None,
                  progress: Callable[[], float | None] | None = None) -> Any:
        """Send request, return parse's reply; retry as the class docstring says.

        verify: for a write, called before a repeat; True means the device already executed
        the first attempt (its reply was lost), so the write is not sent again and None is
        returned.
        progress: polled while an attempt waits; may return a later end time for it (a device
        that acknowledged the request and is still working on it).
        """
        import serial

        per_try = self._timeout_s if timeout_s is None else timeout_s
        attempts = self._retries + 1 if attempts is None else attempts
        with self._lock:
            outer = self._deadline is None
            if outer:
                self._deadline = time.monotonic() + attempts * per_try
            try:
                failure: Exception | None = None
                for attempt in range(attempts):
                    if attempt and verify is not None and verify():
                        log.info("%s: reply lost but executed; not re-sent", what)
                        return None
                    if attempt and time.monotonic() >= self._deadline:
                        break
                    try:
                        return self._attempt(request, parse, per_try, progress)
                    except (_NoReply, _BadReply) as exc:
                        failure = exc
                        log.debug("%s: attempt %d failed: %s", what, attempt + 1, exc)
                    except (serial.SerialException, OSError) as exc:
                        failure = exc
                        t0 = time.monotonic()
                        self._reconnect(exc)
                        # Time spent waiting for the port is not charged to the reply budget.
                        self._deadline += time.monotonic() - t0
                raise self._final_error(what, attempts, per_try, failure)
            finally:
                if outer:
                    self._deadline = None

    def _final_error(self, what: str, attempts: int, per_try: float,
                     failure: Exception | None) -> GripperError:
        if isinstance(failure, _BadReply):
            err: GripperError = GripperProtocolError(
                f"no valid reply to {what} after {attempts} attempt(s): {failure}", port=self._port)
        else:
            err = GripperTimeout(f"no reply to {what} within {per_try:g} s "
                                 f"({attempts} attempt(s))", port=self._port)
        err.__cause__ = failure
        return err

    def _attempt(self, request: bytes, parse: Parser, timeout_s: float,
                 progress: Callable[[], float | None] | None = None) -> Any:
        """One write + read; raises _NoReply, _BadReply or the port's own I/O error."""
        ser = self._serial
        # Late replies to an earlier attempt must not be taken for this one's.
        waiting = ser.in_waiting
        if waiting:
            ser.read(waiting)
        self._rx.clear()
        if request:
            ser.write(request)
        end = time.monotonic() + min(timeout_s, max(0.001, self._deadline - time.monotonic()))
        corrupt = False
        while True:
            reply, used, bad = parse(self._rx)
            corrupt = corrupt or bad
            if reply is not None:
                del self._rx[:used]
                self._last_io = time.monotonic()
                return reply
            if progress is not None and (later := progress()) is not None and later > end:
                assert self._deadline is not None
                self._deadline += later - end
                end = later
            left = end - time.monotonic()
            if left <= 0:
                if corrupt or self._rx:
                    raise _BadReply(f"{len(self._rx)} byte(s) without a valid reply: "
                                    f"{bytes(self._rx[:32]).hex(' ')}")
                raise _NoReply("nothing received")
            ser.timeout = min(left, 0.05)
            chunk = ser.read(max(1, ser.in_waiting))
            if chunk:
                self._rx += chunk
