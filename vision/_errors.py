"""Vision errors: a small tree that also carries the built-in meaning."""


class VisionError(Exception):
    """Any failure of the vision package that is not plain bad input (ValueError)."""


class BackendUnavailable(VisionError, ImportError):
    """A segmentation backend's libraries are not installed; the message says what to install."""


class WeightsError(VisionError, ValueError):
    """A weights file cannot be used by a learned backend; the message names the file."""


class WeightsNotFound(WeightsError, FileNotFoundError):
    """A weights (or config) file does not exist; the message names the path."""
