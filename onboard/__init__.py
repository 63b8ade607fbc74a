"""graspline onboard: the picking cell (loop, devices, endpoint), its cell file, the trial
log and the validation report (see docs/design.md)."""
from ._cell import PickingCell, make_picking_service, open_picking_cell
from ._cellfile import (ApproachesConfig, CameraConfig, CellConfig, CellFileError, DatabaseConfig, GripperConfig,
                        SegmenterConfig, SimConfig, config_hash, jaw_friction, load_cell_file,
                        parse_cell_file, sim_cell_file, sim_pad_friction)
from ._devices import CellSetupError, sim_cell_settings
from ._movement import MovementError, ObjectMovement, object_movement, pose_movement
from ._report import roc_auc, wilson_interval, write_report
from ._messages import ENDPOINT_COMMANDS, grasp_text
from ._server import MAX_LINE_BYTES, EndpointServer, serve
from ._service import GripReply, PickingService, TrialSummary
from ._trials import TrialImages, TrialLog, TrialLogError, TrialRecord
from ._types import CellStatus, GraspChoice, KernelWarmUp, NoGrasp
from .loop import Execution, PickingLoop, Plan, StageClock

__all__ = [
    "ApproachesConfig",
    "CameraConfig",
    "DatabaseConfig",
    "GripperConfig",
    "SegmenterConfig",
    "SimConfig",
    "config_hash",
    "jaw_friction",
    "sim_cell_file",
    "sim_cell_settings",
    "sim_pad_friction",
    "EndpointServer",
    "ENDPOINT_COMMANDS",
    "MAX_LINE_BYTES",
    "grasp_text",
    "GripReply",
    "PickingService",
    "TrialSummary",
    "serve",
    "CellConfig",
    "CellFileError",
    "CellSetupError",
    "CellStatus",
    "Execution",
    "Plan",
    "StageClock",
    "GraspChoice",
    "KernelWarmUp",
    "NoGrasp",
    "PickingCell",
    "PickingLoop",
    "load_cell_file",
    "make_picking_service",
    "open_picking_cell",
    "parse_cell_file",
    "MovementError",
    "ObjectMovement",
    "TrialImages",
    "TrialLog",
    "TrialLogError",
    "TrialRecord",
    "object_movement",
    "pose_movement",
    "roc_auc",
    "wilson_interval",
    "write_report",
]
