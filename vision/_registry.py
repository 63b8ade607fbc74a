"""Segmentation backends by name, imported only when chosen (torch, detectron2 stay unloaded
until a learned backend is asked for)."""
from __future__ import annotations

import importlib
import inspect
from typing import Any

from ._base import Segmenter
from ._errors import BackendUnavailable

# name -> (module, class, what to install when its import fails)
BACKENDS: dict[str, tuple[str, str, str]] = {
    "tabletop": ("vision._tabletop", "TabletopSegmenter", "graspline (core install)"),
    "maskrcnn": ("vision._maskrcnn", "MaskRCNNSegmenter",
                 "the `learned` extra: pip install 'graspline[learned]' (torch, torchvision)"),
    "detectron2": ("vision._detectron2", "Detectron2Segmenter",
                   "the `learned` extra and detectron2 built from source (see docs/vision.md)"),
}


def segmenter_class(name: str) -> type[Segmenter]:
    """The Segmenter class registered under ``name``, importing its module now.

    Raises ValueError for an unknown name and BackendUnavailable (an ImportError) naming
    what to install when the backend's libraries are missing.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown segmentation backend {name!r}; choose one of "
                         f"{', '.join(sorted(BACKENDS))}")
    module, cls, install = BACKENDS[name]
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise BackendUnavailable(f"segmentation backend {name!r} cannot be imported ({exc}); "
                                 f"install {install}") from exc
    return getattr(mod, cls)


def make_segmenter(name: str, **options: Any) -> Segmenter:
    """A segmenter chosen by name ("tabletop", "maskrcnn", "detectron2"), built with the
    options of its class; an option the class does not take is a ValueError naming it."""
    cls = segmenter_class(name)
    params = inspect.signature(cls.__init__).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(options) - set(params) - {"self"})
        if unknown:
            allowed = sorted(k for k in params if k != "self")
            raise ValueError(f"segmentation backend {name!r} has no option "
                             f"{', '.join(map(repr, unknown))}; its options: {', '.join(allowed)}")
    return cls(**options)
