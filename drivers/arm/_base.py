"""ArmController: move the TCP to a base-frame pose along an approach, lift, retreat."""
from __future__ import annotations

import abc
import math

import numpy as np

from scoring import check_pose, check_positive

from ._types import MoveResult, MoveStatus


class ArmError(RuntimeError):
    """The arm cannot take commands (faulted, disconnected); the message names the arm."""


def check_tcp_pose(T: object, name: str) -> np.ndarray:
    """``T`` as a float64 4 x 4 rigid transform (metres), or ValueError naming ``name``."""
    return check_pose(T, name)


class ArmController(abc.ABC):
    """A robot arm that moves its TCP in the base frame; a context manager.

    Every motion returns a MoveResult (reached / failed / faulted) rather than raising for a
    motion that could not finish: a picking loop decides what to do next. Invalid arguments
    raise ValueError; an arm that cannot take commands at all raises ArmError.
    """

    #: name of the implementation, for status lines and logs
    name: str = ""

    @property
    @abc.abstractmethod
    def T_base_tcp(self) -> np.ndarray:
        """The TCP's current pose, 4 x 4, metres."""

    @abc.abstractmethod
    def _move_linear(self, T_goal: np.ndarray, speed_mps: float) -> MoveResult:
        """Device hook: straight-line TCP motion to T_goal at speed_mps."""

    @abc.abstractmethod
    def _move_free(self, T_goal: np.ndarray, speed_mps: float) -> MoveResult:
        """Device hook: any collision-free path to T_goal (joint-space on a real arm)."""

    def state(self) -> str:
        """A short state text for status lines ("ready", "faulted: ...")."""
        return "ready"

    def move(self, T_base_tcp: np.ndarray, speed_mps: float = 0.25) -> MoveResult:
        """Move the TCP to T_base_tcp (free path) at up to speed_mps (m/s)."""
        return self._move_free(check_tcp_pose(T_base_tcp, "T_base_tcp"), _speed(speed_mps))

    def approach(self, T_base_tcp: np.ndarray, distance_m: float, *, speed_mps: float = 0.25,
                 approach_speed_mps: float = 0.05) -> MoveResult:
        """Go to distance_m back along the TCP's z axis from T_base_tcp, then straight in."""
        T = check_tcp_pose(T_base_tcp, "T_base_tcp")
        if not (math.isfinite(distance_m) and distance_m >= 0):
            raise ValueError(f"distance_m must be finite and >= 0, got {distance_m!r}")
        pre = T.copy()
        pre[:3, 3] -= distance_m * T[:3, 2]
        first = self._move_free(pre, _speed(speed_mps))
        if not first.reached:
            return first
        second = self._move_linear(T, _speed(approach_speed_mps))
        return MoveResult(second.status, second.T_base_tcp,
                          first.duration_s + second.duration_s, second.message)

    def lift(self, height_m: float, speed_mps: float = 0.1) -> MoveResult:
        """Straight up (base +z) by height_m metres."""
        if not (math.isfinite(height_m) and height_m >= 0):
            raise ValueError(f"height_m must be finite and >= 0, got {height_m!r}")
        T = self.T_base_tcp.copy()
        T[2, 3] += height_m
        return self._move_linear(T, _speed(speed_mps))

    def retreat(self, distance_m: float, speed_mps: float = 0.1) -> MoveResult:
        """Straight back along the TCP's -z axis by distance_m metres."""
        if not (math.isfinite(distance_m) and distance_m >= 0):
            raise ValueError(f"distance_m must be finite and >= 0, got {distance_m!r}")
        T = self.T_base_tcp.copy()
        T[:3, 3] -= distance_m * T[:3, 2]
        return self._move_linear(T, _speed(speed_mps))

    def close(self) -> None:
        """Release the arm's connection; safe to call twice."""

    def __enter__(self) -> "ArmController":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _speed(v: float) -> float:
    """v if it is a usable speed (m/s), else ValueError."""
    return check_positive(v, "speed_mps")


__all__ = ["ArmController", "ArmError", "MoveResult", "MoveStatus", "check_tcp_pose"]
