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
  is the palm's own rectangle (default length: the open fingers with their bodies).
- contact : the height of the object's side that the pads meet (how far the pad overlaps
  it), ramping from 0 at ``min_contact_m`` to 1 at ``full_contact_m``.
- tilt : where the pads meet a side above its widest section (a lying can pinched above its
  axis), the contact normals lean out of the horizontal: the larger of the angle the
  side's heights inwards of the contact give (an arc fitted to them) and the undercut's
  (the footprint running on beyond the contact, read as a circle); none where the heights
  rise as a wall (a step: the footprint below runs on, the side the pads meet does not lean);
  1 while the lean stays 20° inside the friction cone atan(μ), 0 at 5° inside. And 0 where
  the section under such a contact (the whole footprint along the closing line) is wider than
  the stroke: the pads can never reach around it, so the grasp is a wedge pinch on its top.
- torque : 1 - τ_g / τ_max, with τ_g = M g d the gravity torque about the grasp axis (d the
  lever of the mass centre, in the image plane) and τ_max = 2 μ F r̄ the torsional friction
  of two pads pressing with F uniformly over the patch each meets: the overlap of the pad
  and the side, contact height x pad width, whose mean distance from its centre is r̄.

Object-level limits decide "no grasp" rather than a low score: a target whose narrowest
width exceeds the stroke, or whose weight exceeds the pads' friction 2 μ F.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numba as nb
import numpy as np

from ._checks import check_positive

G = 9.81  # m/s²
BODY_STEP_PX = 2  # sampling of the finger bodies' band, pixels
# the depth silhouette's outline runs up to two camera pixels (about 2.5 mm at 0.7 m) wide of
# an object, at its depth (vision/_width.py): a palm of its own size is taken to land on a
# neighbour only where it overlaps it by more than that (a palm grazing the outline of a
# lying mug's body held in the simulated cell; one 6 mm over it was stopped)
PALM_OUTLINE_BIAS_M = 0.0025
# the tilt term's height profile: read this far in from each contact (averaged across the
# finger), and a profile further than TILT_FIT_TOL_M (RMS) from a circular arc is not a
# rounded side (the simulated D400's depth at 0.7 m comes in steps of about 4-5 mm with
# noise; the finger's average is within about 1 mm)
TILT_PROFILE_M = 0.015
TILT_FIT_TOL_M = 0.002


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
    full_contact_m: float = 0.012     # pad overlap scoring 1
    contact_probe_m: float = 0.004    # the side's height is read this far in from the contact
    body_margin_m: float = 0.002      # free space wanted beyond the finger's back
    tilt_margin_full_rad: float = math.radians(20.0)  # lean this far inside atan(μ) scores 1
    tilt_margin_zero_rad: float = math.radians(5.0)   # ... this far inside scores 0
    # a contact with more footprint than this beyond it (each side) sits above its section's
    # widest point; below it, depth noise on a vertical wall
    above_widest_m: float = 0.002
    density_kg_m3: float = 500.0      # mass of an unknown object: its seen volume times this

    def __post_init__(self) -> None:
        for name in ("min_contact_m", "full_contact_m", "contact_probe_m", "density_kg_m3"):
            check_positive(getattr(self, name), name, "DepthParams")
        check_positive(self.body_margin_m, "body_margin_m", "DepthParams", allow_zero=True)
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
    """

    height_m: np.ndarray
    metres_per_px: float
    centre_of_mass_px: tuple[float, float] | None = None
    mass_kg: float = math.nan
    footprint: np.ndarray | None = None
    width_m: float = math.nan
    width_uncertainty_m: float = math.nan

    def __post_init__(self) -> None:
        h = np.asarray(self.height_m)
        if h.ndim != 2:
            raise ValueError(f"DepthView: height_m must be a 2-D array, got shape {h.shape}")
        check_positive(self.metres_per_px, "metres_per_px", "DepthView")
        if self.footprint is not None and np.shape(self.footprint) != h.shape:
            raise ValueError(f"DepthView: footprint must have height_m's shape {h.shape}, got "
                             f"{np.shape(self.footprint)}")
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
    def max_height_m(self) -> float:
        """The highest surface seen (metres above the fingertips); -inf where none is."""
        h = self.height32[np.isfinite(self.height32)]
        return float(h.max()) if h.size else -math.inf


@dataclass
class PhysicalTerms:
    """The depth terms of a batch of candidates, one entry per candidate.

    body_collision : bool, a finger body lands on something. contact_height_m : the lower of
    the two sides' heights that the pads meet, metres. contact_tilt_rad : how far the
    contact normals lean out of the horizontal (the larger of _contact_tilt, from the
    undercut, and _profile_tilt, from the side's heights; 0 where the heights are a wall's).
    section_m : the target's whole extent along the closing line through the contacts
    (their distance plus the footprint beyond each), metres. lever_m : the mass centre's distance
    from the grasp axis, metres. torque_ratio : τ_g / τ_max. score_contact, score_torque,
    score_tilt : the factors in [0, 1]; factor : their product, 0 on a body collision.
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
    factor: np.ndarray


def physical_terms(image: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                   contact_left: np.ndarray, contact_right: np.ndarray, width_px: np.ndarray,
                   open_width_px: float, line_offsets_px: np.ndarray, jaw: JawLimits,
                   view: DepthView, params: DepthParams) -> PhysicalTerms:
    """The depth terms of candidates (x, y, θ) whose primary contacts and width (the opening
    at which both pads touch, pixels) are known (NaN else)."""
    m = view.metres_per_px
    n = len(x)
    body = np.zeros(n, np.bool_)
    h = np.full(n, np.nan)
    undercut_px = np.full((n, 2), np.nan)  # beyond the left and the right contact
    lever_px = np.full(n, np.nan)
    centre = np.full(2, np.nan) if view.centre_of_mass_px is None \
        else np.asarray(view.centre_of_mass_px, np.float64)
    footprint = view.footprint8
    palm_m = jaw.finger_length_m - params.body_margin_m
    if not view.max_height_m > palm_m:
        palm_m = math.inf  # nothing that tall in view: no candidate's palm can land
    body_px = (jaw.finger_thickness_m + params.body_margin_m) / m
    # a palm wider than the fingers: its own footprint, checked after the kernel's bodies
    wide_palm = math.isfinite(jaw.palm_width_m) and math.isfinite(palm_m)
    depth_kernel(np.ascontiguousarray(image, np.uint8), view.height32, footprint,
                 np.asarray(x, np.float64), np.asarray(y, np.float64),
                 np.asarray(theta, np.float64), np.asarray(contact_left, np.float64),
                 np.asarray(contact_right, np.float64), 0.5 * float(open_width_px),
                 np.asarray(line_offsets_px, np.float64),
                 body_px, params.contact_probe_m / m,
                 math.inf if wide_palm else palm_m, centre, body, h, undercut_px, lever_px)
    if wide_palm:
        half_r = 0.5 * float(open_width_px)
        half_len = half_r + body_px if math.isnan(jaw.palm_length_m) else \
            max((0.5 * jaw.palm_length_m - PALM_OUTLINE_BIAS_M) / m, half_r)
        half_wid = max((0.5 * jaw.palm_width_m - PALM_OUTLINE_BIAS_M) / m,
                       float(np.max(np.abs(line_offsets_px))))
        body |= palm_kernel(view.height32,
                            np.asarray(x, np.float64), np.asarray(y, np.float64),
                            np.asarray(theta, np.float64), half_len, half_wid, palm_m)
    h = np.minimum(h, jaw.pad_length_m)
    s_c = np.clip((h - params.min_contact_m) / (params.full_contact_m - params.min_contact_m), 0, 1)
    width = np.asarray(width_px, np.float64)
    # an undercut within above_widest_m is the footprint's outline noise on a vertical wall
    # (a box's side read 1 px out gave it a 16° lean), not a side running on under the pads
    undercut = undercut_px.max(axis=1)
    undercut = np.where(undercut * m > params.above_widest_m, undercut, 0.0)
    # where the side's heights rise as a wall (a profile lean of 0), the pads meet a vertical
    # side: on a stepped one (a bottle's neck over its body, a bracket's web over its flange,
    # a box on a wider one) the footprint running on below is no lean. Elsewhere the larger
    # of the two: the heights of a rounded side read its lean low on a noisy top (a lying
    # bottle's 25° read 11°), where its undercut reads it whole.
    profile = _profile_tilt(view.height32, x, y, theta, contact_left, contact_right, width,
                            line_offsets_px, m)
    tilt = np.where(profile == 0.0, 0.0, np.fmax(_contact_tilt(width, undercut), profile))
    section = (width + undercut_px.sum(axis=1)) * m
    # a pinch above the widest point of a section wider than the stroke: the jaw cannot reach
    # around it, whatever the friction (lying cans wider than the jaw, pinched on their top)
    wedge = (section > jaw.stroke_m) & (undercut_px.max(axis=1) * m > params.above_widest_m)
    s_tilt = np.where(wedge, 0.0, _tilt_score(tilt, jaw.friction, params))
    lever = lever_px * m
    ratio = _torque_ratio(view.mass_kg, lever, h, jaw)
    s_t = np.clip(1.0 - ratio, 0.0, 1.0)
    s_c = np.where(np.isfinite(s_c), s_c, 0.0)
    s_t = np.where(np.isfinite(s_t), s_t, 1.0)  # no mass centre known: no torque term
    factor = np.where(body, 0.0, s_c * s_t * s_tilt)
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    return PhysicalTerms(body, f32(h), f32(tilt), f32(section), f32(lever), f32(ratio), f32(s_c),
                         f32(s_t), f32(s_tilt), f32(factor))


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


def _torque_ratio(mass_kg: float, lever_m: np.ndarray, height_m: np.ndarray,
                  jaw: JawLimits) -> np.ndarray:
    """(N,) τ_g / τ_max: the gravity torque of the mass about the grasp axis over the two
    pads' torsional friction, each pad pressing with F uniformly over its overlap with the
    side (contact height x pad width); 0 for an unknown mass, NaN without a contact height
    or a lever (the torque term then scores 1)."""
    if not math.isfinite(mass_kg):
        return np.zeros_like(lever_m)
    tau_max = 2.0 * jaw.friction * jaw.force_n * mean_patch_radius_m(height_m, jaw.pad_width_m)
    with np.errstate(invalid="ignore", divide="ignore"):
        return mass_kg * G * lever_m / tau_max


def _contact_tilt(width_px: np.ndarray, undercut_px: np.ndarray) -> np.ndarray:
    """(N,) radians: how far the contact normals lean out of the horizontal, from the undercut.

    A side the pads meet above its widest section (a lying can pinched above its axis) runs
    on under the fingertips by the undercut u; taken as a circular section whose half-chord
    at the contact is c = width/2, its radius is c + u and the normal leans by acos(c / (c + u))
    (0 for a vertical wall: no undercut). NaN without a footprint or contacts.
    """
    c = 0.5 * width_px
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.arccos(np.clip(c / (c + undercut_px), -1.0, 1.0))


def _profile_tilt(height_m: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                  contact_left: np.ndarray, contact_right: np.ndarray, width_px: np.ndarray,
                  line_offsets_px: np.ndarray, metres_per_px: float) -> np.ndarray:
    """(N,) radians: how far the contact normals lean out of the horizontal, from the side's
    height profile inwards of each contact (the larger of the two sides; _side_lean).

    The pads meet a side at the fingertips' plane; where that plane is above the side's
    widest point, the side rises inwards of the contact as an arc whose centre lies under
    the plane, and the arc fitted to the heights seen gives the normal's lean. Unlike the
    undercut (acos(c / (c + u)), u in whole pixels of footprint), the heights show a lean of
    15-20° at any width, where the undercut is under a pixel. 0 where the side rises as a
    wall or the pinch is at or under the widest point; NaN where the profile is unseen or
    not an arc's.
    """
    out = np.full(len(x), np.nan)
    # every other grasp line and the outer ones: as good an average across the finger, half
    # the reads (the profile runs on every evaluated candidate of a search)
    offsets = np.asarray(line_offsets_px, np.float64)
    lines = np.unique(np.append(offsets[::BODY_STEP_PX], offsets[-1:]))
    _tilt_profile_kernel(np.ascontiguousarray(height_m, np.float32), np.asarray(x, np.float64),
                         np.asarray(y, np.float64), np.asarray(theta, np.float64),
                         np.ascontiguousarray(contact_left, np.float64),
                         np.ascontiguousarray(contact_right, np.float64),
                         np.asarray(width_px, np.float64), lines, TILT_PROFILE_M / metres_per_px,
                         TILT_FIT_TOL_M / metres_per_px, float(metres_per_px), out)
    return out


def _tilt_score(tilt: np.ndarray, friction: float, params: DepthParams) -> np.ndarray:
    """(N,) in [0, 1]: 1 while the lean leaves the friction cone (atan μ) a margin of
    tilt_margin_full_rad, falling to 0 at a margin of tilt_margin_zero_rad; 1 where unknown."""
    cone = math.atan(friction)
    lo, hi = cone - params.tilt_margin_full_rad, cone - params.tilt_margin_zero_rad
    s = np.clip((hi - tilt) / max(hi - lo, 1e-9), 0.0, 1.0)
    return np.where(np.isfinite(s), s, 1.0)


@nb.njit(cache=True)
def _hit(image, px, py) -> bool:
    """Whether pixel (px, py) (rounded) is inside image and set."""
    c = int(np.floor(px + 0.5))
    r = int(np.floor(py + 0.5))
    return 0 <= r < image.shape[0] and 0 <= c < image.shape[1] and image[r, c] != 0


@nb.njit(cache=True)
def _side_height(height, cx, cy, ux, uy, probe_px):
    """The highest surface within probe_px inwards of contact (cx, cy) along (ux, uy);
    NaN where unseen."""
    best = -np.inf
    n = max(1, int(probe_px))
    for k in range(n + 1):
        c = int(np.floor(cx + k * ux + 0.5))
        r = int(np.floor(cy + k * uy + 0.5))
        if 0 <= r < height.shape[0] and 0 <= c < height.shape[1]:
            v = height[r, c]
            if v == v:
                best = max(best, v)
    return best if best > -np.inf else np.nan


@nb.njit(cache=True)
def _undercut(footprint, cx, cy, ux, uy, limit_px):
    """How far (pixels) the object's whole footprint runs on outwards from contact (cx, cy)
    along (ux, uy): the part of it under the fingertip plane that the pad cannot reach."""
    for k in range(1, int(limit_px) + 1):
        if not _hit(footprint, cx + k * ux, cy + k * uy):
            return k - 1.0
    return limit_px


@nb.njit(cache=True)
def _side_lean(height, cx, cy, ux, uy, offsets, n_px, tol_px, m):
    """Radians: how far the normal of the side met at contact (cx, cy) leans out of the
    horizontal, from the heights (metres above the fingertips' plane) seen inwards along
    (ux, uy) for up to n_px pixels, each distance's heights averaged over the grasp lines
    (offsets across the finger, pixels; one line's depth is too noisy). A circular arc
    through the contact whose centre lies a inwards and t under the plane rises as
    z(x) = sqrt(t² + 2 a x - x²) - t, so 2 a x - 2 t z = x² + z²: (a, t) is its
    least-squares fit (any radius: a lying can's section or a banana's rounded corner), and
    the normal at the contact leans by atan(t / a). 0 when t <= 0 (a wall: the fit puts the
    centre above the plane; or a pinch at or under the widest point); NaN with fewer than 3
    distances seen, a centre not inwards, or an arc further than tol_px (RMS) from the
    heights: not a rounded side."""
    n = int(n_px)
    sxx = sxz = szz = bx = bz = 0.0
    xs = np.empty(max(n, 0))
    zs = np.empty(max(n, 0))
    k_n = 0
    for k in range(1, n + 1):
        total = 0.0
        seen = 0
        for off in offsets:
            col = int(np.floor(cx + k * ux - off * uy + 0.5))
            row = int(np.floor(cy + k * uy + off * ux + 0.5))
            if 0 <= row < height.shape[0] and 0 <= col < height.shape[1]:
                v = height[row, col]
                if v == v:
                    total += v
                    seen += 1
        if seen == 0:
            continue
        x, z = float(k), total / seen / m
        xs[k_n], zs[k_n] = x, z
        k_n += 1
        sxx += x * x
        sxz += x * z
        szz += z * z
        bx += x * (x * x + z * z)
        bz += z * (x * x + z * z)
    if k_n < 3:
        return np.nan
    # normal equations of [2x, -2z] (a, t) = x² + z²
    det = sxx * szz - sxz * sxz
    if det <= 1e-12:
        return np.nan
    a = (szz * bx - sxz * bz) / (2.0 * det)
    t = (sxz * bx - sxx * bz) / (2.0 * det)
    if not a > 0.0:
        return np.nan
    err = 0.0
    for i in range(k_n):
        q = t * t + 2.0 * a * xs[i] - xs[i] * xs[i]
        d = zs[i] - (np.sqrt(max(q, 0.0)) - t)
        err += d * d
    if np.sqrt(err / k_n) > tol_px:
        return np.nan
    return np.arctan2(t, a) if t > 0.0 else 0.0


@nb.njit(cache=True, parallel=True)
def _tilt_profile_kernel(height, xs, ys, ts, left, right, width, offsets, n_px, tol_px, m, out):
    """Per candidate with both contacts and its width (pixels) known: the larger lean of its
    two sides (radians, _side_lean), read up to n_px pixels in and not past the middle; NaN
    if neither side's profile is a rounded side's."""
    for k in nb.prange(xs.shape[0]):
        if not (left[k, 0] == left[k, 0] and right[k, 0] == right[k, 0]
                and width[k] == width[k] and width[k] > 0):
            continue
        c, s = np.cos(ts[k]), np.sin(ts[k])
        n = min(n_px, 0.5 * width[k])  # not past the grasp's middle
        ll = _side_lean(height, left[k, 0], left[k, 1], c, s, offsets, n, tol_px, m)
        lr = _side_lean(height, right[k, 0], right[k, 1], -c, -s, offsets, n, tol_px, m)
        out[k] = lr if not (ll == ll) or lr > ll else ll


@nb.njit(cache=True)
def _palm_hit(height, x, y, c, s, offsets, across, half_r, palm_m):
    """Whether anything between the open fingers of candidate (x, y, cos θ, sin θ) (the
    band of the grasp lines, sampled every BODY_STEP_PX) stands more than palm_m above the
    fingertips (heights in metres, NaN where nothing is seen)."""
    n = int(half_r)
    for i in across:
        bx = x - offsets[i] * s
        by = y + offsets[i] * c
        for j in range(-n, n + 1, BODY_STEP_PX):
            col = int(np.floor(bx + j * c + 0.5))
            row = int(np.floor(by + j * s + 0.5))
            if 0 <= row < height.shape[0] and 0 <= col < height.shape[1]:
                if height[row, col] > palm_m:  # NaN compares False
                    return True
    return False


def _samples(half: float) -> np.ndarray:
    """Offsets from -half to half every BODY_STEP_PX, both ends included (pixels)."""
    inner = np.arange(-half, half, BODY_STEP_PX)
    return np.append(inner, half)


@nb.njit(cache=True, parallel=True)
def _palm_kernel(height, xs, ys, ts, along, across, palm_m, out):
    """Per candidate: whether anything in the palm's footprint (offsets along the closing
    direction and across it, pixels) stands more than palm_m above the fingertips."""
    for k in nb.prange(xs.shape[0]):
        c, s = np.cos(ts[k]), np.sin(ts[k])
        hit = False
        for a in across:
            bx = xs[k] - a * s
            by = ys[k] + a * c
            for j in along:
                col = int(np.floor(bx + j * c + 0.5))
                row = int(np.floor(by + j * s + 0.5))
                if 0 <= row < height.shape[0] and 0 <= col < height.shape[1]:
                    if height[row, col] > palm_m:  # NaN compares False
                        hit = True
                        break
            if hit:
                break
        out[k] = hit


def palm_kernel(height: np.ndarray, x: np.ndarray, y: np.ndarray, theta: np.ndarray,
                half_length_px: float, half_width_px: float, palm_m: float) -> np.ndarray:
    """(N,) bool: whether the palm of candidate (x, y, θ), a rectangle half_length_px along
    the closing direction and half_width_px across it each way from the centre, would land on
    anything more than palm_m (metres) above the fingertips (heights in metres, NaN unseen);
    sampled every BODY_STEP_PX and at the edges."""
    out = np.zeros(len(x), np.bool_)
    _palm_kernel(height, x, y, theta, _samples(half_length_px), _samples(half_width_px),
                 palm_m, out)
    return out


@nb.njit(cache=True, parallel=True)
def depth_kernel(image, height, footprint, xs, ys, ts, left, right, half_r, offsets, body_px,
                 probe_px, palm_m, centre, out_body, out_h, out_undercut, out_lever):
    """Per candidate: finger bodies over anything in image (the band from each open finger's
    line end outwards by body_px, sampled every BODY_STEP_PX), or the palm over anything
    between the open fingers higher than palm_m (metres) above them; where both contacts are
    known, the lower side height the pads meet and the undercut beyond each side;
    and the mass centre's distance from the grasp axis (pixels)."""
    # the band is sampled every BODY_STEP_PX across and along (and at its edges): a thing
    # thinner than that under a finger is not one the arm would stop on
    n_lines = offsets.shape[0]
    across = np.unique(np.append(np.arange(0, n_lines, BODY_STEP_PX), n_lines - 1))
    along = np.append(np.arange(1.0, body_px, BODY_STEP_PX), body_px)
    for k in nb.prange(xs.shape[0]):
        c, s = np.cos(ts[k]), np.sin(ts[k])
        hit = False
        for i in across:
            bx = xs[k] - offsets[i] * s
            by = ys[k] + offsets[i] * c
            for j in along:
                d = half_r + j
                if _hit(image, bx + d * c, by + d * s) or _hit(image, bx - d * c, by - d * s):
                    hit = True
                    break
            if hit:
                break
        if not hit and palm_m == palm_m and palm_m < np.inf:
            hit = _palm_hit(height, xs[k], ys[k], c, s, offsets, across, half_r, palm_m)
        out_body[k] = hit
        if left[k, 0] == left[k, 0] and right[k, 0] == right[k, 0]:
            hl = _side_height(height, left[k, 0], left[k, 1], c, s, probe_px)
            hr = _side_height(height, right[k, 0], right[k, 1], -c, -s, probe_px)
            out_h[k] = min(hl, hr) if (hl == hl and hr == hr) else np.nan
            out_undercut[k, 0] = _undercut(footprint, left[k, 0], left[k, 1], -c, -s, half_r)
            out_undercut[k, 1] = _undercut(footprint, right[k, 0], right[k, 1], c, s, half_r)
        if centre[0] == centre[0]:
            out_lever[k] = abs(c * (centre[1] - ys[k]) - s * (centre[0] - xs[k]))


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
    every way by more than the width's measurement uncertainty (view.width_m and
    view.width_uncertainty_m where measured; else the target mask's width, taken as exact),
    or heavier than the pads' friction can lift."""
    if math.isfinite(view.width_m):
        width = view.width_m
        unc = view.width_uncertainty_m if math.isfinite(view.width_uncertainty_m) else 0.0
        if width - unc > jaw.stroke_m:
            return (f"the object is {width * 1e3:.0f} ± {unc * 1e3:.0f} mm across at its "
                    f"narrowest as seen, wider than the jaw's {jaw.stroke_m * 1e3:.0f} mm "
                    f"stroke by more than that uncertainty")
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
