"""Device emulators speaking the grippers' real protocols on pseudo-terminals.

Robotiq models are a pymodbus RTU server holding the register map; the Barrett hand speaks its
supervisory ASCII with echo and prompt. Each has finger physics (constant speed, stop on an
object of configurable width) and fault injection. pymodbus is imported only when a Robotiq
emulator starts.
"""
from ._faults import FaultPlan
from ._process import MODELS, EmulatorProcess, serve

__all__ = ["MODELS", "EmulatorProcess", "FaultPlan", "serve"]
