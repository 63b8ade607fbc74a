"""Camera intrinsics from ChArUco board views: OpenCV's calibration, per-view reprojection
errors, outlier views rejected, and a comparison with the device's factory intrinsics."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import Intrinsics

from ._board import CharucoBoardSpec
from ._errors import CalibrationError
from ._views import BoardView, coverage_map

MIN_VIEWS = 5


@dataclass(frozen=True)
class IntrinsicsCalibration:
    """Calibrated intrinsics and how well they fit.

    intrinsics : pinhole + Brown-Conrady distortion (k1, k2, p1, p2, k3, OpenCV's order and
    librealsense's "brown_conrady"), pixels. rms_px : reprojection error over the views used.
    view_names, view_errors_px : the views used and the RMS error of each, pixels. rejected :
    (name, error_px) of the views dropped as outliers. std_px : standard deviations of fx, fy,
    cx, cy, pixels. coverage : fraction of the image grid's cells where corners were seen.
    board : the board's parameters. date : ISO 8601 UTC. inputs : a summary of the sources.
    """

    intrinsics: Intrinsics
    rms_px: float
    view_names: tuple[str, ...]
    view_errors_px: tuple[float, ...]
    rejected: tuple[tuple[str, float], ...] = ()
    std_px: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    coverage: float = 0.0
    board: dict = field(default_factory=dict)
    date: str = ""
    inputs: dict = field(default_factory=dict)

    @property
    def K(self) -> np.ndarray:
        """3 x 3 camera matrix, pixels."""
        return self.intrinsics.K

    @property
    def distortion(self) -> np.ndarray:
        """(5,) OpenCV distortion coefficients k1, k2, p1, p2, k3."""
        return np.asarray(self.intrinsics.coeffs, np.float64)


@dataclass(frozen=True)
class IntrinsicsComparison:
    """Calibrated against factory intrinsics: differences (calibrated - factory) in pixels and
    the reprojection RMS of the same views with each (the factory one refitting only the
    board poses), so the user sees whether the factory values would have done."""

    d_fx_px: float
    d_fy_px: float
    d_cx_px: float
    d_cy_px: float
    rms_calibrated_px: float
    rms_factory_px: float

    def text(self) -> str:
        """A few lines for the terminal."""
        return (f"calibrated - factory: fx {self.d_fx_px:+.2f} px, fy {self.d_fy_px:+.2f} px, "
                f"cx {self.d_cx_px:+.2f} px, cy {self.d_cy_px:+.2f} px\n"
                f"reprojection RMS on these views: calibrated {self.rms_calibrated_px:.3f} px, "
                f"factory {self.rms_factory_px:.3f} px")


def _cv_points(views: list[BoardView]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    obj = [v.object_points.reshape(-1, 1, 3).astype(np.float32) for v in views]
    img = [v.corners_px.reshape(-1, 1, 2).astype(np.float32) for v in views]
    return obj, img


def calibrate_intrinsics(views: list[BoardView], width: int, height: int, *,
                         spec: CharucoBoardSpec | None = None, fit_k3: bool = False,
                         outlier_factor: float = 3.0, outlier_floor_px: float = 0.5,
                         min_views: int = MIN_VIEWS, date: str = "",
                         inputs: dict | None = None) -> IntrinsicsCalibration:
    """Calibrate a width x height camera from board views; drop outlier views one at a time.

    A view is an outlier when its RMS reprojection error exceeds both outlier_factor times the
    median view error and outlier_floor_px; the worst is dropped and the rest refitted, while
    at least min_views remain. fit_k3 : also fit the third radial term (wide-angle lenses);
    off by default, since with a few views it trades against k1, k2. Raises CalibrationError
    with fewer than min_views views.
    """
    import cv2

    views = list(views)
    if len(views) < min_views:
        raise CalibrationError(f"intrinsics need at least {min_views} board views, got "
                               f"{len(views)}: capture more views, tilting the board")
    flags = 0 if fit_k3 else cv2.CALIB_FIX_K3
    rejected: list[tuple[str, float]] = []
    while True:
        obj, img = _cv_points(views)
        try:
            rms, K, dist, _, _, std_intr, _, per_view = cv2.calibrateCameraExtended(
                obj, img, (width, height), None, None, flags=flags)
        except cv2.error as exc:
            raise CalibrationError(f"OpenCV could not calibrate from {len(views)} views "
                                   f"({exc.err}); the views may all be nearly parallel") from exc
        errors = per_view.ravel()
        worst = int(np.argmax(errors))
        limit = max(outlier_factor * float(np.median(errors)), outlier_floor_px)
        if errors[worst] <= limit or len(views) <= min_views:
            break
        rejected.append((views[worst].name, float(errors[worst])))
        views = views[:worst] + views[worst + 1:]
    d = dist.ravel()
    intr = Intrinsics(width, height, float(K[0, 0]), float(K[1, 1]), float(K[0, 2]),
                      float(K[1, 2]), "brown_conrady", tuple(float(x) for x in d[:5]))
    cells = coverage_map(views, width, height)
    return IntrinsicsCalibration(
        intrinsics=intr, rms_px=float(rms), view_names=tuple(v.name for v in views),
        view_errors_px=tuple(float(e) for e in errors), rejected=tuple(rejected),
        std_px=tuple(float(s) for s in std_intr.ravel()[:4]),
        coverage=float((cells > 0).mean()), board=spec.as_dict() if spec else {},
        date=date, inputs=dict(inputs or {}))


def _distortion_of(intr: Intrinsics) -> np.ndarray:
    """OpenCV distortion coefficients of intrinsics whose model OpenCV shares, else zeros."""
    if intr.model in ("brown_conrady", "none"):
        return np.asarray(intr.coeffs, np.float64) if intr.model != "none" else np.zeros(5)
    # librealsense's inverse / modified Brown-Conrady are not OpenCV's model; D400 colour
    # cameras report them with zero coefficients, so the pinhole part is what compares.
    return np.zeros(5)


def reprojection_rms_px(views: list[BoardView], intr: Intrinsics) -> float:
    """RMS reprojection error (pixels) of the views with fixed intrinsics, each view's board
    pose fitted by solvePnP."""
    import cv2

    K, dist = intr.K, _distortion_of(intr)
    sq, n = 0.0, 0
    for v in views:
        ok, rvec, tvec = cv2.solvePnP(v.object_points, v.corners_px, K, dist)
        if not ok:
            raise CalibrationError(f"view {v.name!r}: no board pose with these intrinsics")
        proj, _ = cv2.projectPoints(v.object_points, rvec, tvec, K, dist)
        sq += float(((proj.reshape(-1, 2) - v.corners_px) ** 2).sum())
        n += len(v.ids)
    return math.sqrt(sq / max(n, 1))


def compare_intrinsics(calibrated: IntrinsicsCalibration, factory: Intrinsics,
                       views: list[BoardView]) -> IntrinsicsComparison:
    """How the calibration differs from the factory intrinsics, and which fits the views better."""
    c = calibrated.intrinsics
    if (factory.width, factory.height) != (c.width, c.height):
        raise CalibrationError(f"factory intrinsics are for {factory.width} x {factory.height} "
                               f"images, the calibration for {c.width} x {c.height}")
    used = [v for v in views if v.name in set(calibrated.view_names)] or list(views)
    return IntrinsicsComparison(c.fx - factory.fx, c.fy - factory.fy, c.cx - factory.cx,
                                c.cy - factory.cy, reprojection_rms_px(used, c),
                                reprojection_rms_px(used, factory))


def board_pose(view: BoardView, intr: Intrinsics) -> np.ndarray:
    """T_camera_board (4 x 4, metres) of one view, by solvePnP with the given intrinsics."""
    import cv2

    from geometry import pose_from_rvec

    ok, rvec, tvec = cv2.solvePnP(view.object_points, view.corners_px, intr.K,
                                  _distortion_of(intr), flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        raise CalibrationError(f"view {view.name!r}: solvePnP found no board pose")
    return pose_from_rvec(rvec, tvec)
