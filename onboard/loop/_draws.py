"""Validate mode: a grasp drawn across the score levels, not the best one only (Tan et al.'s
validation protocol: do higher scores hold more often?)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scoring import GripperProjection, prepare_silhouette, score_candidates
from vision import Silhouette

from ._features import features
from ._readings_clearance import candidate_room_m, room_features, scale_by_room

LEVELS = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0 + 1e-9])  # the five score levels (Tan Fig. 8)
VALIDATE_CANDIDATES = 4000  # random candidates scored per object when drawing across levels


@dataclass(frozen=True)
class LevelDraw:
    """A candidate drawn from one score level: its pose in the silhouette image (x_px, y_px,
    closing angle theta_rad), score, features by name, the level (0..4), and how many random
    candidates were scored for the draw."""

    x_px: float
    y_px: float
    theta_rad: float
    score: float
    features: dict[str, float]
    level: int
    n_scored: int


def draw_across_levels(sil: Silhouette, found, projection: GripperProjection,
                       measure_kw: dict, rng: np.random.Generator, *,
                       room_pixel_m: float | None = None) -> LevelDraw:
    """A candidate from a score level drawn uniformly among the levels that have one: random
    candidates around the target scored beside the search's own (``found``), then a level,
    then a candidate of that level. measure_kw : the measure's keyword arguments, as the
    search used them. room_pixel_m : on a silhouette drawn from the readings alone, a camera
    pixel at the object (metres): the random candidates' scores are scaled by the fingers'
    room beside the readings as the search's were (ImageSearch._search), and the drawn one's
    features carry it."""
    prep = prepare_silhouette(sil.image)
    ys, xs = np.nonzero(sil.target)
    r = projection.open_width_px / 2
    k = VALIDATE_CANDIDATES
    cx = rng.uniform(xs.min() - r, xs.max() + r, k)
    cy = rng.uniform(ys.min() - r, ys.max() + r, k)
    ct = rng.uniform(0.0, math.pi, k)
    sc = score_candidates(prep, cx, cy, ct, projection, target=sil.target, **measure_kw)
    if room_pixel_m is not None:
        scale_by_room(sc, cx, cy, ct, projection, sil.metres_per_px, room_pixel_m)
    # the search's best grasps belong to the pool too: the top level is often rare
    px = np.concatenate([found.x, cx])
    py = np.concatenate([found.y, cy])
    pt = np.concatenate([found.theta, ct])
    ps = np.concatenate([found.scores.score, sc.score])
    lvl = np.clip(np.searchsorted(LEVELS, ps, side="right") - 1, 0, 4)
    levels = np.unique(lvl)
    pick_level = int(rng.choice(levels))
    j = int(rng.choice(np.flatnonzero(lvl == pick_level)))
    scores, k_in = (found.scores, j) if j < len(found.x) else (sc, j - len(found.x))
    feats = features(scores, k_in)
    if room_pixel_m is not None:
        feats.update(room_features(candidate_room_m(scores, k_in, px[j], py[j], pt[j],
                                                    projection, sil.metres_per_px),
                                   room_pixel_m))
    return LevelDraw(float(px[j]), float(py[j]), float(pt[j]), float(ps[j]), feats, pick_level, k)


@dataclass(frozen=True)
class RankDraw:
    """A database grasp drawn from one level of its ranking value: its row (index into the
    placed grasps), that value (0..1: quality or P(fc)), its level (0..4), the level of the
    best grasp of the pool, and how many grasps the pool held."""

    row: int
    value: float
    level: int
    top_level: int
    n_pool: int


def level_of(values: np.ndarray) -> np.ndarray:
    """(N,) int score level (0..4, LEVELS) of values in 0..1 (clipped)."""
    v = np.clip(np.asarray(values, np.float64), 0.0, 1.0)
    return np.clip(np.searchsorted(LEVELS, v, side="right") - 1, 0, 4)


def draw_rank_level(rank_value: np.ndarray, pool: np.ndarray,
                    rng: np.random.Generator) -> RankDraw:
    """A grasp of pool (row indices into rank_value, the database's ranking value of each
    placed grasp, 0..1) drawn across the score levels as the jaw's draws are: a level
    uniformly among the levels that have a grasp in pool, then a grasp of that level
    uniformly. ValueError on an empty pool or a pool row without a finite value."""
    pool = np.asarray(pool, np.int64)
    if len(pool) == 0:
        raise ValueError("draw_rank_level: the pool of grasps is empty")
    values = np.asarray(rank_value, np.float64)[pool]
    if not np.all(np.isfinite(values)):
        raise ValueError(f"draw_rank_level: pool rows {pool[~np.isfinite(values)].tolist()} "
                         f"have no ranking value")
    lvl = level_of(values)
    pick_level = int(rng.choice(np.unique(lvl)))
    j = int(rng.choice(np.flatnonzero(lvl == pick_level)))
    return RankDraw(int(pool[j]), float(values[j]), pick_level, int(lvl.max()), len(pool))
