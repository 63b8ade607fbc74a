"""Board views: ChArUco corners found in an image, and where in the image they have been seen."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._board import CharucoBoardSpec
from ._errors import CalibrationError

MIN_CORNERS = 6   # fewer corners than this do not constrain a view's pose reliably


@dataclass(frozen=True)
class BoardView:
    """The ChArUco corners found in one image.

    name : where the image came from (file name, frame number). corners_px : (N, 2) float64
    pixel positions (u = column, v = row). ids : (N,) int32 corner ids. object_points :
    (N, 3) float64 the same corners in the board frame, metres.
    """

    name: str
    corners_px: np.ndarray
    ids: np.ndarray
    object_points: np.ndarray


def _gray(image: np.ndarray, name: str) -> np.ndarray:
    """8-bit grey image of an RGB or grey uint8 image; CalibrationError naming it otherwise."""
    import cv2

    a = np.asarray(image)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] != 3):
        raise CalibrationError(f"image {name!r} must be (H, W) or (H, W, 3) uint8, got "
                               f"{a.shape} {a.dtype}")
    return a if a.ndim == 2 else cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)


class BoardDetector:
    """Finds ChArUco corners of one board (OpenCV's CharucoDetector, OpenCV >= 4.7)."""

    def __init__(self, spec: CharucoBoardSpec, *, min_corners: int = MIN_CORNERS) -> None:
        import cv2

        if not hasattr(cv2.aruco, "CharucoDetector"):
            raise ImportError(f"OpenCV {cv2.__version__} has no cv2.aruco.CharucoDetector: "
                              f"install opencv-python-headless>=4.7,<5")
        self.spec = spec
        self.min_corners = max(int(min_corners), 4)
        self._board = spec.cv_board()
        self._detector = cv2.aruco.CharucoDetector(self._board)
        self._points = spec.corner_points()

    def detect(self, image: np.ndarray, name: str = "") -> BoardView | None:
        """The board's corners in an RGB or grey uint8 image; None when fewer than min_corners
        are found (no board, or too little of it)."""
        corners, ids, _, _ = self._detector.detectBoard(_gray(image, name))
        if ids is None or len(ids) < self.min_corners:
            return None
        ids = ids.ravel().astype(np.int32)
        if self._board.checkCharucoCornersCollinear(ids.reshape(-1, 1)):
            return None   # one row of corners: no homography, no pose
        return BoardView(name, corners.reshape(-1, 2).astype(np.float64), ids,
                         self._points[ids].copy())


def coverage_map(views: list[BoardView], width: int, height: int,
                 grid: tuple[int, int] = (8, 6)) -> np.ndarray:
    """(rows, cols) int counts of corners seen in each cell of a grid over the image."""
    cols, rows = grid
    counts = np.zeros((rows, cols), np.int64)
    for v in views:
        c = np.clip((v.corners_px[:, 0] / width * cols).astype(int), 0, cols - 1)
        r = np.clip((v.corners_px[:, 1] / height * rows).astype(int), 0, rows - 1)
        np.add.at(counts, (r, c), 1)
    return counts


def coverage_text(counts: np.ndarray) -> str:
    """The coverage map for a terminal: one character per cell, '.' never seen, then 1-9 and
    '#' by corners seen; the image's top row first."""
    def cell(n: int) -> str:
        return "." if n == 0 else (str(min(n, 9)) if n < 10 else "#")

    lines = ["+" + "-" * counts.shape[1] + "+"]
    lines += ["|" + "".join(cell(int(n)) for n in row) + "|" for row in counts]
    lines.append(lines[0])
    return "\n".join(lines)


def mean_displacement_px(a: BoardView, b: BoardView) -> float:
    """Mean pixel distance between the corners two views share (inf when they share none)."""
    common, ia, ib = np.intersect1d(a.ids, b.ids, return_indices=True)
    if len(common) == 0:
        return float("inf")
    return float(np.linalg.norm(a.corners_px[ia] - b.corners_px[ib], axis=1).mean())


def is_new_view(view: BoardView, kept: Sequence[BoardView], min_motion_px: float) -> bool:
    """Whether ``view`` moved at least ``min_motion_px`` (mean corner displacement, pixels)
    from every view in ``kept``: a live or recorded stream holds many copies of each view."""
    return not any(mean_displacement_px(view, v) < min_motion_px for v in kept)


def board_hull_mask(view: BoardView, height: int, width: int) -> np.ndarray:
    """(height, width) bool image, True inside the convex hull of the view's corners (their
    pixel positions truncated to whole pixels): where the board's plane is in the image."""
    import cv2

    hull = np.zeros((height, width), np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(view.corners_px.astype(np.int32)), 1)
    return hull > 0
