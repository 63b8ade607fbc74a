"""graspline onboard (see DESIGN.md)."""
from ._movement import MovementError, ObjectMovement, object_movement



__all__ = [
    "MovementError",
    "ObjectMovement",
    "TrialImages",
    "TrialLog",
    "TrialLogError",
    "TrialRecord",
    "object_movement",
    "write_report",
]
