"""Offline simulation: MuJoCo worlds, hands and objects (step 4 grows the grasp simulation).

mujoco and trimesh are imported only inside the functions that use them.
"""
from ._graspdb_writer import GraspDatabaseWriter, GraspRecord
from ._tabletop import ObjectSpec, TabletopScene, build_tabletop_scene, random_specs, ycb_specs
from ._wrench import contact_wrenches, ferrari_canny

__all__ = ["GraspDatabaseWriter", "GraspRecord", "ObjectSpec", "TabletopScene", "build_tabletop_scene", "contact_wrenches",
           "ferrari_canny", "random_specs", "ycb_specs"]
