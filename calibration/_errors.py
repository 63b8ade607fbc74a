"""Exceptions and warnings of the calibration flows."""
from __future__ import annotations


class CalibrationError(ValueError):
    """Calibration input that cannot give a result (too few views, no board seen, ...)."""


class CalibrationFileError(CalibrationError):
    """A calibration file that is missing, corrupt, partial or of another version or kind.

    The message names the file and, where one is at fault, the key (dotted path).
    """

    def __init__(self, path: object, message: str, key: str | None = None) -> None:
        self.path, self.key = str(path), key
        where = f"{path}: key '{key}'" if key else f"{path}"
        super().__init__(f"calibration file {where}: {message}")


class DegeneratePosesWarning(UserWarning):
    """Hand-eye poses that constrain the result poorly (too few, too little rotation, parallel
    rotation axes); the result is computed but should not be trusted without more poses."""
