"""Candidate search over a silhouette: the paper's planning loop (random sampling) or
antipodal pairs, each followed by local refinement; top-k NMS."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from ._antipodal import antipodal_candidates
from ._checks import check_positive
from ._measure import (PreparedSilhouette, _apply_depth, _checked_target, _prepared,
                       _score_prepared, depth_model, drop_off_target)
from ._physical import DepthParams, DepthView, JawLimits, why_not_holdable
from ._types import GripperProjection, MeasureParams, Scores

SAMPLERS = ("tan", "antipodal")

@dataclass(frozen=True)
class SearchParams:
    """Settings of the planning loop (Tan V-A); lengths in pixels, angles in radians.

    batch : candidates scored per round.
    uniform_fraction : share of each global round drawn uniformly in the bounding box grown
        by half the open width; the rest is normal around the centroid (σ = box size / 4).
    quality_threshold : stop once top_k distinct candidates reach it (paper: 0.95).
    max_candidates : budget for the global rounds.
    refine_rounds, refine_radius_px, refine_angle_rad : local refinement around the best
        candidates when the threshold is not reached; the region halves each round.
    nms_radius_px, nms_angle_rad : two candidates closer than both are the same grasp.
    prune_depth_terms : once top_k distinct grasps are found, defer the depth terms of a new
        candidate whose Tan score is already below the k-th best's score (the terms only
        lower a score), and compute them only if the k-th best later falls to its Tan score.
        Exact: the same grasps, scores and order as without it (tests/scoring); False is the
        reference.
    sampler : "tan" (the paper's global rounds, the default) or "antipodal": one round of at
        most antipodal_candidates pairs of boundary pixels whose normals oppose within a cone
        of half-angle antipodal_cone_rad (``antipodal_candidates``), then
        antipodal_refine_rounds refinement rounds of antipodal_refine candidates, half of
        each round around the best so far; the global rounds stand in when the pairs find
        nothing scoring above 0. The cone is a sampling choice, not the jaw's physics (the
        measure judges each candidate): atan(0.5), Dex-Net's friction coefficient, found the
        planning loop's best grasp as often as 45° (a rubber pad's cone) and more often than
        15° (docs/scoring.md, "The antipodal search").
    """

    batch: int = 2048
    uniform_fraction: float = 0.5
    quality_threshold: float = 0.95
    max_candidates: int = 20_000
    refine_rounds: int = 4
    refine_radius_px: float = 8.0
    refine_angle_rad: float = math.radians(15.0)
    nms_radius_px: float = 10.0
    nms_angle_rad: float = math.radians(20.0)
    sampler: str = "tan"
    antipodal_candidates: int = 512
    antipodal_refine: int = 256
    antipodal_refine_rounds: int = 6
    antipodal_cone_rad: float = math.atan(0.5)
    prune_depth_terms: bool = True

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"SearchParams: sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        for name in ("batch", "max_candidates", "antipodal_candidates", "antipodal_refine"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"SearchParams: {name} must be an integer >= 1, got {v!r}")
        for name in ("refine_rounds", "antipodal_refine_rounds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"SearchParams: {name} must be an integer >= 0, got {v!r}")
        if not 0.0 < self.antipodal_cone_rad < math.pi / 2:
            raise ValueError(f"SearchParams: antipodal_cone_rad must be in (0, π/2), "
                             f"got {self.antipodal_cone_rad!r}")
        if not 0.0 <= self.uniform_fraction <= 1.0:
            raise ValueError(
                f"SearchParams: uniform_fraction must be in [0, 1], got {self.uniform_fraction!r}")
        if not 0.0 <= self.quality_threshold <= 1.0:
            raise ValueError(
                f"SearchParams: quality_threshold must be in [0, 1], got {self.quality_threshold!r}")
        for name in ("refine_radius_px", "refine_angle_rad", "nms_radius_px", "nms_angle_rad"):
            check_positive(getattr(self, name), name, "SearchParams", allow_zero=True)


@dataclass
class GraspSet:
    """The best grasps found, best first: (x, y) pixels (column, row), theta radians in [0, π).

    scores : their Scores; n_scored : candidates scored in the whole search.
    no_grasp : why the jaw cannot hold the target at all ("" when it may; then the set is
        empty): wider than the stroke every way, or too heavy for the pads' friction.
    """

    x: np.ndarray
    y: np.ndarray
    theta: np.ndarray
    scores: Scores
    n_scored: int
    no_grasp: str = ""

    def __len__(self) -> int:
        return len(self.x)


@nb.njit(cache=True)
def _nms(order, xs, ys, ts, radius, angle, top_k):
    """Indices of up to top_k candidates in ``order`` none of which is within both the
    radius (px) and the angle (rad, modulo π) of an earlier one."""
    keep = np.empty(top_k, dtype=np.int64)
    n_keep = 0
    r2 = radius * radius
    for idx in order:
        if n_keep == top_k:
            break
        ok = True
        for q in range(n_keep):
            j = keep[q]
            dx = xs[idx] - xs[j]
            dy = ys[idx] - ys[j]
            da = abs(ts[idx] - ts[j]) % np.pi
            da = min(da, np.pi - da)  # a grasp and its θ + π twin are the same grasp
            if dx * dx + dy * dy < r2 and da < angle:
                ok = False
                break
        if ok:
            keep[n_keep] = idx
            n_keep += 1
    return keep[:n_keep]


def non_max_suppression(x: np.ndarray, y: np.ndarray, theta: np.ndarray, score: np.ndarray,
                        top_k: int, radius_px: float, angle_rad: float) -> np.ndarray:
    """Indices of the top_k best-scoring candidates, suppressing near duplicates: within both
    radius_px in (x, y) and angle_rad in θ (modulo π) of a better one."""
    order = np.argsort(-np.asarray(score, dtype=np.float64), kind="stable")
    return _nms(order, np.asarray(x, np.float64), np.asarray(y, np.float64),
                np.asarray(theta, np.float64), float(radius_px), float(angle_rad), int(top_k))


def _global_batch(rng: np.random.Generator, n: int, box: tuple, centroid: tuple,
                  sigma: tuple, uniform_fraction: float) -> tuple:
    """n candidates: uniform in ``box`` (x0, y0, x1, y1) and normal around the centroid."""
    n_uni = int(round(n * uniform_fraction))
    x0, y0, x1, y1 = box
    xs = np.concatenate([rng.uniform(x0, x1, n_uni), rng.normal(centroid[0], sigma[0], n - n_uni)])
    ys = np.concatenate([rng.uniform(y0, y1, n_uni), rng.normal(centroid[1], sigma[1], n - n_uni)])
    return xs, ys, rng.uniform(0.0, np.pi, n)


def search_grasps(silhouette: np.ndarray | PreparedSilhouette, projection: GripperProjection,
                  *, target: np.ndarray | None = None, top_k: int = 10,
                  params: MeasureParams | None = None, settings: SearchParams | None = None,
                  seed: int | None = 0, measure: str = "graspline", jaw: JawLimits | None = None,
                  depth: DepthView | None = None,
                  depth_params: DepthParams | None = None) -> GraspSet:
    """Find the top_k best distinct antipodal grasps on a silhouette (Tan V-A planning loop).

    Global rounds (uniform in the bounding box grown by r/2, normal around the centroid) run
    until top_k distinct candidates score >= the quality threshold or the budget is spent;
    then, if the threshold is not reached, rounds of uniform local refinement around the
    current best shrink the region by half each time. With ``settings.sampler ==
    "antipodal"`` one round of antipodal boundary pairs replaces the global rounds (see
    SearchParams). Same seed, same result.

    target : optional (H, W) bool mask of the object to grasp; candidates are drawn around it
        while the whole silhouette is scored, so neighbouring objects still collide, and a
        grasp whose fingers would first touch a neighbour counts as missing the target.
    measure, jaw, depth, depth_params : as ``score_candidates``. With a depth view, a target
        the jaw cannot hold at all (narrower nowhere than the stroke, heavier than the pads'
        friction) gets no grasp and ``no_grasp`` says why.
    """
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
    params = params or MeasureParams()
    settings = settings or SearchParams()
    prepared = _prepared(silhouette, params)
    model = depth_model(measure, jaw, depth, depth_params, prepared.mask.shape)
    target = _checked_target(target, prepared.mask.shape)
    rows, cols = np.nonzero(prepared.mask if target is None else target)
    rng = np.random.default_rng(seed)
    why = "" if model is None or rows.size == 0 else why_not_holdable(
        prepared.mask if target is None else target, model.jaw, model.view)
    if rows.size == 0 or why:
        empty = np.empty(0)
        return GraspSet(empty, empty.copy(), empty.copy(), Scores.empty(0), 0, why)

    grow = 0.5 * float(projection.open_width_px)
    box = (cols.min() - grow, rows.min() - grow, cols.max() + grow, rows.max() + grow)
    centroid = (cols.mean(), rows.mean())
    sigma = (max(1.0, (cols.max() - cols.min()) / 4.0), max(1.0, (rows.max() - rows.min()) / 4.0))

    xs_all, ys_all, ts_all, scores_all = [], [], [], []
    # per batch, the candidates whose depth terms wait (scored 0 meanwhile; their Tan score,
    # which the terms can only lower, bounds their score); kth: the k-th best grasp's score
    pending: list[np.ndarray] = []
    kth = [-math.inf]
    prune = model is not None and settings.prune_depth_terms

    def run(xs, ys, ts):
        xs_all.append(xs), ys_all.append(ys), ts_all.append(ts % np.pi)
        sc = _score_prepared(prepared, xs, ys, ts_all[-1], projection, params)
        if target is not None:
            drop_off_target(sc, target)
        wait = sc.evaluated & (sc.tan_score < kth[0]) if prune else np.zeros(len(xs), bool)
        sc.score[wait] = 0.0
        if model is not None:
            _apply_depth(sc, prepared.mask, xs, ys, ts_all[-1], projection, model, only=~wait)
        pending.append(wait)
        scores_all.append(sc)

    def best():
        """x, y, θ and score of every candidate so far, and the top k's indices."""
        while True:
            x, y, t = np.concatenate(xs_all), np.concatenate(ys_all), np.concatenate(ts_all)
            # the scores alone: the other fields are joined once, for the top k at the end
            score = np.concatenate([s.score for s in scores_all])
            keep = non_max_suppression(x, y, t, score, top_k, settings.nms_radius_px,
                                       settings.nms_angle_rad)
            kth[0] = float(score[keep].min()) if keep.size == top_k else -math.inf
            # a waiting candidate whose bound reaches the k-th best could enter the top k
            # (a new grasp may suppress two of them): its terms now, then the top k again.
            # None left: the greedy suppression never reaches them, and the top k is exact.
            due = [w & (s.tan_score >= kth[0]) for w, s in zip(pending, scores_all)]
            if not any(d.any() for d in due):
                return x, y, t, score, keep
            for b, d in enumerate(due):
                if d.any():
                    _apply_depth(scores_all[b], prepared.mask, xs_all[b], ys_all[b], ts_all[b],
                                 projection, model, only=d)
                    pending[b] = pending[b] & ~d

    n_scored, refine_batch, rounds, to_best = 0, settings.batch, settings.refine_rounds, 0
    global_rounds = True
    if settings.sampler == "antipodal":
        pairs = antipodal_candidates(prepared, projection, target=target,
                                     friction=math.tan(settings.antipodal_cone_rad),
                                     max_candidates=settings.antipodal_candidates, seed=rng,
                                     params=params)
        if len(pairs):
            run(pairs.x, pairs.y, pairs.theta)
            n_scored += len(pairs)
            x, y, t, score, keep = best()
            # refine what the pairs found; nothing above 0 (every pair collides or misses,
            # an outline the normals misread): Tan's global rounds instead
            global_rounds = not (keep.size and score[keep[0]] > 0.0)
            if not global_rounds:
                refine_batch = settings.antipodal_refine
                rounds, to_best = settings.antipodal_refine_rounds, settings.antipodal_refine // 2
    while global_rounds and n_scored < settings.max_candidates:
        n = min(settings.batch, settings.max_candidates - n_scored)
        run(*_global_batch(rng, n, box, centroid, sigma, settings.uniform_fraction))
        n_scored += n
        x, y, t, score, keep = best()
        if keep.size == top_k and score[keep].min() >= settings.quality_threshold:
            break

    radius, angle = settings.refine_radius_px, settings.refine_angle_rad
    for _ in range(rounds):
        if keep.size and score[keep].min() >= settings.quality_threshold:
            break
        per = max(1, (refine_batch - to_best) // max(1, keep.size))
        centres = np.repeat(keep, per)
        if to_best:  # the antipodal search: the best's peak is narrow, half a round goes there
            centres = np.concatenate([np.repeat(keep[:1], to_best), centres])
        m = centres.size
        run(x[centres] + rng.uniform(-radius, radius, m), y[centres] + rng.uniform(-radius, radius, m),
            t[centres] + rng.uniform(-angle, angle, m))
        n_scored += m
        radius, angle = radius / 2.0, angle / 2.0
        x, y, t, score, keep = best()

    return GraspSet(x[keep], y[keep], t[keep], Scores.concatenate(scores_all).take(keep), n_scored)
