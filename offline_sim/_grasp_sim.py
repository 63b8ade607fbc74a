"""Dynamic grasp simulation after Kim et al. 2013: torque-limited closing, lift, hold, optional shake.

A GraspWorld (table + object + hand on a lifting carrier) is compiled once per (object, hand)
and reused for every trial: a trial resets MjData and moves the hand's mount in the model,
which costs microseconds, where compiling costs tens of milliseconds.

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
- contact solref (0.006, 1) (SOLREF in _hands): a time constant of twice the timestep (the
  least MuJoCo allows without instability) with critical damping: stiff, non-bouncing.
  solimp (0.95, 0.99, 1 mm): impedance near 1 so penetration stays under a millimetre.
- friction 1.0 sliding (rubber-like pads), 0.005 torsional, 1e-4 rolling; condim 3. The
  table is 0.8. MuJoCo takes the larger friction of two touching geoms.
- solver Newton, 50 iterations, tolerance 1e-8: Newton converges in a few iterations on
  these small problems; the cap bounds the worst step.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._frames import invert, matrix_to_quat, pose, rotation_angle
from ._hands import SOLREF, HandModel
from ._objects import GraspObject, object_mjcf
from ._tabletop import ObjectSpec, _geom_xml, support_points

OBJECT_GEOM_GROUP = 5  # object geoms live in this group so that rays see only the object
HAND_PREFIX = "hand/"
HAND_CONTYPE, HAND_CONAFFINITY = 2, 1


@dataclass(frozen=True)
class SimSettings:
    """Durations (s), lift and shake (m, Hz), limits of Kim measure C and solver options."""

    timestep_s: float = 0.003
    impratio: float = 10.0
    # closing ends earlier once every drive stalls (Kim §III-A); a BH8 finger past its
    # breakaway keeps curling its distal link until this cap, so the cap bounds most trials
    close_max_s: float = 0.6
    stall_torque_fraction: float = 0.95  # a drive at this fraction of τm has (nearly) stopped
    lift_height_m: float = 0.06     # above measure C's 5 cm: an object left behind scores 0
    lift_duration_s: float = 0.4
    lift_ramp_s: float = 0.1        # acceleration and deceleration time of the trapezoid
    hold_s: float = 0.2             # BLEM diagnostics are taken over the hold
    hold_sample_every: int = 4      # steps between BLEM samples (83 Hz at 3 ms)
    shake_s: float = 0.3
    shake_amplitude_m: float = 0.01
    shake_frequency_hz: float = 5.0
    deviation_limit_m: float = 0.05             # Kim §III-B, L for position
    deviation_limit_rad: float = math.radians(30.0)  # L for orientation
    area_contact_min_m: float = 0.002  # spread (RMS, across the line) of a link's contact points
    area_contact_counts_two: bool = True
    record_every: int = 10          # steps between samples of the recorded trajectory
    # Period of the controller (Kim eq. 1 and the lift profile), rounded to whole steps. The
    # speed law's torque rises with time constants of 30 ms and more (τm over servo stiffness
    # times v0), so 166 Hz follows it, and MuJoCo runs two 3 ms steps per Python call. Set in
    # seconds so that halving the timestep leaves the controller as it was.
    control_period_s: float = 0.006
    drop_distance_m: float = 0.15   # object COM this far from the TCP: dropped, stop early

    def __post_init__(self) -> None:
        for name in ("timestep_s", "impratio", "close_max_s", "control_period_s", "lift_duration_s",
                     "deviation_limit_m", "deviation_limit_rad", "drop_distance_m"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"SimSettings: {name} must be a finite number > 0, got {v!r}")
        if not 0 < self.lift_ramp_s <= 0.5 * self.lift_duration_s:
            raise ValueError(f"SimSettings: lift_ramp_s must be in (0, lift_duration_s / 2], "
                             f"got {self.lift_ramp_s!r}")
        if self.record_every < 1 or self.hold_sample_every < 1:
            raise ValueError(f"SimSettings: record_every and hold_sample_every must be >= 1, got "
                             f"{self.record_every!r} and {self.hold_sample_every!r}")


@dataclass(frozen=True)
class ContactSet:
    """Contacts between hand links and the object, in the object frame.

    positions : (K, 3) metres; normals : (K, 3) unit, pointing into the object; forces : (K, 3)
    newtons exerted on the object; links : (K,) int32 index into HandModel.links.
    """

    positions: np.ndarray
    normals: np.ndarray
    forces: np.ndarray
    links: np.ndarray


@dataclass(frozen=True)
class HoldDiagnostics:
    """BLEM contact-stability scores over the hold (0 is best): force variation (eq. 7,
    dimensionless), contact position variation (eq. 8, metres), normal variation (eq. 9);
    NaN where no link touched the object in two samples or more."""

    force_variation: float
    position_variation_m: float
    normal_variation: float
    n_samples: int


@dataclass(frozen=True)
class GraspOutcome:
    """The result of one simulated grasp.

    measure_b : Kim measure B (1, 0.5 or 0); measure_c : Kim measure C in [0, 1], the mean of
    the position and orientation scores (eq. 2) of the final deviation (eq. 3).
    times_s : (M,) and T_hand_object : (M, 4, 4), the object pose in the hand (TCP) frame.
    """

    lifted: bool
    measure_b: float
    measure_c: float
    n_contact_links: int
    n_area_links: int
    position_deviation_m: float
    rotation_deviation_rad: float
    contacts: ContactSet
    times_s: np.ndarray
    T_hand_object: np.ndarray
    hold: HoldDiagnostics
    close_time_s: float
    sim_time_s: float
    wall_time_s: float
    settings: SimSettings


@dataclass
class GraspWorld:
    """A compiled world: table (top at z = 0), one object resting on it, a hand on a carrier.

    T_world_object : (4, 4) the object's resting (stable) pose; T_root_tcp : (4, 4) the TCP in
    the hand root frame. The index arrays are filled by build_grasp_world. A trial writes the
    mount pose and the timestep into the model and runs in the world's one MjData, so a world
    serves one trial at a time: give each worker process its own world.
    """

    model: object
    data: object
    hand: HandModel
    obj: ObjectSpec
    T_world_object: np.ndarray
    T_root_tcp: np.ndarray
    object_body: int
    object_qposadr: int
    table_geom: int
    mount_body: int
    tcp_site: int
    carrier_actuators: np.ndarray
    link_of_body: np.ndarray        # (nbody,) link index or -1
    hand_body: np.ndarray           # (nbody,) bool: part of the hand
    position_actuators: np.ndarray  # hand actuators whose target is set to the start position
    preshape_qposadr: np.ndarray
    preshape_value: np.ndarray
    # closing drives, flattened to one entry per actuator (see Drive)
    act_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    act_speed: np.ndarray = field(default_factory=lambda: np.zeros(0))
    act_sign: np.ndarray = field(default_factory=lambda: np.zeros(0))
    act_tau_max: np.ndarray = field(default_factory=lambda: np.zeros(0))
    act_drive: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    act_leader: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    act_lo: np.ndarray = field(default_factory=lambda: np.zeros(0))
    act_hi: np.ndarray = field(default_factory=lambda: np.zeros(0))
    drive_breakaway: np.ndarray = field(default_factory=lambda: np.zeros(0))
    drive_leader: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def _object_xml(obj: ObjectSpec | GraspObject) -> tuple[str, str]:
    """(assets, geoms) of the object: one primitive or mesh geom, or one geom per convex part
    of a decomposed GraspObject; every geom's name starts with "obj1"."""
    if isinstance(obj, GraspObject):
        return object_mjcf(obj, "obj1")
    return _geom_xml(obj, 1)


def _object_points(obj: ObjectSpec | GraspObject) -> np.ndarray:
    """(N, 3) points of the object's surface in its frame, metres (for the resting height)."""
    return obj.visual[0] if isinstance(obj, GraspObject) else support_points(obj)


def _world_xml(obj: ObjectSpec | GraspObject, z: float, quat: np.ndarray) -> str:
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


def build_grasp_world(obj: ObjectSpec | GraspObject, hand: HandModel, *,
                      R_table_object: np.ndarray | None = None,
                      object_mass_kg: float | None = None) -> GraspWorld:
    """Compile table + object + hand once; simulate_grasp then reuses it for every trial.

    obj : a primitive/mesh ObjectSpec, or a GraspObject whose convex parts become one geom
    each (its mass spread over them). R_table_object : (3, 3) the object's resting orientation
    (a stable pose; identity = as modelled); object_mass_kg : None for density 1000 kg/m³ (an
    ObjectSpec) or the GraspObject's own mass.
    """
    import mujoco

    R = np.eye(3) if R_table_object is None else np.asarray(R_table_object, np.float64)
    if R.shape != (3, 3) or not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ValueError(f"R_table_object must be a (3, 3) rotation matrix, got {R.tolist()}")
    if object_mass_kg is not None and not object_mass_kg > 0:
        raise ValueError(f"object_mass_kg must be > 0, got {object_mass_kg!r}")
    z = -float((_object_points(obj) @ R.T)[:, 2].min())  # lowest point on the table top
    spec = mujoco.MjSpec.from_string(_world_xml(obj, z, matrix_to_quat(R)))
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
    spec.body("mount").add_frame().attach_body(root, HAND_PREFIX, "")
    try:
        model = spec.compile()
    except Exception as exc:
        raise ValueError(f"hand {hand.name!r} with object {obj.name!r}: world does not compile: {exc}") from exc
    data = mujoco.MjData(model)

    def ident(kind, name: str) -> int:
        i = mujoco.mj_name2id(model, kind, name)
        if i < 0:
            raise ValueError(f"hand {hand.name!r}: no {kind.name[6:].lower()} named {name!r} in the world")
        return i

    O = mujoco.mjtObj
    object_body = ident(O.mjOBJ_BODY, "object")
    mount = ident(O.mjOBJ_BODY, "mount")
    hand_body = np.zeros(model.nbody, bool)
    for b in range(model.nbody):  # the hand: every body below the mount
        p = b
        while p > 0 and p != mount:
            p = model.body_parentid[p]
        hand_body[b] = p == mount and b != mount
    link_of_body = np.full(model.nbody, -1, np.int64)
    for k, name in enumerate(hand.links):
        link_of_body[ident(O.mjOBJ_BODY, HAND_PREFIX + name)] = k
    tcp = ident(O.mjOBJ_SITE, HAND_PREFIX + hand.tcp_site)
    carrier = np.array([ident(O.mjOBJ_ACTUATOR, f"carrier_{a}") for a in "xyz"])
    pre_adr = np.array([model.jnt_qposadr[ident(O.mjOBJ_JOINT, HAND_PREFIX + j)] for j, _ in hand.preshape],
                       np.int64)
    pre_val = np.array([v for _, v in hand.preshape], np.float64)
    servo = [i for i in range(model.nu) if i not in carrier
             and model.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE]

    ids, speed, sign, tau, drive_of, leader, lo, hi = [], [], [], [], [], [], [], []
    breakaway, drive_leader = [], []
    for d_idx, drive in enumerate(hand.drives):
        drive_leader.append(len(ids))
        breakaway.append(np.inf if drive.breakaway_torque is None else drive.breakaway_torque)
        for k, (a, r, t) in enumerate(zip(drive.actuators, drive.ratios, drive.torque_limits)):
            i = ident(O.mjOBJ_ACTUATOR, HAND_PREFIX + a)
            ids.append(i)
            speed.append(drive.closing_speed * r)
            sign.append(1.0 if r >= 0 else -1.0)
            tau.append(t)
            drive_of.append(d_idx)
            leader.append(k == 0)
            limited = bool(model.actuator_ctrllimited[i])
            lo.append(model.actuator_ctrlrange[i, 0] if limited else -np.inf)
            hi.append(model.actuator_ctrlrange[i, 1] if limited else np.inf)

    world = GraspWorld(model, data, hand, obj, pose(R, (0.0, 0.0, z)), np.eye(4), object_body,
                       int(model.jnt_qposadr[model.body_jntadr[object_body]]),
                       ident(O.mjOBJ_GEOM, "table"), mount, tcp, carrier, link_of_body, hand_body,
                       np.array(servo, np.int64), pre_adr, pre_val,
                       np.array(ids, np.int64), np.array(speed), np.array(sign), np.array(tau),
                       np.array(drive_of, np.int64), np.array(leader, bool), np.array(lo), np.array(hi),
                       np.array(breakaway), np.array(drive_leader, np.int64))
    # TCP in the root frame: put the mount at the world origin and read the site
    model.body_pos[mount] = 0.0
    model.body_quat[mount] = (1.0, 0.0, 0.0, 0.0)
    mujoco.mj_forward(model, data)
    world.T_root_tcp = pose(data.site_xmat[tcp].reshape(3, 3), data.site_xpos[tcp])
    return world


def place_hand(world: GraspWorld, T_object_hand: np.ndarray, preshape: np.ndarray | None = None,
               settings: SimSettings | None = None) -> None:
    """Reset the world to the start of a trial: object resting, hand TCP at T_object_hand
    (4, 4; metres, object frame), preshape joints set, servos holding the start position."""
    import mujoco

    T = np.asarray(T_object_hand, np.float64)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError(f"T_object_hand must be a finite (4, 4) array, got shape {T.shape}")
    m, d = world.model, world.data
    if settings is not None:
        m.opt.timestep = settings.timestep_s
        m.opt.impratio = settings.impratio
    mujoco.mj_resetData(m, d)
    q = world.object_qposadr
    d.qpos[q:q + 3] = world.T_world_object[:3, 3]
    d.qpos[q + 3:q + 7] = matrix_to_quat(world.T_world_object[:3, :3])
    T_world_root = world.T_world_object @ T @ invert(world.T_root_tcp)
    m.body_pos[world.mount_body] = T_world_root[:3, 3]
    m.body_quat[world.mount_body] = matrix_to_quat(T_world_root[:3, :3])
    values = world.preshape_value if preshape is None else np.asarray(preshape, np.float64)
    if values.shape != world.preshape_value.shape:
        raise ValueError(f"preshape needs {world.preshape_value.size} values "
                         f"({[j for j, _ in world.hand.preshape]}), got {values.shape}")
    d.qpos[world.preshape_qposadr] = values
    mujoco.mj_forward(m, d)
    # every hand servo holds where it starts; the drives then move the closing ones
    d.ctrl[world.position_actuators] = d.actuator_length[world.position_actuators]
    lo, hi = m.actuator_ctrlrange[world.position_actuators].T
    lim = m.actuator_ctrllimited[world.position_actuators].astype(bool)
    d.ctrl[world.position_actuators] = np.where(lim, np.clip(d.ctrl[world.position_actuators], lo, hi),
                                                d.ctrl[world.position_actuators])
    d.ctrl[world.carrier_actuators] = 0.0


def start_collisions(world: GraspWorld, tolerance_m: float = 1e-4) -> list[tuple[str, str]]:
    """(hand geom, other geom) name pairs penetrating deeper than tolerance_m after place_hand."""
    import mujoco

    m, d = world.model, world.data
    out = []
    for i in range(d.ncon):
        c = d.contact[i]
        b1, b2 = world.hand_body[m.geom_bodyid[c.geom1]], world.hand_body[m.geom_bodyid[c.geom2]]
        if b1 != b2 and c.dist < -tolerance_m:
            g_hand, g_other = (c.geom1, c.geom2) if b1 else (c.geom2, c.geom1)
            out.append((mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g_hand) or str(g_hand),
                        mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g_other) or str(g_other)))
    return out


def _trapezoid(t: float, height: float, duration: float, ramp: float) -> float:
    """Position (m) at time t of a trapezoidal-velocity move of ``height`` over ``duration``."""
    if t <= 0:
        return 0.0
    if t >= duration:
        return height
    v = height / (duration - ramp)  # peak speed: the area under the trapezoid is the height
    a = v / ramp
    if t < ramp:
        return 0.5 * a * t * t
    if t < duration - ramp:
        return 0.5 * v * ramp + v * (t - ramp)
    r = duration - t
    return height - 0.5 * a * r * r


def _object_contacts(world: GraspWorld, T_object_world: np.ndarray, with_force: bool):
    """Hand-link/object contacts now: (links, positions, normals into the object, forces on it),
    in the object frame; and whether the object touches the table."""
    import mujoco

    m, d = world.model, world.data
    n = d.ncon
    empty = (np.zeros(0, np.int32), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
    if n == 0:
        return empty, False
    con = d.contact
    g1, g2 = con.geom1[:n], con.geom2[:n]
    b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
    obj1, obj2 = b1 == world.object_body, b2 == world.object_body
    on_table = bool(np.any((obj1 & (g2 == world.table_geom)) | (obj2 & (g1 == world.table_geom))))
    link = np.where(obj1, world.link_of_body[b2], world.link_of_body[b1])
    keep = np.flatnonzero((obj1 | obj2) & (link >= 0))
    if keep.size == 0:
        return empty, on_table
    R_ow, p_ow = T_object_world[:3, :3], T_object_world[:3, 3]
    frames = con.frame[keep].reshape(-1, 3, 3)  # rows: normal (geom1 -> geom2), tangents
    sgn = np.where(obj2[keep], 1.0, -1.0)[:, None]  # +1 when the object is geom2
    normals = sgn * frames[:, 0, :]
    forces = np.zeros((keep.size, 3))
    if with_force:
        f6 = np.zeros(6)
        for j, i in enumerate(keep):
            mujoco.mj_contactForce(m, d, int(i), f6)
            forces[j] = f6[:3] @ frames[j]  # contact frame -> world: force on geom2
        forces *= sgn
    pos = con.pos[keep] @ R_ow.T + p_ow
    return (link[keep].astype(np.int32), pos, normals @ R_ow.T, forces @ R_ow.T), on_table


def _blem_scores(samples: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]], n: int) -> HoldDiagnostics:
    """BLEM eqs. 7-9 from per-link samples (resultant force, mean position, mean normal)."""
    sf, sp, sn = [], [], []
    for rows in samples.values():
        if len(rows) < 2:
            continue
        f, x, nn = (np.array([r[i] for r in rows]) for i in range(3))
        # ||Var[v]||_F of a vector signal: the Frobenius norm of its covariance matrix
        var = lambda v: float(np.linalg.norm(np.cov(v.T, bias=True), "fro"))  # noqa: E731
        mean_f = float(np.mean(np.linalg.norm(f, axis=1)))
        sf.append(math.sqrt(var(f)) / mean_f if mean_f > 0 else math.nan)
        sp.append(math.sqrt(var(x)))
        sn.append(math.sqrt(var(nn)))
    mean = lambda v: float(np.mean(v)) if v else math.nan  # noqa: E731
    return HoldDiagnostics(mean(sf), mean(sp), mean(sn), n)


def _area_link(points: np.ndarray, min_spread_m: float) -> bool:
    """Whether contact points (K, 3) span an area (not a point or a line) of RMS width >= min."""
    if len(points) < 3:
        return False
    s = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
    return bool(s[1] / math.sqrt(len(points)) >= min_spread_m)


def simulate_grasp(world: GraspWorld, T_object_hand: np.ndarray, *, seed: int | None = None,
                   shake: bool = False, settings: SimSettings = SimSettings(),
                   preshape: np.ndarray | None = None) -> GraspOutcome:
    """Simulate one grasp from the pre-grasp T_object_hand (4, 4; TCP in the object frame).

    Kim §III-A: close with v = v0 (1 - τ/τm) per drive (eq. 1) until every drive stalls or
    close_max_s; lift along a trapezoid while the fingers keep squeezing; hold (BLEM
    diagnostics); optionally shake. seed : direction of the shake (None: vertical). The same
    world, pose, settings and seed give the same outcome.
    """
    import mujoco

    wall0 = time.perf_counter()
    place_hand(world, T_object_hand, preshape, settings)
    m, d, s = world.model, world.data, settings
    dt = s.timestep_s
    k_ctrl = max(1, round(s.control_period_s / dt))
    dt_ctrl = k_ctrl * dt  # the controller's period
    shake_dir = np.array([0.0, 0.0, 1.0])
    if seed is not None:
        v = np.random.default_rng(seed).normal(size=3)
        shake_dir = v / np.linalg.norm(v)

    def T_hand_obj() -> np.ndarray:
        T_w_tcp = pose(d.site_xmat[world.tcp_site].reshape(3, 3), d.site_xpos[world.tcp_site])
        T_w_o = pose(d.xmat[world.object_body].reshape(3, 3), d.xpos[world.object_body])
        return invert(T_w_tcp) @ T_w_o

    def com_in_hand() -> np.ndarray:
        R = d.site_xmat[world.tcp_site].reshape(3, 3)
        return R.T @ (d.xipos[world.object_body] - d.site_xpos[world.tcp_site])

    T_ref, com_ref = T_hand_obj(), com_in_hand()
    times, traj = [0.0], [T_ref]
    ids, spd, sgn, tmax = world.act_ids, world.act_speed, world.act_sign, world.act_tau_max
    lo, hi, drive_of, leader = world.act_lo, world.act_hi, world.act_drive, world.act_leader
    nd = len(world.hand.drives)
    stall_s = 1.0 - s.stall_torque_fraction

    # The controller runs every control period in Python, so it works on plain floats: for a
    # handful of actuators that is several times faster than numpy calls on tiny arrays.
    ids_l = [int(i) for i in ids]
    spd_l, sgn_l, tmax_l = spd.tolist(), sgn.tolist(), tmax.tolist()
    lo_l, hi_l, drive_l, lead_l = lo.tolist(), hi.tolist(), drive_of.tolist(), leader.tolist()
    brk_l = world.drive_breakaway.tolist()
    broken_l = [False] * nd
    af, ctrl_arr = d.actuator_force, d.ctrl
    n_act = len(ids_l)

    def drive_step(closing: bool) -> bool:
        """Advance the servo targets by Kim eq. 1; True (while closing) when every drive stalled."""
        frac = [0.0] * n_act
        worst = [0.0] * nd
        for k in range(n_act):
            tau = af[ids_l[k]] * sgn_l[k]
            f = tau / tmax_l[k]
            f = 0.0 if f < 0.0 else 1.0 if f > 1.0 else f
            frac[k] = f
            dr = drive_l[k]
            if f > worst[dr]:
                worst[dr] = f
            if lead_l[k] and tau >= brk_l[dr]:
                broken_l[dr] = True  # the clutch slips; it stays slipped for the trial
        stalled = True
        for k in range(n_act):
            dr = drive_l[k]
            # an unbroken drive's motor slows with the most loaded of its joints; after the
            # breakaway the leader stays put and the others answer to their own torque
            if broken_l[dr]:
                v = 0.0 if lead_l[k] else 1.0 - frac[k]
            else:
                v = 1.0 - worst[dr]
            i = ids_l[k]
            c = ctrl_arr[i] + spd_l[k] * v * dt_ctrl
            c = lo_l[k] if c < lo_l[k] else hi_l[k] if c > hi_l[k] else c
            ctrl_arr[i] = c
            if closing and v > stall_s and not (c >= hi_l[k] if sgn_l[k] > 0 else c <= lo_l[k]):
                stalled = False
        return closing and stalled

    step = 0
    t = 0.0

    def advance(closing: bool) -> tuple[bool, bool]:
        """Control, then k_ctrl MuJoCo steps; (all drives stalled, a trajectory sample taken)."""
        nonlocal step, t
        stalled = drive_step(closing)
        mujoco.mj_step(m, d, k_ctrl)
        step += k_ctrl
        t += dt_ctrl
        sampled = step % s.record_every < k_ctrl
        if sampled:
            times.append(t)
            traj.append(T_hand_obj())
        return stalled, sampled

    close_time = s.close_max_s
    while t < s.close_max_s:  # closing
        stalled, _ = advance(True)
        if stalled and t > 0.05:  # the first steps of a servo have no torque yet
            close_time = t
            break

    # lift, hold and shake: the fingers keep closing (Kim: the mechanism keeps running)
    t_lift0 = t
    t_hold0 = t_lift0 + s.lift_duration_s
    t_shake0 = t_hold0 + s.hold_s
    t_end = t_shake0 + (s.shake_s if shake else 0.0)
    z_axis = world.carrier_actuators[2]
    hold_samples: dict[int, list] = {}
    n_hold = 0
    dropped = False
    while t < t_end - 0.5 * dt_ctrl:
        if t < t_hold0:
            d.ctrl[z_axis] = _trapezoid(t - t_lift0, s.lift_height_m, s.lift_duration_s, s.lift_ramp_s)
        elif t >= t_shake0:
            w = s.shake_amplitude_m * math.sin(2.0 * math.pi * s.shake_frequency_hz * (t - t_shake0))
            d.ctrl[world.carrier_actuators] = w * shake_dir + (0.0, 0.0, s.lift_height_m)
        _, sampled = advance(False)
        if sampled and np.linalg.norm(com_in_hand() - com_ref) > s.drop_distance_m:
            dropped = True
            break
        if t_hold0 <= t < t_shake0 and step % s.hold_sample_every < k_ctrl:
            T_ow = invert(pose(d.xmat[world.object_body].reshape(3, 3), d.xpos[world.object_body]))
            (links, pos, nrm, frc), _ = _object_contacts(world, T_ow, True)
            n_hold += 1
            for k in np.unique(links):
                sel = links == k
                nk = nrm[sel].mean(axis=0)
                hold_samples.setdefault(int(k), []).append(
                    (frc[sel].sum(axis=0), pos[sel].mean(axis=0), nk / max(np.linalg.norm(nk), 1e-12)))

    T_ow = invert(pose(d.xmat[world.object_body].reshape(3, 3), d.xpos[world.object_body]))
    (links, pos, nrm, frc), on_table = _object_contacts(world, T_ow, True)
    n_links = int(np.unique(links).size)
    n_area = sum(_area_link(pos[links == k], s.area_contact_min_m) for k in np.unique(links)) \
        if s.area_contact_counts_two else 0
    lifted = (not dropped and not on_table and n_links >= 1
              and d.xipos[world.object_body][2] > world.T_world_object[2, 3] + 0.5 * s.lift_height_m)
    # Kim measure B: >= 3 supporting links -> 1, 2 -> 0.5 (may dangle), else 0. Our reading of
    # Kim's footnote 1: a link pressing an area (a pad on a face) resists rotation about the
    # contact like two point contacts, so it counts twice (area_contact_counts_two).
    support = n_links + n_area
    measure_b = (1.0 if support >= 3 else 0.5 if support == 2 else 0.0) if lifted else 0.0
    T_end = T_hand_obj()
    dp = float(np.linalg.norm(com_in_hand() - com_ref))  # Kim eq. 3
    dR = rotation_angle(T_ref[:3, :3].T @ T_end[:3, :3])
    qp = max(0.0, 1.0 - dp / s.deviation_limit_m)  # Kim eq. 2
    qr = max(0.0, 1.0 - dR / s.deviation_limit_rad)
    measure_c = 0.5 * (qp + qr) if lifted else 0.0
    if times[-1] != t:
        times.append(t)
        traj.append(T_end)
    return GraspOutcome(
        lifted=bool(lifted), measure_b=measure_b, measure_c=measure_c, n_contact_links=n_links,
        n_area_links=int(n_area), position_deviation_m=dp, rotation_deviation_rad=dR,
        contacts=ContactSet(pos, nrm, frc, links), times_s=np.array(times),
        T_hand_object=np.array(traj), hold=_blem_scores(hold_samples, n_hold),
        close_time_s=close_time, sim_time_s=t, wall_time_s=time.perf_counter() - wall0,
        settings=settings)

