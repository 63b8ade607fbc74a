"""Camera errors: a small tree that also carries the built-in meaning."""


class CameraError(Exception):
    """Any camera failure; the message names the device (serial or file)."""


class CameraTimeout(CameraError, TimeoutError):
    """No frame arrived within the timeout."""


class CameraDisconnected(CameraError, ConnectionError):
    """The device is gone (unplugged, or never found) and reconnecting did not bring it back."""


class EndOfRecording(CameraError, EOFError):
    """A recording was read past its last frame."""
