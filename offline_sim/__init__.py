"""Offline simulation: MuJoCo worlds, hands and objects (step 4 grows the grasp simulation).

mujoco and trimesh are imported only inside the functions that use them.
"""
from ._tabletop import ObjectSpec, TabletopScene, build_tabletop_scene, random_specs, ycb_specs

__all__ = ["ObjectSpec", "TabletopScene", "build_tabletop_scene", "random_specs", "ycb_specs"]
