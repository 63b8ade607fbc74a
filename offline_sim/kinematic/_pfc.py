"""Weisz & Allen's P(force closure) of one grasp: close on every (x, y, θ) displacement of a
grid and count the poses whose contacts are force closure."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..quality import grid_transforms, pfc_grid
from ._approach import ApproachMemo
from ._force_closure import FcMemo

if TYPE_CHECKING:
    from ._closer import KinematicCloser


@dataclass(frozen=True)
class PfcResult:
    """P(fc) over a grid and what it took: closed (N,) whether each grid pose is force closure
    (ε > δ); epsilons (N,) the ε that decided it (exact, or with exact_epsilons off a bound
    that settled it: a lower bound above δ or an upper bound below it); the nominal ε, the
    rotation centre (world, the centroid of the nominal contacts), steps, wall seconds, and
    certified: poses settled by a neighbour's hull, without qhull (force_closure);
    closing_s: of wall_s, the seconds spent closing the hand (the rest is mostly hulls)."""

    pfc: float
    closed: np.ndarray
    epsilons: np.ndarray
    nominal_epsilon: float
    centre_world: np.ndarray
    mean_steps: float
    wall_s: float
    certified: int = 0
    closing_s: float = 0.0


def pfc(closer: KinematicCloser, T_object_hand: np.ndarray, preshape: np.ndarray | None = None, *,
        grid: np.ndarray | None = None, mu: float = 0.8, torque_scale_m: float | None = None,
        delta: float = 0.001, exact_epsilons: bool = False, reuse_hulls: bool = True,
        warm_approach: bool = True, progress=None) -> PfcResult:
    """Weisz & Allen's P(fc) of one grasp: close on every (x, y, θ) displacement of the
    grid (default ±10 mm, ±20°, 1 mm / 1°: 18,081 poses), turning about the centroid of the
    nominal contacts in the table plane; P(fc) = share of poses with ε > delta.
    torque_scale_m : default the object's radius; exact_epsilons : compute every pose's
    exact ε (slower; P(fc) is the same either way); reuse_hulls : let neighbouring poses
    settle force closure by the certificates of force_closure (the same decisions, fewer
    hulls); warm_approach : let each pose's approach skip the collision queries that
    earlier poses' gaps make needless (the same contacts, fewer queries: close's warm);
    progress : callable(done, total)."""
    import time

    t0 = time.perf_counter()
    w = closer.world
    if torque_scale_m is None:
        torque_scale_m = getattr(w.obj, "radius_m", None) or closer.radius_m
    g = pfc_grid() if grid is None else np.asarray(grid, np.float64)
    nominal = closer.close(T_object_hand, None, preshape)
    eps0 = closer.epsilon(nominal, mu, torque_scale_m)
    T_wo = w.T_world_object
    centre = (T_wo[:3, :3] @ nominal.positions.mean(axis=0) + T_wo[:3, 3]
              if len(nominal.positions) else (T_wo @ np.asarray(T_object_hand))[:3, 3])
    transforms = grid_transforms(g, centre, (0.0, 0.0, 1.0))
    eps = np.zeros(len(g))
    closed = np.zeros(len(g), bool)
    steps = 0
    memo = FcMemo() if reuse_hulls and not exact_epsilons else None  # neighbours share hulls
    approach = ApproachMemo(closer, centre) if warm_approach else None  # neighbours share gaps
    closing_s = 0.0
    for i, T in enumerate(transforms):
        t1 = time.perf_counter()
        grasp = closer.close(T_object_hand, T, preshape, warm=approach)
        closing_s += time.perf_counter() - t1
        closed[i], eps[i] = closer.force_closure(grasp, mu, torque_scale_m, delta,
                                                 exact_epsilons, memo)
        steps += grasp.steps
        if progress is not None:
            progress(i + 1, len(g))
    return PfcResult(float(closed.mean()), closed, eps, eps0, centre, steps / max(len(g), 1),
                     time.perf_counter() - t0, 0 if memo is None else memo.certified, closing_s)
