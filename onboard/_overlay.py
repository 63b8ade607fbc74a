"""Pictures of scored grasps: silhouette, grasp lines and contacts coloured by score (Tan Fig. 2),
a multi-finger database grasp as its TCP and closing line, and that grasp in its object's
frame as the database holds it (the panel beside the overlay)."""
from __future__ import annotations

import cv2
import numpy as np

from scoring import GripperProjection, MeasureParams, grasp_region_profile


# the plane past the camera's view in an overlay: pale blue, apart from the seen grey
UNSEEN_BGR = (235, 215, 190)


def score_colour(score: float) -> tuple[int, int, int]:
    """BGR colour from red (score 0) through yellow to green (score 1)."""
    s = float(np.clip(score, 0.0, 1.0))
    return (0, int(255 * min(1.0, 2 * s)), int(255 * min(1.0, 2 * (1 - s))))


def draw_grasps(silhouette: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                scores: np.ndarray, projection: GripperProjection,
                params: MeasureParams | None = None, scale: int = 2,
                labels: list[str] | None = None,
                unseen: np.ndarray | None = None) -> np.ndarray:
    """BGR uint8 overlay: each grasp's outer grasp lines, finger plates, grasp points and
    primary contacts (boxed), coloured by score, over the silhouette, with a colour bar.

    Grasps are drawn in reverse order so the first lie on top; ``labels[k]`` (if given and
    not empty) is written beside grasp k. ``scale`` enlarges the picture so pixels show.
    ``unseen`` (the silhouette's shape, bool): the plane past the camera's view
    (vision.Silhouette.unseen), drawn pale blue rather than grey: an obstacle to the score,
    not something seen.
    """
    sil = (silhouette != 0)
    img = np.where(sil[..., None], np.uint8(170), np.uint8(255)).repeat(3, axis=2)
    if unseen is not None:
        img[np.asarray(unseen, bool) & sil] = UNSEEN_BGR
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


def draw_database_grasp(points_object: np.ndarray, T_object_hand: np.ndarray,
                        hand_centre: np.ndarray, hand_half: np.ndarray, closing_half_m: float,
                        score: float, title: list[str], height_px: int) -> np.ndarray:
    """BGR uint8 panel, height_px tall and square below its title, of a database grasp in its
    object's frame seen along the grasp's approach (the hand frame's z, looking from behind
    the palm; the hand's x to the right, its y down): the object's surface points (object
    frame, metres; darker nearer the hand), the hand's open volume (boxes in the hand frame:
    hand_centre, hand_half (B, 3), metres) as outlines, the closing line along x through the
    TCP with the opposing fingertips closing_half_m either side, coloured by score, the TCP
    as a cross, a 5 cm scale bar, and the title lines above."""
    line_px = 14
    top = 6 + line_px * len(title)
    side = max(64, height_px - top)
    img = np.full((top + side, side, 3), 255, np.uint8)
    for k, text in enumerate(title):
        cv2.putText(img, text, (6, 4 + line_px * (k + 1) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (0, 0, 0), 1, cv2.LINE_AA)
    T_hand_object = np.linalg.inv(np.asarray(T_object_hand, np.float64))
    pts = np.asarray(points_object, np.float64).reshape(-1, 3)
    p = pts @ T_hand_object[:3, :3].T + T_hand_object[:3, 3]   # hand frame
    lo_box = np.asarray(hand_centre, np.float64) - np.asarray(hand_half, np.float64)
    hi_box = np.asarray(hand_centre, np.float64) + np.asarray(hand_half, np.float64)
    tips = np.array([[-closing_half_m, 0.0], [closing_half_m, 0.0]])
    # the view frames the object and the fingertips; the hand's boxes may reach outside it
    seen = np.vstack([p[:, :2], tips]) if len(p) else tips
    centre = 0.5 * (seen.min(axis=0) + seen.max(axis=0))
    extent = float(np.max(seen.max(axis=0) - seen.min(axis=0))) * 1.25 + 0.01
    m_per_px = extent / (side - 12)

    def px(xy: np.ndarray) -> tuple[int, int]:
        """Panel pixel of a hand-frame (x, y) point, metres."""
        u = (xy[0] - centre[0]) / m_per_px + side / 2
        v = (xy[1] - centre[1]) / m_per_px + side / 2 + top
        return int(round(u)), int(round(v))

    if len(p):
        z = p[:, 2]
        shade = (z - z.min()) / max(float(np.ptp(z)), 1e-9)     # 0 nearest the palm
        for k in np.argsort(-z):   # the far side first, the near side drawn over it
            g = int(60 + 140 * shade[k])
            cv2.circle(img, px(p[k, :2]), 1, (g, g, g), -1)
    for lo, hi in zip(lo_box, hi_box):   # the open hand's boxes, x-y outline
        cv2.rectangle(img, px(lo[:2]), px(hi[:2]), (200, 150, 90), 1, cv2.LINE_AA)
    colour = score_colour(score)
    a, b = px(tips[0]), px(tips[1])
    cv2.line(img, a, b, colour, 2, cv2.LINE_AA)
    for e in (a, b):   # the opposing fingertips, open
        cv2.circle(img, e, 5, colour, -1, cv2.LINE_AA)
        cv2.circle(img, e, 5, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.drawMarker(img, px(np.zeros(2)), (0, 0, 0), cv2.MARKER_CROSS, 12, 1)
    bar = int(round(0.05 / m_per_px))
    y = top + side - 8
    cv2.line(img, (6, y), (6 + bar, y), (0, 0, 0), 2)
    cv2.putText(img, "5 cm", (10 + bar, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 0), 1,
                cv2.LINE_AA)
    return img


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
