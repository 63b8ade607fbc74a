"""Value types that the picking loop hands to the endpoint, the trial log and the CLI.

All in SI units: metres, radians, seconds, newtons; poses are 4 x 4 float64 ``T_a_b``.
Pixel quantities say so in their names (``x_px``). Stage timings are a mapping from stage
name ("capture", "segment", "silhouette", "search", "choose", "approach", "grip", "lift",
"after_image", "log", ...) to seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from drivers.arm import MoveResult, MoveStatus  # noqa: F401 - re-exported for the endpoint


@dataclass(frozen=True)
class GraspChoice:
    """The grasp the loop chose for one object, ready for the arm and the gripper.

    T_base_tcp : (4, 4) the TCP at the grasp (z = approach, x = closing direction), metres:
    for an image-search grasp, centred on the object's readings (features["centring_m"]
    along x from the grasp as scored; onboard.loop.pose_as_scored undoes it).
    pregrasp_m : distance back along the approach where the arm starts its straight approach.
    width_m : opening the gripper takes before closing; force_n : grip force to command.
    x_px, y_px, theta_rad : the grasp in the silhouette image as scored (column, row, closing
    angle).
    features : raw features and their scores by name (d_t, r_r_rad, s_a_rad, s_f_px, ...).
    source : "image_search" (Tan et al.'s measure) or "database" (step 8).
    preshape : the hand's joint targets before closing (rad or m), for a multi-finger hand's
    database grasp (empty for a hand without preshape joints); None for the parallel jaw.
    """

    trial_id: int
    object_label: str
    T_base_tcp: np.ndarray
    pregrasp_m: float
    width_m: float
    force_n: float
    score: float
    features: dict[str, float]
    source: str
    x_px: float
    y_px: float
    theta_rad: float
    n_candidates: int
    stage_s: dict[str, float] = field(default_factory=dict)
    preshape: np.ndarray | None = None


@dataclass(frozen=True)
class NoGrasp:
    """Nothing graspable in view, and why (no object, no depth, no candidate above the floor...)."""

    reason: str
    stage_s: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CellStatus:
    """The cell at a glance: loop state, each device's state as a short text, trials logged."""

    state: str          # "idle", "planning", "moving", "gripping", "faulted", "stopped"
    camera: str
    gripper: str
    arm: str
    trials: int


@dataclass(frozen=True)
class KernelWarmUp:
    """The Numba kernels made ready before a cell's first frame (PickingLoop.warm_up).

    seconds : wall time of the warm-up. kernels : the njit kernels listed (scoring's and
    vision's). compiled : signatures compiled now (numba's cache had none); from_cache :
    signatures loaded from numba's cache. at_s : when it ended, seconds since the epoch.
    """

    seconds: float
    kernels: int
    compiled: int
    from_cache: int
    at_s: float = 0.0

    def text(self) -> str:
        """The console's line: "compiling kernels ... done in X s" or "kernels loaded from
        cache in X s"."""
        if self.compiled:
            return (f"compiling kernels ... done in {self.seconds:.1f} s ({self.compiled} "
                    f"compiled, {self.from_cache} from cache; cached for the next start)")
        return f"kernels loaded from cache in {self.seconds:.1f} s"
