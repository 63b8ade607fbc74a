"""Gripper drivers: one interface in SI units, Robotiq (Modbus RTU) and Barrett (ASCII) devices
on serial ports, and a kinematic simulated gripper.

pyserial and pymodbus are imported only when a serial gripper or an emulator is opened.
``modbus`` is the Modbus RTU framing the Robotiq drivers use (CRC, requests, reply scanning),
public for drivers of other Modbus devices.
"""
from . import modbus
from ._barrett import decode_barrett_error
from ._base import Gripper
from ._errors import (GripperDisconnected, GripperError, GripperFault, GripperProtocolError,
                      GripperTimeout)
from ._registry import MODELS, SERIAL_MODELS, gripper_class, open_gripper
from ._sim import SimGripper
from ._specs import SPECS
from ._types import FingerStatus, GraspResult, GripperSpec, GripperStatus, LinearMap, Range

__all__ = [
    "MODELS",
    "SERIAL_MODELS",
    "FingerStatus",
    "GraspResult",
    "Gripper",
    "GripperDisconnected",
    "GripperError",
    "GripperFault",
    "GripperProtocolError",
    "GripperSpec",
    "GripperStatus",
    "GripperTimeout",
    "LinearMap",
    "Range",
    "SPECS",
    "SimGripper",
    "decode_barrett_error",
    "gripper_class",
    "modbus",
    "open_gripper",
]
