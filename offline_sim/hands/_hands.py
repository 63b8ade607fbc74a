"""Hand models for the grasp simulation: MJCF built in code, or a user's MJCF file with a description.

Every hand is an MJCF document whose first worldbody body is the hand root (it is attached to
the world's lifting carrier). Its TCP site has z along the approach and, for two-sided hands, x
along the closing direction. Closing actuators must be position servos: the simulation drives
their targets with Kim et al.'s torque-limited speed law (Kim eq. 1), so the servo stiffness
plays the part of the transmission between motor and joint. With closing="native"
(dynamics/_native.py) the same servos are turned into Kim's motor curves τ = τm (1 - v/v0)
when the world is compiled; the Drive's speed, ratios, torque limits and breakaway say how.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from scoring import check_positive


def _check_positive(where: str, **values: float) -> None:
    """check_positive on each keyword value, in order: the first bad one raises."""
    for name, v in values.items():
        check_positive(v, name, where)


@dataclass(frozen=True)
class Drive:
    """One closing motor: position-servo actuators whose targets advance at v0 (1 - τ/τm) (Kim eq. 1).

    actuators : names; the first is the leader (the proximal joint of a BH8 finger).
    closing_speed : v0 of the leader in its actuator length unit per second (m/s or rad/s).
    ratios : signed speed of each actuator relative to v0 (sign = direction that closes).
    torque_limits : τm of each actuator, N or N·m; the servo's force range should be the same.
    breakaway_torque_nm : leader torque (N·m) at which the leader stops and the others go on
        closing alone (the BH8 clutch, Kim §III-A); None for no breakaway.
    """

    actuators: tuple[str, ...]
    closing_speed: float
    ratios: tuple[float, ...]
    torque_limits: tuple[float, ...]
    breakaway_torque_nm: float | None = None

    def __post_init__(self) -> None:
        n = len(self.actuators)
        if n == 0 or len(self.ratios) != n or len(self.torque_limits) != n:
            raise ValueError(f"Drive {self.actuators!r}: needs one ratio and one torque limit per "
                             f"actuator, got {len(self.ratios)} ratios and {len(self.torque_limits)} limits")
        if not self.closing_speed > 0 or not all(t > 0 for t in self.torque_limits):
            raise ValueError(f"Drive {self.actuators!r}: closing_speed and torque_limits must be > 0, "
                             f"got {self.closing_speed!r} and {self.torque_limits!r}")


@dataclass(frozen=True)
class HandModel:
    """A hand for the grasp simulation.

    mjcf : MJCF text (built-in hands) or None with mjcf_path (a user's file, meshes relative to it).
    drives : the closing motors. links : bodies that count as contact links (Kim measure B).
    tcp_site : site whose frame is the hand frame of T_object_hand (z = approach).
    preshape : (joint, position) pairs set before closing (rad or m); joints coupled by an
        equality must all be listed.
    preshape_options : the preshapes pregrasp_candidates chooses among, each the values of the
        preshape joints in their order (rad or m); empty: the default preshape alone.
    aperture_m : open span between opposing fingers at the TCP; grasp_depth_m : how far below
        the first surface hit along the approach the TCP goes for a nominal grasp (candidates).
    """

    name: str
    drives: tuple[Drive, ...]
    links: tuple[str, ...]
    tcp_site: str
    aperture_m: float
    grasp_depth_m: float
    preshape: tuple[tuple[str, float], ...] = ()
    mjcf: str | None = None
    mjcf_path: str | None = None
    preshape_options: tuple[tuple[float, ...], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.preshape)
        for k, option in enumerate(self.preshape_options):
            if len(option) != n or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in option):
                raise ValueError(f"hand {self.name!r}: preshape option {k} must be {n} finite values "
                                 f"(for {[j for j, _ in self.preshape]}), got {option!r}")

    @property
    def preshapes(self) -> tuple[tuple[float, ...], ...]:
        """The preshapes candidates choose among (rad or m, in the order of ``preshape``):
        preshape_options, or the default preshape alone when there are none."""
        return self.preshape_options or (tuple(v for _, v in self.preshape),)

    @property
    def closing_actuators(self) -> tuple[str, ...]:
        """Names of every actuator that a drive moves."""
        return tuple(a for d in self.drives for a in d.actuators)

    def spec(self):
        """A fresh mujoco.MjSpec of the hand (imported here: ``import offline_sim`` stays light)."""
        import mujoco

        if self.mjcf_path is not None:
            return mujoco.MjSpec.from_file(str(self.mjcf_path))
        return mujoco.MjSpec.from_string(self.mjcf)


# Contact and equality stiffness of every geom and coupling we build (seconds, damping ratio):
# a time constant of twice the 3 ms default step, the least MuJoCo keeps stable (it would clamp
# anything smaller), with critical damping: stiff, non-bouncing. Stated, not clamped, so that
# halving the step changes the integration and not the contact model.
SOLREF = "0.006 1"

# Shared servo and joint defaults of the built-in hands. Armature adds reflected motor inertia:
# the links weigh tens of grams, and without it the stiff servos would ring at a 3 ms step.
_DEFAULTS = """
  <compiler angle="radian"/>
  <default>
    <joint armature="{armature}" damping="{damping}"/>
    <geom friction="{friction} 0.005 0.0001" solref="{solref}" solimp="0.95 0.99 0.001" density="1000"/>
    <position dampratio="1"/>
  </default>"""


def _document(model: str, *, armature: float, damping: float, friction: float, palm: str,
              tcp_z_m: float, fingers: str, rest: str) -> str:
    """An MJCF hand: shared defaults, a palm body holding the palm geom, the TCP site (z along
    the approach, tcp_z_m in front of the palm) and the fingers; ``rest`` follows worldbody."""
    defaults = _DEFAULTS.format(armature=armature, damping=damping, friction=friction, solref=SOLREF)
    return f"""<mujoco model="{model}">{defaults}
  <worldbody>
    <body name="palm">
      {palm}
      <site name="tcp" pos="0 0 {tcp_z_m:.5f}"/>{fingers}
    </body>
  </worldbody>
  {rest}
</mujoco>"""


def parallel_jaw(*, finger_width_m: float = 0.022, open_width_m: float = 0.085,
                 finger_length_m: float = 0.06, finger_thickness_m: float = 0.01,
                 pad_length_m: float = 0.035, pad_thickness_m: float = 0.004,
                 pad_friction: float = 1.0, force_limit_n: float = 60.0,
                 closing_speed_m_s: float = 0.1, tcp_to_tip_m: float | None = None,
                 palm_width_m: float | None = None,
                 palm_length_m: float | None = None) -> HandModel:
    """A parallel-jaw gripper: two slide fingers coupled to move together, pads on the inner faces.

    finger_width_m : pad width across the closing direction (the onboard kernel's w, in metres);
    open_width_m : gap between the pads when open (r); force_limit_n : squeezing force of each
    pad at the stall (N); closing_speed_m_s : v0 of each finger. finger_thickness_m : each
    finger's body behind its pad (pad_thickness_m) along the closing direction.
    tcp_to_tip_m : the TCP site's distance from the fingertips along the approach (None: half
    the pad length, the pads' middle), so that a cell file's TCP is the hand's.
    palm_width_m, palm_length_m : the palm box's size across and along the closing direction
    (None: 20 mm wider than the fingers, and 20 mm longer than the open fingers with their
    pads and bodies), 30 mm deep behind the fingers' roots.
    """
    _check_positive("parallel_jaw", finger_width_m=finger_width_m, open_width_m=open_width_m,
                    finger_length_m=finger_length_m, finger_thickness_m=finger_thickness_m,
                    pad_length_m=pad_length_m, pad_thickness_m=pad_thickness_m,
                    pad_friction=pad_friction, force_limit_n=force_limit_n,
                    closing_speed_m_s=closing_speed_m_s)
    if pad_length_m > finger_length_m:
        raise ValueError(f"parallel_jaw: pad_length_m {pad_length_m} exceeds finger_length_m {finger_length_m}")
    if tcp_to_tip_m is None:
        tcp_to_tip_m = 0.5 * pad_length_m
    elif not (math.isfinite(tcp_to_tip_m) and 0.0 <= tcp_to_tip_m <= finger_length_m):
        raise ValueError(f"parallel_jaw: tcp_to_tip_m must be in [0, finger_length_m "
                         f"{finger_length_m}], got {tcp_to_tip_m!r}")
    for name, v in (("palm_width_m", palm_width_m), ("palm_length_m", palm_length_m)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ValueError(f"parallel_jaw: {name} must be finite and > 0, got {v!r}")
    half_open, w2, L = 0.5 * open_width_m, 0.5 * finger_width_m, finger_length_m
    palm_x = half_open + pad_thickness_m + finger_thickness_m + 0.01 if palm_length_m is None \
        else 0.5 * palm_length_m
    palm_y = w2 + 0.01 if palm_width_m is None else 0.5 * palm_width_m
    # With the fingers coupled by an equality, the servo's force splits over the two pads by
    # virtual work (F dq = N dq + N dq), so the servo limit is twice the force of one pad.
    servo_limit = 2.0 * force_limit_n

    def finger(side: str, s: int) -> str:
        # s = +1: finger on +x closing along -x; joint axis points the way the finger closes
        return f"""
      <body name="{side}_finger" pos="{s * half_open:.5f} 0 0">
        <joint name="{side}_slide" type="slide" axis="{-s} 0 0" range="0 {half_open - 0.0005:.5f}"/>
        <geom name="{side}_body" type="box"
              pos="{s * (pad_thickness_m + 0.5 * finger_thickness_m):.5f} 0 {0.5 * L:.5f}"
              size="{0.5 * finger_thickness_m:.5f} {w2:.5f} {0.5 * L:.5f}"/>
        <geom name="{side}_pad" type="box" pos="{s * 0.5 * pad_thickness_m:.5f} 0 {L - 0.5 * pad_length_m:.5f}"
              size="{0.5 * pad_thickness_m:.5f} {w2:.5f} {0.5 * pad_length_m:.5f}"
              friction="{pad_friction} 0.005 0.0001"
              rgba="0.1 0.1 0.1 1"/>
      </body>"""

    rest = f"""<!-- the linkage that couples the fingers is rigid: a stiff equality (the default solref
       0.02 s would let the pads shift by millimetres under the grip force) -->
  <equality><joint joint1="left_slide" joint2="right_slide" polycoef="0 1 0 0 0" solref="{SOLREF}"
                   solimp="0.95 0.99 0.001"/></equality>
  <actuator>
    <position name="close" joint="right_slide" kp="10000" ctrlrange="0 {half_open:.5f}"
              forcerange="{-servo_limit} {servo_limit}"/>
  </actuator>"""
    mjcf = _document("parallel_jaw", armature=0.2, damping=2.0, friction=pad_friction,
                     palm=f'<geom name="palm" type="box" pos="0 0 -0.015" size="{palm_x:.5f} '
                          f'{palm_y:.5f} 0.015" rgba="0.3 0.3 0.35 1"/>',
                     tcp_z_m=L - tcp_to_tip_m, fingers=finger("right", 1) + finger("left", -1),
                     rest=rest)
    drive = Drive(("close",), closing_speed_m_s, (1.0,), (servo_limit,))
    return HandModel("parallel_jaw", (drive,), ("right_finger", "left_finger"), "tcp",
                     aperture_m=open_width_m, grasp_depth_m=0.5 * pad_length_m, mjcf=mjcf)


# BH8-280 palm geometry (Barrett's DH parameters): the spread axis of a finger lies 50 mm
# inward of its knuckle (the proximal joint axis), so spreading swings the knuckle about a
# pivot near the palm centre and each finger's closing plane passes close to the centre.
BH8_SPREAD_LINK_M = 0.05
BH8_FINGER_SPREAD_OFFSET_M = 0.025  # fingers 1 and 2 sit this far either side of the thumb's line
# The BH8's standard preshapes: cylindrical (fingers opposing the thumb), spherical (three
# fingers 120 degrees apart) and T (fingers 1 and 2 opposing each other).
BH8_SPREADS_RAD = (0.0, math.pi / 3, math.pi / 2)


def three_finger(*, palm_radius_m: float = 0.06, knuckle_radius_m: float = 0.075,
                 proximal_length_m: float = 0.07, distal_length_m: float = 0.056,
                 spread_rad: float = 0.0, spread_options_rad: tuple[float, ...] | None = None,
                 proximal_torque_nm: float = 1.5, distal_torque_nm: float = 0.8,
                 breakaway_torque_nm: float = 0.9, closing_speed_rad_s: float = 2.0,
                 distal_ratio: float = 1.0 / 3.0, friction: float = 1.0) -> HandModel:
    """A Barrett BH8-like hand: a fixed thumb opposing two fingers that spread about the palm
    normal together; two-link fingers whose distal joint follows the proximal one at
    ``distal_ratio`` and breaks away (goes on alone) once the proximal torque reaches
    ``breakaway_torque_nm`` (Kim §III-A).

    knuckle_radius_m : distance of the proximal joint axes from the palm centre at spread 0
    (BH8-280: 75 mm, so the open hand spans ~15 cm thumb to fingers); spread_rad : the default
    preshape (0 = fingers opposing the thumb, pi/2 = fingers opposing each other);
    spread_options_rad : spreads pregrasp_candidates chooses among, None for spread_rad and
    the BH8's cylindrical, spherical and T preshapes (0, pi/3, pi/2). Lengths in metres,
    torques in N·m, speeds in rad/s.
    """
    _check_positive("three_finger", palm_radius_m=palm_radius_m, knuckle_radius_m=knuckle_radius_m,
                    proximal_length_m=proximal_length_m,
                    distal_length_m=distal_length_m, proximal_torque_nm=proximal_torque_nm,
                    distal_torque_nm=distal_torque_nm, breakaway_torque_nm=breakaway_torque_nm,
                    closing_speed_rad_s=closing_speed_rad_s, distal_ratio=distal_ratio,
                    friction=friction)
    if knuckle_radius_m <= BH8_SPREAD_LINK_M:
        raise ValueError(f"three_finger: knuckle_radius_m must exceed the {BH8_SPREAD_LINK_M} m "
                         f"spread link, got {knuckle_radius_m!r}")
    if spread_options_rad is None:
        spread_options_rad = (spread_rad,) + tuple(s for s in BH8_SPREADS_RAD
                                                   if not math.isclose(s, spread_rad, abs_tol=1e-9))
    if not spread_options_rad:
        raise ValueError("three_finger: spread_options_rad must name at least one spread, got ()")
    for name, value in [("spread_rad", spread_rad)] + [("spread_options_rad", v) for v in spread_options_rad]:
        if not (isinstance(value, (int, float)) and 0.0 <= value <= math.pi / 2 + 1e-9):
            raise ValueError(f"three_finger: {name} must be in [0, pi/2], got {value!r}")
    Lp, Ld = proximal_length_m, distal_length_m
    pivot = knuckle_radius_m - BH8_SPREAD_LINK_M  # spread axes, from the palm centre along x

    def finger(k: int, x: float, y: float, yaw: float, spread: str) -> str:
        # The base frame sits on the spread axis with x pointing out to the knuckle, so closing
        # (rotation about -y) swings the tip inward over the palm.
        cz, sz = math.cos(yaw / 2), math.sin(yaw / 2)
        spread_joint = (f'<joint name="f{k}_spread" axis="0 0 {1 if k == 1 else -1}" range="0 1.58" '
                        f'armature="0.01"/>' if spread else "")
        return f"""
      <body name="f{k}_base" pos="{x:.5f} {y:.5f} 0" quat="{cz:.6f} 0 0 {sz:.6f}">
        {spread_joint}<geom type="cylinder" size="0.012 0.01" pos="{BH8_SPREAD_LINK_M} 0 0.005"
              rgba="0.3 0.3 0.35 1"/>
        <body name="f{k}_prox" pos="{BH8_SPREAD_LINK_M} 0 0.012">
          <joint name="f{k}_prox" axis="0 -1 0" range="-0.2 2.44"/>
          <geom type="capsule" fromto="0 0 0 0 0 {Lp:.5f}" size="0.011"/>
          <body name="f{k}_dist" pos="0 0 {Lp:.5f}">
            <joint name="f{k}_dist" axis="0 -1 0" range="0 1.6"/>
            <geom type="capsule" fromto="0 0 0 0 0 {Ld:.5f}" size="0.0095" rgba="0.15 0.15 0.15 1"/>
          </body>
        </body>
      </body>"""

    # thumb (finger 3) on -x; fingers 1 and 2 on +x at +-y, spreading in opposite senses
    off = BH8_FINGER_SPREAD_OFFSET_M
    fingers = (finger(1, pivot, off, 0.0, "s") + finger(2, pivot, -off, 0.0, "s")
               + finger(3, -pivot, 0.0, math.pi, ""))
    acts, drives = [], []
    for k in (1, 2, 3):
        acts.append(f'<position name="f{k}_prox" joint="f{k}_prox" kp="30" ctrlrange="-0.2 2.44" '
                    f'forcerange="{-proximal_torque_nm} {proximal_torque_nm}"/>')
        acts.append(f'<position name="f{k}_dist" joint="f{k}_dist" kp="30" ctrlrange="0 1.6" '
                    f'forcerange="{-distal_torque_nm} {distal_torque_nm}"/>')
        drives.append(Drive((f"f{k}_prox", f"f{k}_dist"), closing_speed_rad_s, (1.0, distal_ratio),
                            (proximal_torque_nm, distal_torque_nm), breakaway_torque_nm))
    rest = f"""<equality><joint joint1="f2_spread" joint2="f1_spread" polycoef="0 1 0 0 0" solref="{SOLREF}"
                   solimp="0.95 0.99 0.001"/></equality>
  <actuator>
    <position name="spread" joint="f1_spread" kp="20" ctrlrange="0 1.58" forcerange="-5 5"/>
    {"".join(acts)}
  </actuator>"""
    mjcf = _document("three_finger", armature=0.005, damping=0.05, friction=friction,
                     palm=f'<geom name="palm" type="cylinder" size="{palm_radius_m:.5f} 0.03" '
                          f'pos="0 0 -0.03" rgba="0.3 0.3 0.35 1"/>',
                     tcp_z_m=0.012 + Lp, fingers=fingers, rest=rest)
    links = ("palm",) + tuple(f"f{k}_{p}" for k in (1, 2, 3) for p in ("prox", "dist"))
    return HandModel("three_finger", tuple(drives), links, "tcp", aperture_m=2 * knuckle_radius_m,
                     grasp_depth_m=0.5 * Lp, mjcf=mjcf,
                     preshape=(("f1_spread", spread_rad), ("f2_spread", spread_rad)),
                     preshape_options=tuple((float(v), float(v)) for v in spread_options_rad))


def underactuated(*, palm_half_m: float = 0.065, palm_width_m: float = 0.09,
                  proximal_length_m: float = 0.065,
                  distal_length_m: float = 0.05, tendon_force_n: float = 60.0,
                  closing_speed_m_s: float = 0.08, proximal_stiffness_nm_rad: float = 0.05,
                  distal_stiffness_nm_rad: float = 0.15, pulley_radii_m: tuple[float, float] = (0.012, 0.008),
                  friction: float = 1.0) -> HandModel:
    """An underactuated tendon hand (ReFlex-like): one tendon closes three two-link fingers
    through compliant (spring-loaded) joints, so a finger blocked at its proximal link goes on
    wrapping with its distal one and the others keep closing (BLEM §III).

    palm_half_m : half the palm's length along the closing direction; the finger bases sit
    on its edges, so the open hand spans 2 palm_half_m (13 cm: a 10 cm can fits between the
    fingers); palm_width_m : the palm across it (narrower, as the ReFlex's, so that a side
    approach to a short object leaves the palm clear of the table);
    tendon_force_n : τm of the tendon (N); closing_speed_m_s : v0 of the tendon length;
    *_stiffness_nm_rad : the return springs (the proximal one softer, so fingers flex from
    the base first); pulley_radii_m : tendon moment arms at the proximal and distal joints.
    """
    _check_positive("underactuated", palm_half_m=palm_half_m, palm_width_m=palm_width_m,
                    proximal_length_m=proximal_length_m,
                    distal_length_m=distal_length_m, tendon_force_n=tendon_force_n,
                    closing_speed_m_s=closing_speed_m_s,
                    proximal_stiffness_nm_rad=proximal_stiffness_nm_rad,
                    distal_stiffness_nm_rad=distal_stiffness_nm_rad, friction=friction,
                    proximal_pulley_radius_m=pulley_radii_m[0], distal_pulley_radius_m=pulley_radii_m[1])
    Lp, Ld, h = proximal_length_m, distal_length_m, palm_half_m
    r1, r2 = pulley_radii_m

    def finger(k: int, x: float, y: float, yaw: float) -> str:
        cz, sz = math.cos(yaw / 2), math.sin(yaw / 2)
        return f"""
      <body name="f{k}_base" pos="{x:.5f} {y:.5f} 0" quat="{cz:.6f} 0 0 {sz:.6f}">
        <body name="f{k}_prox" pos="0 0 0.005">
          <joint name="f{k}_prox" axis="0 -1 0" range="-0.1 1.9" stiffness="{proximal_stiffness_nm_rad}"/>
          <geom type="box" pos="0 0 {0.5 * Lp:.5f}" size="0.008 0.012 {0.5 * Lp:.5f}"/>
          <body name="f{k}_dist" pos="0 0 {Lp:.5f}">
            <joint name="f{k}_dist" axis="0 -1 0" range="0 1.7" stiffness="{distal_stiffness_nm_rad}"/>
            <geom type="box" pos="0 0 {0.5 * Ld:.5f}" size="0.007 0.011 {0.5 * Ld:.5f}" rgba="0.15 0.15 0.15 1"/>
          </body>
        </body>
      </body>"""

    xf = h
    fingers = finger(1, xf, 0.035, 0.0) + finger(2, xf, -0.035, 0.0) + finger(3, -xf, 0.0, math.pi)
    joints = "".join(f'<joint joint="f{k}_prox" coef="{r1}"/><joint joint="f{k}_dist" coef="{r2}"/>'
                     for k in (1, 2, 3))
    tendon_max = 3 * (1.9 * r1 + 1.7 * r2)
    rest = f"""<tendon><fixed name="tendon">{joints}</fixed></tendon>
  <actuator>
    <!-- a tendon only pulls: the servo may not push (lower force bound 0) -->
    <position name="tendon" tendon="tendon" kp="3000" ctrlrange="-0.01 {tendon_max:.5f}"
              forcerange="0 {tendon_force_n}"/>
  </actuator>"""
    mjcf = _document("underactuated", armature=0.002, damping=0.02, friction=friction,
                     palm=f'<geom name="palm" type="box" size="{h:.5f} {0.5 * palm_width_m:.5f} 0.02" '
                          f'pos="0 0 -0.02" rgba="0.3 0.3 0.35 1"/>',
                     tcp_z_m=0.005 + Lp, fingers=fingers, rest=rest)
    drive = Drive(("tendon",), closing_speed_m_s, (1.0,), (tendon_force_n,))
    links = ("palm",) + tuple(f"f{k}_{p}" for k in (1, 2, 3) for p in ("prox", "dist"))
    return HandModel("underactuated", (drive,), links, "tcp", aperture_m=2 * xf,
                     grasp_depth_m=0.5 * Lp, mjcf=mjcf)


def load_mjcf_hand(path: str | Path, *,
                   closing_actuators: list[str] | tuple[str, ...] | None = None,
                   links: list[str] | tuple[str, ...], tcp_site: str = "tcp",
                   closing_speed: float | list[float] = 0.1,
                   torque_limit: float | list[float] | None = None,
                   preshape: dict[str, float] | None = None, aperture_m: float = 0.085,
                   grasp_depth_m: float = 0.02, name: str | None = None,
                   synergy: dict[str, float] | None = None,
                   tcp: dict | None = None) -> HandModel:
    """A user's MJCF hand (e.g. Menagerie's Robotiq 2F-85): each closing actuator becomes one
    drive. The file's first worldbody body is the hand root.

    closing_speed : v0 per actuator (its length unit per s), one value for all or one each;
    torque_limit : τm per actuator (N or N·m); None takes each actuator's force range.
    synergy : instead of closing_actuators, a closing synergy of a hand with one servo per
    joint (Allegro, LEAP): {actuator: signed speed ratio}; each actuator becomes one drive
    advancing at closing_speed times |ratio| in the ratio's direction, so every joint of the
    synergy closes at once and stops on its own torque (Kim eq. 1 per joint).
    tcp : a TCP site to add where the file has none: {"body": name, "pos": [x, y, z] (m),
    "quat": [w, x, y, z]} in that body's frame, z along the approach; it is called tcp_site.
    Raises ValueError naming what the description asks for and the file lacks.
    """
    import mujoco

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"load_mjcf_hand: {str(p)!r} is not a file")
    if synergy is not None:
        if closing_actuators is not None:
            raise ValueError("load_mjcf_hand: give closing_actuators or synergy, not both")
        if not synergy or not all(isinstance(r, (int, float)) and math.isfinite(r) and r != 0
                                  for r in synergy.values()):
            raise ValueError(f"load_mjcf_hand: synergy must map actuators to non-zero ratios, "
                             f"got {synergy!r}")
        closing_actuators = list(synergy)
    if closing_actuators is None:
        raise ValueError("load_mjcf_hand: give closing_actuators (or a synergy)")
    try:
        spec = mujoco.MjSpec.from_file(str(p))
        model = spec.compile()
    except Exception as exc:  # mujoco raises ValueError with the parser's message
        raise ValueError(f"load_mjcf_hand: cannot compile {str(p)!r}: {exc}") from exc

    def names(kind, n: int) -> list[str]:
        return [mujoco.mj_id2name(model, kind, i) or "" for i in range(n)]

    acts, bodies = names(mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu), names(mujoco.mjtObj.mjOBJ_BODY, model.nbody)
    sites, joints = names(mujoco.mjtObj.mjOBJ_SITE, model.nsite), names(mujoco.mjtObj.mjOBJ_JOINT, model.njnt)
    for what, wanted, have in [("closing actuators", list(closing_actuators), acts),
                               ("links (bodies)", list(links), bodies),
                               ("tcp_site", [] if tcp else [tcp_site], sites),
                               ("tcp body", [tcp["body"]] if tcp else [], bodies),
                               ("preshape joints", list(preshape or {}), joints)]:
        missing = [w for w in wanted if w not in have]
        if missing:
            raise ValueError(f"load_mjcf_hand: {str(p)!r} has no {what} {missing}; it has {have}")
    if not closing_actuators or not links:
        raise ValueError("load_mjcf_hand: closing_actuators and links must not be empty")
    n = len(closing_actuators)
    speeds = [float(closing_speed)] * n if isinstance(closing_speed, (int, float)) else list(closing_speed)
    if len(speeds) != n:
        raise ValueError(f"load_mjcf_hand: closing_speed needs {n} values, got {len(speeds)}")
    drives = []
    for k, a in enumerate(closing_actuators):
        i = acts.index(a)
        # a position servo has an affine bias -kp * length; only such a servo can follow the
        # integrated target of Kim eq. 1
        if model.actuator_biastype[i] != mujoco.mjtBias.mjBIAS_AFFINE or model.actuator_biasprm[i, 1] >= 0:
            raise ValueError(f"load_mjcf_hand: closing actuator {a!r} in {str(p)!r} is not a position "
                             f"servo (biastype affine with -kp); the speed law drives servo targets")
        if torque_limit is None:
            lo, hi = model.actuator_forcerange[i]
            if not model.actuator_forcelimited[i] or hi <= 0:
                raise ValueError(f"load_mjcf_hand: closing actuator {a!r} has no force range; "
                                 f"give torque_limit")
            tau = float(hi)
        else:
            tau = float(torque_limit) if isinstance(torque_limit, (int, float)) else float(torque_limit[k])
        ratio = 1.0 if synergy is None else float(synergy[a])
        drives.append(Drive((a,), speeds[k] * abs(ratio), (math.copysign(1.0, ratio),), (tau,)))
    if tcp is not None:
        return HandModel(name or p.stem, tuple(drives), tuple(links), tcp_site,
                         aperture_m=aperture_m, grasp_depth_m=grasp_depth_m,
                         preshape=tuple((preshape or {}).items()), mjcf=_with_tcp(p, tcp_site, tcp))
    return HandModel(name or p.stem, tuple(drives), tuple(links), tcp_site, aperture_m=aperture_m,
                     grasp_depth_m=grasp_depth_m, preshape=tuple((preshape or {}).items()),
                     mjcf_path=str(p.resolve()))


def _with_tcp(path: Path, site: str, tcp: dict) -> str:
    """The MJCF text of the file at path with a TCP site added (tcp: body, pos, quat), its
    mesh and texture folders made absolute so that the text compiles from anywhere."""
    import mujoco

    try:
        pos = [float(v) for v in tcp.get("pos", (0.0, 0.0, 0.0))]
        quat = [float(v) for v in tcp.get("quat", (1.0, 0.0, 0.0, 0.0))]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"load_mjcf_hand: tcp pos and quat must be numbers, got {tcp!r}") from exc
    if len(pos) != 3 or len(quat) != 4 or not math.isclose(math.hypot(*quat), 1.0, abs_tol=1e-3):
        raise ValueError(f"load_mjcf_hand: tcp needs pos [x, y, z] and a unit quat [w, x, y, z], "
                         f"got {tcp!r}")
    spec = mujoco.MjSpec.from_file(str(path))
    for attr in ("meshdir", "texturedir"):
        folder = getattr(spec, attr)
        setattr(spec, attr, str((path.parent / folder).resolve()) if folder else str(path.parent.resolve()))
    spec.body(tcp["body"]).add_site(name=site, pos=pos, quat=quat)
    return spec.to_xml()


# the built-in hands by name: the one list the database build, the CLI and the tests use
_BUILTIN_HAND_MAKERS = {"parallel": parallel_jaw, "three_finger": three_finger,
                        "underactuated": underactuated}
BUILTIN_HANDS = tuple(_BUILTIN_HAND_MAKERS)


def builtin_hand(name: str) -> HandModel:
    """The built-in hand called name (one of BUILTIN_HANDS), with its default dimensions."""
    if name not in _BUILTIN_HAND_MAKERS:
        raise ValueError(f"unknown built-in hand {name!r}; choose from {', '.join(BUILTIN_HANDS)}")
    return _BUILTIN_HAND_MAKERS[name]()
