"""The built-in hands on a scanned, decomposed YCB object: collision-free candidates exist in
their own preshapes, and one of them lifts the object."""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("coacd")

from offline_sim.database import pregrasp_candidates  # noqa: E402
from offline_sim.dynamics import (build_grasp_world, place_hand, simulate_grasp,  # noqa: E402
                                  start_collisions)
from offline_sim.hands import three_finger, underactuated  # noqa: E402
from offline_sim.objects import load_object  # noqa: E402

YCB = Path(__file__).resolve().parents[3] / "shared" / "data" / "ycb"
MUSTARD = YCB / "mustard_bottle" / "visual.obj"

pytestmark = [pytest.mark.slow,  # CoACD decomposes the scan once per module (~25 s)
              pytest.mark.skipif(not MUSTARD.is_file(), reason=f"YCB meshes not found at {YCB}")]


@pytest.fixture(scope="module")
def mustard(tmp_path_factory):
    return load_object(MUSTARD, cache_dir=tmp_path_factory.mktemp("coacd"))


@pytest.mark.parametrize("make", [three_finger, underactuated])
def test_built_in_hand_finds_candidates_on_a_scanned_mustard_bottle_and_one_lifts_it(mustard, make):
    assert len(mustard.parts) >= 2  # decomposed: one geom per convex part
    # most probable resting pose: the bottle lies on its side, 6 cm tall
    world = build_grasp_world(mustard, make(), R_table_object=mustard.stable_poses[0][:3, :3])
    c = pregrasp_candidates(world, 12, seed=0)
    assert len(c) >= 5
    for T, p in zip(c.T_object_hand, c.preshape):
        place_hand(world, T, p)
        assert start_collisions(world) == []
    # candidates in turn until one lifts the bottle (Kim measure B > 0)
    lifted = next((out for T, p in zip(c.T_object_hand, c.preshape)
                   if (out := simulate_grasp(world, T, preshape=p)).measure_b > 0), None)
    assert lifted is not None and lifted.lifted and lifted.n_contact_links >= 2
    assert np.isfinite(lifted.measure_c) and lifted.measure_c > 0
