"""The hand interface: a multi-finger hand with joints, commanded in SI units.

``Hand`` implements each public method once: argument checks before anything is commanded,
the wait for a motion to finish on the device's clock, timeouts and fault raising. A device
implements small private hooks (``_start_preshape``, ``_start_close``, ``_start_open``,
``_read_status``, ``_stop``, ``_shutdown``).

Naming: ``close()`` closes the fingers (the grasp), as the picking loop commands it;
releasing the device is ``shutdown()`` (safe to call twice; the context manager calls it), so
that closing the fingers and letting go of the port can never be confused.
"""
from __future__ import annotations

import abc
import math
import time
import warnings

import numpy as np

from ._errors import HandDisconnected, HandFault, HandTimeout
from ._types import HandStatus

_MAX_TIMEOUT_S = 3600.0


def _check_timeout(timeout_s: float) -> float:
    """timeout_s as a float in (0, 3600] seconds, or ValueError naming it."""
    try:
        t = float(timeout_s)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"timeout_s must be a number of seconds, got {timeout_s!r}") from exc
    if not (math.isfinite(t) and 0.0 < t <= _MAX_TIMEOUT_S):
        raise ValueError(f"timeout_s must be within (0, {_MAX_TIMEOUT_S:g}] s, got {timeout_s!r}")
    return t


class Hand(abc.ABC):
    """A multi-finger hand; joint values in radians (hinges) or metres (slides); a context
    manager whose exit calls shutdown().

    Timeouts run on the device's clock (``_clock``: a simulated hand's own time): a motion
    not finished after timeout_s seconds raises HandTimeout, with the hand stopped where it
    is. A device fault raises HandFault; a hand that was shut down raises HandDisconnected.
    """

    #: the model name, as the registry and the cell file call it
    name: str = ""

    def __init__(self, port: str, *, poll_interval_s: float = 0.01) -> None:
        self._port = port
        self._poll_interval_s = poll_interval_s
        self._shut_down = False

    # ----------------------------------------------------------------- public interface
    @property
    def port(self) -> str:
        """Where this hand is connected (a port, or "sim")."""
        return self._port

    @property
    @abc.abstractmethod
    def preshape_joints(self) -> tuple[str, ...]:
        """The joints preshape() sets, in the order of its q (e.g. the spread of a BH8)."""

    @property
    def shut_down(self) -> bool:
        """True once shutdown() was called."""
        return self._shut_down

    def preshape(self, q: np.ndarray, *, timeout_s: float = 5.0) -> None:
        """Move the preshape joints to q (radians or metres, in preshape_joints' order) and
        wait until they stop; the closing drives are left as they are."""
        names = self.preshape_joints
        values = np.asarray(q, np.float64).reshape(-1)
        if values.size != len(names) or not np.all(np.isfinite(values)):
            raise ValueError(f"preshape q must be {len(names)} finite values for {list(names)}, "
                             f"got {np.asarray(q).tolist()!r}")
        self._run(lambda: self._start_preshape(values), "preshape", _check_timeout(timeout_s))

    def close(self, *, effort: float = 1.0, timeout_s: float = 5.0) -> HandStatus:
        """Close the fingers, torque-limited (Kim et al.: each drive slows as its torque rises
        and stops at effort times its limit), until every drive has stalled; returns the
        status then (object_detected, contacts, joint positions).

        effort : fraction (0, 1] of each drive's torque limit.
        """
        try:
            e = float(effort)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"effort must be a fraction in (0, 1], got {effort!r}") from exc
        if not (math.isfinite(e) and 0.0 < e <= 1.0):
            raise ValueError(f"effort must be a fraction in (0, 1], got {effort!r}")
        return self._run(lambda: self._start_close(e), "closing", _check_timeout(timeout_s))

    def open(self, *, timeout_s: float = 5.0) -> None:
        """Open every closing drive fully and wait until the fingers stop."""
        self._run(self._start_open, "opening", _check_timeout(timeout_s))

    def status(self) -> HandStatus:
        """Read the device status now."""
        self._check_usable()
        return self._read_status()

    def stop(self) -> None:
        """Stop any motion now, holding the fingers where they are."""
        self._check_usable()
        self._stop()

    def shutdown(self) -> None:
        """Release the device; safe to call more than once."""
        if self._shut_down:
            return
        self._shut_down = True
        self._shutdown()

    def __enter__(self) -> "Hand":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __del__(self) -> None:
        # A device left connected keeps its port busy; say so, as an open file would.
        if not getattr(self, "_shut_down", True):
            warnings.warn(f"{type(self).__name__} on {self._port} was not shut down",
                          ResourceWarning, stacklevel=2)
            try:
                self.shutdown()
            except Exception:  # noqa: BLE001 - nothing sensible to do in a finaliser
                pass

    def __repr__(self) -> str:
        state = "shut down" if self._shut_down else "connected"
        return f"<{type(self).__name__} {self.name} on {self._port} ({state})>"

    # ------------------------------------------------------------------------- helpers
    def _run(self, start, what: str, timeout_s: float) -> HandStatus:
        """Start a motion, poll until it has finished; HandTimeout after timeout_s (stopped)."""
        self._check_usable()
        deadline = self._clock() + timeout_s
        start()
        while True:
            st = self._read_status()
            if st.faulted:
                raise HandFault(st.fault_code, st.fault_message, hand=self._port)
            if self._motion_finished(st):
                return st
            if self._clock() >= deadline:
                self._stop()
                raise HandTimeout(f"{what} not finished within {timeout_s:g} s", hand=self._port)
            self._wait()

    def _clock(self) -> float:
        """Seconds on the clock motions are timed by (a simulated hand: its own clock)."""
        return time.monotonic()

    def _wait(self) -> None:
        """Pause between two status polls of a motion."""
        time.sleep(self._poll_interval_s)

    def _check_usable(self) -> None:
        if self._shut_down:
            raise HandDisconnected("the hand was shut down", hand=self._port)

    def _motion_finished(self, st: HandStatus) -> bool:
        """True when the motion commanded last has ended (reached, or stalled on an object)."""
        return not st.moving

    # ------------------------------------------------------------------- device hooks
    @abc.abstractmethod
    def _start_preshape(self, q: np.ndarray) -> None:
        """Command the preshape joints towards q (checked: finite, the right length)."""

    @abc.abstractmethod
    def _start_close(self, effort: float) -> None:
        """Start the torque-limited closing at effort (a checked fraction of the limits)."""

    @abc.abstractmethod
    def _start_open(self) -> None:
        """Start opening every closing drive fully."""

    @abc.abstractmethod
    def _read_status(self) -> HandStatus:
        """Read the status (a simulated hand advances its world while it is polled)."""

    @abc.abstractmethod
    def _stop(self) -> None:
        """Stop motion, holding position."""

    @abc.abstractmethod
    def _shutdown(self) -> None:
        """Release resources."""
