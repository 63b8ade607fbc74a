"""Argument checkers whose messages name the argument and the offending value.

check_positive, check_rotation and check_pose are shared by every package (scoring is the
lowest one), so that a bad number, basis or pose reads the same wherever it is caught.
"""
from __future__ import annotations

import math

import numpy as np

ROTATION_TOL = 1e-6  # max |RᵀR - I| of an accepted rotation: float64 products stay far below it


def check_positive(value: object, name: str, where: str | None = None, *,
                   allow_zero: bool = False, allow_inf: bool = False) -> float:
    """Return value as a float, checking it is a finite real number > 0 (>= 0 with allow_zero;
    +inf also passes with allow_inf, for limits where inf means "none").

    The message names the argument (prefixed "where: " when given) and the value.
    """
    prefix = f"{where}: " if where else ""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{prefix}{name} must be a number, got {value!r}")
    infinite_ok = allow_inf and value == math.inf
    if (not math.isfinite(value) and not infinite_ok) or value < 0 or (value == 0 and not allow_zero):
        kind = "a number" if allow_inf else "finite"
        raise ValueError(f"{prefix}{name} must be {kind} and {'>= 0' if allow_zero else '> 0'}, "
                         f"got {value!r}")
    return float(value)


def _rotation_error(R: np.ndarray) -> float:
    """max |RᵀR - I| of a (3, 3) array, inf when its determinant is negative (a reflection)."""
    if np.linalg.det(R) < 0:
        return math.inf
    return float(np.abs(R.T @ R - np.eye(3)).max())


def check_rotation(R: object, name: str) -> np.ndarray:
    """Return R as a float64 (3, 3) rotation, checking it is an orthonormal basis with det +1."""
    a = np.asarray(R, dtype=np.float64)
    if a.shape != (3, 3) or not np.isfinite(a).all() or _rotation_error(a) > ROTATION_TOL:
        raise ValueError(f"{name} must be a (3, 3) rotation matrix (orthonormal, det +1), got "
                         f"{a.tolist()}")
    return a


def check_pose(T: object, name: str, *, tol: float = ROTATION_TOL) -> np.ndarray:
    """Return T as a float64 (4, 4) rigid transform T_a_b, checking finiteness, the rotation
    (orthonormal to ``tol`` in max |RᵀR - I|, det +1) and the last row (0 0 0 1, to ``tol``).

    The message names T and says which of these failed, with the offending value. Pass a
    larger ``tol`` for matrices that went through text with few decimals (the endpoint's).
    """
    a = np.asarray(T, dtype=np.float64)
    if a.shape != (4, 4) or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a finite 4 x 4 array, got shape {a.shape}")
    R = a[:3, :3]
    if np.abs(a[3] - (0, 0, 0, 1)).max() > tol:
        got = "last row " + " ".join(f"{v:g}" for v in a[3])
    elif np.linalg.det(R) < 0:
        got = f"a reflection (determinant {np.linalg.det(R):.3g})"
    elif (err := float(np.abs(R.T @ R - np.eye(3)).max())) > tol:
        got = f"rotation error {err:.2e} (max |R^T R - I|, tolerance {tol:g})"
    else:
        return a
    raise ValueError(f"{name} must be a rigid transform (orthonormal rotation, det +1, last row "
                     f"0 0 0 1), got {got}")


def check_silhouette(silhouette: object, name: str = "silhouette") -> np.ndarray:
    """Return a C-contiguous uint8 (H, W) copy-or-view of a bool/uint8 silhouette (non-zero = object)."""
    if not isinstance(silhouette, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(silhouette).__name__}")
    if silhouette.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {silhouette.shape}")
    if silhouette.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {silhouette.shape}")
    if silhouette.dtype == np.bool_:
        return np.ascontiguousarray(silhouette.view(np.uint8))
    if silhouette.dtype != np.uint8:
        raise ValueError(f"{name} must have dtype bool or uint8, got {silhouette.dtype}")
    return np.ascontiguousarray(silhouette)


def check_coordinates(**arrays: object) -> tuple[np.ndarray, ...]:
    """Return the named 1-D float64 arrays, checking they are finite and of equal length."""
    out = []
    length_of = None
    for name, value in arrays.items():
        try:
            a = np.ascontiguousarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of numbers, got {value!r:.60}") from exc
        if a.ndim == 0:
            a = a.reshape(1)
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise ValueError(f"{name}[{bad[0]}] must be finite, got {a[bad[0]]}")
        if length_of is not None and a.shape[0] != length_of[1]:
            raise ValueError(
                f"{name} and {length_of[0]} must have the same length, got "
                f"{a.shape[0]} and {length_of[1]}")
        length_of = length_of or (name, a.shape[0])
        out.append(a)
    return tuple(out)
