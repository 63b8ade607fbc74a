"""The gripper exception tree: each error names the port and keeps the built-in meaning."""
from __future__ import annotations


class GripperError(Exception):
    """Base of every gripper driver error; ``port`` names the serial port (or ``"sim"``)."""

    def __init__(self, message: str, *, port: str) -> None:
        super().__init__(f"{message} (port {port})")
        self.port = port


class GripperTimeout(GripperError, TimeoutError):
    """The device did not answer, or a motion did not finish, within the configured timeout."""


class GripperDisconnected(GripperError, ConnectionError):
    """The port vanished (unplugged, powered off) and did not come back within reconnect_s."""


class GripperProtocolError(GripperError):
    """Replies arrived but never made a valid frame (bad CRC, garbage) after every retry."""


class GripperFault(GripperError):
    """The device reported a fault: ``code`` is its own fault number, ``meaning`` its decoding."""

    def __init__(self, code: int, meaning: str, *, port: str) -> None:
        super().__init__(f"device fault 0x{code:02X}: {meaning}", port=port)
        self.code = code
        self.meaning = meaning
