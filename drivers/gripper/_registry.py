"""Model name -> driver class, imported on demand (the names the CLI accepts)."""
from __future__ import annotations

import importlib
from typing import Any

from ._base import Gripper

# model -> (module in this package, class name, fixed keyword arguments)
MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "robotiq2f85": ("._robotiq2f", "Robotiq2F", {"model": "robotiq2f85"}),
    "robotiq2f140": ("._robotiq2f", "Robotiq2F", {"model": "robotiq2f140"}),
    "robotiq3f": ("._robotiq3f", "Robotiq3F", {}),
    "barrett": ("._barrett", "BarrettHand", {}),
    "sim": ("._sim", "SimGripper", {}),
}
# the models that speak a serial protocol (each has an emulator): the one list the emulators
# and the CLI offer
SERIAL_MODELS: tuple[str, ...] = tuple(m for m in MODELS if m != "sim")


def gripper_class(model: str) -> tuple[type[Gripper], dict[str, Any]]:
    """The driver class of a model and the fixed options it needs."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    module, name, fixed = MODELS[model]
    try:
        mod = importlib.import_module(module, __package__)
    except ImportError as exc:
        raise ImportError(f"the {model} driver needs the gripper extra: "
                          f"pip install 'graspline[gripper]' ({exc})") from exc
    return getattr(mod, name), dict(fixed)


def open_gripper(model: str, port: str, **options: Any) -> Gripper:
    """Open the gripper of a model on port (options: timeout_s, retries, baudrate, ...)."""
    cls, fixed = gripper_class(model)
    return cls(port, **fixed, **options)
