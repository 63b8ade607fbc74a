"""Kinematic finger motion for the emulators: constant speed, stop on an object."""
from __future__ import annotations

from dataclasses import dataclass

# Object-detection codes shared by the Robotiq registers (gOBJ, gDTx).
MOVING, CONTACT_OPENING, CONTACT_CLOSING, AT_TARGET = 0, 1, 2, 3


@dataclass
class Axis:
    """One axis in device counts (larger = more closed), moving at speed counts/s.

    ``contact`` is the count at which the axis meets the object while closing (None: the
    axis closes on nothing). ``state`` is one of the codes above.
    """

    position: float = 0.0
    target: float = 0.0
    speed: float = 0.0
    contact: float | None = None
    state: int = AT_TARGET
    limit: float = 255.0

    def command(self, target: float, speed: float) -> None:
        """Start moving to target (counts) at speed (counts/s)."""
        self.target = min(max(target, 0.0), self.limit)
        self.speed = max(speed, 1e-6)
        self.state = MOVING

    def hold(self) -> None:
        """Stop where the axis is."""
        if self.state == MOVING:
            self.state = AT_TARGET
            self.target = self.position

    def step(self, dt: float) -> None:
        """Advance dt seconds."""
        if self.state != MOVING:
            return
        delta = self.target - self.position
        step = self.speed * dt
        new = self.target if abs(delta) <= step else self.position + step * (1 if delta > 0 else -1)
        if (delta > 0 and self.contact is not None and self.position <= self.contact < self.target
                and new >= self.contact):
            self.position = self.contact
            self.state = CONTACT_CLOSING
            return
        self.position = new
        if new == self.target:
            self.state = AT_TARGET
