"""Candidates drawn in several resting poses: each pose's world has the table where that pose
puts it, so a grasp from above in the second pose exists, and the first pose stays as it was."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geometry import rotvec_to_matrix
from offline_sim.database import (HandSource, ObjectSource, SimEvaluatorFactory,
                                  distinct_resting_poses)
from offline_sim.objects import builtin_object
from offline_sim.quality import MonteCarloSettings


def _from_above(approach_object: np.ndarray, T_rest: np.ndarray, cone_rad: float) -> np.ndarray:
    """Which approaches (object frame) point down within cone_rad when the object rests in T_rest."""
    down = T_rest[:3, :3] @ approach_object.T      # approach in the table's frame
    return down[2] < -math.cos(cone_rad)


def test_a_cylinders_side_facets_are_one_resting_pose_and_its_ends_are_others():
    cyl = builtin_object("cylinder")
    picked = distinct_resting_poses(cyl.stable_poses, cyl.stable_probabilities, 3)
    up = cyl.stable_poses[picked][:, 2, :3]
    assert picked[0] == 0                                   # the most probable pose first
    lying = [abs(u[2]) < 0.5 for u in up]                   # the axis is the object's z
    assert sum(lying) == 1 and len(picked) == 3             # 24 side facets: one group
    assert not lying[0] and lying[1]                        # the ring outweighs the other end


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 8), axis=st.tuples(*[st.floats(-1, 1)] * 3), angle=st.floats(0, 3.1))
def test_resting_poses_picked_differ_in_which_way_is_up(n, axis, angle):
    a = np.asarray(axis)
    R = rotvec_to_matrix(a / np.linalg.norm(a) * angle) if np.linalg.norm(a) > 1e-3 else np.eye(3)
    box = builtin_object("box")
    poses = box.stable_poses.copy()
    poses[:, :3, :3] = poses[:, :3, :3] @ R.T               # the same box, modelled turned
    picked = distinct_resting_poses(poses, box.stable_probabilities, n)
    assert len(picked) == min(n, len(poses)) and len(set(picked.tolist())) == len(picked)
    up = poses[picked][:, 2, :3]
    cos = up @ up.T - 2 * np.eye(len(up))
    assert (cos < math.cos(0.35)).all()


@pytest.fixture(scope="module")
def box_evaluators():
    def make(n_poses: int):
        return SimEvaluatorFactory(ObjectSource("box"), HandSource("three_finger"), 12, 0,
                                   MonteCarloSettings(n_samples=2, seed=0),
                                   stable_poses=n_poses)()
    return make(1), make(3)


def test_more_resting_poses_give_grasps_from_above_in_the_second_pose(box_evaluators):
    one, three = box_evaluators
    box = one.object
    second = box.stable_poses[three.pose_index[2]]          # a face the first pose has vertical
    assert _from_above(one.candidates.approach, second, math.radians(30)).sum() == 0
    assert _from_above(three.candidates.approach, second, math.radians(30)).sum() > 0


def test_the_first_resting_pose_draws_what_a_one_pose_build_draws(box_evaluators):
    one, three = box_evaluators
    n = len(one)
    np.testing.assert_array_equal(three.candidates.T_object_hand[:n], one.candidates.T_object_hand)
    assert (three.pose_of[:n] == 0).all() and (three.pose_of[n:] > 0).all()


def test_a_candidate_is_simulated_in_the_world_of_its_own_resting_pose(box_evaluators):
    _, three = box_evaluators
    box = three.object
    flipped = box.stable_poses[three.pose_index[1]]          # the first pose upside down
    assert np.allclose(flipped[2, :3], -box.stable_poses[three.pose_index[0]][2, :3])
    # from above in the flipped pose is from below in the first one: only the flipped pose's
    # world, with the table on the other face, lets that grasp close and hold
    k = int(np.flatnonzero((three.pose_of == 1)
                           & _from_above(three.candidates.approach, flipped, 0.2))[0])
    assert three(k).nominal_ok


def test_stable_poses_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="stable_poses must be an integer >= 1, got 0"):
        SimEvaluatorFactory(ObjectSource("box"), HandSource("three_finger"), 4, stable_poses=0)
