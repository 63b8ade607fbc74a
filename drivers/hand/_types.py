"""Data types of the hand interface: the status of a hand with joints (SI units)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HandStatus:
    """One status read of a multi-finger hand.

    joint_names : (J,) the hand's joints, in the order of the arrays; joint_positions : (J,)
    radians (hinges) or metres (slides); joint_efforts : (J,) the actuator effort on each joint,
    N·m or N (0 for a joint no actuator drives); finger_names : (F,) the fingers (or links
    that count as fingers); finger_contact : (F,) bool, the finger touches something other
    than the hand itself; object_detected : the hand holds something (its fingers stopped on
    an object, by the device's own judgement); moving : a motion is in progress;
    fault_code : 0 when healthy, else the device's fault number with fault_message.
    """

    joint_names: tuple[str, ...]
    joint_positions: np.ndarray
    joint_efforts: np.ndarray
    finger_names: tuple[str, ...]
    finger_contact: np.ndarray
    object_detected: bool
    moving: bool = False
    fault_code: int = 0
    fault_message: str = ""

    @property
    def faulted(self) -> bool:
        """True when the device reports a fault that stops it."""
        return self.fault_code != 0

    @property
    def n_contacts(self) -> int:
        """How many fingers touch something."""
        return int(np.count_nonzero(self.finger_contact))
