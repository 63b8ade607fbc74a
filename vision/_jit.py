"""The Numba kernels of vision, listed (as scoring.jit_kernels lists scoring's): the njit
functions its segmentation and silhouette code calls from Python; the helpers they call
(_triangle, _segment and the inline ones) are compiled into them."""
from __future__ import annotations

from numba.core.registry import CPUDispatcher

from . import _kernels

_ENTRY_KERNELS = ("height_classes", "depth_cuts", "component_stats", "plane_inlier_counts",
                  "plane_moments", "reassign_cuts", "claim_holes", "rasterise_surface",
                  "plane_grid", "extent_above", "fill_from_neighbours",
                  "splat_depth", "fill_depth_holes", "grid_window")


def jit_kernels() -> dict[str, CPUDispatcher]:
    """Vision's njit kernels that Python calls, by qualified name
    ("vision._kernels.height_classes")."""
    return {f"{_kernels.__name__}.{name}": getattr(_kernels, name) for name in _ENTRY_KERNELS}
