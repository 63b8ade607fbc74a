"""Pictures of scored grasps: silhouette, grasp lines and contacts coloured by score (Tan Fig. 2),
and a multi-finger database grasp as its TCP and closing line."""
from __future__ import annotations

import cv2
import numpy as np

from scoring import GripperProjection, MeasureParams, grasp_region_profile


def score_colour(score: float) -> tuple[int, int, int]:
    """BGR colour from red (score 0) through yellow to green (score 1)."""
    s = float(np.clip(score, 0.0, 1.0))
    return (0, int(255 * min(1.0, 2 * s)), int(255 * min(1.0, 2 * (1 - s))))


def draw_grasps(silhouette: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                scores: np.ndarray, projection: GripperProjection,
                params: MeasureParams | None = None, scale: int = 2,
                labels: list[str] | None = None) -> np.ndarray:
    """BGR uint8 overlay: each grasp's outer grasp lines, finger plates, grasp points and
    primary contacts (boxed), coloured by score, over the silhouette, with a colour bar.

    Grasps are drawn in reverse order so the first lie on top; ``labels[k]`` (if given and
    not empty) is written beside grasp k. ``scale`` enlarges the picture so pixels show.
    """
    sil = (silhouette != 0)
    img = np.where(sil[..., None], np.uint8(170), np.uint8(255)).repeat(3, axis=2)
    img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
    profile = grasp_region_profile(sil, x, y, theta, projection, params)
    dw = projection.line_offsets_px()
    half = projection.open_width_px / 2.0
    pt = lambda u, v: (int(round((u + 0.5) * scale - 0.5)), int(round((v + 0.5) * scale - 0.5)))  # noqa: E731
    for k in reversed(range(len(x))):
        c, s = np.cos(theta[k]), np.sin(theta[k])
        colour = score_colour(scores[k])
        at = lambda w_off, r_off: pt(x[k] - w_off * s + r_off * c, y[k] + w_off * c + r_off * s)  # noqa: E731
        for w_off in (dw[0], dw[-1]):  # outermost grasp lines, eqs. 1-2
            cv2.line(img, at(w_off, -half), at(w_off, half), colour, 1, cv2.LINE_AA)
        for end in (-half, half):  # finger plates
            cv2.line(img, at(dw[0], end), at(dw[-1], end), colour, 3, cv2.LINE_AA)
        for side in (0, 1):
            d = profile[k, side]
            found = np.flatnonzero(~np.isnan(d))
            for i in found:
                cv2.circle(img, at(dw[i], d[i]), max(1, scale), colour, -1)
            if found.size:  # primary contact: outermost grasp point of the side
                i = found[np.argmin(d[found])] if side == 0 else found[np.argmax(d[found])]
                p = at(dw[i], d[i])
                cv2.rectangle(img, (p[0] - 2 * scale, p[1] - 2 * scale),
                              (p[0] + 2 * scale, p[1] + 2 * scale), (0, 0, 0), 1)
        if labels is not None and labels[k]:
            cv2.putText(img, labels[k], at(dw[-1] + 4, half + 4), cv2.FONT_HERSHEY_SIMPLEX,
                        0.3 * scale, (0, 0, 0), 1, cv2.LINE_AA)
    return _with_colour_bar(img, scale)


def draw_hand_grasp(silhouette: np.ndarray, x: float, y: float, theta: float, score: float,
                    span_px: float, label: str, scale: int = 2) -> np.ndarray:
    """BGR uint8 overlay of a multi-finger database grasp over the silhouette: its TCP (a
    cross at x, y, pixels of the silhouette image), its closing line through the TCP at
    theta (radians) with the opposing fingertips span_px apart (dots), coloured by score, and
    a label. A hand is not a jaw: no finger plates or grasp lines are drawn for it."""
    sil = (silhouette != 0)
    img = np.where(sil[..., None], np.uint8(170), np.uint8(255)).repeat(3, axis=2)
    img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
    pt = lambda u, v: (int(round((u + 0.5) * scale - 0.5)), int(round((v + 0.5) * scale - 0.5)))  # noqa: E731
    colour = score_colour(score)
    c, s, half = np.cos(theta), np.sin(theta), 0.5 * span_px
    ends = [pt(x - half * c, y - half * s), pt(x + half * c, y + half * s)]
    cv2.line(img, ends[0], ends[1], colour, 2, cv2.LINE_AA)
    for e in ends:  # the opposing fingertips, open
        cv2.circle(img, e, 3 * scale, colour, -1, cv2.LINE_AA)
    centre = pt(x, y)
    cv2.drawMarker(img, centre, (0, 0, 0), cv2.MARKER_CROSS, 6 * scale, 1)
    cv2.putText(img, label, (4 * scale, 10 * scale), cv2.FONT_HERSHEY_SIMPLEX, 0.3 * scale,
                (0, 0, 0), 1, cv2.LINE_AA)
    return _with_colour_bar(img, scale)


def _with_colour_bar(img: np.ndarray, scale: int) -> np.ndarray:
    """The image with a score colour bar (0 to 1) appended below it."""
    h = 14 * scale
    bar = np.full((h, img.shape[1], 3), 255, np.uint8)
    x0, x1 = 40 * scale, min(img.shape[1] - 40 * scale, 240 * scale)
    for u in range(x0, x1):
        bar[2:h // 2 + 2, u] = score_colour((u - x0) / max(1, x1 - x0 - 1))
    for value, u in ((0.0, x0), (1.0, x1)):
        cv2.putText(bar, f"{value:.0f}", (u - 4 * scale if value else u - 12 * scale, h - 2),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.25 * scale, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(bar, "score", (x1 + 8 * scale, h // 2 + 2), cv2.FONT_HERSHEY_SIMPLEX,
                0.25 * scale, (0, 0, 0), 1, cv2.LINE_AA)
    return np.vstack([img, bar])
