"""graspline onboard (see DESIGN.md)."""
from ._cell import PickingCell, make_picking_service, open_picking_cell
from ._cellfile import (CameraConfig, CellConfig, CellFileError, GripperConfig, SegmenterConfig,
                        SimConfig, config_hash, load_cell_file, parse_cell_file, sim_cell_file)
from ._loop import PickingLoop
from ._movement import MovementError, ObjectMovement, object_movement, pose_movement
from ._report import write_report
from ._server import EndpointServer, serve
from ._service import GripReply, PickingService, TrialSummary
from ._trials import TrialImages, TrialLog, TrialLogError, TrialRecord
from ._types import CellStatus, GraspChoice, NoGrasp

__all__ = [
    "CameraConfig",
    "GripperConfig",
    "SegmenterConfig",
    "SimConfig",
    "config_hash",
    "sim_cell_file",
    "EndpointServer",
    "GripReply",
    "PickingService",
    "TrialSummary",
    "serve",
    "CellConfig",
    "CellFileError",
    "CellStatus",
    "GraspChoice",
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
    "write_report",
]

# the endpoint's protocol: its commands, its line limit, the plain-text GRASP line
from ._messages import ENDPOINT_COMMANDS, grasp_text  # noqa: E402
from ._server import MAX_LINE_BYTES  # noqa: E402

__all__ += ["ENDPOINT_COMMANDS", "MAX_LINE_BYTES", "grasp_text"]
