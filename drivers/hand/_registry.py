"""Model name -> hand driver class, imported on demand (the names a cell file accepts).

No hardware hand driver exists yet: the registry is where a real one (an Allegro or LEAP hand
over its own bus) is added, as the grippers' are, without the loop changing. The simulated
cell's hand (offline_sim.cell.SimHand) is built by the cell, not opened by name here.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._base import Hand

# model -> (module in this package, class name, fixed keyword arguments)
MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {}


def hand_class(model: str) -> tuple[type[Hand], dict[str, Any]]:
    """The driver class of a hand model and the fixed options it needs."""
    if model not in MODELS:
        known = ", ".join(MODELS) or "none yet (only the simulated cell's hand exists)"
        raise ValueError(f"hand model must be one of: {known}; got {model!r}")
    module, name, fixed = MODELS[model]
    try:
        mod = importlib.import_module(module, __package__)
    except ImportError as exc:
        raise ImportError(f"the {model} hand driver cannot be loaded: {exc}") from exc
    return getattr(mod, name), dict(fixed)


def open_hand(model: str, port: str, **options: Any) -> Hand:
    """Open the hand of a model on port (options go to its driver)."""
    cls, fixed = hand_class(model)
    return cls(port, **fixed, **options)
