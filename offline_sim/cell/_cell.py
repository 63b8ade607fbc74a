"""SimCell: a picking cell in MuJoCo — table, objects, camera, arm and a parallel jaw or a
multi-finger hand — whose devices stand behind the same interfaces as hardware (Camera,
Gripper or Hand, ArmController).

Objects are drawn from the built-in shapes, random boxes, plates, bars and cylinders (some
wider than the jaw's stroke, some flat, some long), and YCB scans when a folder is given;
each rests in a random stable pose. Masses: density (600 kg/m³ by default, household
objects) or the YCB catalogue. Objects that leave the table (dropped into the bin beside it)
are taken out of the cell; the table is laid anew when it is empty, when the loop found
nothing it could hold on it twice in a row, or when the picking has made no progress for a
while (an operator clearing what cannot be picked).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from drivers.camera import DepthNoise, intrinsics_from_fov, look_at

from ..hands import BUILTIN_HANDS, HandModel, load_mjcf_hand, parallel_jaw
from ..objects import BUILTIN_OBJECTS, GraspObject, builtin_object, load_object
from ._arm import SimArm
from ._camera import SimCellCamera
from ._gripper import SimJawGripper
from ._hand import SimHand
from ._hand_grasp import HandGraspOutcome, HandGraspSettings, execute_hand_grasp
from ._primitives import PRIMITIVE_KINDS, YCB_MASS_KG, random_primitive
from ._scene import (CellWorld, build_cell_world, footprint_radius_m, random_stable_pose,
                     tallest_stable_pose)


log = logging.getLogger(__name__)

GAP_M = 0.02
PLACE_REGION_M = (0.22, 0.16)  # half extents of where objects are laid (in the camera's view)


@dataclass(frozen=True)
class SimCellSettings:
    """What the simulated cell is made of; lengths metres, forces newtons.

    objects_per_table : (min, max) objects laid on a fresh table. builtin : built-in shapes to
    draw from; random_primitives : also random boxes, plates, bars and cylinders (True: every
    kind of PRIMITIVE_KINDS, or a tuple naming some); ycb_dir : a
    folder of YCB scans (``<name>/visual.obj``) to draw from too. pad_friction : 1.0 for
    rubber pads, about 0.5 for taped ones. finger_width_m, open_width_m, finger_length_m,
    pad_length_m, pad_thickness_m, finger_thickness_m (the body behind the pad), tcp_to_tip_m,
    palm_width_m, palm_length_m : the built-in jaw's geometry (offline_sim.hands.parallel_jaw;
    a palm None: its default). camera_height_m : above the table, looking down.
    depth_noise : D400-like noise on the depth (True: drivers.camera.DepthNoise's; a DepthNoise:
    that model, one of its parts changed; False: exact depth, for tests of exact geometry).
    hand : "parallel" (the jaw, behind drivers.gripper.Gripper: the default), a built-in
    multi-finger hand ("three_finger", "underactuated") or a JSON description of an MJCF
    hand (as ``graspline db build --hand`` takes it), behind drivers.hand.Hand. A
    multi-finger cell lays only objects a grasp database can know (the built-in shapes and
    the YCB scans, never random primitives), since its grasps come from the database.
    stand_tall : lay every object in its tallest stable pose (a bottle upright, a box on its
    end) instead of one drawn by probability: the tables of tall objects that tilted
    approaches are measured on (benchmarks/bench_approaches.py).
    operator_watches_hand : the operator takes off what still hangs on the hand as every
    cycle starts (take_off_hand); False: only when the loop asks (see_to_hand), as on a real
    cell, where nobody sees a part hooked on a finger until the loop stops for it.
    """

    objects_per_table: tuple[int, int] = (3, 5)
    builtin: tuple[str, ...] = BUILTIN_OBJECTS
    random_primitives: bool | tuple[str, ...] = True
    ycb_dir: str | None = None
    density_kg_m3: float = 600.0
    finger_width_m: float = 0.022
    open_width_m: float = 0.085
    finger_length_m: float = 0.06
    pad_length_m: float = 0.035
    finger_thickness_m: float = 0.01   # each finger's body behind its pad
    pad_thickness_m: float = 0.004
    tcp_to_tip_m: float | None = None  # None: the pads' middle (half the pad length)
    palm_width_m: float | None = None   # None: the fingers' width + 20 mm
    palm_length_m: float | None = None  # None: the open fingers with pads and bodies + 20 mm
    pad_friction: float = 1.0
    camera_height_m: float = 0.75
    camera_tilt_rad: float = 0.0
    image_width_px: int = 640
    image_height_px: int = 480
    hfov_rad: float = math.radians(69.0)
    depth_noise: bool | DepthNoise = True
    gripper_mjcf: str | None = None   # Menagerie's robotiq_2f85/2f85.xml instead of the built-in jaw
    stall_reads: int = 6     # cycles with no object leaving before the table is laid anew
    no_grasp_cycles: int = 2  # cycles in a row finding nothing holdable before it is laid anew
    safe_height_m: float = 0.32
    hand: str = "parallel"
    stand_tall: bool = False
    operator_watches_hand: bool = True

    @property
    def jaw(self) -> bool:
        """Whether the cell carries the parallel jaw (else a multi-finger hand)."""
        return self.hand == "parallel"

    def __post_init__(self) -> None:
        if not isinstance(self.hand, str) or not (
                self.hand in BUILTIN_HANDS or (self.hand.lower().endswith(".json")
                                               and Path(self.hand).is_file())):
            raise ValueError(f"SimCellSettings.hand must be one of {', '.join(BUILTIN_HANDS)} or a "
                             f"JSON hand description file, got {self.hand!r}")
        if not self.jaw and self.gripper_mjcf is not None:
            raise ValueError(f"SimCellSettings: gripper_mjcf {self.gripper_mjcf!r} is a jaw; it "
                             f"cannot go with hand {self.hand!r}")
        lo, hi = self.objects_per_table
        if not (1 <= lo <= hi <= 10):
            raise ValueError(f"objects_per_table must be (min, max) with 1 <= min <= max <= 10, "
                             f"got {self.objects_per_table!r}")
        if not isinstance(self.random_primitives, bool):
            for kind in self.random_primitives:
                if kind not in PRIMITIVE_KINDS:
                    raise ValueError(f"random_primitives: kind {kind!r} unknown; choose from "
                                     f"{', '.join(PRIMITIVE_KINDS)}")
        for name in self.builtin:
            if name not in BUILTIN_OBJECTS:
                raise ValueError(f"builtin object {name!r} unknown; choose from {', '.join(BUILTIN_OBJECTS)}")
        if self.gripper_mjcf is not None and not Path(self.gripper_mjcf).is_file():
            raise ValueError(f"gripper_mjcf {self.gripper_mjcf!r} is not a file")
        if self.ycb_dir is not None and not Path(self.ycb_dir).is_dir():
            raise ValueError(f"ycb_dir {self.ycb_dir!r} is not a folder")
        for name in ("density_kg_m3", "finger_width_m", "open_width_m", "pad_friction",
                     "camera_height_m", "safe_height_m", "finger_length_m", "pad_length_m",
                     "pad_thickness_m", "finger_thickness_m"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"SimCellSettings.{name} must be finite and > 0, got {v!r}")


def _hand(s: SimCellSettings) -> HandModel:
    """The cell's hand: the built-in parallel jaw of the 2F-85's size, Menagerie's 2F-85, or
    the multi-finger hand the settings name (built as the database build builds it)."""
    if not s.jaw:
        from ..database import HandSource  # the one reader of hand names and descriptions

        try:
            return HandSource.parse(s.hand).build()
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise ValueError(f"SimCellSettings.hand {s.hand!r}: {exc}") from exc
    if s.gripper_mjcf is None:
        return parallel_jaw(finger_width_m=s.finger_width_m, open_width_m=s.open_width_m,
                            finger_length_m=s.finger_length_m, pad_length_m=s.pad_length_m,
                            finger_thickness_m=s.finger_thickness_m,
                            pad_thickness_m=s.pad_thickness_m, tcp_to_tip_m=s.tcp_to_tip_m,
                            palm_width_m=s.palm_width_m, palm_length_m=s.palm_length_m,
                            pad_friction=s.pad_friction, force_limit_n=235.0)
    # Menagerie's model: one tendon actuator (control 0 open .. 255 closed), pads left_pad and
    # right_pad, the "pinch" site between the fingertips as the TCP
    return load_mjcf_hand(s.gripper_mjcf, closing_actuators=["fingers_actuator"],
                          links=["left_pad", "right_pad"], tcp_site="pinch",
                          aperture_m=s.open_width_m, name="robotiq_2f85")


FELL_OFF_Z_M = -0.2  # an object whose origin is this far under the table top fell off it
SETTLE_S = 0.3  # the new table's first settle, s
# A laid table waits until its objects are at rest: every one slower than REST_SPEED_MPS
# and turning slower than REST_TURN_RADPS at REST_CHECKS checks in a row, REST_CHECK_S
# apart (one reading would take a rocking can at the end of its swing for one at rest), for
# at most REST_MAX_S; whatever still moves then is stopped by hand and waited for again, at
# most REST_STOPS times.
REST_SPEED_MPS = 0.001
REST_TURN_RADPS = 0.05
REST_CHECK_S = 0.1
REST_CHECKS = 5
REST_MAX_S = 2.0
REST_STOPS = 3


class SimCell:
    """The simulated cell: owns the world and its clock; ``camera``, ``gripper`` and ``arm``
    are its devices. Same settings and seed, same sequence of tables."""

    def __init__(self, settings: SimCellSettings = SimCellSettings(), *, seed: int | None = 0,
                 cache_dir: str | Path | None = ".graspline-cache") -> None:
        self.settings = settings
        self._rng = np.random.default_rng(seed)
        self._cache_dir = cache_dir
        self.hand = _hand(settings)
        self._catalogue = self._load_catalogue()
        self.world: CellWorld = None  # type: ignore[assignment]
        self.time_s = 0.0
        self.tables = 0
        self.settled_poses: list[np.ndarray] = []  # the table's objects once settled (world)
        self.settled_on_table: list[bool] = []    # which of them settled on the table
        self.slip_on_lift = False   # fault injection: the next lift loses the grip
        self.taken_off_hand = 0     # objects the operator took off the hand (take_off_hand)
        self.hand_checks = 0        # times the loop asked the operator to see to the hand
        self._reads_since_progress = 0
        self._no_grasp_run = 0
        self._n_on_table = 0
        down = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
        self.home_pose = np.eye(4)
        self.home_pose[:3, :3] = down
        self.home_pose[:3, 3] = (0.0, -0.52, 0.36)
        self.place_pose = self.home_pose.copy()
        self.place_pose[:3, 3] = (0.0, -0.5, 0.25)    # over the bin beside the table
        self.arm = SimArm(self)
        # the jaw's device (a Gripper) or the multi-finger hand's (a Hand); the other is None
        self.gripper: SimJawGripper | None = None
        self.hand_device: SimHand | None = None
        if settings.jaw:
            self.gripper = SimJawGripper.__new__(SimJawGripper)  # bound below, once a world exists
        self.new_table()
        if settings.jaw:
            SimJawGripper.__init__(self.gripper, self)
        else:
            self.hand_device = SimHand(self)
        intr = intrinsics_from_fov(settings.image_width_px, settings.image_height_px,
                                   settings.hfov_rad)
        eye = np.array([0.0, -settings.camera_height_m * math.tan(settings.camera_tilt_rad),
                        settings.camera_height_m])
        self.camera = SimCellCamera(self, intr, look_at(eye, np.zeros(3), up=(0.0, 1.0, 0.0)),
                                    noise=_noise_model(settings.depth_noise),
                                    seed=int(self._rng.integers(2**31)))

    # -------------------------------------------------------------------- the world
    def _load_catalogue(self) -> list[tuple[str, object]]:
        """(kind, source) of every object the cell may lay: built-ins, primitives, YCB."""
        s = self.settings
        cat: list[tuple[str, object]] = [("builtin", n) for n in s.builtin]
        # a multi-finger hand grasps by the database: only objects a database was built with
        if s.jaw and s.random_primitives is True:
            cat += [("primitive", k) for k in ("box", "plate", "bar", "cylinder", "wide_can",
                                               "wide_box", "heavy_box")]
        elif s.jaw and s.random_primitives:
            cat += [("primitive", k) for k in s.random_primitives]
        if s.ycb_dir is not None:
            cat += [("ycb", p) for p in sorted(Path(s.ycb_dir).glob("*/visual.obj"))]
        return cat

    def _make_object(self, kind: str, source: object) -> GraspObject:
        """One GraspObject of the catalogue entry (random sizes drawn from the cell's rng)."""
        if kind == "builtin":
            return builtin_object(str(source), density=self.settings.density_kg_m3)
        if kind == "primitive":
            return random_primitive(str(source), self._rng, self.settings.density_kg_m3)
        path = Path(source)
        obj = load_object(path, cache_dir=self._cache_dir, n_poses=6)
        mass = YCB_MASS_KG.get(path.parent.name)
        # "ycb_" tells a scan from the built-in shape of the same name (banana)
        obj = replace(obj, name=f"ycb_{path.parent.name}")
        return replace(obj, mass_kg=mass) if mass else obj

    def use_settings(self, settings: SimCellSettings) -> None:
        """Rebuild the cell's jaw and objects from new settings (an experiment: thinner
        fingers, other objects), then lay a new table; the clock and the seed go on. The
        hand's kind (jaw or multi-finger) stays: a cell of the other kind is a new SimCell."""
        if settings.hand != self.settings.hand:
            raise ValueError(f"use_settings: the cell carries hand {self.settings.hand!r}; build "
                             f"a new SimCell for hand {settings.hand!r}")
        self.settings = settings
        self.hand = _hand(settings)
        self._catalogue = self._load_catalogue()
        self.new_table()

    def new_table(self) -> None:
        """Lay a fresh table: random objects in random stable poses, hand at home, settled."""
        lo, hi = self.settings.objects_per_table
        self._catalogue = self._load_catalogue()  # the settings may have changed since
        n = int(self._rng.integers(lo, hi + 1))
        picks = self._rng.choice(len(self._catalogue), size=n, replace=n > len(self._catalogue))
        objects = [self._make_object(*self._catalogue[i]) for i in picks]
        poses = self._place(objects)
        colours = self._rng.uniform(0.25, 0.95, (len(objects), 3))
        self.world = build_cell_world(objects, poses, self.hand, colours=colours,
                                      pad_friction=self.settings.pad_friction,
                                      jaw=self.settings.jaw)
        self.tables += 1
        self._reads_since_progress = 0
        self._no_grasp_run = 0
        self._n_on_table = len(objects)
        self.arm.home()
        self.gripper_reset()
        self._settle_to_rest()
        # Where the objects came to rest: a pose laid on or against another object's may
        # tip over or be thrown off the table while settling (the laid pose is the model's).
        self.settled_poses = [self.world.T_world_object(k) for k in range(len(objects))]
        self.settled_on_table = [bool(T[2, 3] >= FELL_OFF_Z_M) for T in self.settled_poses]

    def _settle_to_rest(self) -> None:
        """Let a new table's objects settle for SETTLE_S; where one still moves, wait until all
        are at rest (REST_*) and stop by hand what does not come to rest, as an operator
        laying the table would. MuJoCo's contacts (condim 3) have no rolling resistance: a
        lying bottle set rolling by its drop onto the table rolled 60-100 mm between the
        camera's frame and the fingers' arrival (seed 110's best pass, table 5: the grasp
        closed on air)."""
        dt = self.world.model.opt.timestep
        self.step(int(SETTLE_S / dt))
        if not self._moving():  # the common case: the table as it always was
            return
        for _ in range(REST_STOPS):
            still, waited = 0, 0.0
            while still < REST_CHECKS and waited < REST_MAX_S:
                self.step(int(REST_CHECK_S / dt))
                waited += REST_CHECK_S
                still = 0 if self._moving() else still + 1
            if still >= REST_CHECKS:
                return
            self._stop_objects()

    def _object_dofs(self) -> list[int]:
        """The first velocity index of each object's free joint."""
        m, w = self.world.model, self.world
        return [int(m.jnt_dofadr[m.body_jntadr[b]]) for b in w.object_body]

    def _moving(self) -> bool:
        """Whether an object on the table moves faster than REST_SPEED_MPS or turns faster
        than REST_TURN_RADPS (its free joint's velocities)."""
        v = self.world.data.qvel
        return any(np.linalg.norm(v[d:d + 3]) > REST_SPEED_MPS
                   or np.linalg.norm(v[d + 3:d + 6]) > REST_TURN_RADPS
                   for k, d in enumerate(self._object_dofs())
                   if self.world.data.xpos[self.world.object_body[k], 2] >= FELL_OFF_Z_M)

    def _stop_objects(self) -> None:
        """Zero every object's velocity, where it is."""
        import mujoco

        for d in self._object_dofs():
            self.world.data.qvel[d:d + 6] = 0.0
        mujoco.mj_forward(self.world.model, self.world.data)

    def _place(self, objects: list[GraspObject]) -> list[np.ndarray]:
        """Non-overlapping resting poses on the table (rejection sampling)."""
        hx, hy = PLACE_REGION_M
        placed: list[tuple[float, float, float]] = []
        poses = []
        for obj in objects:
            for _ in range(500):
                yaw = self._rng.uniform(-math.pi, math.pi)
                xy = (self._rng.uniform(-hx, hx), self._rng.uniform(-hy, hy))
                T = (tallest_stable_pose(obj, xy, yaw) if self.settings.stand_tall
                     else random_stable_pose(obj, xy, yaw, self._rng))
                r = footprint_radius_m(obj, T)
                if all(math.hypot(xy[0] - x, xy[1] - y) >= r + rr + GAP_M for x, y, rr in placed):
                    break
            placed.append((xy[0], xy[1], r))
            poses.append(T)
        return poses

    def gripper_reset(self) -> None:
        """The jaw (or the hand) commanded fully open (after a new table or an activation)."""
        w = self.world
        if w.fingers is not None:
            if self.hand_device is None:  # the first table, before the device exists
                w.data.ctrl[w.fingers.drives.act_ids] = w.fingers.drive_open
                w.data.ctrl[w.fingers.servo_ids] = w.fingers.servo_rest
            else:
                self.hand_device.reset()
            return
        w.data.ctrl[w.close_actuator] = w.ctrl_open

    def step(self, n: int = 1) -> None:
        """Advance the world n steps."""
        import mujoco

        mujoco.mj_step(self.world.model, self.world.data, n)
        self.time_s += n * self.world.model.opt.timestep

    # ---------------------------------------------------------------- bookkeeping
    def before_capture(self) -> None:
        """Called by the camera before each frame: objects that fell off the table (into the
        bin beside it) are taken out of the cell."""
        w = self.world
        for k in range(len(w.objects)):
            if w.data.xpos[w.object_body[k], 2] < FELL_OFF_Z_M:
                self.park(k)

    def start_cycle(self, *, no_grasp: bool | None = None) -> None:
        """Called by the loop as a cycle starts (the simulated operator's moment): take off
        the hand what still hangs on it (take_off_hand, where the operator watches the hand),
        and lay a new table when it is
        empty, when the last ``no_grasp_cycles`` cycles found nothing holdable on it, or
        when no object has left it for ``stall_reads`` cycles (grasps that keep failing).

        no_grasp : how the loop's previous cycle ended: True when it saw objects but none it
        could hold (nothing on the table can be picked: the operator clears it at once),
        False when it chose a grasp, None when it cannot say (a camera fault, the first
        cycle), which leaves the count of no-grasp cycles as it is.
        """
        if self.settings.operator_watches_hand:
            self.take_off_hand()
        self.before_capture()
        left = self._n_on_table - len(self.world.on_table())
        self._n_on_table -= left
        self._reads_since_progress = 0 if left else self._reads_since_progress + 1
        if left or no_grasp is False:
            self._no_grasp_run = 0
        elif no_grasp:
            self._no_grasp_run += 1
        if (self._n_on_table == 0 or self._reads_since_progress > self.settings.stall_reads
                or self._no_grasp_run >= self.settings.no_grasp_cycles):
            self.new_table()

    def take_off_hand(self) -> list[int]:
        """Take off the hand any object it carries as a cycle starts (one hooked on a finger
        that the release over the bin did not drop): the camera, looking at the table, cannot
        see it, and the next approach would press it onto the table or the next object, a
        protective stop charged to a grasp that did not cause it. An operator clears it;
        0-based indices of the objects taken off, each logged."""
        hung = self.world.objects_hanging_on_hand()
        for k in hung:
            log.warning("%s still hangs on the hand as a cycle starts (the release did not drop "
                        "it); the operator takes it off", self.object_name(k))
            self.park(k)
        self.taken_off_hand += len(hung)
        return hung

    def see_to_hand(self) -> list[int]:
        """The operator answers the loop's call to look at the hand (a run of approaches that
        stopped where its camera saw nothing): takes off what hangs on it (take_off_hand) and
        counts the call; 0-based indices of the objects taken off."""
        self.hand_checks += 1
        log.warning("the loop asked the operator to see to the hand (call %d)", self.hand_checks)
        return self.take_off_hand()

    def park(self, k: int) -> None:
        """Move object k out of the cell (far away on the floor), at rest: an object fallen
        into the bin, or one an operator takes off the table."""
        import mujoco

        w = self.world
        q = w.object_qposadr[k]
        w.data.qpos[q:q + 7] = (20.0 + 0.5 * k, 0.0, -0.7, 1.0, 0.0, 0.0, 0.0)
        dof = w.model.jnt_dofadr[w.model.body_jntadr[w.object_body[k]]]
        w.data.qvel[dof:dof + 6] = 0.0
        mujoco.mj_forward(w.model, w.data)

    def object_at(self, T_base_tcp: np.ndarray, radius_m: float = 0.06) -> int | None:
        """0-based index of the object nearest the TCP's position within radius_m, if any."""
        w = self.world
        pos = w.data.xipos[w.object_body]
        d = np.linalg.norm(pos - T_base_tcp[:3, 3], axis=1)
        k = int(np.argmin(d)) if len(d) else -1
        return k if k >= 0 and d[k] <= radius_m else None

    def object_name(self, k: int) -> str:
        """Name of object k (0-based) of the current table."""
        return self.world.objects[k].name

    def execute_grasp(self, T_base_hand: np.ndarray, preshape: np.ndarray, *,
                      settings: HandGraspSettings = HandGraspSettings(),
                      object_index: int | None = None) -> HandGraspOutcome:
        """Execute a multi-finger grasp with the cell's arm and hand (execute_hand_grasp:
        pre-grasp, preshape, approach, close, lift, hold, judge), the truth of whether the
        object rose taken from the world. object_index : the object grasped (0-based); None:
        the one nearest the grasp's TCP (within 10 cm). The object stays in the hand."""
        if self.hand_device is None:
            raise ValueError("execute_grasp needs a cell with a multi-finger hand "
                             "(SimCellSettings.hand); this one carries the parallel jaw")
        T = np.asarray(T_base_hand, np.float64)
        k = self.object_at(T, radius_m=0.1) if object_index is None else object_index
        z0 = None if k is None else float(self.world.T_world_object(k)[2, 3])

        def rose() -> bool | None:
            if k is None:
                return None
            return bool(self.world.T_world_object(k)[2, 3] > z0 + 0.5 * settings.lift_m)

        def hold(seconds: float) -> None:
            self.step(int(round(seconds / self.world.model.opt.timestep)))

        return execute_hand_grasp(self.arm, self.hand_device, T, preshape, settings=settings,
                                  hold=hold, rose=rose)

    def close(self) -> None:
        """Close the devices."""
        self.camera.close()
        if self.gripper is not None:
            self.gripper.close()
        if self.hand_device is not None:
            self.hand_device.shutdown()
        self.arm.close()

    def __enter__(self) -> "SimCell":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _noise_model(depth_noise: bool | DepthNoise) -> DepthNoise | None:
    """The camera's depth noise for SimCellSettings.depth_noise: the D400 defaults for True,
    the model given, or none for False."""
    if isinstance(depth_noise, DepthNoise):
        return depth_noise
    return DepthNoise() if depth_noise else None
