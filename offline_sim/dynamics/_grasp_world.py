"""The compiled grasp world: a table, one object resting on it, a hand on a lifting carrier.

A GraspWorld is compiled once per (object, hand) and reused for every trial: a trial resets
MjData and moves the hand's mount in the model (place_hand), which costs microseconds, where
compiling costs tens of milliseconds.

Solver settings (SimSettings and the MJCF below), and why:
- timestep 3 ms: the stiffest elements, the servos of the fingers (kp over armature + link)
  and of the carrier, sit at 80-210 rad/s, so ω·dt <= 0.65, inside the stable range with
  their damping integrated implicitly. Against 1 ms runs of 15 candidates per hand, 3 ms gave
  the same measure B as 2 ms and 1.5 ms did (three-finger 14/15, underactuated 15/15, jaw
  15/15; mean |ΔC| <= 0.015) at 1.5 times the speed of 2 ms (measured before the built-in
  hands grew to BH8 and ReFlex dimensions); the tests check that halving it changes nothing
  that matters (B equal, C within a tolerance) for every hand.
- integrator implicitfast: the servo and joint damping are integrated implicitly, which is
  what keeps stiff position servos stable at a large step, and it is cheaper than implicit.
- cone elliptic + impratio 10: elliptic cones model Coulomb friction without the pyramid's
  anisotropy, and a high impratio makes the friction constraints harder than the normal ones,
  which stops the slow creep (slip) of a held object that soft friction would give. MuJoCo's
  documentation recommends exactly this pair for grasping.
- contact solref (0.006, 1) (SOLREF in hands/_hands.py): a time constant of twice the timestep (the
  least MuJoCo allows without instability) with critical damping: stiff, non-bouncing.
  solimp (0.95, 0.99, 1 mm): impedance near 1 so penetration stays under a millimetre.
- friction 1.0 sliding (rubber-like pads), 0.005 torsional, 1e-4 rolling; condim 3. The
  table is 0.8. MuJoCo takes the larger friction of two touching geoms.
- solver Newton, 50 iterations, tolerance 1e-8: Newton converges in a few iterations on
  these small problems; the cap bounds the worst step.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scoring import check_pose, check_positive, check_rotation

from ._controller import HandDrives, hand_drives, hold_servos
from geometry import invert, matrix_to_quat, pose
from ..hands import HandModel
from ..hands._hands import SOLREF
from ._measures import GraspProbe
from ..objects import GraspObject, ObjectSpec, object_mjcf, object_points
from ._sim_settings import SimSettings
from ..objects._tabletop import primitive_geom_xml

OBJECT_GEOM_GROUP = 5  # object geoms live in this group so that rays see only the object
HAND_PREFIX = "hand/"
HAND_CONTYPE, HAND_CONAFFINITY = 2, 1


@dataclass
class GraspWorld:
    """A compiled world: table (top at z = 0), one object resting on it, a hand on a carrier.

    T_world_object : (4, 4) the object's resting (stable) pose; T_root_tcp : (4, 4) the TCP in
    the hand root frame. carrier_actuators : (3,) the x, y, z servos of the carrier;
    link_of_body : (nbody,) link index or -1; hand_body : (nbody,) bool, part of the hand;
    position_actuators : the hand servos whose targets start at the start position; drives :
    the closing actuators the controller moves; closing : "python" (position servos driven by
    ClosingLaw) or "native" (motor curves, _native). A trial writes the mount pose and the timestep
    into the model and runs in the world's one MjData, so a world serves one trial at a time:
    give each worker process its own world.
    """

    model: object
    data: object
    hand: HandModel
    obj: ObjectSpec | GraspObject
    T_world_object: np.ndarray
    T_root_tcp: np.ndarray
    object_body: int
    object_qposadr: int
    table_geom: int
    mount_body: int
    tcp_site: int
    carrier_actuators: np.ndarray
    link_of_body: np.ndarray
    hand_body: np.ndarray
    position_actuators: np.ndarray
    preshape_qposadr: np.ndarray
    preshape_value: np.ndarray
    drives: HandDrives
    closing: str = "python"
    hand_prefix: str = HAND_PREFIX

    @property
    def act_ids(self) -> np.ndarray:
        """(A,) ids of the closing actuators (= drives.act_ids)."""
        return self.drives.act_ids

    @property
    def probe(self) -> GraspProbe:
        """The ids the grasp measures read: object body, TCP site, table geom, links."""
        return GraspProbe(self.object_body, self.tcp_site, self.table_geom, self.link_of_body)


def _object_xml(obj: ObjectSpec | GraspObject) -> tuple[str, str]:
    """(assets, geoms) of the object: one primitive or mesh geom, or one geom per convex part
    of a decomposed GraspObject; every geom's name starts with "obj1"."""
    if isinstance(obj, GraspObject):
        return object_mjcf(obj, "obj1")
    return primitive_geom_xml(obj, 1)


def _world_xml(obj: ObjectSpec | GraspObject, z: float, quat: np.ndarray) -> str:
    """MJCF of table, object (at height z (m), orientation quat (w, x, y, z)) and carrier."""
    asset, geom = _object_xml(obj)
    q = " ".join(f"{c:.9f}" for c in quat)
    return f"""<mujoco model="grasp_world">
  <compiler angle="radian"/>
  <option timestep="0.003" integrator="implicitfast" cone="elliptic" impratio="10"
          solver="Newton" iterations="50" tolerance="1e-8"/>
  <asset>{asset}</asset>
  <worldbody>
    <geom name="table" type="box" pos="0 0 -0.02" size="0.6 0.6 0.02" friction="0.8 0.005 0.0001"
          contype="1" conaffinity="3"
          solref="{SOLREF}" solimp="0.95 0.99 0.001" rgba="0.62 0.55 0.45 1"/>
    <body name="object" pos="0 0 {z:.9f}" quat="{q}">
      <freejoint name="object"/>
      {geom}
    </body>
    <body name="carrier" gravcomp="1">
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <joint name="carrier_x" type="slide" axis="1 0 0" armature="1"/>
      <joint name="carrier_y" type="slide" axis="0 1 0" armature="1"/>
      <joint name="carrier_z" type="slide" axis="0 0 1" armature="1"/>
      <body name="mount"/>
    </body>
  </worldbody>
  <actuator>
    <!-- the arm: a stiff, critically damped servo per axis (the robot is not backdrivable) -->
    <position name="carrier_x" joint="carrier_x" kp="20000" dampratio="1"/>
    <position name="carrier_y" joint="carrier_y" kp="20000" dampratio="1"/>
    <position name="carrier_z" joint="carrier_z" kp="20000" dampratio="1"/>
  </actuator>
</mujoco>"""


def _set_object_geoms(spec, object_mass_kg: float | None) -> None:
    """Give the object's geoms (names "obj1...") their group, contacts and friction, and
    spread object_mass_kg (kg; None: keep the density's) over them in their shares."""
    object_geoms = [g for g in spec.geoms if g.name.startswith("obj1")]
    total_mass = sum(g.mass for g in object_geoms)
    for og in object_geoms:
        og.group = OBJECT_GEOM_GROUP
        og.contype, og.conaffinity = 1, 3
        og.friction = [0.8, 0.005, 0.0001]
        og.solref = [float(x) for x in SOLREF.split()]
        og.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
        if object_mass_kg is not None:  # keep the parts' shares of the mass
            og.mass = object_mass_kg * (og.mass / total_mass if total_mass > 0
                                        else 1.0 / len(object_geoms))


def attach_hand(spec, hand: HandModel, mount: str, prefix: str = HAND_PREFIX) -> None:
    """Attach the hand's MJCF below the body called mount in spec (a mujoco.MjSpec), its names
    prefixed, gravity-compensated (the arm carries it) and colliding with the world but not
    itself: world geoms need contype 1 and conaffinity 3 to touch it."""
    import mujoco

    hs = hand.spec()
    for b in hs.bodies:
        b.gravcomp = 1.0  # the arm carries the hand: fingers close the same way in any orientation
    for g in hs.geoms:
        # Hand geoms touch the object and the table but not each other: finger-finger pairs
        # cost narrow-phase time every step and decide nothing about the grasp (the tests'
        # grasps never close a finger through another). Object and table: contype 1,
        # conaffinity 3; hand: contype 2, conaffinity 1; visual-only geoms (0, 0) stay so.
        if g.contype or g.conaffinity:
            g.contype, g.conaffinity = HAND_CONTYPE, HAND_CONAFFINITY
    root = hs.worldbody.first_body()
    if root is None:
        raise ValueError(f"hand {hand.name!r}: its MJCF has no body in worldbody")
    for j in list(root.joints):
        # a free joint on the root (Menagerie's LEAP hand has one for a mocap weld) cannot
        # stand below the mount, and the mount carries the hand: it is left out
        if j.type == mujoco.mjtJoint.mjJNT_FREE:
            hs.delete(j)
    spec.body(mount).add_frame().attach_body(root, prefix, "")


def bodies_below(model, body: int) -> np.ndarray:
    """(nbody,) bool: the bodies in the subtree of body, body itself excluded."""
    below = np.zeros(model.nbody, bool)
    for b in range(model.nbody):
        p = b
        while p > 0 and p != body:
            p = model.body_parentid[p]
        below[b] = p == body and b != body
    return below


def _ident(model, hand: HandModel, kind, name: str) -> int:
    """Id of the named object of kind (mjtObj) in model; ValueError naming the hand if none."""
    import mujoco

    i = mujoco.mj_name2id(model, kind, name)
    if i < 0:
        raise ValueError(f"hand {hand.name!r}: no {kind.name[6:].lower()} named {name!r} in the world")
    return i


def build_grasp_world(obj: ObjectSpec | GraspObject, hand: HandModel, *,
                      R_table_object: np.ndarray | None = None,
                      object_mass_kg: float | None = None, closing: str = "python") -> GraspWorld:
    """Compile table + object + hand once; simulate_grasp then reuses it for every trial.

    obj : a primitive/mesh ObjectSpec, or a GraspObject whose convex parts become one geom
    each (its mass spread over them). R_table_object : (3, 3) the object's resting orientation
    (a stable pose; identity = as modelled); object_mass_kg : None for density 1000 kg/m³ (an
    ObjectSpec) or the GraspObject's own mass. closing : "python" keeps the closing servos for
    the per-step ClosingLaw; "native" turns them into Kim's motor curves (_native).
    """
    import mujoco

    from ._native import check_closing, native_closing_spec

    check_closing(closing)
    R = np.eye(3) if R_table_object is None else check_rotation(R_table_object, "R_table_object")
    if object_mass_kg is not None:
        check_positive(object_mass_kg, "object_mass_kg")
    z = -float((object_points(obj) @ R.T)[:, 2].min())  # lowest point on the table top
    spec = mujoco.MjSpec.from_string(_world_xml(obj, z, matrix_to_quat(R)))
    _set_object_geoms(spec, object_mass_kg)
    attach_hand(spec, hand, "mount")
    if closing == "native":
        native_closing_spec(spec, hand, HAND_PREFIX)
    try:
        model = spec.compile()
    except Exception as exc:
        raise ValueError(f"hand {hand.name!r} with object {obj.name!r}: world does not compile: {exc}") from exc
    world = _index_world(model, mujoco.MjData(model), hand, obj, pose(R, (0.0, 0.0, z)), closing)
    world.T_root_tcp = _root_tcp(model, world.data, world.mount_body, world.tcp_site)
    return world


def _index_world(model, data, hand: HandModel, obj, T_world_object: np.ndarray,
                 closing: str = "python") -> GraspWorld:
    """The GraspWorld of a compiled model: the ids and index arrays of its parts."""
    import mujoco

    O = mujoco.mjtObj
    object_body = _ident(model, hand, O.mjOBJ_BODY, "object")
    mount = _ident(model, hand, O.mjOBJ_BODY, "mount")
    link_of_body = np.full(model.nbody, -1, np.int64)
    for k, name in enumerate(hand.links):
        link_of_body[_ident(model, hand, O.mjOBJ_BODY, HAND_PREFIX + name)] = k
    tcp = _ident(model, hand, O.mjOBJ_SITE, HAND_PREFIX + hand.tcp_site)
    carrier = np.array([_ident(model, hand, O.mjOBJ_ACTUATOR, f"carrier_{a}") for a in "xyz"])
    pre_adr = np.array([model.jnt_qposadr[_ident(model, hand, O.mjOBJ_JOINT, HAND_PREFIX + j)]
                        for j, _ in hand.preshape], np.int64)
    pre_val = np.array([v for _, v in hand.preshape], np.float64)
    drives = hand_drives(model, hand, HAND_PREFIX)
    # native motor curves are affine too, but their ctrl is on/off, not a target to hold
    motors = set(drives.act_ids.tolist()) if closing == "native" else set()
    servo = [i for i in range(model.nu) if i not in carrier and i not in motors
             and model.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE]
    return GraspWorld(model, data, hand, obj, T_world_object, np.eye(4), object_body,
                      int(model.jnt_qposadr[model.body_jntadr[object_body]]),
                      _ident(model, hand, O.mjOBJ_GEOM, "table"), mount, tcp, carrier,
                      link_of_body, bodies_below(model, mount), np.array(servo, np.int64),
                      pre_adr, pre_val, drives, closing)


def _root_tcp(model, data, mount: int, tcp: int) -> np.ndarray:
    """(4, 4) the TCP site in the hand root frame: the mount put at the world origin, read."""
    import mujoco

    model.body_pos[mount] = 0.0
    model.body_quat[mount] = (1.0, 0.0, 0.0, 0.0)
    mujoco.mj_forward(model, data)
    return pose(data.site_xmat[tcp].reshape(3, 3), data.site_xpos[tcp])


def place_hand(world: GraspWorld, T_object_hand: np.ndarray, preshape: np.ndarray | None = None,
               settings: SimSettings | None = None) -> None:
    """Reset the world to the start of a trial: object resting, hand TCP at T_object_hand
    (4, 4; metres, object frame), preshape joints set, servos holding the start position."""
    import mujoco

    T = check_pose(T_object_hand, "T_object_hand")
    m, d = world.model, world.data
    if settings is not None:
        m.opt.timestep = settings.timestep_s
        m.opt.impratio = settings.impratio
    values = world.preshape_value if preshape is None else np.asarray(preshape, np.float64)
    if values.shape != world.preshape_value.shape:
        raise ValueError(f"preshape needs {world.preshape_value.size} values "
                         f"({[j for j, _ in world.hand.preshape]}), got {values.shape}")
    _set_start(world, T, values)
    # mj_forward without its acceleration stage (the constraint solver, ~60 % of its cost): a
    # start is read for contacts, poses, actuator lengths and forces only, and mj_step
    # recomputes everything from the state, so trials are bit for bit those of mj_forward
    # (tested); each Monte Carlo trial starts here
    mujoco.mj_fwdPosition(m, d)
    mujoco.mj_fwdVelocity(m, d)
    mujoco.mj_fwdActuation(m, d)
    hold_servos(m, d, world.position_actuators)  # the drives then move the closing ones
    d.ctrl[world.carrier_actuators] = 0.0


def hand_collides(world: GraspWorld, T_object_hand: np.ndarray, preshape: np.ndarray,
                  tolerance_m: float = 1e-4) -> bool:
    """Whether the open hand with its TCP at T_object_hand (4, 4; metres, object frame; a rigid
    transform the caller built) in preshape penetrates the object or the table deeper than
    tolerance_m: what place_hand then start_collisions say, in a third of their time.

    The candidate search asks this tens to hundreds of times per candidate it keeps (median
    77 µs against 244 µs: benchmarks.bench_candidates). Only MuJoCo's position stage runs
    (kinematics and collisions); the pose goes unchecked, and the quaternions of rotations met
    before are reused (the same rotation gives the same bits), so the answer is place_hand's
    exactly. The world is left placed for contacts only: place_hand before a trial.
    """
    import mujoco

    _set_start(world, T_object_hand, preshape)
    mujoco.mj_fwdPosition(world.model, world.data)
    return bool(_penetrating(world, tolerance_m).any())


def _set_start(world: GraspWorld, T_object_hand: np.ndarray, preshape: np.ndarray) -> None:
    """Reset the world's data and set a trial's start state: the object resting, the hand's
    mount where its TCP sits at T_object_hand (4, 4; metres, object frame), the preshape
    joints at preshape. No MuJoCo stage runs."""
    import mujoco

    m, d = world.model, world.data
    mujoco.mj_resetData(m, d)
    q = world.object_qposadr
    d.qpos[q:q + 3] = world.T_world_object[:3, 3]
    d.qpos[q + 3:q + 7] = _quat(world.T_world_object[:3, :3].tobytes())
    T_world_root = world.T_world_object @ T_object_hand @ _inverse(world.T_root_tcp.tobytes())
    m.body_pos[world.mount_body] = T_world_root[:3, 3]
    m.body_quat[world.mount_body] = _quat(T_world_root[:3, :3].tobytes())
    d.qpos[world.preshape_qposadr] = preshape


@lru_cache(maxsize=4096)
def _quat(R_bytes: bytes) -> np.ndarray:
    """matrix_to_quat of the (3, 3) float64 rotation whose bytes these are (read-only)."""
    q = matrix_to_quat(np.frombuffer(R_bytes, np.float64).reshape(3, 3))
    q.flags.writeable = False
    return q


@lru_cache(maxsize=64)
def _inverse(T_bytes: bytes) -> np.ndarray:
    """invert of the (4, 4) float64 rigid transform whose bytes these are (read-only)."""
    T = invert(np.frombuffer(T_bytes, np.float64).reshape(4, 4))
    T.flags.writeable = False
    return T


def _penetrating(world: GraspWorld, tolerance_m: float) -> np.ndarray:
    """(ncon,) bool: the contacts between a hand geom and one not of the hand (object, table)
    deeper than tolerance_m, in MuJoCo's contact order."""
    m, c = world.model, world.data.contact
    b1 = world.hand_body[m.geom_bodyid[c.geom1]]
    b2 = world.hand_body[m.geom_bodyid[c.geom2]]
    return (b1 != b2) & (c.dist < -tolerance_m)


def start_collisions(world: GraspWorld, tolerance_m: float = 1e-4) -> list[tuple[str, str]]:
    """(hand geom, other geom) name pairs penetrating deeper than tolerance_m after place_hand."""
    import mujoco

    m, d = world.model, world.data
    out = []
    for i in np.flatnonzero(_penetrating(world, tolerance_m)):
        c = d.contact[i]
        g_hand, g_other = (c.geom1, c.geom2) if world.hand_body[m.geom_bodyid[c.geom1]] \
            else (c.geom2, c.geom1)
        out.append((mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g_hand) or str(g_hand),
                    mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g_other) or str(g_other)))
    return out
