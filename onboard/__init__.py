"""graspline onboard (see DESIGN.md)."""
from ._movement import MovementError, ObjectMovement, object_movement, pose_movement
from ._report import write_report
from ._trials import TrialImages, TrialLog, TrialLogError, TrialRecord

__all__ = [
    "MovementError",
    "ObjectMovement",
    "TrialImages",
    "TrialLog",
    "TrialLogError",
    "TrialRecord",
    "object_movement",
    "pose_movement",
    "write_report",
]
