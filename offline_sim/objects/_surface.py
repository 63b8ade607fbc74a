"""A seeded, area-weighted sample of an object's surface: the model onboard recognition
registers depth points to (written to the grasp database's objects.points)."""
from __future__ import annotations

import numpy as np

from ._meshes import GraspObject

SURFACE_POINTS = 2000  # ~4 mm apart on a 10 cm object: finer than the D400's depth noise at 0.7 m


def surface_points(obj: GraspObject, n: int = SURFACE_POINTS, *, seed: int | None = 0) -> np.ndarray:
    """(n, 3) float64 points on the object's surface (its ``visual`` mesh), object frame,
    metres: triangles drawn with probability proportional to their area, points uniform in
    each. Same seed, same points."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"surface_points: n must be an integer >= 1, got {n!r}")
    vertices, faces = (np.asarray(a) for a in obj.visual)
    tri = np.asarray(vertices, np.float64)[np.asarray(faces, np.int64)]      # (F, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    if not area.sum() > 0:
        raise ValueError(f"surface_points: object {obj.name!r} has no surface area")
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(tri), size=int(n), p=area / area.sum())
    # uniform in a triangle: fold the unit square's upper half back onto the lower one
    a, b = rng.random((2, int(n)))
    fold = a + b > 1.0
    a[fold], b[fold] = 1.0 - a[fold], 1.0 - b[fold]
    t = tri[pick]
    return t[:, 0] + a[:, None] * (t[:, 1] - t[:, 0]) + b[:, None] * (t[:, 2] - t[:, 0])
