"""Fault injection shared by the emulators: what happens to the next replies."""
from __future__ import annotations

import random
from dataclasses import dataclass, fields

KINDS = ("drop_request", "drop_reply", "corrupt", "garbage_only", "garbage")


@dataclass
class FaultPlan:
    """How many of the next matching requests get each fault (-1: every one from now on).

    drop_request: the request is lost before the device (no reply, not executed).
    drop_reply:   the device executes it, the reply is lost.
    corrupt:      the reply arrives with a damaged checksum (Modbus) or damaged text (ASCII).
    garbage_only: random bytes arrive instead of the reply (the request was executed).
    garbage:      random bytes arrive before an intact reply.
    only:         "any", "write" (actions: Modbus register writes, Barrett motions) or "read".
    """

    drop_request: int = 0
    drop_reply: int = 0
    corrupt: int = 0
    garbage_only: int = 0
    garbage: int = 0
    only: str = "any"

    def update(self, **changes: object) -> None:
        """Set the named counters (unknown names raise ValueError)."""
        names = {f.name for f in fields(self)}
        for k, v in changes.items():
            if k not in names:
                raise ValueError(f"unknown fault {k!r}; known: {', '.join(sorted(names))}")
            setattr(self, k, v)

    def take(self, is_write: bool) -> str | None:
        """The fault for the next request of this kind, consuming one count."""
        if self.only == "write" and not is_write or self.only == "read" and is_write:
            return None
        for kind in KINDS:
            n = getattr(self, kind)
            if n:
                if n > 0:
                    setattr(self, kind, n - 1)
                return kind
        return None


def garbage_bytes(rng: random.Random, n: int = 7) -> bytes:
    """Random bytes that are not a prompt or a frame start we would accept by luck."""
    return bytes(rng.choice(b"\x00\x55\xaa\xfe\x7f\x13\x42\x99") for _ in range(n))
