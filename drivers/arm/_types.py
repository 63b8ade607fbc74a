"""The result of an arm motion."""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class MoveStatus(str, enum.Enum):
    """How an arm motion ended."""

    REACHED = "reached"   # the TCP is at the goal
    FAILED = "failed"     # refused or stopped short (unreachable, protective stop on contact)
    FAULTED = "faulted"   # the arm reports a fault and needs attention before the next motion


@dataclass(frozen=True)
class MoveResult:
    """The end of one arm motion: status, the TCP pose where it stopped (base frame), why."""

    status: MoveStatus
    T_base_tcp: np.ndarray          # (4, 4) metres
    duration_s: float
    message: str = ""

    @property
    def reached(self) -> bool:
        """True when the TCP is at the goal."""
        return self.status is MoveStatus.REACHED
