"""Pre-grasp candidates: principal axes first, then surface normals; collision-free at the start;
seeded."""
import math

import numpy as np
import pytest

from geometry import frame_from_approach, pose

mujoco = pytest.importorskip("mujoco")

from offline_sim.database import (SOURCE_PRINCIPAL_AXIS, SOURCE_SURFACE_NORMAL,  # noqa: E402
                                  pregrasp_candidates)
from offline_sim.dynamics import (build_grasp_world, hand_collides, place_hand,  # noqa: E402
                                  simulate_grasp, start_collisions)
from offline_sim.hands import parallel_jaw, three_finger  # noqa: E402
from offline_sim.objects import ObjectSpec  # noqa: E402


@pytest.fixture(scope="module")
def jaw_box():
    return build_grasp_world(ObjectSpec("box", "box", (0.05, 0.05, 0.08)), parallel_jaw())


def test_candidates_are_collision_free_rotations_along_their_approach(jaw_box):
    c = pregrasp_candidates(jaw_box, 80, seed=2)
    assert len(c) == 80 and c.T_object_hand.shape == (80, 4, 4)
    assert c.approach.shape == (80, 3) and c.preshape.shape == (80, 0)
    for T, a in zip(c.T_object_hand, c.approach):
        np.testing.assert_allclose(T[:3, :3].T @ T[:3, :3], np.eye(3), atol=1e-9)
        np.testing.assert_allclose(T[:3, 2], a, atol=1e-9)
        place_hand(jaw_box, T)
        assert start_collisions(jaw_box) == []
    # principal axes first: the box's 5 reachable faces (not from below, through the table)
    src = c.source.tolist()
    assert src[:src.index(SOURCE_SURFACE_NORMAL)] == [SOURCE_PRINCIPAL_AXIS] * src.index(SOURCE_SURFACE_NORMAL)
    assert not np.any(c.approach[:, 2] > 0.99)  # nothing from under the table
    g = jaw_box.hand.grasp_depth_m
    # nominal depths, or backed off from one in 5 mm steps up to 3 cm beyond the surface
    steps = (np.array([[g], [0.5 * g], [0.0]]) - 0.005 * np.arange(7)).ravel()
    assert all(np.isclose(d, steps, atol=1e-9).any() for d in c.depth_m)
    assert c.depth_m.min() >= -0.03 - 1e-9


def test_hand_collides_says_what_placing_the_hand_and_listing_its_collisions_says(
        three_finger_box):
    # the candidate search's cheap question against the trial's full placement: poses around
    # the box at depths from inside it to clear of it, in each preshape, both answers met
    world, rng = three_finger_box, np.random.default_rng(4)
    answers = []
    for _ in range(300):
        approach = rng.normal(size=3)
        approach /= np.linalg.norm(approach)
        R = frame_from_approach(approach, rng.uniform(0, math.pi))
        T = pose(R, -approach * rng.uniform(-0.02, 0.15))
        p = np.array(world.hand.preshapes[rng.integers(len(world.hand.preshapes))], np.float64)
        tol = float(rng.choice([1e-4, 2e-3]))
        cheap = hand_collides(world, T, p, tol)
        place_hand(world, T, p)
        assert cheap == bool(start_collisions(world, tol)), (T, p, tol)
        answers.append(cheap)
    assert 30 < sum(answers) < 270   # both answers met, so the comparison means something


def test_candidates_are_seeded(jaw_box):
    # past the (seed-free) principal-axis candidates, the sampled normals follow the seed
    a = pregrasp_candidates(jaw_box, 80, seed=5)
    b = pregrasp_candidates(jaw_box, 80, seed=5)
    c = pregrasp_candidates(jaw_box, 80, seed=6)
    np.testing.assert_array_equal(a.T_object_hand, b.T_object_hand)
    assert not np.array_equal(a.T_object_hand, c.T_object_hand)


def test_candidates_with_depths_and_rolls_and_none(jaw_box):
    c = pregrasp_candidates(jaw_box, 1000, seed=0, n_normals=4, n_rolls=2, depths_m=(0.01, 0.02))
    assert 0 < len(c) <= (6 + 4) * 2 * 2
    assert set(np.round(c.depth_m, 6)) <= {0.01, 0.02}
    empty = pregrasp_candidates(jaw_box, 0)
    assert empty.T_object_hand.shape == (0, 4, 4) and empty.approach.shape == (0, 3)
    with pytest.raises(ValueError, match="n must be an integer >= 0, got -1"):
        pregrasp_candidates(jaw_box, -1)


def test_some_top_down_candidate_lifts_the_box(jaw_box):
    c = pregrasp_candidates(jaw_box, 1000, seed=0, n_normals=0, n_rolls=4)
    top = [T for T, a in zip(c.T_object_hand, c.approach) if a[2] < -0.99]
    assert top
    assert max(simulate_grasp(jaw_box, T).measure_b for T in top) == 1.0


def test_a_one_preshape_hand_gives_every_candidate_its_preshape():
    hand = three_finger(spread_rad=0.4, spread_options_rad=(0.4,))
    world = build_grasp_world(ObjectSpec("c", "cylinder", (0.03, 0.12)), hand)
    c = pregrasp_candidates(world, 5, seed=0)
    assert len(c) == 5 and c.preshape.shape == (5, 2)
    np.testing.assert_allclose(c.preshape, 0.4)


@pytest.fixture(scope="module")
def three_finger_box():
    return build_grasp_world(ObjectSpec("box", "box", (0.06, 0.06, 0.1)), three_finger())


def test_three_finger_candidates_take_several_preshapes_each_collision_free_in_its_own(three_finger_box):
    world = three_finger_box
    c = pregrasp_candidates(world, 60, seed=1)
    assert len(c) == 60
    options = np.array(world.hand.preshapes)
    # every candidate carries one of the hand's preshapes, and more than one of them is used
    used = {int(np.flatnonzero(np.all(np.isclose(options, p), axis=1))[0]) for p in c.preshape}
    assert len(used) > 1
    spreads = set(np.round(c.preshape[:, 0], 6))
    assert 0.0 in spreads and spreads & {round(math.pi / 3, 6), round(math.pi / 2, 6)}
    for T, p in zip(c.T_object_hand, c.preshape):
        place_hand(world, T, p)
        assert start_collisions(world) == []


def test_preshaped_candidates_are_seeded(three_finger_box):
    a = pregrasp_candidates(three_finger_box, 60, seed=3)
    b = pregrasp_candidates(three_finger_box, 60, seed=3)
    np.testing.assert_array_equal(a.T_object_hand, b.T_object_hand)
    np.testing.assert_array_equal(a.preshape, b.preshape)


def test_a_preshape_that_collides_gives_way_to_one_that_fits():
    # A 12 x 16 cm box seen from above: with the fingers together (spread 0) the hand opens
    # 15 cm across its 12 cm side; spread at pi/2, fingers 1 and 2 stand on its top face.
    box = ObjectSpec("b", "box", (0.12, 0.16, 0.12))
    kw = dict(seed=0, n_normals=0, max_standoff_m=0.0)
    wide_only = build_grasp_world(box, three_finger(spread_rad=math.pi / 2,
                                                    spread_options_rad=(math.pi / 2,)))
    assert not (pregrasp_candidates(wide_only, 200, **kw).approach[:, 2] < -0.99).any()
    world = build_grasp_world(box, three_finger(spread_options_rad=(math.pi / 2, 0.0)))
    c = pregrasp_candidates(world, 200, **kw)
    top = c.approach[:, 2] < -0.99
    assert top.any() and np.all(c.preshape[top] == 0.0)
    # every top-down approach and roll assigned the wide spread fell back to the narrow one:
    # as many as a hand that only has the narrow spread finds
    narrow_only = build_grasp_world(box, three_finger(spread_options_rad=(0.0,)))
    assert top.sum() == (pregrasp_candidates(narrow_only, 200, **kw).approach[:, 2] < -0.99).sum()
    for T, p in zip(c.T_object_hand, c.preshape):
        place_hand(world, T, p)
        assert start_collisions(world) == []


def test_a_hand_too_small_to_reach_around_stands_off_instead_of_giving_up():
    from offline_sim.hands import three_finger
    from offline_sim.objects import builtin_object

    bottle = builtin_object("bottle")  # three convex parts
    # a hand smaller than the BH8 (knuckles 5.5 cm out): the 7 cm bottle barely fits between
    small = three_finger(knuckle_radius_m=0.055, palm_radius_m=0.045)
    world = build_grasp_world(bottle, small, R_table_object=bottle.stable_poses[0][:3, :3])
    # one round of 32 sampled normals (no growth with n): without a standoff it runs out first
    near = pregrasp_candidates(world, 10, seed=0, n_normals=32, max_standoff_m=0.0)
    backed = pregrasp_candidates(world, 10, seed=0, n_normals=32)
    assert len(backed) > len(near)
    assert (backed.depth_m < 0).any()
    for T, p in zip(backed.T_object_hand, backed.preshape):
        place_hand(world, T, p)
        assert start_collisions(world) == []


def test_many_candidates_come_when_asked_and_the_first_ones_do_not_depend_on_how_many():
    """The sampled normals grow with n: the jaw on the cylinder, which one round of 32 normals
    gives 254 candidates, gives 1,000 distinct collision-free ones, the first 50 those asked
    alone."""
    from offline_sim.objects import builtin_object

    cyl = builtin_object("cylinder")
    world = build_grasp_world(cyl, parallel_jaw(), R_table_object=cyl.stable_poses[0][:3, :3])
    one_round = pregrasp_candidates(world, 1000, seed=0, n_normals=32)
    assert len(one_round) < 300
    c = pregrasp_candidates(world, 1000, seed=0)
    assert len(c) == 1000
    assert len(np.unique(np.round(c.T_object_hand.reshape(1000, 16), 9), axis=0)) == 1000
    small = pregrasp_candidates(world, 50, seed=0)
    assert np.array_equal(small.T_object_hand, c.T_object_hand[:50])
    assert np.array_equal(one_round.T_object_hand, c.T_object_hand[:len(one_round)])
    rng = np.random.default_rng(1)
    for k in rng.choice(1000, 40, replace=False):  # a sample: each check is a placement
        place_hand(world, c.T_object_hand[k], c.preshape[k])
        assert start_collisions(world) == []
    with pytest.raises(ValueError, match="max_rounds"):
        pregrasp_candidates(world, 10, max_rounds=0)
