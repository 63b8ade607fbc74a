"""The devices a cell file names, built and opened: camera, segmenter, gripper, arm.

The simulated cell (offline_sim.cell) is imported by name only when the cell file asks for a
simulated device, so the loop on hardware never loads MuJoCo.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass

import numpy as np

from drivers.arm import ArmController
from drivers.camera import Camera, RealSenseCamera
from drivers.gripper import Gripper, GripperError, open_gripper
from vision import Segmenter, make_segmenter

from ._cellfile import CellConfig

SIM_CELL_MODULE = "offline_sim.cell"


class CellSetupError(RuntimeError):
    """A device of the cell file could not be opened; the message names the key and why."""


@dataclass
class CellDevices:
    """The opened devices of a cell; ``truth`` is the simulated cell, or None on hardware."""

    camera: Camera
    segmenter: Segmenter
    gripper: Gripper
    arm: ArmController | None
    truth: object | None = None

    def close(self) -> None:
        """Close every device (each safe to close twice)."""
        for dev in (self.camera, self.gripper, self.arm):
            if dev is not None:
                try:
                    dev.close()
                except Exception:  # noqa: BLE001 - closing the others matters more
                    pass


def _sim_cell(config: CellConfig):
    """The simulated cell the cell file describes (imports MuJoCo)."""
    try:
        mod = importlib.import_module(SIM_CELL_MODULE)
    except ImportError as exc:
        raise CellSetupError(f"the simulated cell needs the sim extra: pip install "
                             f"'graspline[sim]' ({exc})") from exc
    g, s = config.gripper, config.sim
    try:
        settings = mod.SimCellSettings(
            objects_per_table=tuple(s.objects_per_table), ycb_dir=s.ycb_dir,
            finger_width_m=g.finger_width_m, open_width_m=g.open_width_m,
            pad_friction=s.pad_friction, depth_noise=s.depth_noise, gripper_mjcf=s.gripper_mjcf,
            image_width_px=config.camera.width_px, image_height_px=config.camera.height_px)
        return mod.SimCell(settings, seed=s.seed)
    except ValueError as exc:
        raise CellSetupError(f"sim: {exc}") from exc


def _hand_eye(config: CellConfig) -> np.ndarray | None:
    """T_base_camera from the cell file's hand-eye calibration file, if one is named."""
    path = config.calibration.hand_eye
    if path is None:
        return None
    try:
        cal = importlib.import_module("calibration")
        loader = getattr(cal, "load_hand_eye")
    except (ImportError, AttributeError) as exc:
        raise CellSetupError(f"calibration.hand_eye {path!r}: this build cannot read hand-eye "
                             f"files ({exc})") from exc
    return np.asarray(loader(path).T_base_camera, np.float64)


def open_cell(config: CellConfig) -> CellDevices:
    """Open every device of the cell file (simulated ones in one SimCell); CellSetupError
    names the key of a device that cannot be opened."""
    wants_sim = (config.camera.kind == "sim" or config.gripper.model == "sim_jaw"
                 or config.arm.kind == "sim")
    sim = _sim_cell(config) if wants_sim else None
    opened: list = []
    try:
        camera = _camera(config, sim)
        opened.append(camera)
        gripper = _gripper(config, sim)
        opened.append(gripper)
        arm = sim.arm if config.arm.kind == "sim" else None
        try:
            segmenter = make_segmenter(config.segmenter.backend, **config.segmenter.options)
        except (ValueError, ImportError) as exc:
            raise CellSetupError(f"segmenter: {exc}") from exc
    except Exception:
        for dev in opened:
            dev.close()
        raise
    return CellDevices(camera, segmenter, gripper, arm, sim)


def _camera(config: CellConfig, sim) -> Camera:
    c = config.camera
    if c.kind == "sim":
        return sim.camera
    T = _hand_eye(config)
    try:
        if c.kind == "realsense":
            return RealSenseCamera(c.serial, width=c.width_px, height=c.height_px, fps=c.fps,
                                   T_base_camera=T)
        return RealSenseCamera(recording=c.recording, T_base_camera=T)
    except (ValueError, RuntimeError, OSError) as exc:
        raise CellSetupError(f"camera ({c.kind}): {exc}") from exc


def _gripper(config: CellConfig, sim) -> Gripper:
    g = config.gripper
    if g.model == "sim_jaw":
        gripper = sim.gripper
    else:
        try:
            gripper = open_gripper(g.model, g.port)
        except (ValueError, ImportError, GripperError, OSError) as exc:
            raise CellSetupError(f"gripper ({g.model} on {g.port}): {exc}") from exc
    try:
        gripper.activate()
    except GripperError as exc:
        gripper.close()
        raise CellSetupError(f"gripper ({g.model} on {g.port}): activation failed: {exc}") from exc
    if not math.isclose(gripper.spec.width.high, g.open_width_m, rel_tol=0.05):
        raise CellSetupError(f"gripper.open_width_m is {g.open_width_m} m but the {g.model} "
                             f"opens {gripper.spec.width.high} m; fix the cell file")
    return gripper
