"""The simulated picking cell: a MuJoCo table with objects, a camera above it, and an arm with a
parallel jaw or a multi-finger hand that grasps physically, behind the same interfaces as
hardware (Camera, Gripper or Hand, ArmController). The onboard loop loads it by name from the cell file; mujoco is imported only
when a cell is built.
"""
from ._arm import SimArm
from ._camera import SimCellCamera
from ._cell import SimCell, SimCellSettings
from ._gripper import SimJawGripper, jaw_spec
from ._hand import SimHand
from ._hand_grasp import HandGraspOutcome, HandGraspSettings, execute_hand_grasp, pregrasp_pose
from ._primitives import PRIMITIVE_KINDS, YCB_MASS_KG, random_primitive
from ._scene import CellWorld, build_cell_world

__all__ = ["CellWorld", "HandGraspOutcome", "HandGraspSettings", "PRIMITIVE_KINDS", "SimArm",
           "SimCell", "SimCellCamera", "SimCellSettings", "SimHand", "SimJawGripper",
           "YCB_MASS_KG", "build_cell_world", "execute_hand_grasp", "jaw_spec",
           "pregrasp_pose", "random_primitive"]
