"""Silhouettes drawn analytically for tests: every shape can be rotated about a centre."""
from __future__ import annotations

import math

import cv2
import numpy as np

SHIFT = 4  # cv2 sub-pixel bits: vertices at 1/16 px, so rotated shapes are drawn faithfully


def rotate_points(points: np.ndarray, centre: tuple[float, float], angle: float) -> np.ndarray:
    """(N, 2) (column, row) points rotated by angle (rad, image axes) about centre."""
    c, s = math.cos(angle), math.sin(angle)
    p = np.asarray(points, np.float64) - centre
    return np.stack([c * p[:, 0] - s * p[:, 1], s * p[:, 0] + c * p[:, 1]], axis=1) + centre


def polygon(shape: tuple[int, int], points: np.ndarray) -> np.ndarray:
    """(H, W) uint8 silhouette of a filled polygon with (column, row) float vertices."""
    sil = np.zeros(shape, np.uint8)
    cv2.fillPoly(sil, [np.round(np.asarray(points) * (1 << SHIFT)).astype(np.int32)], 1,
                 lineType=cv2.LINE_8, shift=SHIFT)
    return sil


def rectangle(shape, centre, width, height, angle=0.0) -> np.ndarray:
    """A width (along columns) x height rectangle, rotated by angle (rad) about its centre."""
    cx, cy = centre
    pts = np.array([[cx - width / 2, cy - height / 2], [cx + width / 2, cy - height / 2],
                    [cx + width / 2, cy + height / 2], [cx - width / 2, cy + height / 2]])
    return polygon(shape, rotate_points(pts, centre, angle))


def wedge(shape, centre, top_width, bottom_width, height, angle=0.0) -> np.ndarray:
    """A symmetric trapezoid (slanted left and right faces), rotated about its centre."""
    cx, cy = centre
    pts = np.array([[cx - top_width / 2, cy - height / 2], [cx + top_width / 2, cy - height / 2],
                    [cx + bottom_width / 2, cy + height / 2], [cx - bottom_width / 2, cy + height / 2]])
    return polygon(shape, rotate_points(pts, centre, angle))


def ellipse(shape, centre, semi_x, semi_y, angle=0.0, n=180) -> np.ndarray:
    """An ellipse with semi-axes along columns/rows before rotation, as a fine polygon."""
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pts = np.stack([centre[0] + semi_x * np.cos(t), centre[1] + semi_y * np.sin(t)], axis=1)
    return polygon(shape, rotate_points(pts, centre, angle))


def ring(shape, centre, outer, inner) -> np.ndarray:
    """An annulus (a mug rim seen from above)."""
    return ellipse(shape, centre, outer, outer) & (1 - ellipse(shape, centre, inner, inner))


def grasp_in_frame(centre, angle, dx, dy, theta):
    """A grasp given relative to a shape's frame, placed for the shape rotated by angle."""
    (x, y), = rotate_points(np.array([[centre[0] + dx, centre[1] + dy]]), centre, angle)
    return x, y, theta + angle
