"""The Numba kernels of scoring, listed: the njit functions its Python code calls, for a
warm-up that compiles or loads every one before a control loop's first frame, and for its
tests. The other njit functions (inline or not) are compiled into these and never called
from Python, so numba gives them no signature of their own when it loads its cache."""
from __future__ import annotations

from numba.core.registry import CPUDispatcher

from . import _antipodal, _depth_kernel, _kernel, _normals, _search

_ENTRY_KERNELS = ((_kernel, ("score_kernel", "grpv_kernel")),
                  (_depth_kernel, ("depth_terms_kernel", "_arc_fit")),
                  (_normals, ("_normal_field_kernel",)),
                  (_search, ("_nms",)), (_antipodal, ("_pair_kernel",)))


def jit_kernels() -> dict[str, CPUDispatcher]:
    """Scoring's njit kernels that Python calls, by qualified name
    ("scoring._kernel.score_kernel"). A dispatcher's ``signatures`` lists what it has
    compiled or loaded from numba's cache so far; its ``stats`` counts cache hits and misses."""
    return {f"{mod.__name__}.{name}": getattr(mod, name)
            for mod, names in _ENTRY_KERNELS for name in names}
