"""Measure A: the Ferrari-Canny grasp quality ε on a set of frictional point contacts.

Lives here rather than in ``scoring`` (where the team's design first placed wrench-space
metrics; docs/design.md) because it needs qhull through scipy, and scoring stays numpy +
numba; the onboard loop reads ε from the grasp database and never computes it.
"""
from __future__ import annotations

import numpy as np

from scoring import check_positive

from geometry import tangent_basis


def contact_wrenches(positions: np.ndarray, normals: np.ndarray, *, mu: float, n_edges: int = 8,
                     torque_scale_m: float = 1.0, centre: np.ndarray | None = None) -> np.ndarray:
    """Unit primitive wrenches of linearised friction cones: (N * n_edges, 6) or, for planar
    (N, 2) input, (N * 2, 3).

    positions : contact points, metres, object frame; normals : unit normals pointing into the
    object (the direction the hand pushes); mu : Coulomb friction coefficient; torques are
    divided by torque_scale_m (the object's radius makes ε unit-free) about ``centre``
    (default the origin: the object frame's centre of mass).
    """
    p = np.asarray(positions, np.float64)
    n = np.asarray(normals, np.float64)
    n = n / np.linalg.norm(n, axis=1, keepdims=True)
    c = np.zeros(p.shape[1]) if centre is None else np.asarray(centre, np.float64)
    r = p - c
    if p.shape[1] == 2:  # planar: two cone edges per contact, torque about z
        t = np.stack([-n[:, 1], n[:, 0]], axis=1)
        f = np.concatenate([n + mu * t, n - mu * t]) / np.sqrt(1.0 + mu * mu)
        rr = np.concatenate([r, r])
        tau = (rr[:, 0] * f[:, 1] - rr[:, 1] * f[:, 0]) / torque_scale_m
        return np.column_stack([f, tau])
    t1, t2 = tangent_basis(n)
    phi = 2.0 * np.pi * np.arange(n_edges) / n_edges
    # edge j of contact i: n + mu (cos φ_j t1 + sin φ_j t2), scaled to unit force
    f = (n[:, None, :] + mu * (np.cos(phi)[None, :, None] * t1[:, None, :]
                               + np.sin(phi)[None, :, None] * t2[:, None, :]))
    f = (f / np.sqrt(1.0 + mu * mu)).reshape(-1, 3)
    tau = np.cross(np.repeat(r, n_edges, axis=0), f) / torque_scale_m
    return np.hstack([f, tau])


def ferrari_canny(positions: np.ndarray, normals: np.ndarray, *, mu: float = 0.5,
                  n_edges: int = 8, torque_scale_m: float = 1.0,
                  centre: np.ndarray | None = None) -> float:
    """ε: radius of the largest origin-centred ball inside the convex hull of the unit contact
    wrenches (Ferrari & Canny; Kim et al. measure A). 0 when the grasp is not force closure
    (the origin is outside or on the hull, or the wrenches do not span the wrench space).

    positions, normals : (N, 3) contacts in the object frame (metres; normals point into the
    object), or (N, 2) for a planar grasp.
    """
    from scipy.spatial import ConvexHull, QhullError

    p = np.asarray(positions, np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3) or p.shape != np.shape(normals):
        raise ValueError(f"positions and normals must both be (N, 3) or (N, 2), got "
                         f"{p.shape} and {np.shape(normals)}")
    check_positive(mu, "mu", allow_zero=True)
    check_positive(torque_scale_m, "torque_scale_m")
    if len(p) == 0:
        return 0.0
    w = contact_wrenches(p, normals, mu=mu, n_edges=n_edges, torque_scale_m=torque_scale_m,
                         centre=centre)
    if np.linalg.matrix_rank(w, tol=1e-9) < w.shape[1]:
        return 0.0  # the wrenches span a subspace: some disturbance cannot be resisted
    try:
        # QJ: joggle the input instead of merging facets; on these 6-D hulls of a few dozen
        # wrenches it is about twice as fast, and ε moves by ~1e-11 (qhull's joggle is seeded)
        hull = ConvexHull(w, qhull_options="QJ")
    except QhullError:
        return 0.0
    # facet planes a . x + b <= 0 inside, |a| = 1: distance of the origin is -b
    offsets = -hull.equations[:, -1]
    return float(max(0.0, offsets.min()))
