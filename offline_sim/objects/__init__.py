"""Objects to grasp and scenes to see them in: meshes in metres with mass, convex parts and
resting poses (the built-in procedural set, or scanned meshes split by CoACD); tabletop scenes
of several objects (MJCF in code); and the seeded scenes and exact footprints of the vision
figures. trimesh and coacd are imported only by the functions that use them.
"""
from ._figure_views import FIGURE_VIEWS, figure_scene, scene_footprint
from ._meshes import (BUILTIN_OBJECTS, DEFAULT_DENSITY, Decomposition, GraspObject, builtin_object,
                      decompose, load_object, object_mjcf)
from ._tabletop import (ObjectSpec, TabletopScene, build_tabletop_scene, object_points,
                        random_specs, support_points, ycb_specs)

__all__ = ["BUILTIN_OBJECTS", "DEFAULT_DENSITY", "Decomposition", "FIGURE_VIEWS", "GraspObject",
           "ObjectSpec", "TabletopScene", "build_tabletop_scene", "builtin_object", "decompose",
           "figure_scene", "load_object", "object_mjcf", "object_points", "random_specs",
           "scene_footprint", "support_points", "ycb_specs"]
