"""Pose uncertainty: Kim et al.'s Monte Carlo with early discard, and Weisz & Allen's P(fc) grid.

Both are written against callbacks that run one trial, so they serve any hand, object and
simulator (dynamic or kinematic) and stay testable without MuJoCo.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from geometry import tangent_basis


@dataclass(frozen=True)
class PoseErrorModel:
    """Half-normal pose errors: the expected position error (m) and rotation error (rad).

    Kim et al. (sec. IV-B) assume normal errors in the 6-D pose space and state their size by
    the expectations e_p, e_R of the half-normal magnitudes; (5 mm, 5°) throughout the paper.
    """

    mean_position_m: float = 0.005
    mean_rotation_rad: float = math.radians(5.0)


def sample_pose_errors(n: int, model: PoseErrorModel = PoseErrorModel(),
                       seed: int | None = 0) -> np.ndarray:
    """(n, 4, 4) perturbations of an object pose: random directions and axes, magnitudes
    half-normal with the model's expectations (σ = e √(π/2) gives E|N(0, σ²)| = e)."""
    from scipy.spatial.transform import Rotation

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    rng = np.random.default_rng(seed)

    def directions() -> np.ndarray:
        v = rng.normal(size=(n, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    shift = directions() * np.abs(rng.normal(0.0, model.mean_position_m * math.sqrt(math.pi / 2), (n, 1)))
    angle = np.abs(rng.normal(0.0, model.mean_rotation_rad * math.sqrt(math.pi / 2), (n, 1)))
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3] = Rotation.from_rotvec(directions() * angle).as_matrix()
    T[:, :3, 3] = shift
    return T


@dataclass(frozen=True)
class TrialMeasures:
    """Kim et al.'s measures of one simulated grasp: A (ε, may be None), B, C."""

    b: float
    c: float
    a: float | None = None


@dataclass(frozen=True)
class MonteCarloSettings:
    """n_samples perturbed trials (Kim: 100); early discard after a failed nominal trial or when
    the first check_after trials average B below min_success (Kim: 10 and 90 %)."""

    n_samples: int = 100
    early_discard: bool = True
    check_after: int = 10
    min_success: float = 0.9
    errors: PoseErrorModel = PoseErrorModel()
    seed: int = 0


@dataclass
class MonteCarloResult:
    """Averages over the trials run; success_rate is the mean of B (Kim's grasp success rate)."""

    nominal: TrialMeasures
    samples_run: int
    discarded_early: bool
    success_rate: float
    a_mean: float | None
    b_mean: float
    c_mean: float
    samples_planned: int

    @property
    def trials_saved(self) -> int:
        """Perturbed trials the early discard skipped."""
        return self.samples_planned - self.samples_run


def evaluate_under_uncertainty(trial: Callable[[np.ndarray | None], TrialMeasures],
                               settings: MonteCarloSettings = MonteCarloSettings()) -> MonteCarloResult:
    """Run trial(None) (the nominal pose), then trial(T_error) for seeded pose errors.

    ``trial`` simulates one grasp with the object displaced by the 4 x 4 error (None: none).
    """
    nominal = trial(None)
    errors = sample_pose_errors(settings.n_samples, settings.errors, settings.seed)
    if settings.early_discard and nominal.b <= 0.0:
        return MonteCarloResult(nominal, 0, True, 0.0, None, 0.0, 0.0, settings.n_samples)
    results: list[TrialMeasures] = []
    discarded = False
    for k, T in enumerate(errors):
        results.append(trial(T))
        if (settings.early_discard and k + 1 == settings.check_after < settings.n_samples
                and np.mean([r.b for r in results]) < settings.min_success):
            discarded = True
            break
    return _result(nominal, results, discarded, settings)


def evaluate_batched(trials: Callable[[np.ndarray | None], list[TrialMeasures]],
                     settings: MonteCarloSettings = MonteCarloSettings()) -> MonteCarloResult:
    """evaluate_under_uncertainty in three batches: trials(None) runs the nominal pose alone;
    trials(T_errors) runs the 4 x 4 errors (n, 4, 4) and returns one result each. With early
    discard the first check_after samples are one batch and the rest another, so the same
    errors run and the same decisions are taken as one trial at a time."""
    nominal = trials(None)[0]
    errors = sample_pose_errors(settings.n_samples, settings.errors, settings.seed)
    if settings.early_discard and nominal.b <= 0.0:
        return MonteCarloResult(nominal, 0, True, 0.0, None, 0.0, 0.0, settings.n_samples)
    first = settings.check_after if settings.early_discard else settings.n_samples
    results = list(trials(errors[:first])) if len(errors) else []
    discarded = bool(settings.early_discard and first < settings.n_samples
                     and np.mean([r.b for r in results]) < settings.min_success)
    if not discarded and len(errors) > first:
        results += trials(errors[first:])
    return _result(nominal, results, discarded, settings)


def _result(nominal: TrialMeasures, results: list[TrialMeasures], discarded: bool,
            settings: MonteCarloSettings) -> MonteCarloResult:
    """The averages of the trials run (B, C, and A over the trials that computed it)."""
    b = np.array([r.b for r in results])
    a = [r.a for r in results if r.a is not None]
    return MonteCarloResult(
        nominal=nominal, samples_run=len(results), discarded_early=discarded,
        success_rate=float(b.mean()) if len(b) else 0.0,
        a_mean=float(np.mean(a)) if a else None, b_mean=float(b.mean()) if len(b) else 0.0,
        c_mean=float(np.mean([r.c for r in results])) if results else 0.0,
        samples_planned=settings.n_samples)


def pfc_grid(*, xy_range_m: float = 0.010, xy_step_m: float = 0.001,
             theta_range_rad: float = math.radians(20.0),
             theta_step_rad: float = math.radians(1.0)) -> np.ndarray:
    """(N, 3) (x, y, θ) offsets of Weisz & Allen's uniform grid: by default ±10 mm in 1 mm
    steps and ±20° in 1° steps, 21 x 21 x 41 = 18,081 poses (sec. II)."""
    n_xy = int(round(xy_range_m / xy_step_m))
    n_t = int(round(theta_range_rad / theta_step_rad))
    xy = np.arange(-n_xy, n_xy + 1) * xy_step_m
    th = np.arange(-n_t, n_t + 1) * theta_step_rad
    X, Y, TH = np.meshgrid(xy, xy, th, indexing="ij")
    return np.stack([X.ravel(), Y.ravel(), TH.ravel()], axis=1)


def grid_transforms(grid: np.ndarray, centre: np.ndarray, normal: np.ndarray = (0.0, 0.0, 1.0)) -> np.ndarray:
    """(N, 4, 4) object displacements for grid offsets: a shift in the plane orthogonal to
    ``normal`` and a turn θ about the axis through ``centre`` (Weisz & Allen rotate about the
    centroid of the planned contacts, not the centre of mass)."""
    from scipy.spatial.transform import Rotation

    n = np.asarray(normal, np.float64)
    n = n / np.linalg.norm(n)
    u, v = (a[0] for a in tangent_basis(n[None]))  # the plane orthogonal to the normal
    R = Rotation.from_rotvec(grid[:, 2:3] * n).as_matrix()
    c = np.asarray(centre, np.float64)
    T = np.tile(np.eye(4), (len(grid), 1, 1))
    T[:, :3, :3] = R
    T[:, :3, 3] = c - R @ c + grid[:, :1] * u + grid[:, 1:2] * v
    return T


def probability_of_force_closure(epsilons: np.ndarray, delta: float = 0.001) -> float:
    """P(fc) = P(ε > δ) over the grid's poses (Weisz & Allen: δ = 0.001)."""
    eps = np.asarray(epsilons, np.float64)
    if eps.size == 0:
        raise ValueError("epsilons must not be empty")
    return float(np.mean(eps > delta))
