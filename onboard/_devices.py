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
from drivers.camera import Camera, CameraError, RealSenseCamera
from drivers.gripper import Gripper, GripperError, open_gripper
from drivers.hand import Hand
from vision import Segmenter, make_segmenter

from ._cellfile import CellConfig, GripperConfig, sim_pad_friction

SIM_CELL_MODULE = "offline_sim.cell"


class CellSetupError(RuntimeError):
    """A device of the cell file could not be opened; the message names the key and why."""


@dataclass
class CellDevices:
    """The opened devices of a cell; ``truth`` is the simulated cell (offline_sim.cell.SimCell,
    whose world is the ground truth), or None on hardware; ``hand`` is the cell's
    multi-finger hand (the simulated cell's SimHand), None for a jaw; ``gripper`` is None
    on a cell with such a hand."""

    camera: Camera
    segmenter: Segmenter
    gripper: Gripper | None
    arm: ArmController | None
    truth: object | None = None
    hand: Hand | None = None

    def close(self) -> None:
        """Close every device (each safe to close twice)."""
        for dev in (self.camera, self.gripper, self.arm):
            if dev is not None:
                try:
                    dev.close()
                except Exception:  # noqa: BLE001 - closing the others matters more
                    pass
        if self.hand is not None:
            self.hand.shutdown()  # a Hand's close() closes its fingers; shutdown releases it


def sim_cell_settings(config: CellConfig):
    """The simulated cell's settings (offline_sim.cell.SimCellSettings) the cell file
    describes: its jaw, pads, camera image and objects (imports MuJoCo); CellSetupError
    naming the bad value."""
    try:
        mod = importlib.import_module(SIM_CELL_MODULE)
    except ImportError as exc:
        raise CellSetupError(f"the simulated cell needs the sim extra: pip install "
                             f"'graspline[sim]' ({exc})") from exc
    g, s = config.gripper, config.sim
    try:
        # every key of the gripper section builds the simulated jaw (finger_thickness_m is
        # pad and body together in the cell file, the body alone in the jaw's model)
        return mod.SimCellSettings(
            objects_per_table=tuple(s.objects_per_table), ycb_dir=s.ycb_dir,
            finger_width_m=g.finger_width_m, open_width_m=g.open_width_m,
            finger_length_m=g.finger_length_m, pad_length_m=g.pad_length_m,
            pad_thickness_m=g.pad_thickness_m,
            finger_thickness_m=g.finger_thickness_m - g.pad_thickness_m,
            tcp_to_tip_m=g.tcp_to_tip_m, palm_width_m=g.palm_width_m,
            palm_length_m=_sim_palm_length_m(g),
            pad_friction=sim_pad_friction(config), depth_noise=s.depth_noise,
            gripper_mjcf=s.gripper_mjcf,
            image_width_px=config.camera.width_px, image_height_px=config.camera.height_px,
            hand=s.hand)
    except ValueError as exc:
        raise CellSetupError(f"sim: {exc}") from exc


def _sim_cell(config: CellConfig):
    """The simulated cell the cell file describes, on the cell file's seed (imports MuJoCo)."""
    settings = sim_cell_settings(config)
    mod = importlib.import_module(SIM_CELL_MODULE)
    try:
        return mod.SimCell(settings, seed=config.sim.seed)
    except ValueError as exc:
        raise CellSetupError(f"sim: {exc}") from exc


def _sim_palm_length_m(g: GripperConfig) -> float | None:
    """The simulated jaw's palm length (metres along the closing direction) as the scorer
    reads the cell file: palm_length_m; with only palm_width_m, the open fingers with their
    pads and bodies; neither key: None (the simulated jaw's own palm)."""
    if g.palm_length_m is not None or g.palm_width_m is None:
        return g.palm_length_m
    return g.open_width_m + 2.0 * g.finger_thickness_m


def load_calibration_file(kind: str, path: str):
    """A calibration file of the cell file ("intrinsics", "hand_eye", "depth" or "gripper"),
    loaded; CellSetupError naming the key."""
    try:
        cal = importlib.import_module("calibration")
        loader = {"intrinsics": cal.load_intrinsics, "hand_eye": cal.load_hand_eye,
                  "depth": cal.load_depth_correction, "gripper": cal.load_gripper_map}[kind]
        return loader(path)
    except ImportError as exc:
        raise CellSetupError(f"calibration.{kind} {path!r}: cannot load the calibration package "
                             f"({exc})") from exc
    except (ValueError, OSError) as exc:  # CalibrationFileError is a ValueError
        raise CellSetupError(f"calibration.{kind}: {exc}") from exc


class CalibratedCamera(Camera):
    """A camera whose frames carry the cell's calibration: the hand-eye pose T_base_camera
    (a fixed camera, eye-to-hand), calibrated intrinsics, and the depth scale correction."""

    def __init__(self, camera: Camera, *, T_base_camera: np.ndarray | None = None,
                 intrinsics=None, depth_scale: float | None = None) -> None:
        self.camera = camera
        self.T_base_camera = T_base_camera
        self._intrinsics = intrinsics
        self.depth_scale = depth_scale

    @property
    def intrinsics(self):
        return self._intrinsics or self.camera.intrinsics

    def state(self) -> str:
        """The wrapped camera's state text."""
        return getattr(self.camera, "state", lambda: "open")()

    def _read(self, timeout_s: float | None):
        import dataclasses

        frame = self.camera.read(timeout_s)
        changes: dict = {}
        if self.T_base_camera is not None:
            changes["T_base_camera"] = self.T_base_camera.copy()
        if self._intrinsics is not None:
            changes["intrinsics"] = self._intrinsics
        if self.depth_scale is not None:
            changes["depth_m"] = (frame.depth_m * np.float32(self.depth_scale)).astype(np.float32)
        return dataclasses.replace(frame, **changes) if changes else frame

    def _close(self) -> None:
        self.camera.close()


def _calibrated(camera: Camera, config: CellConfig) -> Camera:
    """The camera with the cell file's calibration files applied (itself when none is named)."""
    c = config.calibration
    if c.hand_eye is None and c.intrinsics is None and c.depth is None:
        return camera
    T = None
    if c.hand_eye is not None:
        he = load_calibration_file("hand_eye", c.hand_eye)
        if he.setup != "eye_to_hand":
            raise CellSetupError(f"calibration.hand_eye {c.hand_eye!r} is an {he.setup} "
                                 f"calibration; the loop takes a fixed camera (eye_to_hand)")
        T = np.asarray(he.T, np.float64)
    intr = None if c.intrinsics is None else \
        load_calibration_file("intrinsics", c.intrinsics).intrinsics
    if intr is not None and (intr.width, intr.height) != (camera.intrinsics.width,
                                                          camera.intrinsics.height):
        raise CellSetupError(f"calibration.intrinsics {c.intrinsics!r} is for "
                             f"{intr.width} x {intr.height} images, the camera gives "
                             f"{camera.intrinsics.width} x {camera.intrinsics.height}")
    scale = None if c.depth is None else load_calibration_file("depth", c.depth).scale
    return CalibratedCamera(camera, T_base_camera=T, intrinsics=intr, depth_scale=scale)


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
        if gripper is not None:
            opened.append(gripper)
        arm = sim.arm if config.arm.kind == "sim" else None
        try:
            segmenter = make_segmenter(config.segmenter.backend, **config.segmenter.options)
        except (ValueError, ImportError) as exc:
            raise CellSetupError(f"segmenter: {exc}") from exc
    except Exception:
        for dev in opened:
            dev.close()
        if sim is not None and sim.hand_device is not None:
            sim.hand_device.shutdown()
        raise
    return CellDevices(camera, segmenter, gripper, arm, sim,
                       hand=None if sim is None else sim.hand_device)


def _camera(config: CellConfig, sim) -> Camera:
    c = config.camera
    if c.kind == "sim":
        return _calibrated(sim.camera, config)
    try:
        if c.kind == "realsense":
            cam = RealSenseCamera(c.serial, width=c.width_px, height=c.height_px, fps=c.fps)
        else:
            cam = RealSenseCamera(recording=c.recording)
    except ImportError as exc:  # pyrealsense2 absent, or present without libusb-1.0
        why = exc.__cause__ if isinstance(exc.__cause__, ImportError) else exc
        raise CellSetupError(f"camera ({c.kind}): pyrealsense2 cannot be loaded ({why}); "
                             f"install it with pip install 'graspline[realsense]' (on "
                             f"Debian/Ubuntu it also needs libusb-1.0-0: apt install "
                             f"libusb-1.0-0)") from exc
    except (CameraError, ValueError, RuntimeError, OSError) as exc:
        raise CellSetupError(f"camera ({c.kind}): {exc}") from exc
    try:
        return _calibrated(cam, config)
    except CellSetupError:
        cam.close()
        raise


def _gripper(config: CellConfig, sim) -> Gripper | None:
    """The cell's gripper, opened and activated; None on a simulated cell whose sim.hand is a
    multi-finger hand (the hand takes the gripper's place)."""
    g = config.gripper
    if g.model == "sim_jaw":
        if sim.gripper is None:
            if config.database is None:
                raise CellSetupError(f"sim.hand is {config.sim.hand!r}, a multi-finger hand: it "
                                     f"plans with a grasp database, so the cell file needs a "
                                     f"'database' section")
            return None
        if config.calibration.gripper is not None:
            raise CellSetupError("calibration.gripper: the simulated jaw needs no calibration "
                                 "file (its width is measured in the simulation)")
        gripper = sim.gripper
    else:
        options = {}
        if config.calibration.gripper is not None:
            cal = load_calibration_file("gripper", config.calibration.gripper)
            options = importlib.import_module("calibration").gripper_driver_options([cal])
        try:
            gripper = open_gripper(g.model, g.port, **options)
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
