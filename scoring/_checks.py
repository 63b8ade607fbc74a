"""Argument checkers whose messages name the argument and the offending value."""
from __future__ import annotations

import numpy as np


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
