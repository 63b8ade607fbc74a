"""What the RealSense camera and the recording writer share: loading pyrealsense2 on demand and
converting intrinsics between librealsense and ours."""
from __future__ import annotations

from types import ModuleType
from typing import Any

from ._types import DISTORTION_MODELS, Intrinsics


def import_pyrealsense2() -> ModuleType:
    """The pyrealsense2 module, or an ImportError that says what to install."""
    try:
        import pyrealsense2 as rs
    except ImportError as exc:  # also a missing libusb-1.0, which fails inside the import
        raise ImportError(
            f"RealSense cameras and recordings need pyrealsense2 ({exc}): install it with "
            f"pip install 'graspline[realsense]' (on Debian/Ubuntu it also needs libusb-1.0-0)"
        ) from exc
    return rs


def intrinsics_from_rs(intr: Any) -> Intrinsics:
    """Our Intrinsics (pixels) from an rs.intrinsics (float32 fields, widened to float)."""
    model = intr.model.name
    if model not in DISTORTION_MODELS:
        raise ValueError(f"unknown librealsense distortion model {model!r}")
    return Intrinsics(width=int(intr.width), height=int(intr.height), fx=float(intr.fx),
                      fy=float(intr.fy), cx=float(intr.ppx), cy=float(intr.ppy), model=model,
                      coeffs=tuple(float(c) for c in intr.coeffs))


def intrinsics_to_rs(rs: ModuleType, intrinsics: Intrinsics) -> Any:
    """An rs.intrinsics from ours; librealsense keeps float32, so values round to that."""
    if intrinsics.model not in DISTORTION_MODELS:
        raise ValueError(f"intrinsics model must be one of {', '.join(DISTORTION_MODELS)}, got "
                         f"{intrinsics.model!r}")
    intr = rs.intrinsics()
    intr.width, intr.height = intrinsics.width, intrinsics.height
    intr.fx, intr.fy, intr.ppx, intr.ppy = intrinsics.fx, intrinsics.fy, intrinsics.cx, intrinsics.cy
    intr.model = getattr(rs.distortion, intrinsics.model)
    intr.coeffs = list(intrinsics.coeffs)
    return intr
