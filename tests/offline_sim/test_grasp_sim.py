"""Grasp simulation (Kim et al.): a centred jaw grasp lifts a box, an edge grasp scores lower,
results survive a halved timestep, runs are deterministic, the other hands lift a cylinder."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mujoco")

from offline_sim.dynamics import (SimSettings, build_grasp_world, place_hand,  # noqa: E402
                                  simulate_grasp, start_collisions)
from offline_sim.hands import parallel_jaw, three_finger, underactuated  # noqa: E402
from offline_sim.objects import ObjectSpec  # noqa: E402
from geometry import frame_from_approach, pose  # noqa: E402
from offline_sim.dynamics import area_link as _area_link, trapezoid as _trapezoid  # noqa: E402

BOX = ObjectSpec("box", "box", (0.05, 0.05, 0.08))
CYLINDER = ObjectSpec("cylinder", "cylinder", (0.03, 0.12))
PAD_HALF_M = 0.0175  # half the default pad length: the TCP sits at the pad centre
# TCP depth past the 3 cm cylinder's surface for a side grasp: the palm stands 4 mm (three
# finger: TCP 82 mm in front of the palm) or 15 mm (underactuated: 70 mm) off the surface. The
# BH8-sized hand's knuckles sit 7.5 cm out, so a 6 cm cylinder held further from the palm is
# pinched by the fingertips alone and slips (Kim §VI: power grasps with the palm hold best).
SIDE_DEPTH_M = {"three_finger": 0.078, "underactuated": 0.055}


@pytest.fixture(scope="module")
def jaw_box():
    return build_grasp_world(BOX, parallel_jaw())


def top_down(height_m: float, depth_m: float, roll: float = 0.0, dx: float = 0.0) -> np.ndarray:
    """TCP pose in the object frame: approaching straight down, depth_m below the top face."""
    return pose(frame_from_approach([0.0, 0.0, -1.0], roll), [dx, 0.0, 0.5 * height_m - depth_m])


def side(radius_m: float, depth_m: float) -> np.ndarray:
    """TCP pose approaching a cylinder horizontally (along -x), closing across y, TCP depth_m
    inside the surface."""
    return pose(frame_from_approach([-1.0, 0.0, 0.0], 0.0), [radius_m - depth_m, 0.0, 0.0])


def test_centred_parallel_jaw_grasp_lifts_a_box(jaw_box):
    T = top_down(0.08, PAD_HALF_M)
    place_hand(jaw_box, T)
    assert start_collisions(jaw_box) == []
    out = simulate_grasp(jaw_box, T)
    assert out.lifted and out.measure_b == 1.0
    assert out.measure_c > 0.95
    c = out.contacts
    assert c.positions.shape == c.normals.shape == c.forces.shape and c.links.shape == (len(c.positions),)
    np.testing.assert_allclose(np.linalg.norm(c.normals, axis=1), 1.0, atol=1e-9)
    # held still: the contact forces carry the weight (object frame = world orientation here)
    mass = jaw_box.model.body_mass[jaw_box.object_body]
    assert c.forces.sum(axis=0)[2] == pytest.approx(mass * 9.81, rel=0.05)
    # each pad squeezes with about the force limit (60 N), pushing into the object
    for k in (0, 1):
        f = c.forces[c.links == k].sum(axis=0)
        n = c.normals[c.links == k][0]
        assert f @ n == pytest.approx(60.0, rel=0.1)
    h = out.hold
    assert h.n_samples > 5 and h.force_variation < 0.05 and h.position_variation_m < 1e-3
    assert out.T_hand_object.shape == (len(out.times_s), 4, 4)
    assert np.all(np.diff(out.times_s) > 0) and out.sim_time_s == pytest.approx(out.times_s[-1])


@pytest.mark.parametrize("label, T", [
    ("fingertips 3 mm over the top edges", top_down(0.08, -PAD_HALF_M + 0.003)),
    ("pads on two vertical edges (closing along the diagonal)", top_down(0.08, PAD_HALF_M, math.pi / 4)),
])
def test_edge_grasp_scores_lower_than_a_centred_one(jaw_box, label, T):
    centred = simulate_grasp(jaw_box, top_down(0.08, PAD_HALF_M))
    edge = simulate_grasp(jaw_box, T)
    # nominal: line contacts on an edge may dangle (B = 0.5) where pads on faces do not
    assert edge.measure_b < centred.measure_b, label
    assert edge.measure_b + edge.measure_c < centred.measure_b + centred.measure_c


def test_off_centre_grasp_moves_the_object_and_lowers_c(jaw_box):
    out = simulate_grasp(jaw_box, top_down(0.08, PAD_HALF_M, dx=0.015))
    # the coupled fingers centre the box: it moves ~15 mm in the hand
    assert out.lifted and out.position_deviation_m == pytest.approx(0.015, abs=0.003)
    assert 0.7 < out.measure_c < 0.95


@pytest.fixture(scope="module")
def cylinder_worlds():
    return {"three_finger": build_grasp_world(CYLINDER, three_finger()),
            "underactuated": build_grasp_world(CYLINDER, underactuated())}


@pytest.mark.parametrize("case", ["jaw centred", "jaw off centre", "three_finger", "underactuated"])
def test_results_hold_when_the_timestep_halves(jaw_box, cylinder_worlds, case):
    world, T = {"jaw centred": (jaw_box, top_down(0.08, PAD_HALF_M)),
                "jaw off centre": (jaw_box, top_down(0.08, PAD_HALF_M, dx=0.01)),
                "three_finger": (cylinder_worlds["three_finger"], side(0.03, SIDE_DEPTH_M["three_finger"])),
                "underactuated": (cylinder_worlds["underactuated"],
                                  side(0.03, SIDE_DEPTH_M["underactuated"]))}[case]
    a = simulate_grasp(world, T)
    b = simulate_grasp(world, T, settings=SimSettings(timestep_s=0.5 * SimSettings().timestep_s))
    assert a.lifted == b.lifted and a.measure_b == b.measure_b
    assert abs(a.measure_c - b.measure_c) < 0.03


def test_same_inputs_same_result(jaw_box):
    T = top_down(0.08, PAD_HALF_M, roll=0.2, dx=0.005)
    a = simulate_grasp(jaw_box, T, seed=3, shake=True)
    simulate_grasp(jaw_box, top_down(0.08, PAD_HALF_M))  # another trial in between
    b = simulate_grasp(jaw_box, T, seed=3, shake=True)
    assert (a.measure_b, a.measure_c, a.sim_time_s) == (b.measure_b, b.measure_c, b.sim_time_s)
    np.testing.assert_array_equal(a.T_hand_object, b.T_hand_object)
    np.testing.assert_array_equal(a.contacts.forces, b.contacts.forces)
    assert a.settings == b.settings == SimSettings()


def test_shake_keeps_a_good_grasp(jaw_box):
    out = simulate_grasp(jaw_box, top_down(0.08, PAD_HALF_M), seed=1, shake=True)
    s = out.settings
    assert out.sim_time_s > s.lift_duration_s + s.hold_s + s.shake_s - 1e-9
    assert out.lifted and out.measure_b == 1.0 and out.measure_c > 0.9


def test_a_grasp_that_misses_scores_zero(jaw_box):
    out = simulate_grasp(jaw_box, top_down(0.08, -0.05))  # fingertips 3 cm above the box
    assert not out.lifted and out.measure_b == 0.0 and out.measure_c == 0.0
    assert len(out.contacts.links) == 0 and math.isnan(out.hold.force_variation)


@pytest.mark.parametrize("name", ["three_finger", "underactuated"])
def test_three_finger_and_underactuated_hands_lift_a_cylinder(cylinder_worlds, name):
    world = cylinder_worlds[name]
    T = side(0.03, SIDE_DEPTH_M[name])
    place_hand(world, T)
    assert start_collisions(world) == []
    out = simulate_grasp(world, T)
    assert out.lifted and out.measure_b == 1.0 and out.n_contact_links >= 3
    assert out.measure_c > 0.6
    assert np.all(np.isfinite([out.hold.force_variation, out.hold.position_variation_m,
                               out.hold.normal_variation]))


def test_breakaway_lets_the_distal_links_go_on_closing():
    world = build_grasp_world(CYLINDER, three_finger(breakaway_torque_nm=0.3))
    simulate_grasp(world, side(0.03, 0.05))
    d, ids = world.data, world.act_ids
    prox, dist = d.qpos[world.model.jnt_qposadr[world.model.actuator_trnid[ids[0::2], 0]]], \
        d.qpos[world.model.jnt_qposadr[world.model.actuator_trnid[ids[1::2], 0]]]
    # coupled closing would keep distal = prox / 3; after the breakaway the distal ran ahead
    assert np.all(dist > prox / 3 + 0.1)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="timestep_s must be finite and > 0, got 0"):
        SimSettings(timestep_s=0)
    with pytest.raises(ValueError, match="lift_ramp_s"):
        SimSettings(lift_ramp_s=1.0)


def test_bad_pose_is_rejected(jaw_box):
    with pytest.raises(ValueError, match=r"T_object_hand must be a finite 4 x 4 array"):
        simulate_grasp(jaw_box, np.eye(3))


@settings(max_examples=50, deadline=None)
@given(st.floats(0.01, 0.2), st.floats(0.2, 2.0), st.floats(0.01, 0.5))
def test_trapezoid_rises_monotonically_to_the_height(height, duration, ramp_fraction):
    ramp = ramp_fraction * duration
    t = np.linspace(-0.1, duration + 0.1, 400)
    z = np.array([_trapezoid(x, height, duration, ramp) for x in t])
    assert np.all(np.diff(z) >= -1e-12)
    assert z[0] == 0.0 and z[-1] == pytest.approx(height)
    assert _trapezoid(0.5 * duration, height, duration, ramp) == pytest.approx(0.5 * height)


def test_area_contact_needs_points_spread_both_ways():
    line = np.column_stack([np.linspace(0, 0.02, 4), np.zeros(4), np.zeros(4)])
    patch = np.array([[0, 0, 0], [0.02, 0, 0], [0, 0.01, 0], [0.02, 0.01, 0.0]])
    assert not _area_link(line, 0.002) and _area_link(patch, 0.002)
    assert not _area_link(patch[:2], 0.002)


def test_object_rests_still_in_a_given_stable_pose():
    import mujoco

    R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # the box on its side
    world = build_grasp_world(BOX, parallel_jaw(), R_table_object=R, object_mass_kg=0.3)
    assert world.T_world_object[2, 3] == pytest.approx(0.025)  # half the 5 cm side
    assert world.model.body_mass[world.object_body] == pytest.approx(0.3)
    place_hand(world, pose(np.eye(3), [0.0, 0.0, 1.0]))  # hand well away
    p0 = world.data.xpos[world.object_body].copy()
    mujoco.mj_step(world.model, world.data, 200)
    np.testing.assert_allclose(world.data.xpos[world.object_body], p0, atol=1e-4)
    with pytest.raises(ValueError, match="R_table_object must be a"):
        build_grasp_world(BOX, parallel_jaw(), R_table_object=2 * np.eye(3))


def test_a_placed_start_reads_and_steps_bit_for_bit_as_after_mj_forward():
    import mujoco

    world = build_grasp_world(CYLINDER, three_finger())
    T = side(0.03, SIDE_DEPTH_M["three_finger"])
    place_hand(world, T, np.array([0.4, 0.4]))  # a spread away from its zero: its servo pulls at the start
    m, placed = world.model, world.data
    # what place_hand did before it skipped the acceleration stage: a full mj_forward with the
    # reset's zero targets, then the servos set to hold (hold_servos reads lengths only)
    full = mujoco.MjData(m)
    mujoco.mj_copyData(full, m, placed)
    full.ctrl[:] = 0.0
    mujoco.mj_forward(m, full)
    full.ctrl[:] = placed.ctrl
    # what a start is read for: contacts, poses, actuator lengths and forces (the Python
    # closing law's first period reads the forces)
    assert placed.ncon == full.ncon > 0
    assert np.abs(full.actuator_force).max() > 0.1
    for name in ("xpos", "xipos", "actuator_length", "actuator_force"):
        np.testing.assert_array_equal(getattr(placed, name), getattr(full, name), err_msg=name)
    np.testing.assert_array_equal(placed.contact.dist, full.contact.dist)
    for d in (placed, full):
        d.ctrl[world.drives.act_ids] += 0.3  # close a little, so that the fingers meet the object
        mujoco.mj_step(m, d, 60)
    for name in ("qpos", "qvel", "actuator_force"):
        np.testing.assert_array_equal(getattr(placed, name), getattr(full, name), err_msg=name)
