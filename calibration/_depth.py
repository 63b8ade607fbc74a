"""Depth check: a plane fitted to a flat target at several distances; bias and noise per
distance against the D400 noise model the simulated camera uses; an optional scale correction."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from drivers.camera import DepthNoise, RGBDFrame

from ._errors import CalibrationError

MIN_POINTS = 200


@dataclass(frozen=True)
class PlaneFit:
    """A plane n . p + d = 0 in the camera frame (n unit, towards the camera; d > 0 its
    distance from the camera, metres), its depth residuals' RMS (metres) and how many points
    it kept."""

    normal: np.ndarray
    d: float
    rms_m: float
    n_points: int


@dataclass(frozen=True)
class DepthSample:
    """The flat target at one distance: reference and measured depth at the target's centre
    pixel (metres along the optical axis), bias = measured - reference, noise = RMS depth
    residual about the fitted plane, expected_noise_m = the D400 model's figure there."""

    reference_m: float
    measured_m: float
    bias_m: float
    noise_m: float
    expected_noise_m: float
    n_points: int


@dataclass(frozen=True)
class DepthCalibration:
    """The depth check over several distances. scale : multiply depth by it to correct a
    scale error (1.0 when no correction was asked for or needed); rms_bias_m : RMS bias
    before correction, rms_bias_corrected_m : after."""

    samples: tuple[DepthSample, ...]
    scale: float
    rms_bias_m: float
    rms_bias_corrected_m: float
    warnings: tuple[str, ...] = ()
    date: str = ""
    inputs: dict = field(default_factory=dict)

    def correct(self, depth_m: np.ndarray) -> np.ndarray:
        """Depth image (metres, float32) with the scale correction applied; 0 stays 0."""
        return (np.asarray(depth_m, np.float32) * np.float32(self.scale)).astype(np.float32)

    def text(self) -> str:
        """A table for the terminal."""
        lines = [" distance   measured   bias      noise    model noise  points",
                 " m          m          mm        mm       mm"]
        for s in self.samples:
            lines.append(f" {s.reference_m:8.4f}   {s.measured_m:8.4f}  {s.bias_m * 1000:+7.2f}  "
                         f"{s.noise_m * 1000:7.2f}   {s.expected_noise_m * 1000:7.2f}     "
                         f"{s.n_points}")
        lines.append(f" scale correction {self.scale:.5f}: RMS bias {self.rms_bias_m * 1000:.2f} mm"
                     f" -> {self.rms_bias_corrected_m * 1000:.2f} mm")
        lines += [f" warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def fit_plane(points: np.ndarray, *, rounds: int = 3, reject_sigma: float = 3.0) -> PlaneFit:
    """Least-squares plane through (N, 3) camera-frame points (metres), refitted after
    dropping points more than reject_sigma RMS residuals away (holes' edges, flying pixels)."""
    p = np.asarray(points, np.float64).reshape(-1, 3)
    p = p[np.isfinite(p).all(axis=1)]
    keep = np.ones(len(p), bool)
    for _ in range(rounds + 1):
        if keep.sum() < MIN_POINTS:
            raise CalibrationError(f"plane fit: {keep.sum()} points with depth, need "
                                   f"{MIN_POINTS}; is the target in view and within range?")
        q = p[keep]
        c = q.mean(axis=0)
        n = np.linalg.svd(q - c, full_matrices=False)[2][2]
        if n @ c > 0:          # point the normal at the camera (the origin)
            n = -n
        # Residual along the optical axis, comparable with the depth noise model.
        dz = ((p - c) @ n) / abs(n[2])
        rms = float(np.sqrt((dz[keep] ** 2).mean()))
        new = np.abs(dz) <= reject_sigma * max(rms, 1e-9)
        if (new == keep).all():
            break
        keep = new
    return PlaneFit(n, float(-(n @ c)), rms, int(keep.sum()))


def expected_noise_m(z_m: float, fx_px: float, model: DepthNoise = DepthNoise()) -> float:
    """The D400 model's depth noise at z (metres): sigma_z = z^2 sigma_d / (f b), with the
    depth unit's rounding (u / sqrt 12) added in quadrature."""
    sigma = z_m ** 2 * model.subpixel_px / (fx_px * model.baseline_m)
    return math.sqrt(sigma ** 2 + model.depth_unit_m ** 2 / 12.0)


def _plane_depth_at(normal: np.ndarray, d: float, ray: np.ndarray) -> float:
    """Depth (z, metres) where a camera ray (z = 1) meets the plane n . p + d = 0."""
    lam = -d / float(normal @ ray)
    return float(lam * ray[2])


def measure_flat_target(frame: RGBDFrame, *, reference_m: float | None = None,
                        T_camera_target: np.ndarray | None = None, mask: np.ndarray | None = None,
                        model: DepthNoise = DepthNoise()) -> DepthSample:
    """Bias and noise of the depth on a flat target filling ``mask`` (default: the central
    third of the image). The reference is either reference_m, the true depth (metres along
    the optical axis) of the target at the mask's centre pixel, or T_camera_target, the
    target's pose with its plane at z = 0 (e.g. the board's pose from the colour image)."""
    if (reference_m is None) == (T_camera_target is None):
        raise CalibrationError("depth check: give either reference_m or T_camera_target")
    intr = frame.intrinsics
    h, w = intr.height, intr.width
    if mask is None:
        mask = np.zeros((h, w), bool)
        mask[h // 3:2 * h // 3, w // 3:2 * w // 3] = True
    mask = np.asarray(mask, bool)
    if mask.shape != (h, w) or not mask.any():
        raise CalibrationError(f"depth check: mask must be a non-empty ({h}, {w}) array, got "
                               f"{mask.shape}")
    pts = intr.deproject(frame.depth_m)[mask]
    plane = fit_plane(pts)
    vs, us = np.nonzero(mask)
    u0, v0 = us.mean(), vs.mean()
    ray = intr.deproject_pixels(u0, v0, 1.0)
    measured = _plane_depth_at(plane.normal, plane.d, ray)
    if T_camera_target is not None:
        T = np.asarray(T_camera_target, np.float64)
        n_ref = T[:3, 2]
        reference = float((n_ref @ T[:3, 3]) / (n_ref @ ray) * ray[2])
    else:
        reference = float(reference_m)
        if not math.isfinite(reference) or reference <= 0:
            raise CalibrationError(f"depth check: reference_m must be > 0 metres, got "
                                   f"{reference_m!r}")
    return DepthSample(reference, measured, measured - reference, plane.rms_m,
                       expected_noise_m(reference, intr.fx, model), plane.n_points)


def mean_depth_sample(samples: Sequence[DepthSample]) -> DepthSample:
    """One sample from several of the same target position (e.g. one per frame): the means of
    reference_m, measured_m and bias_m (metres), noise_m the RMS of the noises (metres),
    expected_noise_m the first sample's, n_points the mean rounded down."""
    n = len(samples)
    if n == 0:
        raise CalibrationError("depth check: no samples to average")
    return DepthSample(sum(s.reference_m for s in samples) / n,
                       sum(s.measured_m for s in samples) / n,
                       sum(s.bias_m for s in samples) / n,
                       math.sqrt(sum(s.noise_m ** 2 for s in samples) / n),
                       samples[0].expected_noise_m, sum(s.n_points for s in samples) // n)


def depth_check(samples: list[DepthSample], *, correct_scale: bool = True,
                noise_factor: float = 2.0, date: str = "",
                inputs: dict | None = None) -> DepthCalibration:
    """Summarise samples at several distances; fit a scale (reference = scale x measured, least
    squares) when correct_scale. Warns where the noise exceeds noise_factor x the model's."""
    samples = sorted(samples, key=lambda s: s.reference_m)
    if len(samples) < 1:
        raise CalibrationError("depth check: no samples")
    if correct_scale and len(samples) < 2:
        raise CalibrationError("depth check: a scale correction needs the target at two or "
                               "more distances")
    ref = np.array([s.reference_m for s in samples])
    meas = np.array([s.measured_m for s in samples])
    scale = float((meas @ ref) / (meas @ meas)) if correct_scale else 1.0
    notes = [f"noise {s.noise_m * 1000:.2f} mm at {s.reference_m:.3f} m is more than "
             f"{noise_factor:g} x the D400 model's {s.expected_noise_m * 1000:.2f} mm "
             f"(dirty window, too little texture for the projector, or a bent target)"
             for s in samples if s.noise_m > noise_factor * s.expected_noise_m]
    return DepthCalibration(tuple(samples), scale, float(np.sqrt(((meas - ref) ** 2).mean())),
                            float(np.sqrt(((scale * meas - ref) ** 2).mean())), tuple(notes),
                            date, dict(inputs or {}))
