"""The hand exception tree: each error names the hand and keeps the built-in meaning."""
from __future__ import annotations


class HandError(Exception):
    """Base of every hand driver error; ``hand`` names the device (its port, or ``"sim"``)."""

    def __init__(self, message: str, *, hand: str) -> None:
        super().__init__(f"{message} (hand {hand})")
        self.hand = hand


class HandTimeout(HandError, TimeoutError):
    """A motion (preshape, closing, opening) did not finish within its timeout."""


class HandDisconnected(HandError, ConnectionError):
    """The hand was closed, or its link is gone."""


class HandFault(HandError):
    """The device reported a fault: ``code`` is its own fault number, ``meaning`` its text."""

    def __init__(self, code: int, meaning: str, *, hand: str) -> None:
        super().__init__(f"device fault 0x{code:02X}: {meaning}", hand=hand)
        self.code = code
        self.meaning = meaning
