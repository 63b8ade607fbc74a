"""SimCellCamera: the cell's RGB-D camera behind drivers.camera.Camera, with injectable faults.

It ray-casts the cell's current world with drivers.camera.SimCamera (D400-like depth noise on
by default). A new table (a new world) is picked up on the next read. Faults, as a real camera
shows them: a dropped frame (CameraTimeout), a late frame (delivered after a pause), a frame
with no depth (all zeros), a disconnect (CameraDisconnected), or any CameraError given as
such (e.g. a recording's missing metadata), raised by the read it comes to.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from drivers.camera import (Camera, CameraDisconnected, CameraError, CameraTimeout, DepthNoise,
                            Intrinsics, RGBDFrame, SimCamera)


HAND_INSTANCE = 1000  # instance id of the gripper's pixels (not an object; 0 is the table)


class SimCellCamera(Camera):
    """A fixed camera over the cell's table; ``faults`` is a queue of faults for the next reads."""

    def __init__(self, cell, intrinsics: Intrinsics, T_base_camera: np.ndarray, *,
                 noise: DepthNoise | None = DepthNoise(), seed: int | None = 0) -> None:
        self._cell = cell
        self._intr = intrinsics
        self._T = np.asarray(T_base_camera, np.float64)
        self._noise = noise
        self._rng = np.random.default_rng(seed)
        self._cam: SimCamera | None = None
        self._world = None
        # "drop", "late", "no_depth", "disconnect", or a CameraError to raise
        self.faults: list[str | CameraError] = []
        # the pose the frames report, where it differs from where the camera really is (a
        # cell whose hand-eye calibration is off); None: the true pose
        self.reported_T_base_camera: np.ndarray | None = None
        self.late_s = 0.3

    @property
    def intrinsics(self) -> Intrinsics:
        return self._intr

    @property
    def T_base_camera(self) -> np.ndarray:
        """Pose of the optical frame in the base frame, 4 x 4."""
        return self._T.copy()

    def state(self) -> str:
        """A short state text for status lines."""
        return "disconnected" if "disconnect" in self.faults else "streaming"

    def _read(self, timeout_s: float | None) -> RGBDFrame:
        fault = self.faults.pop(0) if self.faults else None
        if isinstance(fault, CameraError):
            raise fault
        if fault == "disconnect":
            self.faults.insert(0, "disconnect")  # stays gone until cleared
            raise CameraDisconnected("the simulated camera is disconnected (injected)")
        if fault == "drop":
            raise CameraTimeout(f"no frame within {timeout_s} s (dropped frame, injected)")
        if fault == "late":
            if timeout_s is not None and self.late_s > timeout_s:
                time.sleep(timeout_s)
                raise CameraTimeout(f"no frame within {timeout_s} s (late frame, injected)")
            time.sleep(self.late_s)
        self._cell.before_capture()
        frame = self._camera().read(timeout_s)
        if self.reported_T_base_camera is not None:
            frame = dataclasses.replace(frame, T_base_camera=self.reported_T_base_camera.copy())
        if fault == "no_depth":
            frame = RGBDFrame(color=frame.color, depth_m=np.zeros_like(frame.depth_m),
                              intrinsics=frame.intrinsics, T_base_camera=frame.T_base_camera,
                              stamp_s=frame.stamp_s, seq=frame.seq, instance_ids=frame.instance_ids)
        return frame

    def _camera(self) -> SimCamera:
        """The SimCamera over the current world (rebuilt after a new table)."""
        world = self._cell.world
        if self._cam is None or self._world is not world:
            if self._cam is not None:
                self._cam.close()
            ids = np.where(world.hand_geom, HAND_INSTANCE, world.geom_instance)
            self._cam = SimCamera(world.model, world.data, self._intr, self._T, noise=self._noise,
                                  geom_instance=ids,
                                  seed=int(self._rng.integers(2**31)))
            self._world = world
        return self._cam

    def _close(self) -> None:
        if self._cam is not None:
            self._cam.close()
