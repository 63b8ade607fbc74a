"""Public entry point of the image-space measure: validate, prepare, run the kernel, name its outputs.

The kernel (``_kernel``) reads its parameters from a float64 vector and writes its outputs
into row arrays, both indexed by the kernel's named constants; this module fills the one and
turns the others into a Scores struct.
"""
from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from ._checks import check_coordinates, check_silhouette
from . import _kernel as K
from ._kernel import chunk_count, grpv_kernel, score_kernel
from ._blur import smoothed_silhouette
from ._normals import normal_field
from ._physical import DepthParams, DepthView, JawLimits, PhysicalTerms, write_physical_terms
from ._types import GripperProjection, MeasureParams, Scores


@dataclass(frozen=True)
class PreparedSilhouette:
    """A silhouette with its boundary normals computed once, for scoring many batches.

    mask : (H, W) uint8, 1 = object; blur : (H, W) float32 Gaussian-smoothed mask, whose 0.5
    level places outlines between pixels; normal_col, normal_row : (H, W) float64 outward unit
    normals at boundary pixels (zero elsewhere), image axes; normal_angle : (H, W) float32
    atan2(normal_row, normal_col), radians, NaN where no normal is defined; window, sigma_px :
    the m of the normal window and the blur's σ (px) they were made with.
    """

    mask: np.ndarray
    blur: np.ndarray
    normal_col: np.ndarray
    normal_row: np.ndarray
    normal_angle: np.ndarray
    window: int
    sigma_px: float


def prepare_silhouette(silhouette: np.ndarray, params: MeasureParams | None = None) -> PreparedSilhouette:
    """Check a bool/uint8 (H, W) silhouette; compute its blur and boundary normals (eqs. 6-8)."""
    params = params or MeasureParams()
    mask = (check_silhouette(silhouette) != 0).astype(np.uint8)
    nx, ny = normal_field(mask, params.normal_window)
    # float32 fields: half the cache footprint of the kernel's scattered reads, and 1e-7
    # relative error, far below a pixel or a degree.
    blur = smoothed_silhouette(mask, params.outline_sigma_px).astype(np.float32)
    # the normals' angles at the boundary pixels only (elsewhere NaN: no normal)
    angle = np.full(mask.shape, np.nan, np.float32)
    edge = (nx != 0.0) | (ny != 0.0)
    angle[edge] = np.arctan2(ny[edge], nx[edge])
    return PreparedSilhouette(mask, blur, nx, ny, angle, params.normal_window,
                              params.outline_sigma_px)


def _prepared(silhouette: np.ndarray | PreparedSilhouette, params: MeasureParams) -> PreparedSilhouette:
    """The prepared form of a silhouette, checking one prepared earlier matches params."""
    if not isinstance(silhouette, PreparedSilhouette):
        return prepare_silhouette(silhouette, params)
    if (silhouette.window, silhouette.sigma_px) != (params.normal_window, params.outline_sigma_px):
        raise ValueError(
            f"silhouette was prepared with normal_window={silhouette.window}, "
            f"outline_sigma_px={silhouette.sigma_px}; params ask for {params.normal_window}, "
            f"{params.outline_sigma_px}")
    return silhouette


def _kernel_params(params: MeasureParams, projection: GripperProjection) -> np.ndarray:
    """(N_PARAMS,) float64: the kernel's parameter vector, each at its P_* index."""
    prm = np.empty(K.N_PARAMS, np.float64)
    prm[K.P_D_T_THRESHOLD] = params.d_t_threshold
    prm[K.P_R_R_THRESHOLD] = params.r_r_threshold_rad
    prm[K.P_S_A_THRESHOLD] = params.s_a_threshold_rad
    prm[K.P_S_F_KNEE_FRACTION] = params.s_f_knee_fraction
    prm[K.P_S_F_KNEE_SCORE] = params.s_f_knee_score
    prm[K.P_S_F_ZERO_FRACTION] = params.s_f_zero_fraction
    prm[K.P_K] = params.k
    prm[K.P_SECONDARY_TOL_PX] = params.secondary_tol_px
    prm[K.P_NO_PIVOT_RAD] = params.no_pivot_angle_rad
    prm[K.P_LEVER_PX] = params.min_lever_fraction * float(projection.finger_width_px)
    prm[K.P_BALANCE_TOL_PX] = params.balance_tol_px
    return prm


def score_candidates(silhouette: np.ndarray | PreparedSilhouette, x: np.ndarray, y: np.ndarray,
                     theta: np.ndarray, projection: GripperProjection,
                     params: MeasureParams | None = None, *, target: np.ndarray | None = None,
                     measure: str = "graspline", jaw: JawLimits | None = None,
                     depth: DepthView | None = None,
                     depth_params: DepthParams | None = None) -> Scores:
    """Score antipodal grasp candidates on a silhouette with the image-space measure.

    silhouette : (H, W) bool or uint8, non-zero = anything the fingers meet (the target and
        its neighbours), or a PreparedSilhouette.
    x, y : (N,) float, the grasp centre's column and row, pixels.
    theta : (N,) float, radians; the closing direction is (cos θ, sin θ) in (column, row).
    projection : the gripper in this image's pixels. params : thresholds (paper defaults).
    target : optional (H, W) bool mask of the object to grasp among several: a grasp whose
        primary contacts are not both on it scores 0 and counts as missing.
    measure : "graspline" (default) multiplies Tan's score by the depth terms when a depth
        view is given (``DepthView``; jaw and depth_params default to a 2F-85's size and the
        thresholds in docs/scoring.md); "tan2024" is Tan et al.'s measure unchanged.
    Returns a Scores struct of arrays, one entry per candidate.
    """
    params = params or MeasureParams()
    if not isinstance(params, MeasureParams):
        raise ValueError(f"params must be a MeasureParams, got {type(params).__name__}")
    if not isinstance(projection, GripperProjection):
        raise ValueError(f"projection must be a GripperProjection, got {type(projection).__name__}")
    prepared = _prepared(silhouette, params)
    model = depth_model(measure, jaw, depth, depth_params, prepared.mask.shape)
    target = _checked_target(target, prepared.mask.shape)
    xs, ys, ts = check_coordinates(x=x, y=y, theta=theta)
    sc = _score_prepared(prepared, xs, ys, ts, projection, params)
    if target is not None:
        drop_off_target(sc, target)
    if model is not None:
        _apply_depth(sc, prepared.mask, xs, ys, ts, projection, model)
    return sc


def _checked_target(target: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray | None:
    """A target mask checked against the silhouette's shape (None stays None)."""
    if target is None:
        return None
    target = check_silhouette(target, "target")
    if target.shape != tuple(shape):
        raise ValueError(f"target must have the silhouette's shape {tuple(shape)}, got {target.shape}")
    return target


def drop_off_target(scores: Scores, target: np.ndarray) -> None:
    """Zero the score of grasps whose primary contacts are not both on the target mask.

    Such a grasp closes on a neighbour first: for the target it is a miss (missing = True).
    """
    ev = np.flatnonzero(scores.evaluated)  # the others have no contacts (NaN)
    on = np.ones(ev.size, np.bool_)
    for contact in (scores.contact_left, scores.contact_right):
        cols = contact[ev, 0].astype(np.intp)
        rows = contact[ev, 1].astype(np.intp)
        on &= target[rows, cols] != 0
    off = ev[~on]
    scores.score[off] = 0.0
    scores.tan_score[off] = 0.0
    scores.missing[off] = True


def _score_prepared(prepared: PreparedSilhouette, xs: np.ndarray, ys: np.ndarray,
                    ts: np.ndarray, projection: GripperProjection,
                    params: MeasureParams) -> Scores:
    """Run the kernel on checked (N,) float64 arrays: x, y pixels, θ radians (the fast path
    inside a search loop: nothing is checked again)."""
    n_cand = xs.shape[0]
    dw = projection.line_offsets_px()
    r = float(projection.open_width_px)
    scratch = np.empty((chunk_count(n_cand), K.N_SCRATCH, dw.shape[0]), dtype=np.float64)
    outf = np.empty((K.N_FLOAT_OUT, n_cand), dtype=np.float32)
    outb = np.empty((K.N_BOOL_OUT, n_cand), dtype=np.bool_)
    if n_cand:
        score_kernel(prepared.mask, prepared.blur, prepared.normal_angle, xs, ys, ts, dw,
                     float(projection.finger_width_px), r, params.coarse_step(r),
                     _kernel_params(params, projection), scratch, outf, outb)
    return Scores(score=outf[K.F_SCORE], collision=outb[K.B_COLLISION], missing=outb[K.B_MISSING],
                  d_t=outf[K.F_D_T], r_r=outf[K.F_R_R], s_a=outf[K.F_S_A], s_f=outf[K.F_S_F],
                  score_d_t=outf[K.F_SCORE_D_T], score_r_r=outf[K.F_SCORE_R_R],
                  score_s_a=outf[K.F_SCORE_S_A], score_s_f=outf[K.F_SCORE_S_F],
                  contact_left=outf[K.F_LEFT_COL:K.F_LEFT_ROW + 1].T,
                  contact_right=outf[K.F_RIGHT_COL:K.F_RIGHT_ROW + 1].T, width_px=outf[K.F_WIDTH_PX],
                  tan_score=outf[K.F_SCORE].copy(), body_collision=np.zeros(n_cand, np.bool_),
                  **{name: np.full(n_cand, np.nan, np.float32) for name in DEPTH_FIELDS})


DEPTH_FIELDS = ("contact_height_m", "contact_tilt_rad", "section_m", "lever_m", "torque_ratio", "score_contact",
                "score_torque", "score_tilt", "score_palm", "score_swing")
MEASURES = ("graspline", "tan2024", "tan2021")  # tan2021: the paper's year, the same measure


@dataclass(frozen=True)
class DepthModel:
    """The jaw and the depth view that graspline's measure adds to Tan's (see _physical)."""

    jaw: JawLimits
    view: DepthView
    params: DepthParams


def _apply_depth(sc: Scores, image: np.ndarray, xs: np.ndarray, ys: np.ndarray, ts: np.ndarray,
                 projection: GripperProjection, model: DepthModel,
                 only: np.ndarray | None = None) -> None:
    """Multiply the evaluated candidates' scores (those of them in ``only``, a bool mask,
    when given) by the depth terms, in place: the kernel reads and writes sc's arrays at
    their indices."""
    ok = sc.evaluated if only is None else sc.evaluated & only
    idx = np.flatnonzero(ok)
    if not idx.size:
        return
    into = PhysicalTerms(body_collision=sc.body_collision, factor=sc.score,
                         **{name: getattr(sc, name) for name in DEPTH_FIELDS})
    write_physical_terms(into, idx, sc.tan_score, image, xs, ys, ts,
                         (sc.contact_left[:, 0], sc.contact_left[:, 1]),
                         (sc.contact_right[:, 0], sc.contact_right[:, 1]), sc.width_px,
                         float(projection.open_width_px), projection.line_offsets_px(),
                         model.jaw, model.view, model.params)


def depth_model(measure: str, jaw: JawLimits | None, depth: DepthView | None,
                depth_params: DepthParams | None, shape: tuple[int, int]) -> DepthModel | None:
    """The depth model a measure uses: None for "tan2024" or when no depth view is given."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    if measure != "graspline" or depth is None:
        return None
    if not isinstance(depth, DepthView):
        raise ValueError(f"depth must be a DepthView, got {type(depth).__name__}")
    if np.shape(depth.height_m) != tuple(shape):
        raise ValueError(f"depth.height_m must have the silhouette's shape {tuple(shape)}, "
                         f"got {np.shape(depth.height_m)}")
    jaw = jaw or JawLimits()
    if not isinstance(jaw, JawLimits):
        raise ValueError(f"jaw must be a JawLimits, got {type(jaw).__name__}")
    return DepthModel(jaw, depth, depth_params or DepthParams())


def grasp_region_profile(silhouette: np.ndarray | PreparedSilhouette, x: np.ndarray,
                         y: np.ndarray, theta: np.ndarray, projection: GripperProjection,
                         params: MeasureParams | None = None) -> np.ndarray:
    """GRPV of each candidate (Tan eq. 4): (N, 2, n) grasp distances Δr in pixels.

    [:, 0, i] left, [:, 1, i] right grasp point on line i (offset Δw_i across the closing
    direction, ``projection.line_offsets_px()``), NaN where the coarse search meets no object
    pixel (both sides NaN when the left search from its end finds none, as the kernel scores). The
    image position of a grasp point is (x - Δw sin θ + Δr cos θ, y + Δw cos θ + Δr sin θ).
    """
    params = params or MeasureParams()
    prepared = _prepared(silhouette, params)
    xs, ys, ts = check_coordinates(x=x, y=y, theta=theta)
    dw = projection.line_offsets_px()
    r = float(projection.open_width_px)
    out = np.empty((xs.shape[0], 2, dw.shape[0]), dtype=np.float64)
    if xs.shape[0]:
        grpv_kernel(prepared.mask, prepared.blur, xs, ys, ts, dw, r, params.coarse_step(r), out)
    return out
