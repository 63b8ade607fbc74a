"""The Camera interface: one public ``read`` over a small per-device hook."""
from __future__ import annotations

import abc
import warnings
from collections.abc import Iterator

from ._errors import EndOfRecording
from ._types import Intrinsics, RGBDFrame


class Camera(abc.ABC):
    """An RGB-D camera, real or simulated. A context manager; ``close()`` is safe twice.

    ``read(timeout_s)`` returns the next frame or raises: CameraTimeout when none arrives
    within timeout_s seconds (None waits for ever), CameraDisconnected when the device is
    gone, EndOfRecording past the end of a recording. Iterating yields frames until the end
    of a recording (a live camera iterates for ever).
    """

    _closed = False

    @property
    @abc.abstractmethod
    def intrinsics(self) -> Intrinsics:
        """Intrinsics of the frames this camera delivers (colour, depth aligned to it)."""

    @abc.abstractmethod
    def _read(self, timeout_s: float | None) -> RGBDFrame:
        """Device hook: the next frame, with the errors documented on ``read``."""

    def _close(self) -> None:
        """Device hook: release the device; called once."""

    def read(self, timeout_s: float | None = 1.0) -> RGBDFrame:
        """The next frame (see the class docstring for timeouts and errors)."""
        if self._closed:
            raise ValueError(f"{self!r} is closed")
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 or None, got {timeout_s!r}")
        return self._read(timeout_s)

    def __iter__(self) -> Iterator[RGBDFrame]:
        while True:
            try:
                yield self.read()
            except EndOfRecording:
                return

    def close(self) -> None:
        """Release the device. Safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._close()

    def __enter__(self) -> "Camera":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            warnings.warn(f"{type(self).__name__} was not closed", ResourceWarning, stacklevel=2)
            try:
                self.close()
            except Exception:  # noqa: BLE001 - never raise from a finaliser
                pass
