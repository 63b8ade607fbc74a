"""The ChArUco calibration board: its parameters, the OpenCV board, and the printable sheet."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._errors import CalibrationError

# Paper sizes (width, height) in millimetres, landscape.
PAPERS_MM = {"a4": (297.0, 210.0), "a3": (420.0, 297.0), "letter": (279.4, 215.9),
             "a2": (594.0, 420.0)}
MARGIN_MM = 10.0      # blank border the printer may need, each side
LEGEND_MM = 22.0      # height of the legend strip under the board


@dataclass(frozen=True)
class CharucoBoardSpec:
    """A ChArUco board: squares_x x squares_y chessboard squares of square_m metres, ArUco
    markers of marker_m metres from the OpenCV dictionary ``dictionary`` (e.g. DICT_5X5_100).

    legacy : the pattern of OpenCV before 4.6 (boards with an even number of rows start with a
    white square there); set it for boards printed by older tools, or corners are not found.
    The board frame: origin at the board's top-left outer corner, x along the rows (right on
    the printed sheet), y down the sheet, z into the board.
    """

    squares_x: int = 7
    squares_y: int = 5
    square_m: float = 0.030
    marker_m: float = 0.022
    dictionary: str = "DICT_5X5_100"
    legacy: bool = False

    def __post_init__(self) -> None:
        import cv2

        for name in ("squares_x", "squares_y"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
                raise CalibrationError(f"board: {name} must be an integer >= 2, got {v!r}")
        for name in ("square_m", "marker_m"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise CalibrationError(f"board: {name} must be a length > 0 in metres, got {v!r}")
        if self.marker_m >= self.square_m:
            raise CalibrationError(f"board: marker_m ({self.marker_m} m) must be smaller than "
                                   f"square_m ({self.square_m} m)")
        if not self.dictionary.startswith("DICT_") or not hasattr(cv2.aruco, self.dictionary):
            raise CalibrationError(f"board: unknown ArUco dictionary {self.dictionary!r} (one of "
                                   f"OpenCV's, e.g. DICT_5X5_100, DICT_4X4_50, DICT_6X6_250)")
        markers = (self.squares_x * self.squares_y) // 2
        size = len(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
                   .bytesList)
        if markers > size:
            raise CalibrationError(f"board: {self.squares_x} x {self.squares_y} squares need "
                                   f"{markers} markers, more than {self.dictionary} holds ({size})")

    @property
    def size_m(self) -> tuple[float, float]:
        """(width, height) of the board, metres."""
        return self.squares_x * self.square_m, self.squares_y * self.square_m

    @property
    def n_corners(self) -> int:
        """Number of inner chessboard corners (the ChArUco corners)."""
        return (self.squares_x - 1) * (self.squares_y - 1)

    @property
    def name(self) -> str:
        """File-name stem carrying every parameter, e.g. charuco_7x5_sq30mm_mk22mm_DICT_5X5_100."""
        legacy = "_legacy" if self.legacy else ""
        return (f"charuco_{self.squares_x}x{self.squares_y}_sq{_mm(self.square_m)}mm_"
                f"mk{_mm(self.marker_m)}mm_{self.dictionary}{legacy}")

    def cv_board(self):
        """The cv2.aruco.CharucoBoard of this spec (object points in metres)."""
        import cv2

        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        board = cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_m,
                                       self.marker_m, dictionary)
        board.setLegacyPattern(self.legacy)
        return board

    def corner_points(self) -> np.ndarray:
        """(n_corners, 3) float64 ChArUco corner positions in the board frame, metres."""
        return np.asarray(self.cv_board().getChessboardCorners(), np.float64).reshape(-1, 3)

    def image(self, px_per_m: float) -> np.ndarray:
        """(H, W) uint8 image of the board alone at px_per_m pixels per metre (no margin)."""
        w, h = (round(s * px_per_m) for s in self.size_m)
        return self.cv_board().generateImage((w, h), marginSize=0, borderBits=1)

    def as_dict(self) -> dict:
        """The parameters, as stored in calibration files."""
        return {"squares_x": self.squares_x, "squares_y": self.squares_y,
                "square_m": self.square_m, "marker_m": self.marker_m,
                "dictionary": self.dictionary, "legacy": self.legacy}


def _mm(length_m: float) -> str:
    """A length in millimetres for a file name: 30, 22.5 (no trailing zeros)."""
    return f"{length_m * 1000:.2f}".rstrip("0").rstrip(".")


def write_board(spec: CharucoBoardSpec, out_dir: str | os.PathLike, *, paper: str = "a4",
                dpi: int = 300) -> tuple[Path, Path]:
    """Write the printable sheet as PNG (dpi, with its resolution stored) and PDF, at true
    scale, with a legend and a 100 mm check bar; returns (png, pdf) paths named by spec.name.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if paper not in PAPERS_MM:
        raise CalibrationError(f"paper must be one of {', '.join(PAPERS_MM)}, got {paper!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 72 <= dpi <= 1200:
        raise CalibrationError(f"dpi must be an integer in [72, 1200], got {dpi!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page_w, page_h = PAPERS_MM[paper]
    board_w, board_h = (s * 1000 for s in spec.size_m)
    if board_w + 2 * MARGIN_MM > page_w or board_h + 2 * MARGIN_MM + LEGEND_MM > page_h:
        bigger = [p for p, (w, h) in PAPERS_MM.items()
                  if board_w + 2 * MARGIN_MM <= w and board_h + 2 * MARGIN_MM + LEGEND_MM <= h]
        raise CalibrationError(
            f"a {board_w:.0f} x {board_h:.0f} mm board does not fit on {paper} "
            f"({page_w:.0f} x {page_h:.0f} mm with {MARGIN_MM:.0f} mm margins and the legend); "
            f"use smaller squares or paper={bigger[0] if bigger else 'a2'}")

    # The board raster at exactly the print resolution: one image pixel per printed dot.
    img = spec.image(dpi / 0.0254)
    fig = plt.figure(figsize=(page_w / 25.4, page_h / 25.4), dpi=dpi)
    left = (page_w - board_w) / 2.0
    bottom = MARGIN_MM + LEGEND_MM
    ax = fig.add_axes((left / page_w, bottom / page_h, board_w / page_w, board_h / page_h))
    ax.imshow(img, cmap="gray", vmin=0, vmax=255, interpolation="nearest", aspect="auto")
    ax.set_axis_off()
    # A 100 mm bar to check the print scale with a ruler.
    bar = fig.add_axes((left / page_w, (MARGIN_MM + 14.0) / page_h, 100.0 / page_w,
                        1.5 / page_h))
    bar.set_facecolor("black")
    bar.set_xticks([])
    bar.set_yticks([])
    legend = (f"ChArUco {spec.squares_x} x {spec.squares_y} squares, square "
              f"{spec.square_m * 1000:.2f} mm, marker {spec.marker_m * 1000:.2f} mm, "
              f"{spec.dictionary}, legacy pattern {'yes' if spec.legacy else 'no'}.\n"
              f"Print at 100 % (no 'fit to page'); the bar above must measure 100 mm and a "
              f"square {spec.square_m * 1000:.2f} mm, else measure a square and pass it as "
              f"--square. Glue flat on a rigid plate.")
    fig.text(left / page_w, (MARGIN_MM + 11.0) / page_h, legend, fontsize=7, va="top",
             ha="left", family="monospace")
    fig.text(left / page_w, (MARGIN_MM + 16.5) / page_h, "100 mm", fontsize=6, va="bottom")
    png, pdf = out / f"{spec.name}.png", out / f"{spec.name}.pdf"
    fig.savefig(png, dpi=dpi)
    fig.savefig(pdf, dpi=dpi)
    plt.close(fig)
    return png, pdf
