"""The simulated cell's MuJoCo world: a table, objects resting in random stable poses, and a
parallel-jaw gripper on the arm's flange. The arm is position-controlled and not backdrivable,
as an industrial arm is: the flange is a free body welded stiffly to a mocap body that carries
the commanded pose. (A hand on the mocap body itself would move without a velocity, and
friction would not drag a held object along: it would slide out of the pads on the lift.)

Frames: the world is the robot base; the table top is the plane z = 0.

Physics settings, and why:
- timestep 2 ms, implicitfast, elliptic cones with impratio 10, Newton: as the grasp
  simulation (offline_sim.dynamics), whose tests measured these against smaller steps; 2 ms
  rather than 3 because the arm moves the gripper kinematically and a faster mocap motion
  needs a finer step to keep each step's travel under a millimetre.
- Pads win friction: each pad geom has priority 1, so a pad/object contact takes the pad's
  friction (1.0 rubber, 0.5 taped) rather than MuJoCo's default maximum of the two geoms.
- Objects: 0.6 against the table (wood/laminate on plastic and cardboard).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from geometry import matrix_to_quat, pose
from ..hands import HandModel
from ..hands._hands import SOLREF
from ..dynamics import HAND_PREFIX, attach_hand
from ..dynamics._grasp_world import bodies_below
from ..objects import GraspObject, object_mjcf
from ._fingers import FingerIndex, index_fingers

TABLE_HALF_EXTENTS_M = (0.40, 0.30)
OBJECT_FRICTION = 0.6
OBJECT_CONTYPE, OBJECT_CONAFFINITY = 1, 3  # touch each other, the table and the hand
PARKED_Z_M = -0.78   # picked objects rest on the floor far from the table (they left the cell)


@dataclass
class CellWorld:
    """A compiled cell: the model, its one MjData, and the ids the arm, gripper and camera use.

    objects[k] is instance k + 1 (geom_instance gives each geom's instance, 0 = not an object);
    object_body[k] its body and object_qposadr[k] its free joint's qpos address. T_root_tcp is
    the TCP in the hand's root frame; the mocap body carries the hand root.
    """

    model: object
    data: object
    hand: HandModel
    objects: list[GraspObject]
    object_body: np.ndarray
    object_qposadr: np.ndarray
    geom_instance: np.ndarray
    hand_geom: np.ndarray       # (ngeom,) bool
    table_geom: int
    mocap_id: int
    tcp_site: int
    T_root_tcp: np.ndarray
    pad_left: np.ndarray        # geom ids of the left and right pads
    pad_right: np.ndarray
    close_actuator: int
    flange_qposadr: int         # the free joint of the arm's flange, which carries the hand
    flange_dofadr: int
    ctrl_open: float = 0.0      # the closing actuator's control when open and when closed
    ctrl_closed: float = 1.0
    sep_open_m: float = 0.0     # pad-centre separation along the TCP x axis, open and closed
    sep_closed_m: float = 0.0
    R_site_tcp: np.ndarray = field(default_factory=lambda: np.eye(3))
    fingers: FingerIndex | None = None   # a multi-finger hand's ids; None for the jaw

    def pad_separation_m(self) -> float:
        """Distance between the pads' centres along the closing direction now, metres."""
        d = self.data
        x = self.T_world_tcp()[:3, 0]
        return float((d.geom_xpos[self.pad_right].mean(0) - d.geom_xpos[self.pad_left].mean(0)) @ x)

    def jaw_width_m(self) -> float:
        """The jaw's opening now, metres: 0 closed, hand.aperture_m open (linear in the pad
        separation between the two, measured when the cell was built)."""
        f = (self.pad_separation_m() - self.sep_closed_m) / (self.sep_open_m - self.sep_closed_m)
        return max(0.0, f * self.hand.aperture_m)

    def teleport_flange(self, T_world_flange: np.ndarray) -> None:
        """Put the arm's flange (and its commanded pose) at T_world_flange at once, at rest."""
        import mujoco

        q = matrix_to_quat(T_world_flange[:3, :3])
        self.data.mocap_pos[self.mocap_id] = T_world_flange[:3, 3]
        self.data.mocap_quat[self.mocap_id] = q
        a = self.flange_qposadr
        self.data.qpos[a:a + 3] = T_world_flange[:3, 3]
        self.data.qpos[a + 3:a + 7] = q
        self.data.qvel[self.flange_dofadr:self.flange_dofadr + 6] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def objects_hanging_on_hand(self) -> list[int]:
        """0-based indices of objects touching the hand and nothing else (no table, floor or
        other object) now: carried by it, as a part hooked on a finger after the release."""
        d = self.data
        on_hand, elsewhere = set(), set()
        for i in range(d.ncon):
            c = d.contact[i]
            for a, b in ((int(c.geom1), int(c.geom2)), (int(c.geom2), int(c.geom1))):
                k = int(self.geom_instance[a]) - 1
                if k >= 0:
                    (on_hand if self.hand_geom[b] else elsewhere).add(k)
        return sorted(on_hand - elsewhere)

    def T_world_object(self, k: int) -> np.ndarray:
        """Pose of object k (0-based) now, 4 x 4, metres."""
        b = self.object_body[k]
        return pose(self.data.xmat[b].reshape(3, 3), self.data.xpos[b])

    def T_world_tcp(self) -> np.ndarray:
        """Pose of the gripper's TCP now (the TCP site, turned so that x is the closing
        direction), 4 x 4, metres."""
        R = self.data.site_xmat[self.tcp_site].reshape(3, 3) @ self.R_site_tcp
        return pose(R, self.data.site_xpos[self.tcp_site])

    def on_table(self) -> list[int]:
        """0-based indices of objects still in the cell (not parked on the floor)."""
        z = self.data.xpos[self.object_body, 2]
        return [k for k in range(len(self.objects)) if z[k] > PARKED_Z_M + 0.3]


def _object_body_xml(k: int, obj: GraspObject, T: np.ndarray, rgba: str) -> tuple[str, str]:
    """(assets, body) XML of object k (1-based) at pose T (4 x 4, metres)."""
    asset, geoms = object_mjcf(obj, f"obj{k}", rgba)
    q = " ".join(f"{c:.9f}" for c in matrix_to_quat(T[:3, :3]))
    p = " ".join(f"{c:.6f}" for c in T[:3, 3])
    return asset, f'<body name="obj{k}" pos="{p}" quat="{q}"><freejoint/>{geoms}</body>'


def _world_xml(objects: list[GraspObject], poses: list[np.ndarray], colours: np.ndarray,
               table_friction: float) -> str:
    """MJCF of the table, floor, objects at their poses and the arm's mocap mount."""
    assets, bodies = [], []
    for k, (obj, T) in enumerate(zip(objects, poses), start=1):
        a, b = _object_body_xml(k, obj, T, " ".join(f"{c:.3f}" for c in colours[k - 1]) + " 1")
        assets.append(a)
        bodies.append(b)
    hx, hy = TABLE_HALF_EXTENTS_M
    return f"""<mujoco model="picking_cell">
  <compiler angle="radian"/>
  <option timestep="0.002" integrator="implicitfast" cone="elliptic" impratio="10"
          solver="Newton" iterations="50" tolerance="1e-8"/>
  <asset>{''.join(assets)}</asset>
  <worldbody>
    <geom name="floor" type="plane" pos="0 0 {PARKED_Z_M - 0.02:.3f}" size="20 20 0.1"
          rgba="0.4 0.4 0.4 1"/>
    <geom name="table" type="box" pos="0 0 -0.02" size="{hx} {hy} 0.02"
          friction="{table_friction} 0.005 0.0001" solref="{SOLREF}" solimp="0.95 0.99 0.001"
          rgba="0.62 0.55 0.45 1"/>
    {''.join(bodies)}
    <body name="arm_mount" mocap="true" pos="0 -0.5 0.5"/>
    <body name="arm_flange" pos="0 -0.5 0.5" gravcomp="1">
      <freejoint name="arm_flange"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.005 0.005 0.005"/>
    </body>
  </worldbody>
  <equality>
    <!-- the arm's position control: the flange follows the commanded pose stiffly -->
    <weld body1="arm_mount" body2="arm_flange" solref="0.004 1" solimp="0.99 0.999 0.001"/>
  </equality>
</mujoco>"""


def build_cell_world(objects: list[GraspObject], poses: list[np.ndarray], hand: HandModel, *,
                     colours: np.ndarray, pad_friction: float, jaw: bool = True) -> CellWorld:
    """Compile the cell with objects at poses (T_world_object, 4 x 4) and the hand on the arm.

    pad_friction : sliding friction of the pads (those geoms have "pad" in their name) against
    anything they touch (1.0 rubber, about 0.5 taped). jaw : the hand is a parallel jaw (two
    pads, one closing servo, SimJawGripper); False: a multi-finger hand (SimHand), indexed
    by its drives and fingers.
    """
    import mujoco

    spec = mujoco.MjSpec.from_string(_world_xml(objects, poses, colours, OBJECT_FRICTION))
    for g in spec.geoms:
        if g.name.startswith("obj"):
            g.contype, g.conaffinity = OBJECT_CONTYPE, OBJECT_CONAFFINITY
            g.friction = [OBJECT_FRICTION, 0.005, 0.0001]
            g.solref = [float(x) for x in SOLREF.split()]
            g.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
    attach_hand(spec, hand, "arm_flange", HAND_PREFIX)
    for g in spec.geoms:
        if g.name.startswith(HAND_PREFIX) and "pad" in g.name:
            g.priority = 1
            g.friction = [pad_friction, 0.005, 0.0001]
    try:
        model = spec.compile()
    except Exception as exc:  # noqa: BLE001 - MuJoCo raises ValueError with its own text
        raise ValueError(f"the simulated cell does not compile with hand {hand.name!r}: {exc}") from exc
    data = mujoco.MjData(model)
    return _index(model, data, hand, objects) if jaw else _index_fingers(model, data, hand, objects)


def _ident(model):
    """name -> id lookup of a compiled cell, a ValueError naming what it lacks."""
    import mujoco

    def ident(kind, name: str) -> int:
        i = mujoco.mj_name2id(model, kind, name)
        if i < 0:
            raise ValueError(f"the simulated cell has no {kind.name[6:].lower()} named {name!r}")
        return i

    return ident


def _object_ids(model, n_objects: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The objects' body ids (obj1..objN), their free joints' qpos addresses, and each geom's
    object instance (1..N, 0 for the rest of the cell)."""
    import mujoco

    ident = _ident(model)
    bodies = np.array([ident(mujoco.mjtObj.mjOBJ_BODY, f"obj{k}") for k in range(1, n_objects + 1)],
                      np.int64)
    qadr = np.array([model.jnt_qposadr[model.body_jntadr[b]] for b in bodies], np.int64)
    geom_instance = np.zeros(model.ngeom, np.int32)
    for k, b in enumerate(bodies, start=1):
        geom_instance[model.geom_bodyid == b] = k
    return bodies, qadr, geom_instance


def _index(model, data, hand: HandModel, objects: list[GraspObject]) -> CellWorld:
    """Look up the ids of the compiled cell and measure the TCP in the hand root frame."""
    import mujoco

    O = mujoco.mjtObj
    ident = _ident(model)
    bodies, qadr, geom_instance = _object_ids(model, len(objects))
    mount = ident(O.mjOBJ_BODY, "arm_mount")
    flange = ident(O.mjOBJ_BODY, "arm_flange")
    hand_geom = bodies_below(model, flange)[model.geom_bodyid]
    act = ident(O.mjOBJ_ACTUATOR, HAND_PREFIX + hand.drives[0].actuators[0])
    names = [mujoco.mj_id2name(model, O.mjOBJ_GEOM, g) or "" for g in range(model.ngeom)]
    pads = {side: np.array([g for g in range(model.ngeom) if hand_geom[g] and "pad" in names[g]
                            and side in names[g]], np.int64) for side in ("left", "right")}
    if not (len(pads["left"]) and len(pads["right"])):
        raise ValueError(f"hand {hand.name!r}: the simulated cell's jaw needs geoms named "
                         f"'*left*pad*' and '*right*pad*'")
    world = CellWorld(model, data, hand, list(objects), bodies, qadr, geom_instance, hand_geom,
                      ident(O.mjOBJ_GEOM, "table"), int(model.body_mocapid[mount]),
                      ident(O.mjOBJ_SITE, HAND_PREFIX + hand.tcp_site), np.eye(4),
                      pads["left"], pads["right"], act,
                      int(model.jnt_qposadr[model.body_jntadr[flange]]),
                      int(model.jnt_dofadr[model.body_jntadr[flange]]))
    _calibrate_jaw(world)
    return world


def _index_fingers(model, data, hand: HandModel, objects: list[GraspObject]) -> CellWorld:
    """The CellWorld of a multi-finger hand: the jaw's fields hold its first drive (the
    fault injection of a weak grip scales that actuator), pads are empty, and the TCP is the
    hand's TCP site as it is (z the approach: the frame of the database's T_object_hand)."""
    import mujoco

    O = mujoco.mjtObj
    ident = _ident(model)
    bodies, qadr, geom_instance = _object_ids(model, len(objects))
    mount = ident(O.mjOBJ_BODY, "arm_mount")
    flange = ident(O.mjOBJ_BODY, "arm_flange")
    fingers = index_fingers(model, data, hand, flange)
    act = int(fingers.drives.act_ids[0])
    lo, hi = (float(v) for v in model.actuator_ctrlrange[act])
    world = CellWorld(model, data, hand, list(objects), bodies, qadr, geom_instance,
                      bodies_below(model, flange)[model.geom_bodyid], ident(O.mjOBJ_GEOM, "table"),
                      int(model.body_mocapid[mount]),
                      ident(O.mjOBJ_SITE, HAND_PREFIX + hand.tcp_site), np.eye(4),
                      np.zeros(0, np.int64), np.zeros(0, np.int64), act,
                      int(model.jnt_qposadr[model.body_jntadr[flange]]),
                      int(model.jnt_dofadr[model.body_jntadr[flange]]),
                      ctrl_open=lo if fingers.drives.act_sign[0] > 0 else hi,
                      ctrl_closed=hi if fingers.drives.act_sign[0] > 0 else lo, fingers=fingers)
    # the TCP in the hand root frame, measured with the flange held high above the cell
    T_high = np.eye(4)
    T_high[2, 3] = 2.0
    world.teleport_flange(T_high)
    T_site = pose(data.site_xmat[world.tcp_site].reshape(3, 3), data.site_xpos[world.tcp_site])
    world.T_root_tcp = np.linalg.inv(T_high) @ T_site
    return world


def _calibrate_jaw(world: CellWorld) -> None:
    """Measure, with the hand held high above the cell: the TCP in the hand root frame (z the
    site's approach axis, x the closing direction from the left pad to the right one) and the
    pad separation with the jaw open and closed on nothing."""
    import mujoco

    m, d, a = world.model, world.data, world.close_actuator
    world.ctrl_open, world.ctrl_closed = (float(v) for v in m.actuator_ctrlrange[a])
    T_high = np.eye(4)
    T_high[2, 3] = 2.0
    steps = int(0.6 / m.opt.timestep)

    def settle(ctrl: float) -> np.ndarray:
        world.teleport_flange(T_high)
        d.ctrl[a] = ctrl
        mujoco.mj_step(m, d, steps)
        return d.geom_xpos[world.pad_right].mean(0) - d.geom_xpos[world.pad_left].mean(0)

    sep_closed = settle(world.ctrl_closed)
    sep_open = settle(world.ctrl_open)
    T_site = pose(d.site_xmat[world.tcp_site].reshape(3, 3), d.site_xpos[world.tcp_site])
    z = T_site[:3, 2]
    x = sep_open - (sep_open @ z) * z
    x /= np.linalg.norm(x)
    R = np.column_stack([x, np.cross(z, x), z])
    world.R_site_tcp = T_site[:3, :3].T @ R
    world.T_root_tcp = np.linalg.inv(T_high) @ pose(R, T_site[:3, 3])
    world.sep_open_m, world.sep_closed_m = float(sep_open @ x), float(sep_closed @ x)
    world.teleport_flange(np.eye(4) @ T_high)


def random_stable_pose(obj: GraspObject, xy: tuple[float, float], yaw_rad: float,
                       rng: np.random.Generator) -> np.ndarray:
    """T_world_object of obj resting in one of its stable poses (drawn by probability) at
    table point xy (metres) turned by yaw_rad about the vertical."""
    p = obj.stable_probabilities / obj.stable_probabilities.sum()
    T_rest = obj.stable_poses[rng.choice(len(p), p=p)]
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    T_yaw = pose(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), (xy[0], xy[1], 0.0))
    T = T_yaw @ T_rest
    T[2, 3] += 0.0005  # half a millimetre of air: it settles instead of starting in contact
    return T


def tallest_stable_pose(obj: GraspObject, xy: tuple[float, float], yaw_rad: float, *,
                        min_probability: float = 0.02) -> np.ndarray:
    """T_world_object of obj resting in the stable pose that stands its top highest (a bottle
    upright, a box on its end) at table point xy (metres) turned by yaw_rad about the vertical,
    among the poses of at least min_probability (trimesh also lists poses an object balances
    in only on paper: a drill on its chuck's edge topples as the table settles)."""
    p = obj.stable_probabilities / obj.stable_probabilities.sum()
    tops = [float((obj.visual[0] @ T[:3, :3].T)[:, 2].max() + T[2, 3]) if q >= min_probability
            else -math.inf for T, q in zip(obj.stable_poses, p)]
    T_rest = obj.stable_poses[int(np.argmax(tops))]
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    T_yaw = pose(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), (xy[0], xy[1], 0.0))
    T = T_yaw @ T_rest
    T[2, 3] += 0.0005  # as random_stable_pose: it settles instead of starting in contact
    return T


def footprint_radius_m(obj: GraspObject, T_world_object: np.ndarray) -> float:
    """Radius (metres) of the object's footprint on the table about its pose's origin."""
    v = obj.visual[0] @ T_world_object[:3, :3].T
    return float(np.hypot(v[:, 0], v[:, 1]).max())
