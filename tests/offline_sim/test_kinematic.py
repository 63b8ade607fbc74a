"""Kinematic closing against a fixed object and P(fc) (Weisz & Allen): fingers stop at the
object, contacts land where the geometry says, the object never moves, and P(fc) ranks a
centred grasp above an edge grasp."""
import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from geometry import frame_from_approach, pose  # noqa: E402
from offline_sim.dynamics import build_grasp_world, simulate_grasp  # noqa: E402
from offline_sim.hands import (load_mjcf_hand, parallel_jaw, three_finger,  # noqa: E402
                               underactuated)
from offline_sim.kinematic import ClosingSettings, KinematicCloser  # noqa: E402
from offline_sim.objects import ObjectSpec  # noqa: E402
from offline_sim.quality import grid_transforms, pfc_grid  # noqa: E402
from tests.offline_sim import kinematic_reference as ref  # noqa: E402

BOX = ObjectSpec("box", "box", (0.05, 0.05, 0.08))  # full sizes: a 5 x 5 x 8 cm box


def top_grasp(x_m: float = 0.0, depth_m: float = 0.02) -> np.ndarray:
    """TCP above the box centre, approaching straight down, closing along the object's x."""
    return pose(frame_from_approach(np.array([0.0, 0.0, -1.0]), 0.0), (x_m, 0.0, 0.04 - depth_m))


@pytest.fixture(scope="module")
def jaw_world():
    return build_grasp_world(BOX, parallel_jaw())


def test_parallel_jaw_pads_stop_on_the_box_faces_with_the_analytic_gap(jaw_world):
    closer = KinematicCloser(jaw_world)
    g = closer.close(top_grasp())
    assert not g.start_collision and g.reached_pregrasp
    assert set(g.links.tolist()) == {0, 1}
    # contacts sit on the two faces x = +-25 mm, within the stopping tolerance
    s = closer.settings
    np.testing.assert_allclose(np.abs(g.positions[:, 0]), 0.025, atol=s.contact_tol_m)
    # normals point into the box, along -+x
    np.testing.assert_allclose(g.normals[:, 0], -np.sign(g.positions[:, 0]), atol=1e-6)
    # ε of two opposed flat pads (four contacts each side) is positive: force closure
    assert closer.epsilon(g, 0.8, 0.05) > 0.05


def test_closing_never_moves_the_object_or_touches_the_dynamic_world(jaw_world):
    before = simulate_grasp(jaw_world, top_grasp())
    closer = KinematicCloser(jaw_world)
    shifted = grid_transforms(np.array([[0.004, -0.003, math.radians(7.0)]]), np.zeros(3))[0]
    closer.close(top_grasp(), shifted)
    q = jaw_world.object_qposadr
    np.testing.assert_allclose(closer.data.qpos[q:q + 3], (shifted @ jaw_world.T_world_object)[:3, 3])
    after = simulate_grasp(jaw_world, top_grasp())
    assert after.measure_b == before.measure_b and after.measure_c == before.measure_c


def test_displaced_box_is_still_met_by_both_independently_stopping_pads(jaw_world):
    closer = KinematicCloser(jaw_world)
    T = grid_transforms(np.array([[0.008, 0.0, 0.0]]), np.zeros(3))[0]  # 8 mm along the closing axis
    g = closer.close(top_grasp(), T)
    assert set(g.links.tolist()) == {0, 1}
    # in the box's own frame the contacts are still on its faces
    np.testing.assert_allclose(np.abs(g.positions[:, 0]), 0.025, atol=closer.settings.contact_tol_m)


def test_fingers_close_to_their_limits_in_air_and_give_no_grasp(jaw_world):
    closer = KinematicCloser(jaw_world)
    T_far = pose(np.eye(3), (0.3, 0.0, 0.0))  # the box moved 30 cm away
    g = closer.close(top_grasp(), T_far)
    assert len(g.positions) == 0 and closer.epsilon(g, 0.8, 0.05) == 0.0
    np.testing.assert_allclose(closer.data.qpos[closer.qadr], closer.limit)


def test_hand_starting_inside_the_displaced_object_counts_as_no_grasp(jaw_world):
    closer = KinematicCloser(jaw_world, ClosingSettings(withdraw_m=0.0))
    # the box moved 3 cm under a pad that starts right beside it
    g = closer.close(top_grasp(), pose(np.eye(3), (0.03, 0.0, 0.0)))
    assert g.start_collision and len(g.positions) == 0


def test_bh8_finger_blocked_at_its_proximal_link_curls_its_distal_link_on():
    hand = three_finger()
    rb = 0.5 * hand.aperture_m
    # a slab 3 cm thick held just below the palm, 3 mm inside the open fingers (capsules of
    # 11 mm radius): the proximal links meet its edges, the distal ones hang below it. No
    # table, so the fingertips may curl under the slab.
    world = build_grasp_world(ObjectSpec("slab", "box", (2 * (rb - 0.014), 2 * rb, 0.03)), hand)
    closer = KinematicCloser(world, ClosingSettings(table=False))
    tcp_below_palm = 0.012 + 0.07  # three_finger's default proximal length
    T = pose(frame_from_approach(np.array([0.0, 0.0, -1.0]), 0.0), (0.0, 0.0, 0.017 - tcp_below_palm))
    g = closer.close(T)
    names = {world.hand.links[k] for k in g.links.tolist()}
    assert "f3_prox" in names, names
    q = dict(zip((_joint_name(closer, j) for j in closer.joints), closer.data.qpos[closer.qadr]))
    # the thumb's distal joint went far past its coupled third of the blocked proximal one
    assert q["hand/f3_dist"] > q["hand/f3_prox"] / 3 + 0.3, q


def _joint_name(closer, j):
    import mujoco

    return mujoco.mj_id2name(closer.model, mujoco.mjtObj.mjOBJ_JOINT, int(j))


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_multi_finger_hands_reach_force_closure_on_a_centred_box(make):
    world = build_grasp_world(BOX, make())
    closer = KinematicCloser(world)
    g = closer.close(top_grasp(depth_m=0.0))
    assert len(set(g.links.tolist())) >= 3
    assert closer.epsilon(g, 0.8, 0.05) > 0.01


def test_pfc_ranks_a_centred_jaw_grasp_above_one_at_the_box_edge(jaw_world):
    closer = KinematicCloser(jaw_world)
    grid = pfc_grid(xy_step_m=0.005, theta_step_rad=math.radians(10.0))  # 5 x 5 x 5 poses
    centred = closer.pfc(top_grasp(), grid=grid)
    # the 22 mm wide pads 30 mm off centre overlap the box by 6 mm: shifts of 5 and 10 mm
    # leave them on its edge or beside it
    edge = closer.pfc(top_grasp() @ pose(np.eye(3), (0.0, 0.03, 0.0)), grid=grid)
    assert len(centred.epsilons) == 125
    assert centred.pfc > edge.pfc
    assert centred.pfc >= 0.5
    assert centred.nominal_epsilon > 0


def test_pfc_reports_progress_and_is_deterministic(jaw_world):
    closer = KinematicCloser(jaw_world)
    grid = pfc_grid(xy_step_m=0.01, theta_step_rad=math.radians(20.0))
    seen = []
    a = closer.pfc(top_grasp(), grid=grid, progress=lambda done, total: seen.append((done, total)))
    b = closer.pfc(top_grasp(), grid=grid)
    assert seen[-1] == (27, 27) and len(seen) == 27
    np.testing.assert_array_equal(a.epsilons, b.epsilons)


def test_hand_closed_by_a_linkage_loop_is_refused_with_its_name(tmp_path):
    xml = """<mujoco><worldbody><body name="base"><geom type="box" size="0.03 0.02 0.01"/>
      <site name="tcp" pos="0 0 0.05"/>
      <body name="a" pos="0.03 0 0"><joint name="ja" type="slide" axis="-1 0 0" range="0 0.03"/>
        <geom type="box" size="0.005 0.01 0.03" pos="0 0 0.03"/></body>
      <body name="b" pos="-0.03 0 0"><joint name="jb" type="slide" axis="1 0 0" range="0 0.03"/>
        <geom type="box" size="0.005 0.01 0.03" pos="0 0 0.03"/></body></body></worldbody>
      <equality><connect body1="a" body2="b" anchor="0 0 0"/></equality>
      <actuator><position name="close" joint="ja" kp="1000" forcerange="-20 20"/></actuator></mujoco>"""
    path = tmp_path / "loop.xml"
    path.write_text(xml)
    hand = load_mjcf_hand(path, closing_actuators=["close"], links=["a", "b"], tcp_site="tcp")
    world = build_grasp_world(BOX, hand)
    with pytest.raises(ValueError, match="linkage loop"):
        KinematicCloser(world)


def test_bad_closing_settings_are_named():
    with pytest.raises(ValueError, match="contact_tol_m < margin_m"):
        ClosingSettings(contact_tol_m=0.05, margin_m=0.02)
    with pytest.raises(ValueError, match="withdraw_m"):
        ClosingSettings(withdraw_m=-1.0)
    # None once chose another approach silently; now it is refused, naming the value
    with pytest.raises(ValueError, match="approach_margin_m must be a number >= margin_m .*got None"):
        ClosingSettings(approach_margin_m=None)
    with pytest.raises(ValueError, match="approach_margin_m .*got 0.01"):
        ClosingSettings(approach_margin_m=0.01)


def test_pfc_shortcut_through_a_contact_subset_decides_like_the_exact_epsilon():
    # the tendon hand's box links press the box's faces with several contacts each: the
    # subset of one contact per link often settles force closure on its own
    world = build_grasp_world(BOX, underactuated())
    closer = KinematicCloser(world)
    grid = pfc_grid(xy_step_m=0.005, theta_step_rad=math.radians(10.0))
    fast = closer.pfc(top_grasp(depth_m=0.0), grid=grid)
    exact = closer.pfc(top_grasp(depth_m=0.0), grid=grid, exact_epsilons=True)
    np.testing.assert_array_equal(fast.closed, exact.closed)
    assert fast.pfc == exact.pfc and fast.pfc > 0
    # where the subset decided force closure, its ε is a lower bound of the exact one
    c = fast.closed
    assert np.all(fast.epsilons[c] <= exact.epsilons[c] + 1e-9)
    assert np.any(fast.epsilons[c] < exact.epsilons[c] - 1e-6)  # the shortcut was taken


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_pfc_reusing_neighbours_hulls_decides_like_the_exact_epsilon_on_a_fine_grid(make):
    # 1 mm / 2° steps over ±2 mm, ±10°, centred and 15 mm off centre (where some poses fail):
    # neighbours 2° apart settle most poses by the certificates, each decision exact
    closer = KinematicCloser(build_grasp_world(BOX, make()))
    grid = pfc_grid(xy_range_m=0.002, xy_step_m=0.001, theta_range_rad=math.radians(10.0),
                    theta_step_rad=math.radians(2.0))
    certified = 0
    for T in (top_grasp(depth_m=0.0), top_grasp(depth_m=0.0) @ pose(np.eye(3), (0.0, 0.015, 0.0))):
        fast = closer.pfc(T, grid=grid)
        alone = closer.pfc(T, grid=grid, reuse_hulls=False)
        exact = closer.pfc(T, grid=grid, exact_epsilons=True)
        np.testing.assert_array_equal(fast.closed, exact.closed)
        np.testing.assert_array_equal(alone.closed, exact.closed)
        # a certificate's ε is a bound on the right side of δ: below the exact ε where force
        # closure holds, above it (and below δ) where it does not
        c = fast.closed
        assert np.all(fast.epsilons[c] <= exact.epsilons[c] + 1e-9)
        assert np.all(fast.epsilons[~c] >= exact.epsilons[~c] - 1e-9)
        assert np.all(fast.epsilons[~c] < 0.001)
        certified += fast.certified
    assert certified > 0.15 * 2 * len(grid)  # 23 % here; 72 % on the can at 1° steps


def test_user_mjcf_gripper_closes_kinematically_on_its_own_actuators(tmp_path):
    from tests.offline_sim.test_hands import USER_GRIPPER

    path = tmp_path / "gripper.xml"
    path.write_text(USER_GRIPPER)
    hand = load_mjcf_hand(path, closing_actuators=["act_a", "act_b"], links=["finger_a", "finger_b"],
                          tcp_site="grip_site", closing_speed=0.1)
    world = build_grasp_world(ObjectSpec("bar", "box", (0.04, 0.02, 0.08)), hand)
    closer = KinematicCloser(world)
    g = closer.close(top_grasp(depth_m=0.0))
    assert set(g.links.tolist()) == {0, 1}
    np.testing.assert_allclose(np.abs(g.positions[:, 0]), 0.02, atol=closer.settings.contact_tol_m)


def _squeeze(shift_m: float = 0.0, same_side: bool = False):
    """Four point contacts of links 0-3 on a 5 cm cube: two on each x face at y = ±1 cm, or
    all four on the +x face (same_side: no force closure); shift_m moves them along z."""
    from offline_sim.kinematic import ClosedGrasp

    x = np.array([0.025, 0.025, 0.025 if same_side else -0.025, 0.025 if same_side else -0.025])
    p = np.column_stack([x, [0.01, -0.01, 0.01, -0.01], np.full(4, shift_m)])
    n = np.column_stack([-np.sign(x), np.zeros(4), np.zeros(4)])
    return ClosedGrasp(p, n, np.arange(4, dtype=np.int32), False, True, 0)


@pytest.mark.parametrize("shift_m", [0.0005, 0.002, 0.01])
def test_force_closure_certificates_agree_with_the_exact_epsilon(jaw_world, shift_m):
    from offline_sim.quality import ferrari_canny
    from offline_sim.kinematic._force_closure import FcMemo  # the certificates' private cache

    closer = KinematicCloser(jaw_world)
    memo = FcMemo()
    sequence = [_squeeze(), _squeeze(shift_m), _squeeze(same_side=True),
                _squeeze(shift_m, same_side=True), _squeeze(2 * shift_m), _squeeze()]
    for g in sequence:
        ok, eps = closer.force_closure(g, 0.8, 0.05, memo=memo)
        exact = ferrari_canny(g.positions, g.normals, mu=0.8, torque_scale_m=0.05)
        assert ok == (exact > 0.001)
        assert (eps <= exact + 1e-9) if ok else (exact - 1e-9 <= eps < 0.001)
    if shift_m <= 0.002:  # near neighbours: the memo settles some without a hull
        assert memo.certified >= 1


# --- the fast path of P(fc): lattice approach, warm starts, kernels -------------------------

def _lattice_stop_by_every_query(closer, T_object_hand, T_displace, preshape=None):
    """The approach's definition, by brute force: the travel of the first lattice position
    (0.25 mm apart, the last one the pre-grasp) whose gap to the object or table is below the
    tolerance, querying every position; None when the hand starts inside an obstacle."""
    s = closer.settings
    tol, total = s.contact_tol_m, closer.withdraw_m
    h = 0.5 * tol
    n = int(np.ceil(total / h))
    import mujoco

    approach = closer.set_start(T_object_hand, T_displace, preshape)
    closer.model.geom_margin[closer.hand_geoms] = s.approach_margin_m
    flags = closer.model.opt.disableflags  # gaps from each pair's nearest points, as close does
    closer.model.opt.disableflags = flags | mujoco.mjtDisableBit.mjDSBL_MULTICCD
    try:
        for j in range(n + 1):
            t = total if j == n else j * h
            closer.data.qpos[closer.carrier_qadr] = -(total - t) * approach
            g_obj, g_tab = ref.split_gaps(closer, s.approach_margin_m)
            gap = min(g_obj.min(), g_tab.min())
            if j == 0 and gap < -tol:
                return None
            if gap < tol:
                return t
        return total
    finally:
        closer.model.geom_margin[closer.hand_geoms] = s.margin_m
        closer.model.opt.disableflags = flags


def _approach_travel(closer, T_object_hand, grasp):
    """How far the hand travelled before closing, from the carrier's position after close."""
    approach = (closer.world.T_world_object @ T_object_hand)[:3, 2]
    return closer.withdraw_m - float(-closer.data.qpos[closer.carrier_qadr] @ approach)


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_approach_stops_where_querying_every_lattice_position_would(make):
    # a grasp 15 mm off centre (fingers sliding past the box's faces) and one 3 cm too deep
    # (the palm meets the box's top first), the box displaced over a grid
    closer = KinematicCloser(build_grasp_world(BOX, make()))
    from offline_sim.kinematic._approach import ApproachMemo  # the approach's private warm start

    grid = pfc_grid(xy_range_m=0.004, xy_step_m=0.002, theta_range_rad=math.radians(12.0),
                    theta_step_rad=math.radians(4.0))
    transforms = grid_transforms(grid, np.array([0.0, 0.0, 0.04]))
    stops = set()
    for T in (top_grasp(depth_m=0.0) @ pose(np.eye(3), (0.0, 0.015, 0.0)), top_grasp(depth_m=0.03)):
        memo = ApproachMemo(closer, np.array([0.0, 0.0, 0.04]))
        for Td in transforms[::3]:
            want = _lattice_stop_by_every_query(closer, T, Td)
            for warm in (None, memo):
                g = closer.close(T, Td, warm=warm)
                if want is None:
                    assert g.start_collision
                    continue
                assert _approach_travel(closer, T, g) == pytest.approx(want, abs=1e-12)
                stops.add(g.reached_pregrasp)
    assert stops == {True, False}


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_warm_started_closings_give_the_cold_contacts_bit_for_bit(make):
    from offline_sim.kinematic._approach import ApproachMemo  # the approach's private warm start

    closer = KinematicCloser(build_grasp_world(BOX, make()))
    T = top_grasp(depth_m=0.0) @ pose(np.eye(3), (0.0, 0.01, 0.0))
    grid = pfc_grid(xy_range_m=0.002, xy_step_m=0.001, theta_range_rad=math.radians(6.0),
                    theta_step_rad=math.radians(1.0))
    centre = np.array([0.0, 0.01, 0.04])
    memo = ApproachMemo(closer, centre)
    warm_steps = cold_steps = 0
    for Td in grid_transforms(grid, centre):
        warm = closer.close(T, Td, warm=memo)
        cold = closer.close(T, Td)
        np.testing.assert_array_equal(warm.positions, cold.positions)
        np.testing.assert_array_equal(warm.normals, cold.normals)
        np.testing.assert_array_equal(warm.links, cold.links)
        assert (warm.reached_pregrasp, warm.start_collision) == (cold.reached_pregrasp, cold.start_collision)
        warm_steps, cold_steps = warm_steps + warm.steps, cold_steps + cold.steps
    assert warm_steps < cold_steps  # the neighbours' gaps saved queries


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_pfc_fast_path_decides_like_the_exact_epsilon_of_cold_closings_on_sampled_poses(make):
    # the whole fast path (warm approach, kernels, hull certificates) on the full-size grid's
    # spacing over its middle, against a cold closing and ferrari_canny at sampled poses
    from offline_sim.quality import ferrari_canny

    world = build_grasp_world(BOX, make())
    closer = KinematicCloser(world)
    T = top_grasp(depth_m=0.0) @ pose(np.eye(3), (0.0, 0.012, 0.0))
    grid = pfc_grid(xy_range_m=0.003, xy_step_m=0.001, theta_range_rad=math.radians(10.0),
                    theta_step_rad=math.radians(1.0))
    fast = closer.pfc(T, grid=grid, torque_scale_m=0.05)
    transforms = grid_transforms(grid, fast.centre_world)
    sample = np.random.default_rng(0).choice(len(grid), 60, replace=False)
    exact = []
    for i in sample:
        g = closer.close(T, transforms[i])
        exact.append(len(g.positions) > 0 and
                     ferrari_canny(g.positions, g.normals, mu=0.8, torque_scale_m=0.05) > 0.001)
    np.testing.assert_array_equal(fast.closed[sample], exact)
    assert 0 < fast.pfc < 1 and 0 < sum(exact) < len(exact)  # both decisions occur
    assert fast.certified > 0  # some poses settled without a hull of their own


def test_stepped_reference_path_stops_within_the_tolerance_of_the_fast_one():
    # the earlier stepped approach and NumPy closing (kinematic_reference.close_stepped): its
    # contacts sit on the same faces, within the stopping tolerance of the fast path's
    world = build_grasp_world(BOX, three_finger())
    fast = KinematicCloser(world)
    before = KinematicCloser(world)
    for Td in grid_transforms(np.array([[0.0, 0.0, 0.0], [0.003, -0.002, 0.1]]), np.zeros(3)):
        a = fast.close(top_grasp(depth_m=0.0), Td)
        b = ref.close_stepped(before, top_grasp(depth_m=0.0), Td)
        assert set(a.links.tolist()) == set(b.links.tolist())
        for k in set(a.links.tolist()):
            np.testing.assert_allclose(a.positions[a.links == k].mean(axis=0),
                                       b.positions[b.links == k].mean(axis=0), atol=0.004)
        assert fast.epsilon(a, 0.8, 0.05) > 0.001 and before.epsilon(b, 0.8, 0.05) > 0.001


def test_cone_wrenches_equal_contact_wrenches_bit_for_bit():
    from offline_sim.quality import contact_wrenches
    from offline_sim.kinematic._force_closure import cone_wrenches  # a private kernel vs its reference

    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 13):
        p = rng.normal(size=(n, 3)) * 0.05
        nrm = rng.normal(size=(n, 3))
        nrm[: n // 2] = [[1.0, 1e-3, 0.0]]  # near the x axis: the other helper vector
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        np.testing.assert_array_equal(cone_wrenches(p, nrm, 0.8, 0.05),
                                      contact_wrenches(p, nrm, mu=0.8, torque_scale_m=0.05))


def test_object_motion_kernel_matches_its_reference_and_bounds_the_motion():
    from scipy.spatial.transform import Rotation

    # a private Numba kernel against its reference (ApproachMemo.moved)
    from offline_sim.kinematic._approach import ApproachMemo
    from offline_sim.kinematic._closing_kernels import object_motion

    world = build_grasp_world(ObjectSpec("can", "cylinder", (0.05, 0.14)), three_finger())
    closer = KinematicCloser(world)
    memo = ApproachMemo(closer, np.array([0.01, 0.0, 0.05]))
    rng = np.random.default_rng(1)
    grid_T = grid_transforms(pfc_grid(xy_step_m=0.005, theta_step_rad=math.radians(10.0)), memo.c0)
    any_T = np.tile(np.eye(4), (20, 1, 1))
    any_T[:, :3, :3] = Rotation.random(20, random_state=2).as_matrix()
    any_T[:, :3, 3] = rng.normal(size=(20, 3)) * 0.01
    from offline_sim.objects import object_points

    pts = object_points(world.obj) @ world.T_world_object[:3, :3].T + world.T_world_object[:3, 3]
    for T_b in (grid_T, any_T):
        ref = memo.moved(T_b[0], T_b)
        out = np.empty(len(T_b))
        object_motion(T_b[0], T_b, memo.c0, memo.reach, memo.reach_z, out)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-15)
        # every point of the object moves no further than the bound
        moved = [np.linalg.norm(pts @ (T_b[0][:3, :3] - T[:3, :3]).T + (T_b[0][:3, 3] - T[:3, 3]),
                                axis=1).max() for T in T_b]
        assert np.all(np.array(moved) <= out)


def test_closing_step_kernel_matches_the_numpy_step():
    from offline_sim.kinematic._closing_kernels import closing_step  # a private kernel vs its reference

    closer = KinematicCloser(build_grasp_world(BOX, three_finger()))
    closer.close(top_grasp(depth_m=0.0), pose(np.eye(3), (0.3, 0.0, 0.0)))  # in the air
    d, tol = closer.data, closer.settings.contact_tol_m
    closer.data.qpos[closer.qadr] = 0.2
    gap = ref.gaps(closer)
    rng = np.random.default_rng(0)
    for trial in range(20):
        g = gap * rng.uniform(0.1, 1.0, gap.shape)
        q = d.qpos[closer.qadr].copy()
        moving = rng.random(len(q)) < 0.8
        # the reference: the NumPy lines of kinematic_reference.close_joints_numpy
        blocked = (closer.carries & (g < tol)[None, :]).any(axis=1)
        m_ref = moving & ~blocked & (q != closer.limit)
        lever = ref.levers(closer)
        rate = (np.abs(closer.speeds)[:, None] * lever * (closer.carries & m_ref[:, None])).sum(axis=0)
        live = rate > 0
        q_k, m_k = q.copy(), moving.copy()
        went = closing_step(g, q_k, m_k, closer.carries, closer.speeds, closer.limit, closer.hinge,
                            d.geom_xpos, closer.hand_geoms, closer.hand_rbound, d.xanchor,
                            closer.joints, tol)
        np.testing.assert_array_equal(m_k, m_ref)
        assert went == bool(m_ref.any())
        if went:
            dt = float(np.min((np.maximum(g[live], tol) - 0.5 * tol) / rate[live]))
            with np.errstate(divide="ignore", invalid="ignore"):
                dt = min(dt, float(np.where(m_ref, (closer.limit - q) / closer.speeds, np.inf).min()))
            q_ref = np.where(m_ref, q + closer.speeds * dt, q)
            past = m_ref & ((q_ref - closer.limit) * np.sign(closer.speeds) >= 0)
            q_ref = np.where(past, closer.limit, q_ref)
            np.testing.assert_allclose(q_k, q_ref, rtol=1e-12, atol=1e-15)
