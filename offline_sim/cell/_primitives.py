"""Objects of the simulated cell beyond the built-ins: random primitives and YCB masses."""
from __future__ import annotations

import numpy as np

from ..objects import GraspObject
from ..objects._meshes import assemble_object

# Catalogue masses of the YCB objects in ../shared/data/ycb (Calli et al. 2015), kg
YCB_MASS_KG = {"banana": 0.066, "cracker_box": 0.411, "master_chef_can": 0.404,
               "mustard_bottle": 0.603, "power_drill": 0.895}

# kind -> what it stands for; sizes in metres are drawn in random_primitive
PRIMITIVE_KINDS = {
    "box": "a box that fits the jaw",
    "plate": "a flat box lying on the table (10-20 mm tall)",
    "bar": "a long bar (20-30 cm) that tips if held off its middle",
    "cylinder": "an upright can or bottle that fits the jaw",
    "wide_can": "a can wider than the 85 mm stroke",
    "wide_box": "a box wider than the stroke in both directions",
    "heavy_box": "a dense box (2000-4000 kg/m³): tests the grip force",
}


def random_primitive(kind: str, rng: np.random.Generator, density: float) -> GraspObject:
    """A random object of ``kind`` (PRIMITIVE_KINDS), sizes in metres, mass from density."""
    from trimesh.creation import box, cylinder

    u = rng.uniform
    if kind == "box":
        parts = [box((u(0.03, 0.08), u(0.04, 0.12), u(0.04, 0.15)))]
    elif kind == "plate":
        parts = [box((u(0.05, 0.12), u(0.08, 0.18), u(0.01, 0.02)))]
    elif kind == "bar":
        parts = [box((u(0.2, 0.3), u(0.02, 0.035), u(0.02, 0.035)))]
    elif kind == "cylinder":
        parts = [cylinder(radius=u(0.015, 0.04), height=u(0.05, 0.18), sections=24)]
    elif kind == "wide_can":
        parts = [cylinder(radius=u(0.047, 0.06), height=u(0.08, 0.15), sections=32)]
    elif kind == "wide_box":
        parts = [box((u(0.095, 0.14), u(0.095, 0.14), u(0.05, 0.12)))]
    elif kind == "heavy_box":
        density = u(2000.0, 4000.0)
        parts = [box((u(0.04, 0.07), u(0.04, 0.08), u(0.05, 0.1)))]
    else:
        raise ValueError(f"primitive kind must be one of {', '.join(PRIMITIVE_KINDS)}, got {kind!r}")
    return assemble_object(kind, parts, density, None, n_poses=6)
