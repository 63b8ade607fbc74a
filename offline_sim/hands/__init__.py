"""Hand models for the grasp simulation: the built-in parallel jaw, three-finger hand (BH8-like,
spread joint, breakaway distal joints) and underactuated tendon hand, built as MJCF in code, or
a user's MJCF hand with a description of its closing drives. Plain data: importing this loads
no simulator.
"""
from ._hands import (BUILTIN_HANDS, Drive, HandModel, builtin_hand, load_mjcf_hand, parallel_jaw,
                     three_finger, underactuated)
from ._volume import open_hand_volume

__all__ = ["BUILTIN_HANDS", "Drive", "HandModel", "builtin_hand", "load_mjcf_hand",
           "open_hand_volume", "parallel_jaw", "three_finger", "underactuated"]
