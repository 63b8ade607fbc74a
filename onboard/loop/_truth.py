"""The simulator's ground truth as a port of the loop.

The loop asks the port four things: a cycle starts (the simulated operator may lay a new
table), the name of the object under a mask, a watch on the object about to be grasped (its
pose before and after the fingers close, and whether it rose with the lift), and to let time
pass while the arm holds a lifted object. On hardware the port is ``NO_TRUTH``: it knows no
names, watches nothing and sleeps, so the hardware path has no "if simulated" branch. The
simulated cell's port is ``SimulatedTruth``, reading what ``offline_sim.cell.SimCell``
exposes (its world's object poses, names and clock); it imports nothing of offline_sim.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from drivers.camera import RGBDFrame
from vision import ObjectMask

from .._movement import pose_movement

HAND_INSTANCE = 1000  # instance id of the gripper's own pixels in simulated frames


@dataclass(frozen=True)
class GraspTruth:
    """What the simulator saw of a grasped object; every field None where nothing was seen.

    movement_m / movement_rad : its signed translation along the closing direction (m) and
        its rotation (rad) while the fingers closed, at its own origin.
    poses : (T_world_object before, after closing), (4, 4) metres, for measuring the same
        movement at another point (the image estimate's centroid).
    lifted : whether it rose with the lift (by half the lift height or more).
    """

    movement_m: float | None = None
    movement_rad: float | None = None
    poses: tuple[np.ndarray, np.ndarray] | None = None
    lifted: bool | None = None


@runtime_checkable
class ObjectWatch(Protocol):
    """The ground truth of one object through a grasp."""

    def closed(self, closing_dir: np.ndarray) -> GraspTruth:
        """What the object did while the fingers closed (closing_dir (3,), base frame)."""
        ...

    def lifted(self, lift_m: float) -> bool | None:
        """Whether the object rose with a lift of lift_m metres; None when unknown."""
        ...


@runtime_checkable
class CellTruth(Protocol):
    """The simulator's ground truth as the loop asks for it (``NO_TRUTH`` on hardware)."""

    def start_cycle(self, *, no_grasp: bool | None) -> None:
        """A cycle starts; no_grasp says how the last one ended (True nothing holdable in
        view, False a grasp chosen, None neither)."""
        ...

    def object_name(self, frame: RGBDFrame, mask: ObjectMask) -> str | None:
        """The name of the object under a mask, None when unknown."""
        ...

    def watch(self, frame: RGBDFrame | None, mask: ObjectMask | None) -> ObjectWatch:
        """A watch on the object under a mask, from now on."""
        ...

    def hold(self, seconds: float) -> None:
        """Let ``seconds`` pass while the arm holds still."""
        ...

    def see_to_hand(self) -> bool:
        """Whether an operator of the truth's own saw to the hand when the loop asked (the
        simulated cell's does; on hardware a person must, and clears the fault)."""
        ...


class _NoWatch:
    """Watches nothing: the grasp's truth is unknown."""

    def closed(self, closing_dir: np.ndarray) -> GraspTruth:
        """Nothing seen."""
        return GraspTruth()

    def lifted(self, lift_m: float) -> bool | None:
        """Unknown."""
        return None


NO_WATCH = _NoWatch()


class NoTruth:
    """The port on hardware: no ground truth; holding still is a sleep."""

    def start_cycle(self, *, no_grasp: bool | None) -> None:
        """Nothing to prepare."""

    def object_name(self, frame: RGBDFrame, mask: ObjectMask) -> str | None:
        """Unknown (a learned segmenter's label names objects on hardware)."""
        return None

    def watch(self, frame: RGBDFrame | None, mask: ObjectMask | None) -> ObjectWatch:
        """A watch that sees nothing."""
        return NO_WATCH

    def hold(self, seconds: float) -> None:
        """Sleep ``seconds``."""
        time.sleep(seconds)

    def see_to_hand(self) -> bool:
        """No: a person sees to the hand on hardware and clears the fault."""
        return False


NO_TRUTH = NoTruth()


def object_index(frame: RGBDFrame | None, mask: ObjectMask | None) -> int | None:
    """0-based index of the simulated object under a mask, from the frame's ground-truth
    instance ids (the most frequent object id under it); None without ids or an object."""
    ids = None if frame is None else frame.instance_ids
    if ids is None or mask is None:
        return None
    under = ids[mask.mask]
    under = under[(under > 0) & (under < HAND_INSTANCE)]
    if under.size == 0:
        return None
    return int(np.bincount(under).argmax()) - 1


class _SimWatch:
    """Object k of the simulated world, its pose taken when the watch starts."""

    def __init__(self, sim, k: int) -> None:
        self._sim, self._k = sim, k
        self._T_before = sim.world.T_world_object(k)

    def closed(self, closing_dir: np.ndarray) -> GraspTruth:
        """Its movement from the watch's start to now."""
        T_after = self._sim.world.T_world_object(self._k)
        mv = pose_movement(self._T_before, T_after, closing_dir)
        return GraspTruth(mv.translation_m, mv.rotation_rad, (self._T_before, T_after))

    def lifted(self, lift_m: float) -> bool:
        """Whether it is now higher than at the start by half of lift_m or more."""
        z = self._sim.world.T_world_object(self._k)[2, 3]
        return bool(z > self._T_before[2, 3] + 0.5 * lift_m)


class SimulatedTruth:
    """The simulated cell's ground truth (sim : an ``offline_sim.cell.SimCell``)."""

    def __init__(self, sim) -> None:
        self.sim = sim

    def start_cycle(self, *, no_grasp: bool | None) -> None:
        """The simulated operator re-lays an empty or stuck table, or one with nothing
        holdable (SimCell.start_cycle)."""
        self.sim.start_cycle(no_grasp=no_grasp)

    def object_index(self, frame: RGBDFrame | None, mask: ObjectMask | None) -> int | None:
        """0-based index in the simulated world of the object under a mask, or None."""
        return object_index(frame, mask)

    def object_name(self, frame: RGBDFrame, mask: ObjectMask) -> str | None:
        """The simulated object's name under a mask: what a learned segmenter's label would
        be on hardware."""
        k = object_index(frame, mask)
        return None if k is None else self.sim.object_name(k)

    def watch(self, frame: RGBDFrame | None, mask: ObjectMask | None) -> ObjectWatch:
        """A watch on the simulated object under the mask (none when there is no object)."""
        k = object_index(frame, mask)
        return NO_WATCH if k is None else _SimWatch(self.sim, k)

    def hold(self, seconds: float) -> None:
        """Step the simulated world through ``seconds``."""
        self.sim.step(int(seconds / self.sim.world.model.opt.timestep))

    def see_to_hand(self) -> bool:
        """The simulated operator takes off what hangs on the hand (SimCell.see_to_hand)."""
        self.sim.see_to_hand()
        return True
