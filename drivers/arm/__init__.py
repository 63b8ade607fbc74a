"""Robot arms: the ArmController interface the picking loop moves the TCP through.

A real arm (a robot controller behind its own protocol) and the simulated cell's arm stand
behind the same interface. Poses are T_base_tcp, 4 x 4, metres, in the robot base frame.
"""
from ._base import ArmController, ArmError, check_tcp_pose
from ._types import MoveResult, MoveStatus

__all__ = ["ArmController", "ArmError", "MoveResult", "MoveStatus", "check_tcp_pose"]
