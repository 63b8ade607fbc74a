"""Hand models: the built-in hands compile with what they declare; a user's MJCF hand loads from
a description, grasps, and a description naming what the file lacks is refused clearly."""
import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from offline_sim.dynamics import build_grasp_world, simulate_grasp  # noqa: E402
from offline_sim.hands import (Drive, load_mjcf_hand, parallel_jaw, three_finger,  # noqa: E402
                               underactuated)
from offline_sim.objects import ObjectSpec  # noqa: E402
from geometry import frame_from_approach, pose  # noqa: E402

# A two-finger gripper as a user would bring it (Menagerie style: its own names, its own
# defaults, one position servo per finger, the TCP site on the base).
USER_GRIPPER = """<mujoco model="user_gripper">
  <compiler angle="radian"/>
  <default>
    <joint armature="0.2" damping="2"/>
    <geom friction="1 0.005 0.0001"/>
    <default class="finger"><geom type="box" size="0.005 0.011 0.03" rgba="0.2 0.2 0.2 1"/></default>
  </default>
  <worldbody>
    <body name="base">
      <geom type="box" size="0.06 0.02 0.01" pos="0 0 -0.01"/>
      <site name="grip_site" pos="0 0 0.045"/>
      <body name="finger_a" pos="0.045 0 0">
        <joint name="slide_a" type="slide" axis="-1 0 0" range="0 0.04"/>
        <geom class="finger" pos="0.005 0 0.03"/>
      </body>
      <body name="finger_b" pos="-0.045 0 0">
        <joint name="slide_b" type="slide" axis="1 0 0" range="0 0.04"/>
        <geom class="finger" pos="-0.005 0 0.03"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="act_a" joint="slide_a" kp="10000" dampratio="1" ctrlrange="0 0.04" forcerange="-50 50"/>
    <position name="act_b" joint="slide_b" kp="10000" dampratio="1" ctrlrange="0 0.04" forcerange="-50 50"/>
    <motor name="wrist" joint="slide_a" gear="1"/>
  </actuator>
</mujoco>"""


@pytest.fixture
def user_file(tmp_path):
    p = tmp_path / "gripper.xml"
    p.write_text(USER_GRIPPER)
    return p


def _load(path, **kw):
    args = dict(closing_actuators=["act_a", "act_b"], links=["finger_a", "finger_b"],
                tcp_site="grip_site", closing_speed=0.1)
    args.update(kw)
    return load_mjcf_hand(path, **args)


@pytest.mark.parametrize("make", [parallel_jaw, three_finger, underactuated])
def test_built_in_hands_compile_with_what_they_declare(make):
    import mujoco

    hand = make()
    model = hand.spec().compile()
    names = {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(model.nu)}
    bodies = {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i) for i in range(model.nbody)}
    assert set(hand.closing_actuators) <= names and set(hand.links) <= bodies
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, hand.tcp_site) >= 0
    # every closing servo's force range is its τm: the speed law stops exactly at the limit
    for drive in hand.drives:
        for a, tau in zip(drive.actuators, drive.torque_limits):
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
            assert model.actuator_forcerange[i].max() == pytest.approx(tau)


def test_parallel_jaw_matches_its_geometry():
    hand = parallel_jaw(finger_width_m=0.03, open_width_m=0.1, force_limit_n=40.0)
    world = build_grasp_world(ObjectSpec("b", "box", (0.04, 0.04, 0.04)), hand)
    m = world.model
    pads = [m.geom(f"hand/{s}_pad") for s in ("left", "right")]
    assert pads[0].size[1] == pytest.approx(0.015)  # half the finger width
    world.data.qpos[:] = world.model.qpos0  # fingers open
    import mujoco

    mujoco.mj_forward(m, world.data)
    xs = sorted(world.data.geom_xpos[p.id][0] for p in pads)
    assert xs[1] - xs[0] - 2 * pads[0].size[0] == pytest.approx(0.1, abs=1e-6)  # open gap
    assert hand.drives[0].torque_limits == (80.0,)  # two pads of 40 N through one linkage
    assert hand.aperture_m == 0.1


def test_three_finger_spread_is_a_preshape():
    hand = three_finger(spread_rad=math.pi / 3)
    assert dict(hand.preshape) == {"f1_spread": math.pi / 3, "f2_spread": math.pi / 3}
    assert all(d.breakaway_torque_nm is not None for d in hand.drives)
    with pytest.raises(ValueError, match="spread_rad must be in"):
        three_finger(spread_rad=2.0)


def test_three_finger_offers_the_bh8_preshapes_its_default_first():
    assert three_finger().preshapes == ((0.0, 0.0), (math.pi / 3, math.pi / 3), (math.pi / 2, math.pi / 2))
    assert three_finger(spread_rad=0.4).preshapes[0] == (0.4, 0.4)
    assert len(three_finger(spread_rad=0.4).preshapes) == 4
    assert three_finger(spread_options_rad=(0.2,)).preshapes == ((0.2, 0.2),)
    with pytest.raises(ValueError, match=r"spread_options_rad must be in \[0, pi/2\], got 2.0"):
        three_finger(spread_options_rad=(0.0, 2.0))
    with pytest.raises(ValueError, match="spread_options_rad must name at least one spread"):
        three_finger(spread_options_rad=())


def test_a_hand_without_options_offers_its_default_preshape_and_bad_options_are_named():
    assert parallel_jaw().preshapes == ((),)
    hand = three_finger()
    with pytest.raises(ValueError, match=r"preshape option 1 must be 2 finite values .* got \(0.1,\)"):
        dataclasses.replace(hand, preshape_options=((0.0, 0.0), (0.1,)))


def _knuckles(hand, spread: float) -> dict[str, np.ndarray]:
    """Proximal joint positions (m, palm frame) of a built-in hand's fingers at a spread."""
    import mujoco

    model = hand.spec().compile()
    data = mujoco.MjData(model)
    for j in ("f1_spread", "f2_spread"):
        if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) >= 0:
            data.joint(j).qpos = spread
    mujoco.mj_forward(model, data)
    return {f"f{k}": data.xanchor[model.joint(f"f{k}_prox").id].copy() for k in (1, 2, 3)}


def test_three_finger_has_bh8_dimensions():
    hand = three_finger()
    assert hand.aperture_m == pytest.approx(0.15)
    k = _knuckles(hand, 0.0)
    # spread 0: knuckles 75 mm out, the two fingers side by side opposite the thumb
    assert k["f3"][0] == pytest.approx(-0.075) and k["f3"][1] == pytest.approx(0.0)
    assert k["f1"][0] == pytest.approx(0.075) and k["f2"][0] == pytest.approx(0.075)
    # spherical preshape: the spread pivots 50 mm inward of the knuckles put the three closing
    # planes close to the palm centre (within 1 cm), 120 degrees apart
    k = _knuckles(hand, math.pi / 3)
    for f, sign in (("f1", 1), ("f2", -1)):
        closing = -np.array([math.cos(math.pi / 3), sign * math.sin(math.pi / 3)])
        p = k[f][:2]
        miss = abs(p[0] * closing[1] - p[1] * closing[0])  # closing line to the centre
        assert miss < 0.01
    with pytest.raises(ValueError, match="knuckle_radius_m must exceed the 0.05 m spread link"):
        three_finger(knuckle_radius_m=0.04)


def test_underactuated_opens_wide_enough_for_a_ten_centimetre_can():
    hand = underactuated()
    k = _knuckles(hand, 0.0)
    inner = 0.008  # half the proximal link's thickness
    assert k["f1"][0] - inner - (k["f3"][0] + inner) > 0.102
    assert hand.aperture_m == pytest.approx(0.13)


@pytest.mark.parametrize("make, kw, needle", [
    (parallel_jaw, {"finger_width_m": 0.0}, "finger_width_m must be finite and > 0, got 0.0"),
    (parallel_jaw, {"pad_length_m": 0.1}, "pad_length_m 0.1 exceeds finger_length_m"),
    (three_finger, {"breakaway_torque_nm": -1.0}, "breakaway_torque_nm must be"),
    (underactuated, {"tendon_force_n": float("nan")}, "tendon_force_n must be"),
])
def test_bad_hand_parameters_are_named(make, kw, needle):
    with pytest.raises(ValueError, match=needle):
        make(**kw)


def test_drive_needs_one_ratio_and_limit_per_actuator():
    with pytest.raises(ValueError, match="one ratio and one torque limit per actuator"):
        Drive(("a", "b"), 1.0, (1.0,), (1.0, 1.0))


def test_user_mjcf_hand_loads_and_lifts_a_box(user_file):
    hand = _load(user_file)
    assert [d.actuators for d in hand.drives] == [("act_a",), ("act_b",)]
    assert [d.torque_limits for d in hand.drives] == [(50.0,), (50.0,)]  # from the force ranges
    world = build_grasp_world(ObjectSpec("b", "box", (0.04, 0.04, 0.06)), hand)
    T = pose(frame_from_approach([0.0, 0.0, -1.0], 0.0), [0.0, 0.0, 0.03 - 0.015])
    out = simulate_grasp(world, T)
    assert out.lifted and out.measure_b == 1.0 and out.measure_c > 0.9


@pytest.mark.parametrize("kw, needle", [
    ({"closing_actuators": ["act_a", "close_c"]}, r"has no closing actuators \['close_c'\]"),
    ({"links": ["finger_a", "palm"]}, r"has no links \(bodies\) \['palm'\]"),
    ({"tcp_site": "tcp"}, r"has no tcp_site \['tcp'\]"),
    ({"preshape": {"spread": 0.1}}, r"has no preshape joints \['spread'\]"),
    ({"closing_actuators": ["wrist"]}, "closing actuator 'wrist' .* is not a position servo"),
    ({"closing_speed": [0.1]}, "closing_speed needs 2 values, got 1"),
])
def test_user_description_naming_what_the_file_lacks_is_refused(user_file, kw, needle):
    with pytest.raises(ValueError, match=needle):
        _load(user_file, **kw)


def test_user_file_that_is_missing_or_broken_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a file"):
        _load(tmp_path / "nope.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='sphere'/></body></worldbody>")
    with pytest.raises(ValueError, match="cannot compile"):
        _load(bad)


def test_user_hand_without_force_ranges_needs_a_torque_limit(tmp_path):
    p = tmp_path / "g.xml"
    p.write_text(USER_GRIPPER.replace(' forcerange="-50 50"', ""))
    with pytest.raises(ValueError, match="has no force range; give torque_limit"):
        _load(p)
    hand = _load(p, torque_limit=[30.0, 40.0])
    assert [d.torque_limits[0] for d in hand.drives] == [30.0, 40.0]
    assert np.isclose(hand.drives[0].closing_speed, 0.1)
