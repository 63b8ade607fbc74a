"""The physical side of graspline's score: what the silhouette alone does not say.

Tan et al.'s measure judges a grasp from the silhouette: where the pads meet its outline
and at what angles. An independent physics check found it fooled by flat objects (the pads
meet a few millimetres of edge), by objects wider than the stroke, by heavy or long objects
held off their centre of mass, and (in our simulated cell) by the fingers' bodies behind the
pads landing on a neighbour. These terms read the depth seen along the approach and the jaw's
limits in SI units; each is a factor in [0, 1] on Tan's score (``measure="graspline"``):

- body : 0 when the finger bodies behind the pads (their thickness along the closing
  direction, beyond the open fingers) would land on anything above the fingertips, or when
  anything under the palm stands higher above the fingertips than the fingers are long (the
  palm would land on it: an upright bottle's cap above a grasp on its shoulder, a lying mug's
  body beside a grasp on its handle). The palm's footprint is the band between the open
  fingers, as wide as the fingers; with ``JawLimits.palm_width_m`` (and ``palm_length_m``) it
  is the palm's own rectangle (default length: the open fingers with their bodies). A wide
  palm whose side lies within the outline's bias of a neighbour's seen outline, over it or
  beside it (a graze), may land or not: its factor ``score_palm`` is 0.5 there (1 clear, 0
  landing).
- contact : the height of the object's side that the pads meet (how far the pad overlaps
  it), ramping from 0 at ``min_contact_m`` to 1 at ``contact_full_m``: ``full_contact_m``
  for pads of friction ``contact_friction_ref`` (taped, μ 0.5), the ramp's span scaled by
  ``contact_friction_ref`` / μ for others (rubber pads, μ 1.0: full at 7.5 mm), at most the
  pad's length.
- tilt : where the pads meet a side above its widest section (a lying can pinched above its
  axis), the contact normals lean out of the horizontal: the larger of the angle the
  side's heights inwards of the contact give (an arc fitted to them) and the undercut's
  (the footprint running on beyond the contact, read as a circle); none where the heights
  rise as a wall (a step: the footprint below runs on, the side the pads meet does not lean),
  unless the surface running on under the fingertips reaches their plane at the contact:
  then the pad's lower edge presses that surface, and its lean counts (a bottle's shoulder);
  90° where that surface runs on under the finger's whole depth (its thickness and margin)
  staying within 4 mm of the plane (the steps' median): a top the finger's lower end comes
  down on, no side before the pad (a lying can wider than the stroke met on the slant);
  1 while the lean stays 20° inside the friction cone atan(μ), 0 at 5° inside. And 0 where
  the section under such a contact (the whole footprint along a grasp line, on any line
  across the pad's width, running on beyond both contacts) is wider than the stroke: the
  pads can never reach around it, so
  the grasp is a wedge pinch on its top (a pad straddling a lying can's end included).
- torque : 1 - τ_g / τ_max, with τ_g = M g d the gravity torque about the grasp axis (d the
  lever of the mass centre, in the image plane) and τ_max = μ F (r̄_l + r̄_r) the torsional
  friction of two pads pressing with F uniformly over the patch each meets: the overlap of
  the pad and the side, contact height x the part of the pad's width that meets the side
  (its lines touching within DepthParams.band_tol_px of the first contact), whose mean
  distance from its centre is r̄.
- swing : 1 - d / ``swing_lever_m`` (0.15 m), d the same lever: the pads touch a rounded
  side at a few points, which resist little torque about the grasp axis, so an object held
  off its mass centre turns as it is lifted and its mass centre swings down by up to d,
  whatever its weight (a lying banana seen 6 cm off it rose 32 mm of a 95 mm lift, still in
  the pads). The torque term, read from the pads' whole overlap and a guessed mass, marks
  it gently: on eight jaws' validate passes the graded grasps held less often the further
  off the mass centre at nearly the same scores.

Object-level limits decide "no grasp" rather than a low score: a target whose narrowest
width exceeds the stroke, or whose weight exceeds the pads' friction 2 μ F.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from . import _depth_kernel as DK
from ._checks import check_coordinates, check_positive, check_silhouette
from ._depth_kernel import BODY_STEP_PX
from ._kernel import chunk_count
from ._types import GripperProjection

G = 9.81  # m/s²
# the depth silhouette's outline runs up to two camera pixels (about 2.5 mm at 0.7 m) wide of
# an object, at its depth, where the segmenter claims the lost pixels beside it, and as far
# narrow where the readings lose its edge (vision/_width.py): a palm of its own size lands on
# a neighbour where it overlaps that outline by more than this, and may land where its side
# lies within this of the outline either way (a graze): then its factor is
# PALM_GRAZE_FACTOR, the odds the true edge lies outside the palm. Measured on the rubber and
# taped short-pad and Franka hands' runs (seeds 10-60, graded draws and best passes): of 31
# grasps scored 0.5 or more whose palm overlapped an outline by less than this 16 held (52 %,
# against 96 % of those clear of any outline), 20 of all 50 such were protective stops
# (docs/scoring.md, "Finger bodies"); just beside the palm 13 of 16 held, and seed 100's
# Franka hand landed its palm on a box whose outline lay 2.2 mm beyond the palm's side: the
# same odds taken there, as a stop is what a graze risks (docs/scoring.md, "The graze
# either way")
PALM_OUTLINE_BIAS_M = 0.0025
PALM_GRAZE_FACTOR = 0.5
# the tilt term's height profile: read this far in from each contact (averaged across the
# finger), and a profile further than TILT_FIT_TOL_M (RMS) from a circular arc is not a
# rounded side (the simulated D400's depth at 0.7 m comes in steps of about 4-5 mm with
# noise; the finger's average is within about 1 mm)
TILT_PROFILE_M = 0.015
TILT_FIT_TOL_M = 0.002
# the surface under the fingertips' plane beyond a contact (where the footprint runs on):
# read this far out, it meets the pad's lower edge when a line through it reaches within
# BELOW_REACH_M of the plane at the contact (the D400's depth steps and the outline's bias
# are each about that size), and a lean of more than LEDGE_LEAN_RAD is a ledge the pad
# passes over, not a side it presses (docs/scoring.md, "The upright mustard bottle")
BELOW_SPAN_M = 0.005
BELOW_REACH_M = 0.004
LEDGE_LEAN_RAD = math.radians(60.0)


@dataclass(frozen=True)
class JawLimits:
    """A parallel jaw's physical limits, SI units.

    stroke_m : the largest opening between the pads. finger_thickness_m : pad face to the
    finger's back along the closing direction (the body that must land on free space).
    pad_length_m : the pad's extent along the approach. pad_width_m : the pad's extent across
    the closing direction (the finger width). force_n : squeezing force per pad.
    friction : pad-object friction coefficient μ. finger_length_m : the fingers' free length
    from the fingertips to the palm along the approach (inf: no palm check).
    palm_width_m : the hand's width across the closing direction where the fingers meet it
    (NaN: as wide as the fingers); a palm wider than the fingers lands on things beside them.
    palm_length_m : its length along the closing direction (NaN: the open fingers with their
    bodies); used with palm_width_m only.
    """

    stroke_m: float = 0.085
    finger_thickness_m: float = 0.014
    pad_length_m: float = 0.035
    force_n: float = 40.0
    friction: float = 1.0
    finger_length_m: float = 0.06
    pad_width_m: float = 0.022
    palm_width_m: float = math.nan
    palm_length_m: float = math.nan

    def __post_init__(self) -> None:
        for name in ("stroke_m", "pad_length_m", "force_n", "friction", "pad_width_m"):
            check_positive(getattr(self, name), name, "JawLimits")
        for name in ("palm_width_m", "palm_length_m"):
            if not math.isnan(getattr(self, name)):
                check_positive(getattr(self, name), name, "JawLimits")
        check_positive(self.finger_length_m, "finger_length_m", "JawLimits", allow_inf=True)
        check_positive(self.finger_thickness_m, "finger_thickness_m", "JawLimits", allow_zero=True)


@dataclass(frozen=True)
class DepthParams:
    """Thresholds of the depth terms, SI units (chosen on the simulated cell: docs/figures.md)."""

    min_contact_m: float = 0.003      # pad overlap scoring 0
    full_contact_m: float = 0.012     # pad overlap scoring 1 at contact_friction_ref
    # the pads' friction full_contact_m holds for; the ramp's span scales by this / μ: a
    # shallow contact holds as often as a deep one on rubber pads, less often on taped ones
    # (docs/scoring.md, "Contact height")
    contact_friction_ref: float = 0.5
    contact_probe_m: float = 0.004    # the side's height is read this far in from the contact
    body_margin_m: float = 0.002      # free space wanted beyond the finger's back
    tilt_margin_full_rad: float = math.radians(20.0)  # lean this far inside atan(μ) scores 1
    tilt_margin_zero_rad: float = math.radians(5.0)   # ... this far inside scores 0
    # a contact with more footprint than this beyond it (each side) sits above its section's
    # widest point; below it, depth noise on a vertical wall
    above_widest_m: float = 0.002
    density_kg_m3: float = 500.0      # mass of an unknown object: its seen volume times this,
    # at most this: household objects' mass levels off with their size (YCB's cracker box,
    # 2 litres, weighs 0.41 kg; its master chef can, 1.1 litres, 0.40 kg), and the seen volume
    # of a big box at the density above would mark down grasps that hold it
    # (docs/scoring.md, the torque term; docs/figures.md, "The mass guess capped at 0.6 kg")
    max_guessed_mass_kg: float = 0.6
    # a pad's line meeting the object this close (px) inwards of the primary contact touches
    # (Tan et al.'s secondary contacts, MeasureParams.secondary_tol_px): the torque term's
    # patch is the pad's overlap with the side across these lines, not the whole pad
    band_tol_px: float = 2.0
    # the swing term: a grasp this far off the object's seen mass centre (its distance from
    # the grasp axis) scores 0, one on it 1, linearly between. The pads touch a rounded side
    # at a few points, which resist little torque about the grasp axis, so held off its mass
    # centre the object turns as it is lifted, its mass centre swinging down by up to the
    # lever, whatever it weighs (docs/scoring.md, "The swing about the grasp axis"; chosen
    # on seed 100's validate passes of eight jaws, held out on seed 110's)
    swing_lever_m: float = 0.15

    def __post_init__(self) -> None:
        for name in ("min_contact_m", "full_contact_m", "contact_probe_m", "density_kg_m3",
                     "max_guessed_mass_kg", "contact_friction_ref", "swing_lever_m"):
            check_positive(getattr(self, name), name, "DepthParams")
        check_positive(self.body_margin_m, "body_margin_m", "DepthParams", allow_zero=True)
        check_positive(self.band_tol_px, "band_tol_px", "DepthParams", allow_zero=True)
        check_positive(self.above_widest_m, "above_widest_m", "DepthParams", allow_zero=True)
        check_positive(self.tilt_margin_zero_rad, "tilt_margin_zero_rad", "DepthParams",
                       allow_zero=True)
        if not self.tilt_margin_zero_rad < self.tilt_margin_full_rad:
            raise ValueError(f"DepthParams: tilt_margin_zero_rad must be < tilt_margin_full_rad, "
                             f"got {self.tilt_margin_zero_rad!r} and {self.tilt_margin_full_rad!r}")
        if not self.min_contact_m < self.full_contact_m:
            raise ValueError(f"DepthParams: min_contact_m must be < full_contact_m, got "
                             f"{self.min_contact_m!r} and {self.full_contact_m!r}")


@dataclass(frozen=True)
class DepthView:
    """What the depth image says of one target, in its silhouette's pixels.

    height_m : (H, W) float, height of the first surface in each pixel above the fingertip
        plane, metres (NaN where unseen). metres_per_px : the silhouette's pixel size.
    centre_of_mass_px : (column, row) of the target's mass centre, or None if unknown.
    mass_kg : the target's mass (known, or volume x density), NaN if unknown.
    footprint : (H, W) bool, the whole target seen along the approach (below the fingertips
        too), or None; gives the undercut under a contact, hence its tilt.
    width_m, width_uncertainty_m : the target's narrowest width as the camera measured it and
        the bound of that measurement's error, metres (vision.seen_width); NaN: the width is
        the target mask's (narrowest_width_m), taken as exact.
    footprint_height_m : (H, W) float, the height of the whole target's seen surface above
        the fingertip plane, metres, negative under it (NaN off the footprint), or None; says
        whether the side running on under a contact meets the pad's lower edge, and its lean.
    """

    height_m: np.ndarray
    metres_per_px: float
    centre_of_mass_px: tuple[float, float] | None = None
    mass_kg: float = math.nan
    footprint: np.ndarray | None = None
    width_m: float = math.nan
    width_uncertainty_m: float = math.nan
    footprint_height_m: np.ndarray | None = None

    def __post_init__(self) -> None:
        h = np.asarray(self.height_m)
        if h.ndim != 2:
            raise ValueError(f"DepthView: height_m must be a 2-D array, got shape {h.shape}")
        check_positive(self.metres_per_px, "metres_per_px", "DepthView")
        if self.footprint is not None and np.shape(self.footprint) != h.shape:
            raise ValueError(f"DepthView: footprint must have height_m's shape {h.shape}, got "
                             f"{np.shape(self.footprint)}")
        if self.footprint_height_m is not None and np.shape(self.footprint_height_m) != h.shape:
            raise ValueError(f"DepthView: footprint_height_m must have height_m's shape "
                             f"{h.shape}, got {np.shape(self.footprint_height_m)}")
        if not (math.isnan(self.mass_kg) or self.mass_kg >= 0):
            raise ValueError(f"DepthView: mass_kg must be >= 0 or NaN, got {self.mass_kg!r}")

    # The kernels' forms of the view, made once per view (a search scores its view in many
    # batches; converting them per batch was a pass over the image each time).
    @cached_property
    def height32(self) -> np.ndarray:
        """height_m as a contiguous float32 array (the kernels' input)."""
        return np.ascontiguousarray(self.height_m, np.float32)

    @cached_property
    def footprint8(self) -> np.ndarray:
        """footprint as a contiguous uint8 array; a 1 x 1 zero without a footprint."""
        return np.zeros((1, 1), np.uint8) if self.footprint is None \
            else np.ascontiguousarray(self.footprint, np.uint8)

    @cached_property
    def below32(self) -> np.ndarray:
        """footprint_height_m as a contiguous float32 array; a 1 x 1 NaN without one."""
        return np.full((1, 1), np.nan, np.float32) if self.footprint_height_m is None \
            else np.ascontiguousarray(self.footprint_height_m, np.float32)

    @cached_property
    def _outlines(self) -> dict[float, tuple[np.ndarray, np.ndarray]]:
        """tall_outline's answers by threshold, filled as asked."""
        return {}

    def tall_outline(self, palm_m: float) -> tuple[np.ndarray, np.ndarray]:
        """(columns, rows) of the outline of whatever stands more than palm_m (metres) above
        the fingertips (``tall_outline``), made once per view and threshold."""
        if palm_m not in self._outlines:
            self._outlines[palm_m] = tall_outline(self.height32, palm_m)
        return self._outlines[palm_m]

    @cached_property
    def max_height_m(self) -> float:
        """The highest surface seen (metres above the fingertips); -inf where none is."""
        h = self.height32[np.isfinite(self.height32)]
        return float(h.max()) if h.size else -math.inf


@dataclass
class PhysicalTerms:
    """The depth terms of a batch of candidates, one entry per candidate.

    body_collision : bool, a finger body lands on something. contact_height_m : the lower of
    the two sides' heights that the pads meet, metres. contact_tilt_rad : how far the
    contact normals lean out of the horizontal (the larger of the undercut's lean, acos(c /
    (c + u)) with c half the width and u the undercut, and the lean of an arc fitted to the
    side's heights, _depth_kernel._side_lean; 0 where the heights are a wall's; the lean
    of the surface under the pad's lower edge where it meets the plane there; π/2 where a
    top level with the plane runs on under the whole finger, _depth_kernel._level_beyond).
    section_m : the target's whole extent along the closing line through the contacts
    (their distance plus the footprint beyond each), metres; where a wider section under
    the pad's other lines makes the grasp a wedge pinch, that section. lever_m : the mass centre's distance
    from the grasp axis, metres. torque_ratio : τ_g / τ_max. score_contact, score_torque,
    score_tilt, score_palm, score_swing : the factors in [0, 1] (score_palm:
    PALM_GRAZE_FACTOR where a wide palm grazes a seen outline, else 1: one that lands is a
    body collision; score_swing: 1 - lever_m / DepthParams.swing_lever_m, 1 where the mass
    centre is unknown); factor : their product, 0 on a body collision.
    """

    body_collision: np.ndarray
    contact_height_m: np.ndarray
    contact_tilt_rad: np.ndarray
    section_m: np.ndarray
    lever_m: np.ndarray
    torque_ratio: np.ndarray
    score_contact: np.ndarray
    score_torque: np.ndarray
    score_tilt: np.ndarray
    score_palm: np.ndarray
    score_swing: np.ndarray
    factor: np.ndarray


def physical_terms(image: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                   contact_left: np.ndarray, contact_right: np.ndarray, width_px: np.ndarray,
                   open_width_px: float, line_offsets_px: np.ndarray, jaw: JawLimits,
                   view: DepthView, params: DepthParams) -> PhysicalTerms:
    """The depth terms of candidates (x, y, θ) whose primary contacts ((N, 2) column, row)
    and width (the opening at which both pads touch, pixels) are known (NaN else). Bad
    arguments are refused by name (the kernel reads every array at each candidate's index)."""
    image = check_silhouette(image, "image")
    x, y, theta = check_coordinates(x=x, y=y, theta=theta)
    n = x.shape[0]
    left, right = (_checked_rows(a, name, n, 2) for a, name in
                   ((contact_left, "contact_left"), (contact_right, "contact_right")))
    width_px = _checked_rows(width_px, "width_px", n)
    offsets = _checked_rows(line_offsets_px, "line_offsets_px", None)
    if offsets.size == 0 or not np.isfinite(offsets).all():
        raise ValueError(f"line_offsets_px must be finite and not empty, got {offsets.tolist()}")
    check_positive(open_width_px, "open_width_px", "physical_terms")
    nan = lambda: np.full(n, np.nan, np.float32)  # noqa: E731
    out = PhysicalTerms(np.zeros(n, np.bool_), nan(), nan(), nan(), nan(), nan(), nan(), nan(),
                        nan(), nan(), nan(), nan())
    write_physical_terms(out, np.arange(n), np.ones(n, np.float32), image, x, y, theta,
                         (left[:, 0], left[:, 1]), (right[:, 0], right[:, 1]), width_px,
                         open_width_px, offsets, jaw, view, params)
    return out


def _checked_rows(value: object, name: str, n: int | None, columns: int | None = None) -> np.ndarray:
    """value as a float64 array of n rows (any number for None), 1-D or with that many
    columns; NaN allowed (unknown). The message names the argument and its shape."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"physical_terms: {name} must be an array of numbers, "
                         f"got {value!r:.60}") from exc
    rows_ok = a.ndim >= 1 and (n is None or a.shape[0] == n)
    cols_ok = a.ndim == 1 if columns is None else (a.ndim == 2 and a.shape[1] == columns)
    if not (rows_ok and cols_ok):
        want = "(N,)" if columns is None else f"(N, {columns})"
        count = "" if n is None else f" with N = {n}, the candidates' count"
        raise ValueError(f"physical_terms: {name} must have shape {want}{count}, "
                         f"got shape {a.shape}")
    return a


def write_physical_terms(out: PhysicalTerms, idx: np.ndarray, tan_score: np.ndarray,
                         image: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                         contact_left: tuple[np.ndarray, np.ndarray],
                         contact_right: tuple[np.ndarray, np.ndarray], width_px: np.ndarray,
                         open_width_px: float, line_offsets_px: np.ndarray, jaw: JawLimits,
                         view: DepthView, params: DepthParams) -> None:
    """The depth terms of candidates idx (indices into every per-candidate array: x, y, θ,
    the contacts' (columns, rows), width_px, tan_score and out's fields), written into out
    at those indices; out.factor receives tan_score x the factor (the score with the depth
    terms: pass ones for the factor itself). One pass of the kernel per candidate
    (_depth_kernel.depth_terms_kernel)."""
    m = view.metres_per_px
    palm_m = jaw.finger_length_m - params.body_margin_m
    if not view.max_height_m > palm_m:
        palm_m = math.inf  # nothing that tall in view: no candidate's palm can land
    body_px = (jaw.finger_thickness_m + params.body_margin_m) / m
    half_r = 0.5 * float(open_width_px)
    offsets = np.asarray(line_offsets_px, np.float64)
    x, y, theta = (np.ascontiguousarray(a, np.float64) for a in (x, y, theta))
    idx = np.ascontiguousarray(idx, np.int64)
    # a palm wider than the fingers: its own footprint, checked before the kernel's bodies
    wide_palm = math.isfinite(jaw.palm_width_m) and math.isfinite(palm_m)
    palm = _wide_palm_factor(jaw, view, x[idx], y[idx], theta[idx], half_r, body_px, offsets,
                             palm_m) if wide_palm else np.zeros(0, np.float64)
    across, along, lines = _sample_lines(tuple(offsets), body_px)
    prm = _kernel_params(jaw, view, params, half_r, body_px, math.inf if wide_palm else palm_m)
    scratch = np.empty((chunk_count(idx.size), 2, int(prm[DK.Q_PROFILE_PX]) + 1))
    f32 = lambda a: np.ascontiguousarray(a, np.float32)  # noqa: E731
    DK.depth_terms_kernel(np.ascontiguousarray(image, np.uint8), view.height32, view.footprint8,
                          view.below32, idx, x, y, theta, f32(contact_left[0]),
                          f32(contact_left[1]), f32(contact_right[0]), f32(contact_right[1]),
                          f32(width_px), offsets,
                          across, along, lines, prm, palm, scratch,
                          f32(tan_score), out.body_collision, out.contact_height_m,
                          out.contact_tilt_rad, out.section_m, out.lever_m, out.torque_ratio,
                          out.score_contact, out.score_torque, out.score_tilt, out.score_palm,
                          out.score_swing, out.factor)


def _wide_palm_factor(jaw: JawLimits, view: DepthView, x: np.ndarray, y: np.ndarray,
                      theta: np.ndarray, half_r: float, body_px: float, offsets: np.ndarray,
                      palm_m: float) -> np.ndarray:
    """(N,) float64, the palm factor of candidates (x, y, θ), pixels and radians, for a jaw
    with palm_width_m (and palm_length_m, default the open fingers with their bodies): 0
    where the palm, its sides less the outline's bias (PALM_OUTLINE_BIAS_M), lands on
    anything higher than palm_m above the fingertips; PALM_GRAZE_FACTOR where only the palm
    with its sides out by that bias does (a graze: the outline errs either way); 1 else.
    Never narrower than the fingers' band."""
    m = view.metres_per_px
    band = float(np.max(np.abs(offsets)))
    halves = []
    for bias_m in (-PALM_OUTLINE_BIAS_M, PALM_OUTLINE_BIAS_M):  # the graze's, the landing's
        half_len = half_r + body_px if math.isnan(jaw.palm_length_m) else \
            max((0.5 * jaw.palm_length_m - bias_m) / m, half_r)
        halves += [half_len, max((0.5 * jaw.palm_width_m - bias_m) / m, band)]
    return palm_factor(view.height32, x, y, theta, *halves, palm_m,
                       outline=view.tall_outline(palm_m))


def palm_reach_m(jaw: JawLimits) -> float:
    """How far from a grasp's centre the wide palm's check reads (metres): the half-diagonal
    of the palm with its sides out by PALM_OUTLINE_BIAS_M, the graze's; 0 for a jaw without
    palm_width_m or palm_length_m (its palm lies within the open fingers' reach). An image
    that ends nearer than this leaves a neighbour under the palm's ends unseen."""
    if not (math.isfinite(jaw.palm_width_m) and math.isfinite(jaw.palm_length_m)):
        return 0.0
    return math.hypot(0.5 * jaw.palm_length_m + PALM_OUTLINE_BIAS_M,
                      0.5 * jaw.palm_width_m + PALM_OUTLINE_BIAS_M)


@functools.lru_cache(maxsize=64)
def _sample_lines(offsets: tuple[float, ...], body_px: float) -> tuple[np.ndarray, ...]:
    """The depth kernel's samples for grasp lines at offsets (px) and finger bodies body_px
    deep: the lines (int64 indices) and the distances beyond the open finger (px) the bodies
    are read at, and the line offsets the tilt profile averages. Made once per gripper (a
    search calls the kernel for every batch)."""
    n_lines = len(offsets)
    across = np.unique(np.append(np.arange(0, n_lines, BODY_STEP_PX), n_lines - 1))
    along = np.append(np.arange(1.0, body_px, BODY_STEP_PX), body_px)
    # the tilt profile averages every other grasp line and the outer ones: as good an
    # average across the finger as all of them, half the reads
    lines = np.unique(np.append(np.asarray(offsets[::BODY_STEP_PX]), offsets[-1:]))
    return across.astype(np.int64), along, lines  # shared by every call: never written


def swing_score(lever_m: float, params: DepthParams = DepthParams()) -> float:
    """The swing term of a grasp lever_m metres off the mass centre: 1 - lever_m /
    swing_lever_m in [0, 1], 1 where the lever is unknown (NaN), as the depth kernel scores
    it (for re-scoring logged levers)."""
    if not math.isfinite(lever_m):
        return 1.0
    return min(max(1.0 - lever_m / params.swing_lever_m, 0.0), 1.0)


def contact_full_m(jaw: JawLimits, params: DepthParams = DepthParams()) -> float:
    """The pad overlap (metres) at which the contact term reaches 1 for this jaw: the ramp
    from min_contact_m spans (full_contact_m - min_contact_m) x contact_friction_ref / μ,
    ending at the pad's length at most (a longer ramp could never be full)."""
    span = params.full_contact_m - params.min_contact_m
    full = params.min_contact_m + span * params.contact_friction_ref / jaw.friction
    return max(min(full, jaw.pad_length_m), params.min_contact_m + 1e-4)


def _kernel_params(jaw: JawLimits, view: DepthView, params: DepthParams, half_r: float,
                   body_px: float, palm_m: float) -> np.ndarray:
    """(N_PARAMS,) float64: the depth kernel's parameter vector, each at its Q_* index
    (pixels, metres, radians, newtons as the index names)."""
    m = view.metres_per_px
    cone = math.atan(jaw.friction)
    tilt_lo = cone - params.tilt_margin_full_rad
    tilt_hi = cone - params.tilt_margin_zero_rad
    prm = np.empty(DK.N_PARAMS, np.float64)
    prm[DK.Q_HALF_R] = half_r
    prm[DK.Q_BODY_PX] = body_px
    prm[DK.Q_PROBE_PX] = params.contact_probe_m / m
    prm[DK.Q_PALM_M] = palm_m
    prm[DK.Q_M_PER_PX] = m
    prm[DK.Q_PAD_LENGTH_M] = jaw.pad_length_m
    prm[DK.Q_MIN_CONTACT_M] = params.min_contact_m
    prm[DK.Q_CONTACT_SPAN_M] = contact_full_m(jaw, params) - params.min_contact_m
    prm[DK.Q_ABOVE_WIDEST_M] = params.above_widest_m
    prm[DK.Q_STROKE_M] = jaw.stroke_m
    prm[DK.Q_TILT_HI_RAD] = tilt_hi
    prm[DK.Q_TILT_SPAN_RAD] = max(tilt_hi - tilt_lo, 1e-9)
    # the torque ratio M g d / (2 μ F r̄), in the order the terms were first written
    prm[DK.Q_WEIGHT_N] = view.mass_kg * G if math.isfinite(view.mass_kg) else math.nan
    prm[DK.Q_TAU_PER_M_NM] = 2.0 * jaw.friction * jaw.force_n
    prm[DK.Q_PAD_WIDTH_PX] = float(jaw.pad_width_m) / m
    prm[DK.Q_PROFILE_PX] = TILT_PROFILE_M / m
    prm[DK.Q_FIT_TOL_PX] = TILT_FIT_TOL_M / m
    centre = (math.nan, math.nan) if view.centre_of_mass_px is None else view.centre_of_mass_px
    prm[DK.Q_CENTRE_COL], prm[DK.Q_CENTRE_ROW] = centre
    prm[DK.Q_BELOW_PX] = BELOW_SPAN_M / m
    prm[DK.Q_BELOW_REACH_M] = BELOW_REACH_M
    prm[DK.Q_LEDGE_RAD] = LEDGE_LEAN_RAD
    prm[DK.Q_BAND_TOL_PX] = params.band_tol_px
    prm[DK.Q_SWING_LEVER_M] = params.swing_lever_m
    return prm


@dataclass(frozen=True)
class SideArc:
    """The circular arc the tilt term fits to a side's seen heights inwards of a contact
    (``_depth_kernel._arc_fit``), metres: its centre inward_m inwards of the contact and
    centre_above_m above the fingertips' plane (negative under it: the pads' lower edges
    above the widest section). Both NaN where the heights are no arc (too few seen, or
    further than TILT_FIT_TOL_M from one). A wall's heights fit an arc as short as the
    camera's blur of its edge: its centre sits high over the plane for its inward_m."""

    inward_m: float
    centre_above_m: float


def contact_arcs(view: DepthView, projection: GripperProjection, contact_left: np.ndarray,
                 contact_right: np.ndarray, theta_rad: float,
                 width_px: float) -> tuple[SideArc, SideArc]:
    """The arcs fitted to the heights inwards of one grasp's left and right contacts
    ((column, row) pixels of view, the closing direction at theta_rad, width_px between
    the contacts), read as the tilt term reads them: TILT_PROFILE_M deep at most, never past
    the grasp's middle, averaged across the finger (projection: the GripperProjection the
    grasp was scored with)."""
    m = view.metres_per_px
    _, _, lines = _sample_lines(tuple(projection.line_offsets_px()), 1.0)
    n = min(TILT_PROFILE_M / m, 0.5 * float(width_px))
    buf = np.empty((2, int(TILT_PROFILE_M / m) + 2), np.float64)
    c, s = math.cos(theta_rad), math.sin(theta_rad)
    arcs = []
    for (col, row), (ux, uy) in ((contact_left, (c, s)), (contact_right, (-c, -s))):
        a = t = math.nan
        if math.isfinite(col) and math.isfinite(row) and n >= 1:
            a, t = DK._arc_fit(view.height32, float(col), float(row), ux, uy, lines, n,
                               TILT_FIT_TOL_M / m, m, buf[0], buf[1])
        arcs.append(SideArc(a * m, -t * m))
    return arcs[0], arcs[1]


def mean_patch_radius_m(height_m: np.ndarray, width_m: float) -> np.ndarray:
    """(N,) metres: the mean distance from its centre of a height_m x width_m rectangle (the
    pad/side overlap), the lever arm of its torsional friction under uniform pressure; NaN
    where the height is not positive or unknown.

    Over the quarter [0, p] x [0, q] (half sides), ∫∫ r = (2 p q d + p³ ln((q + d) / p)
    + q³ ln((p + d) / q)) / 6 with d = √(p² + q²); divided by its area p q.
    """
    p = 0.5 * np.asarray(height_m, np.float64)
    q = 0.5 * float(width_m)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.hypot(p, q)
        r = (2.0 * p * q * d + p ** 3 * np.log((q + d) / p) + q ** 3 * np.log((p + d) / q)) \
            / (6.0 * p * q)
    return np.where(p > 0, r, np.nan)


def tall_outline(height: np.ndarray, palm_m: float) -> tuple[np.ndarray, np.ndarray]:
    """(columns, rows), float64: the pixels standing more than palm_m (metres) above the
    fingertips with a 4-neighbour that does not (or on the image's border): the outline of
    whatever a palm could land on."""
    tall = (np.nan_to_num(height, nan=-np.inf) > palm_m).astype(np.uint8)
    inner = cv2.erode(tall, np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8),
                      borderType=cv2.BORDER_CONSTANT, borderValue=0)
    rows, cols = np.nonzero(tall & (1 - inner))
    return cols.astype(np.float64), rows.astype(np.float64)


def palm_factor(height: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                half_length_px: float, half_width_px: float, inner_length_px: float,
                inner_width_px: float, palm_m: float,
                outline: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """(N,) float64: the palm factor of candidates (x, y, θ) whose palm is a rectangle
    half_length_px along the closing direction and half_width_px across it each way from
    the centre: 0 where anything more than palm_m (metres) above the fingertips (heights in
    metres, NaN unseen) lies inside the inner rectangle (inner_length_px x inner_width_px),
    PALM_GRAZE_FACTOR where it lies inside the palm only, 1 else; every pixel read. outline:
    tall_outline(height, palm_m) when the caller holds it already."""
    h = np.ascontiguousarray(height, np.float32)
    cols, rows = tall_outline(h, palm_m) if outline is None else outline
    out = np.ones(len(x))
    DK.palm_factor_kernel(h, cols, rows, np.asarray(x, np.float64), np.asarray(y, np.float64),
                          np.asarray(theta, np.float64), float(half_length_px),
                          float(half_width_px), float(inner_length_px), float(inner_width_px),
                          float(palm_m), PALM_GRAZE_FACTOR, out)
    return out


def narrowest_width_m(target: np.ndarray, metres_per_px: float, n_angles: int = 90) -> float:
    """The target's smallest width over n_angles directions (its minimum Feret diameter),
    metres, pixel centres plus one pixel; inf for an empty target."""
    rows, cols = np.nonzero(target)
    if rows.size == 0:
        return math.inf
    if rows.size > 8:
        # the extents over any direction are those of the pixels' convex hull (integer
        # points: OpenCV's hull is exact); a few dozen vertices instead of every pixel
        hull = cv2.convexHull(np.stack([cols, rows], axis=1).astype(np.int32)).reshape(-1, 2)
        cols, rows = hull[:, 0], hull[:, 1]

    def widths(a: np.ndarray) -> np.ndarray:
        proj = np.outer(np.cos(a), cols) + np.outer(np.sin(a), rows)
        return proj.max(axis=1) - proj.min(axis=1)

    step = math.pi / n_angles
    coarse = np.arange(n_angles) * step
    best = coarse[int(np.argmin(widths(coarse)))]
    fine = best + np.linspace(-step, step, 41)  # the minimum to a twentieth of a step
    return float(widths(fine).min() + 1.0) * metres_per_px


def why_not_holdable(target: np.ndarray, jaw: JawLimits, view: DepthView) -> str:
    """Why the jaw cannot hold this target at all ("" if it may): wider than the stroke
    every way as seen (view.width_m, with view.width_uncertainty_m in the reason; else the
    target mask's width, taken as exact), or heavier than the pads' friction can lift."""
    if math.isfinite(view.width_m):
        width = view.width_m
        unc = view.width_uncertainty_m if math.isfinite(view.width_uncertainty_m) else 0.0
        # The estimate itself against the stroke, not its lower bound: an object seen wider
        # than the fully open jaw leaves the fingers no room to pass it even where it is
        # really a little narrower (on the simulated cell nothing seen over 83.3 mm was held
        # by an 85 mm stroke, while a plate 85.9 mm across, read 86.0-88.9, was tried within
        # the uncertainty and never lifted: docs/scoring.md, "No grasp at all")
        if width > jaw.stroke_m:
            within = " (the stroke lies within that uncertainty)" if width - unc <= jaw.stroke_m \
                else ""
            return (f"the object is {width * 1e3:.0f} ± {unc * 1e3:.0f} mm across at its "
                    f"narrowest as seen, wider than the jaw's {jaw.stroke_m * 1e3:.0f} mm "
                    f"stroke{within}")
    else:
        width = narrowest_width_m(target, view.metres_per_px)
        if width > jaw.stroke_m:
            return (f"the object is {width * 1e3:.0f} mm across at its narrowest, wider than "
                    f"the jaw's {jaw.stroke_m * 1e3:.0f} mm stroke")
    load = 2.0 * jaw.friction * jaw.force_n
    if math.isfinite(view.mass_kg) and view.mass_kg * G > load:
        return (f"the object weighs about {view.mass_kg:.2f} kg ({view.mass_kg * G:.0f} N), more "
                f"than the pads' friction holds (2 x {jaw.friction:g} x {jaw.force_n:g} N = "
                f"{load:.0f} N)")
    return ""
