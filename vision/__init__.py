"""Vision: RGB-D frames -> object masks -> silhouettes in the gripper's projection plane,
and which grasp-database object a mask is, in what pose (``recognise``).

Segmentation backends are chosen by name (``make_segmenter``): "tabletop" (depth only, the
default), "maskrcnn" (torchvision, weights from a file) and "detectron2". The learned ones are
imported on first use: ``import vision`` does not load torch.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._base import Segmenter
from ._errors import BackendUnavailable, VisionError, WeightsError, WeightsNotFound
from ._figures import MIN_VISIBLE_PX, FrameFigures, evaluate_frame, mask_iou
from ._recognition import (SYMMETRY_STEP_DEG, ModelLibrary, ObjectModel, Recognition,
                           models_from_database, prepare_models, recognise, register_points)
from ._jit import jit_kernels
from ._registry import BACKENDS, make_segmenter, segmenter_class
from ._silhouette import (ProjectedObject, axial_pieces, edge_holes, neighbours, silhouette,
                          touching)
from ._tabletop import TabletopSegmenter, fit_support_plane
from ._types import ObjectMask, Silhouette, SupportPlane
from ._width import WIDTH_UNCERTAINTY_PX, SeenWidth, seen_width

# Learned backends resolve on first access (PEP 562), so naming them imports torch then.
_LAZY = {"MaskRCNNSegmenter": "maskrcnn", "Detectron2Segmenter": "detectron2"}
# Functions of a learned backend, resolved the same way (a missing library is BackendUnavailable):
# name -> backend whose module holds it.
_LAZY_FUNCTIONS = {"build_maskrcnn": "maskrcnn"}

__all__ = [
    "BACKENDS",
    "BackendUnavailable",
    "Detectron2Segmenter",
    "FrameFigures",
    "MIN_VISIBLE_PX",
    "MaskRCNNSegmenter",
    "ModelLibrary",
    "ObjectMask",
    "ObjectModel",
    "ProjectedObject",
    "Recognition",
    "Segmenter",
    "Silhouette",
    "SYMMETRY_STEP_DEG",
    "SeenWidth",
    "SupportPlane",
    "TabletopSegmenter",
    "VisionError",
    "WIDTH_UNCERTAINTY_PX",
    "WeightsError",
    "WeightsNotFound",
    "axial_pieces",
    "build_maskrcnn",
    "edge_holes",
    "evaluate_frame",
    "fit_support_plane",
    "jit_kernels",
    "make_segmenter",
    "mask_iou",
    "models_from_database",
    "neighbours",
    "prepare_models",
    "recognise",
    "register_points",
    "seen_width",
    "segmenter_class",
    "silhouette",
    "touching",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return segmenter_class(_LAZY[name])
    if name in _LAZY_FUNCTIONS:
        module = segmenter_class(_LAZY_FUNCTIONS[name]).__module__
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_FUNCTIONS))
