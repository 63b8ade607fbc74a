"""Hand drivers: one interface for a multi-finger hand with joints (preshape, torque-limited
closing, opening, status with joint positions, efforts and finger contacts), its exception
tree, and a registry of drivers by model name. No hardware hand driver exists yet; the
simulated cell's hand (offline_sim.cell.SimHand) implements the interface.
"""
from ._base import Hand
from ._errors import HandDisconnected, HandError, HandFault, HandTimeout
from ._registry import MODELS, hand_class, open_hand
from ._types import HandStatus

__all__ = ["MODELS", "Hand", "HandDisconnected", "HandError", "HandFault", "HandStatus",
           "HandTimeout", "hand_class", "open_hand"]
