"""The Segmenter interface: one public ``segment`` over a small per-backend hook."""
from __future__ import annotations

import abc

import numpy as np

from drivers.camera import RGBDFrame

from ._types import ObjectMask


def check_frame(frame: object, name: str = "frame") -> RGBDFrame:
    """Return ``frame`` if it is an RGBDFrame whose images still agree with its intrinsics.

    RGBDFrame checks this when it is made; a frame is a mutable dataclass, so an image swapped
    in later (a colour/depth size mismatch) is caught here with the sizes named.
    """
    if not isinstance(frame, RGBDFrame):
        raise ValueError(f"{name} must be a drivers.camera.RGBDFrame, got {type(frame).__name__}")
    h, w = frame.intrinsics.height, frame.intrinsics.width
    color = getattr(frame.color, "shape", None)
    depth = getattr(frame.depth_m, "shape", None)
    if color != (h, w, 3) or depth != (h, w):
        raise ValueError(f"{name}: colour {color} and depth {depth} must be ({h}, {w}, 3) and "
                         f"({h}, {w}) for its {w} x {h} intrinsics")
    if not isinstance(frame.depth_m, np.ndarray) or frame.depth_m.dtype != np.float32:
        raise ValueError(f"{name}: depth_m must be float32 metres, got "
                         f"{getattr(frame.depth_m, 'dtype', type(frame.depth_m).__name__)}")
    return frame


class Segmenter(abc.ABC):
    """Finds objects in an RGB-D frame. ``segment(frame)`` returns one ObjectMask per object
    (possibly none); a frame that cannot be used (no depth, no support plane) gives an empty
    list and a logged reason, and a malformed frame raises ValueError naming what is wrong.
    """

    #: the name the backend is registered under (``make_segmenter(name)``)
    name: str = ""

    @abc.abstractmethod
    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        """Backend hook: the objects of a checked frame."""

    def segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        """The objects in ``frame``, as (H, W) bool masks with label, confidence and backend."""
        return self._segment(check_frame(frame))

    def segment_finer(self, frame: RGBDFrame) -> list[ObjectMask]:
        """The objects in ``frame`` cut apart more finely than ``segment`` cuts them (objects
        that touch at one height, which ``segment`` may join), for a caller that found
        nothing to do with its masks; [] when the backend has no finer cut."""
        check_frame(frame)
        return []
