"""The built-in sample silhouette that `graspline score` scores when given no image."""
from __future__ import annotations

import cv2
import numpy as np


def sample_silhouette(height: int = 480, width: int = 640) -> np.ndarray:
    """(H, W) uint8 silhouette, 1 = object: a box, a rotated bar, a can, a wedge, an L-bracket, a mug rim.

    Sizes suit the default gripper projection (100 px open, 15 px fingers): a top-down view
    at about 1 mm per pixel of a small tabletop scene.
    """
    sil = np.zeros((height, width), np.uint8)
    cv2.rectangle(sil, (60, 60), (130, 180), 1, -1)                                   # box
    bar = cv2.boxPoints(((260, 120), (170, 22), 35.0))
    cv2.fillPoly(sil, [np.round(bar).astype(np.int32)], 1)                            # bar
    cv2.ellipse(sil, (470, 120), (38, 38), 0, 0, 360, 1, -1)                          # can
    cv2.fillPoly(sil, [np.array([[80, 300], [150, 300], [130, 400], [100, 400]], np.int32)], 1)  # wedge
    cv2.fillPoly(sil, [np.array([[260, 280], [300, 280], [300, 380], [370, 380],
                                 [370, 410], [260, 410]], np.int32)], 1)              # L-bracket
    cv2.circle(sil, (500, 350), 45, 1, -1)                                            # mug rim
    cv2.circle(sil, (500, 350), 33, 0, -1)
    return sil
