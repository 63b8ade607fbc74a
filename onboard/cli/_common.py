"""What every ``graspline`` command shares: the user-facing error, the one wrapper that turns
the library's typed errors into it, a RealSense camera and its frames, and progress bars."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drivers.camera import RealSenseCamera, RGBDFrame

# A live camera takes a while to deliver its first frames (auto-exposure, USB set-up).
READ_TIMEOUT_S = 5.0


class CliError(Exception):
    """A user-facing error: ``main`` prints it as one line on stderr, exit status 2."""


@contextlib.contextmanager
def reported(*kinds: type[BaseException], prefix: str = "",
             one_line: bool = False) -> Iterator[None]:
    """Re-raise an exception of ``kinds`` raised inside as a CliError with its message (after
    ``prefix``; whitespace runs folded to one space when ``one_line``). A context manager and,
    like every ``contextlib.contextmanager``, a decorator."""
    try:
        yield
    except kinds as exc:
        text = " ".join(str(exc).split()) if one_line else str(exc)
        raise CliError(prefix + text) from exc


@contextlib.contextmanager
def camera_errors() -> Iterator[None]:
    """Camera faults, a closed camera and a missing pyrealsense2 as one-line CliErrors (the
    drivers' messages span lines: librealsense's own text is quoted in them)."""
    with reported(ImportError, one_line=True):
        from drivers.camera import CameraError
    with reported(CameraError, ImportError, ValueError, one_line=True):
        yield


def open_camera(serial: str | None = None, *, recording: str | None = None,
                **options: Any) -> RealSenseCamera:
    """A live RealSense camera (``serial``: None = the only one attached) or, with
    ``recording``, the playback of a .db3 file; ``options`` go to the live camera."""
    with camera_errors():
        from drivers.camera import RealSenseCamera

        if recording is not None:
            return RealSenseCamera(recording=recording)
        return RealSenseCamera(serial, **options)


def read_frames(camera: RealSenseCamera, limit: int | None = None) -> Iterator[RGBDFrame]:
    """Frames from ``camera`` until a recording ends or ``limit`` frames were read (None: no
    limit); each read waits up to READ_TIMEOUT_S seconds."""
    from drivers.camera import EndOfRecording

    n = 0
    while limit is None or n < limit:
        with camera_errors():
            try:
                frame = camera.read(timeout_s=READ_TIMEOUT_S)
            except EndOfRecording:
                return
        n += 1
        yield frame


def progress_bar(total: int | None, unit: str, **options: Any):
    """A tqdm progress bar (tqdm is imported here, when a command draws one)."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, **options)


def progress_note(text: str) -> None:
    """Print a line above the progress bar without breaking it."""
    from tqdm import tqdm

    tqdm.write(text)


def warm_up_kernels(cell) -> None:
    """Make a PickingCell's planning kernels ready before its first trial (compiled on a
    first start, loaded from numba's cache after) and say which, and how long it took."""
    print("warming up the planning kernels (compiled on a first start, then loaded from "
          "numba's cache) ...", flush=True)
    print(cell.warm_up().text(), flush=True)
