"""Force closure of the contacts a closing reached: Ferrari-Canny ε with shortcuts that settle
most P(fc) poses without the hull of every contact, and the certificates by which neighbouring
poses of a grid reuse each other's hulls (FcMemo), each decision the exact ε's."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..quality import ferrari_canny
from ._contacts import ClosedGrasp

# a certificate must clear δ by more than qhull's joggle moves ε (~1e-11)
_CERTIFICATE_MARGIN = 1e-9


@dataclass
class FcMemo:
    """What the last hull of a P(fc) run found, for its neighbours on the grid to reuse.

    links, wrenches, epsilon : the one-contact-per-link subset's links, unit wrenches and exact
    ε at the pose where qhull last ran on it; direction : the weakest wrench direction (unit,
    6-D) of the last full contact set; certified : decisions settled without qhull;
    facets : (vertex wrenches, simplices, offsets) of the last hull that showed force closure
    (a subset's or the full set's; _hull_epsilon).
    """

    links: tuple[int, ...] = ()
    wrenches: np.ndarray | None = None
    epsilon: float = 0.0
    direction: np.ndarray | None = None
    certified: int = 0
    facets: tuple | None = None


def cone_wrenches(p: np.ndarray, n: np.ndarray, mu: float, torque_scale_m: float) -> np.ndarray:
    """contact_wrenches(p, n, mu=mu, torque_scale_m=torque_scale_m) for (N, 3) contacts with
    8 cone edges, the same arithmetic in the same order (bit for bit, tested) with less
    NumPy overhead: np.cross and the norms written out per component."""
    n = n / np.sqrt(n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2])[:, None]
    # tangent_basis: t1 = n x helper, helper world x (or y where n is near x), t2 = n x t1
    near_x = ~(np.abs(n[:, 0]) < 0.9)
    hx, hy = (~near_x).astype(np.float64), near_x.astype(np.float64)
    t1 = np.empty_like(n)
    t1[:, 0] = n[:, 1] * 0.0 - n[:, 2] * hy
    t1[:, 1] = n[:, 2] * hx - n[:, 0] * 0.0
    t1[:, 2] = n[:, 0] * hy - n[:, 1] * hx
    t1 /= np.sqrt(t1[:, 0] * t1[:, 0] + t1[:, 1] * t1[:, 1] + t1[:, 2] * t1[:, 2])[:, None]
    t2 = _cross(n, t1)
    f = (n[:, None, :] + mu * (_COS8[None, :, None] * t1[:, None, :]
                               + _SIN8[None, :, None] * t2[:, None, :]))
    f = (f / np.sqrt(1.0 + mu * mu)).reshape(-1, 3)
    tau = _cross(np.repeat(p, 8, axis=0), f) / torque_scale_m
    return np.hstack([f, tau])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a x b of (N, 3) arrays, as np.cross computes it."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


_PHI8 = 2.0 * np.pi * np.arange(8) / 8
_COS8, _SIN8 = np.cos(_PHI8), np.sin(_PHI8)


def _hull_epsilon(w: np.ndarray) -> tuple[float, np.ndarray, tuple | None]:
    """(ε, weakest direction, facets) of unit wrenches w (M, 6), as ferrari_canny computes ε:
    the direction u is a unit vector with max_i w_i . u equal to the hull's smallest facet
    offset (negative when the origin is outside), or with w u = 0 when w does not span 6-D;
    facets : (vertices (V, 6), simplices (F, 6) indices into them, offsets (F,)) of the hull,
    None without one."""
    from scipy.spatial import ConvexHull, QhullError

    _, sv, vt = np.linalg.svd(w, full_matrices=True)
    if (sv > 1e-9).sum() < w.shape[1]:  # ferrari_canny's rank test (matrix_rank, tol 1e-9)
        return 0.0, vt[-1], None  # the wrenches leave out a direction: w . vt[-1] = 0
    try:
        hull = ConvexHull(w, qhull_options="QJ")
    except QhullError:
        return 0.0, vt[-1], None
    offsets = -hull.equations[:, -1]
    i = int(np.argmin(offsets))
    rows, simplices = np.unique(hull.simplices, return_inverse=True)
    facets = (w[rows], simplices.reshape(hull.simplices.shape), offsets)
    return float(max(0.0, offsets[i])), hull.equations[i, :-1].copy(), facets


def epsilon(grasp: ClosedGrasp, mu: float, torque_scale_m: float) -> float:
    """Ferrari-Canny ε of the contacts (0 without any)."""
    if len(grasp.positions) == 0:
        return 0.0
    return ferrari_canny(grasp.positions, grasp.normals, mu=mu, torque_scale_m=torque_scale_m)


def force_closure(grasp: ClosedGrasp, mu: float, torque_scale_m: float,
                  delta: float = 0.001, exact: bool = False,
                  memo: FcMemo | None = None) -> tuple[bool, float]:
    """(ε > delta, the ε that decided it). Tries one contact per link first (the one
    nearest the link's contact centroid), with 4 of its 8 cone edges, then with all 8:
    a subset's wrench hull lies inside the whole set's, so its ε is a lower bound, and
    when that already exceeds delta the hull of every contact (qhull's cost grows fast
    with the points: 12 contacts are 96 wrenches) is not needed. exact : always return
    the exact ε.

    memo : what an earlier (neighbouring) pose found; with it two certificates settle
    most poses without qhull, both exact. (1) Where this subset has the memo's links (and
    maybe more), with each of their wrenches within η of its counterpart there, every support value
    max_i w_i . u drops by at most η, so ε >= ε_memo - η: force closure if that exceeds
    delta. (2) Where the memo's weakest direction u has max_i w_i . u <= delta over all
    contacts, ε <= delta: not force closure. The ε returned is then that bound."""
    if len(grasp.positions) == 0:
        return False, 0.0
    pos, nrm = grasp.positions, grasp.normals
    if exact:
        eps = epsilon(grasp, mu, torque_scale_m)
        return eps > delta, eps
    pick = []
    for k in np.unique(grasp.links):  # sorted: the subset's rows are in link order
        idx = np.flatnonzero(grasp.links == k)
        c = pos[idx].mean(axis=0)
        pick.append(idx[np.argmin(np.linalg.norm(pos[idx] - c, axis=1))])
    links = tuple(int(k) for k in np.unique(grasp.links))
    # the wrenches of all contacts once; a contact's rows depend on it alone
    full = cone_wrenches(pos, nrm, mu, torque_scale_m)  # = contact_wrenches (tested)
    sub = full.reshape(len(pos), -1, 6)[pick].reshape(-1, 6)
    if memo is not None and memo.epsilon > delta and set(memo.links) <= set(links):
        # the rows of the memo's links (a link that came into contact since only adds
        # wrenches, and a superset's hull holds the subset's)
        rows = np.concatenate([np.arange(8) + 8 * links.index(k) for k in memo.links])
        eta = float(np.sqrt(((sub[rows] - memo.wrenches) ** 2).sum(axis=1).max()))
        if memo.epsilon - eta > delta + _CERTIFICATE_MARGIN:
            memo.certified += 1
            return True, memo.epsilon - eta
    if memo is not None and memo.facets is not None:
        # (1b) the same argument with any counterparts, facet by facet: each vertex v of
        # the last hull that showed force closure has a wrench of this pose within η_v
        # (its nearest). A unit u in v's normal cone is a combination Σ α_f u_f of the
        # normals of v's facets with Σ α_f >= 1, so max_i w_i . u >= v . u - η_v >=
        # min over v's facets of b_f - η_v; hence ε >= min over facets f of
        # (b_f - max of η_v over f's vertices), which is ε_memo - max η at worst
        verts, simplices, offsets = memo.facets
        d2 = ((verts[:, None, :] - full[None, :, :]) ** 2).sum(axis=2)
        eta = np.sqrt(d2.min(axis=1))
        bound = float((offsets - eta[simplices].max(axis=1)).min())
        if bound > delta + _CERTIFICATE_MARGIN:
            memo.certified += 1
            return True, bound
    if memo is not None and memo.direction is not None:
        upper = float((full @ memo.direction).max())
        if upper < delta - _CERTIFICATE_MARGIN:
            memo.certified += 1
            return False, max(upper, 0.0)
    # every other edge of the subset's cones (4 of 8): their hull lies inside the
    # subset's, so its ε is a lower bound too, at about a tenth of qhull's time
    lower, _, facets = _hull_epsilon(sub.reshape(len(pick), -1, 6)[:, ::2].reshape(-1, 6))
    if lower > delta:
        if memo is not None:
            memo.facets = facets
        return True, lower
    if len(pick) < len(pos):
        lower, _, facets = _hull_epsilon(sub)
        if memo is not None:
            memo.links, memo.wrenches, memo.epsilon = links, sub, lower
            if lower > delta:
                memo.facets = facets
        if lower > delta:
            return True, lower
    eps, direction, facets = _hull_epsilon(full)
    if memo is not None:
        memo.direction = direction
        if len(pick) == len(pos):
            memo.links, memo.wrenches, memo.epsilon = links, sub, eps
        if eps > delta:
            memo.facets = facets
    return eps > delta, eps
