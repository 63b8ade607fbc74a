"""Database grasps in a scene: placing by the object's pose, the filter's reasons (cone,
workspace, collision with a height map made from a simulated frame, the image check), the
rankings, the vectorised filter against its per-grasp reference, and the nearest-grasp index.

Real parts: a grasp database built by ``graspline db build`` (MuJoCo, SQLite) and frames
ray-cast by drivers' SimCamera over offline_sim's cell world."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from hypothesis import given, settings, strategies as st  # noqa: E402

from geometry import invert, pose, rotvec_to_matrix  # noqa: E402
from onboard.loop import (REJECT_REASONS, DatabaseFilterSettings, GraspIndex, HandVolume,  # noqa: E402
                          filter_grasps, filter_grasps_reference, height_map, place_grasps)
from scoring import GraspDatabase  # noqa: E402
from tests.onboard.db_scene import HAND, TEST_MARGIN_M, WORKSPACE_XY, build_database, tabletop  # noqa: E402
from vision import silhouette  # noqa: E402

CODE = {text: code for code, text in REJECT_REASONS.items()}
CONE, WORKSPACE, COLLISION = (CODE["approach outside the cone around straight down"],
                              CODE["TCP outside the workspace"],
                              CODE["hand hits the scene (height map) at the pre-grasp or along the approach"])
KEPT = CODE["kept"]
FINGER_ON_OBJECT = CODE["a fingertip lands on the object's silhouette (object wider than the hand)"]
BOTTLE_XY = (0.13, 0.0)   # beside the box: its hand hits the bottle for some rolls, not others


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = build_database(tmp_path_factory.mktemp("db") / "grasps.sqlite", pfc=True)
    with GraspDatabase(path) as g:
        yield g


@pytest.fixture(scope="module")
def table(db):
    return db.grasps("box", HAND, by="quality")


@pytest.fixture(scope="module")
def lone_box():
    return tabletop()


@pytest.fixture(scope="module")
def box_and_bottle():
    return tabletop(BOTTLE_XY)


def _settings(**kw) -> DatabaseFilterSettings:
    kw.setdefault("collision_margin_m", TEST_MARGIN_M)
    return DatabaseFilterSettings(**kw)


def _hmap(scene):
    return height_map(scene.frame, bounds_xy=WORKSPACE_XY, exclude=scene.box_mask.mask)


def test_placing_multiplies_the_object_pose_into_every_database_grasp(table):
    T_bo = pose(rotvec_to_matrix(np.array([0.1, -0.4, 1.2])), np.array([0.05, -0.02, 0.03]))
    placed = place_grasps(table, T_bo)
    for j in range(len(table)):
        np.testing.assert_allclose(placed.T_base_hand[j], T_bo @ table.T_object_hand[j], atol=1e-12)
        # the approach the database stored, turned into the base frame
        np.testing.assert_allclose(placed.approach_base[j], T_bo[:3, :3] @ table.approach[j], atol=1e-9)
    assert list(placed.candidate) == list(table.candidate)
    with pytest.raises(ValueError, match="T_base_object"):
        place_grasps(table, np.eye(3))


def test_grasps_approaching_outside_the_cone_are_rejected_with_that_reason(table, lone_box):
    placed = place_grasps(table, lone_box.world.T_world_object(0))
    tilt = np.degrees(np.arccos(np.clip(-placed.approach_base[:, 2], -1, 1)))
    assert (tilt > 30).any() and (tilt < 30).any()   # the box's grasps come from above and below
    r = filter_grasps(placed, settings=_settings(), height_map=_hmap(lone_box),
                      hand=HandVolume.for_hand(HAND))
    assert np.all(r.reason[tilt > 30 + 1e-6] == CONE)
    assert not np.any(r.reason[tilt < 30 - 1e-6] == CONE)
    wide = filter_grasps(placed, settings=_settings(approach_cone_rad=math.pi), height_map=None,
                         hand=HandVolume.for_hand(HAND))
    assert not np.any(wide.reason == CONE)


def test_a_tcp_outside_the_workspace_is_rejected_with_that_reason(table, lone_box):
    placed = place_grasps(table, lone_box.world.T_world_object(0))
    low = _settings(approach_cone_rad=math.pi, workspace_hi=(0.4, 0.3, 0.05))
    r = filter_grasps(placed, settings=low, height_map=None, hand=HandVolume.for_hand(HAND))
    z = placed.T_base_hand[:, 2, 3]
    assert np.all((r.reason == WORKSPACE) == (z > 0.05))


def test_the_height_map_holds_the_neighbour_but_neither_the_target_nor_the_table(box_and_bottle):
    s = box_and_bottle
    hm = _hmap(s)
    def at(x, y):
        return hm.heights[int((y - WORKSPACE_XY[0, 1]) / hm.cell_m), int((x - WORKSPACE_XY[0, 0]) / hm.cell_m)]
    assert at(*s.bottle_xy) == pytest.approx(s.bottle_top_m, abs=0.01)
    assert at(0.0, 0.0) == -np.inf       # the box (50 mm) left out: taken as the table
    assert at(-0.2, 0.1) == -np.inf      # the table: a plane the filter checks on its own
    with_box = height_map(s.frame, bounds_xy=WORKSPACE_XY)
    assert with_box.heights[int(0.3 / hm.cell_m), int(0.4 / hm.cell_m)] == pytest.approx(0.05, abs=0.003)


def _lowest(T: np.ndarray, hand: HandVolume) -> float:
    """Base-frame z of the hand volume's lowest point at the grasp T."""
    c = hand.centre @ T[:3, :3].T + T[:3, 3]
    return float((c - hand.half @ np.abs(T[:3, :3]).T)[:, 2].min())


def test_fingertips_that_reach_the_table_are_kept_and_fingers_buried_in_it_are_not(table,
                                                                                   lone_box):
    # the database simulated each grasp with the table under the object: fingertips that close
    # at table level are how a low object is taken, and the depth noise of the table points
    # under a finger must not reject them; a grasp whose hand goes into the table must go
    hand, s = HandVolume.for_hand(HAND), _settings()
    placed = place_grasps(table, lone_box.world.T_world_object(0))
    hm = _hmap(lone_box)
    j = int(np.flatnonzero(filter_grasps(placed, settings=s, height_map=hm, hand=hand).keep)[0])
    def at_height(z_lowest: float) -> int:
        T = placed.T_base_hand[j].copy()
        T[2, 3] += z_lowest - _lowest(T, hand)
        one = dataclasses.replace(placed, T_base_hand=T[None], approach_base=placed.approach_base[j:j + 1],
                                  quality=placed.quality[j:j + 1], pfc=placed.pfc[j:j + 1],
                                  candidate=placed.candidate[j:j + 1], table_row=placed.table_row[j:j + 1],
                                  equivalent=placed.equivalent[j:j + 1])
        return int(filter_grasps(one, settings=s, height_map=hm, hand=hand).reason[0])
    assert at_height(0.001) == KEPT                 # 1 mm above the table, inside the margin
    assert at_height(-0.5 * s.table_tolerance_m) == KEPT
    assert at_height(-0.015) == COLLISION           # 15 mm into the table


def _hand_points(T: np.ndarray, hand: HandVolume, pregrasp_m: float) -> np.ndarray:
    """Points filling the hand's boxes at T and every 5 mm back to the pre-grasp (base frame)."""
    g = np.linspace(-1.0, 1.0, 7)
    cube = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    local = np.concatenate([c + cube * e for c, e in zip(hand.centre, hand.half)])
    pts = local @ T[:3, :3].T + T[:3, 3]
    steps = np.linspace(0.0, pregrasp_m, 21)
    return np.concatenate([pts - d * T[:3, 2] for d in steps])


def test_a_tall_neighbour_rejects_the_grasps_whose_hand_would_hit_it(table, lone_box,
                                                                      box_and_bottle):
    hand, s = HandVolume.for_hand(HAND), _settings()
    alone = filter_grasps(place_grasps(table, lone_box.world.T_world_object(0)), settings=s,
                          height_map=_hmap(lone_box), hand=hand)
    placed = place_grasps(table, box_and_bottle.world.T_world_object(0))
    beside = filter_grasps(placed, settings=s, height_map=_hmap(box_and_bottle), hand=hand)
    assert alone.keep.sum() >= 4 and not np.any(alone.reason == COLLISION)  # the table lets them by
    hit = alone.keep & (beside.reason == COLLISION)
    assert hit.any() and (alone.keep & beside.keep).any()
    assert np.all(beside.reason[alone.keep & ~beside.keep] == COLLISION)
    b = box_and_bottle
    for j in np.flatnonzero(alone.keep):
        p = _hand_points(placed.T_base_hand[j], hand, s.pregrasp_m)
        near = np.hypot(p[:, 0] - b.bottle_xy[0], p[:, 1] - b.bottle_xy[1])
        inside = (near < b.bottle_radius_m) & (p[:, 2] < b.bottle_top_m)
        if beside.keep[j]:
            assert not inside.any(), f"grasp {j} kept though its hand enters the bottle"
        else:   # rejected: its hand comes near the bottle (the check is conservative by a box)
            assert near[p[:, 2] < b.bottle_top_m].min() < b.bottle_radius_m + 0.05


def test_ranking_by_pfc_or_quality_gives_the_orders_the_database_has(db, table, lone_box):
    placed = place_grasps(table, lone_box.world.T_world_object(0))
    everything = dict(approach_cone_rad=math.pi, workspace_lo=(-9, -9, -9), workspace_hi=(9, 9, 9))
    for by in ("quality", "pfc"):
        r = filter_grasps(placed, settings=_settings(rank_by=by, **everything), height_map=None,
                          hand=HandVolume.for_hand(HAND))
        assert r.keep.all()
        expected = db.grasps("box", HAND, by=by).candidate
        assert list(placed.candidate[r.order]) == list(expected)
    assert list(db.grasps("box", HAND, by="pfc").candidate) != list(table.candidate)


def test_the_image_check_keeps_a_grasp_only_when_its_closing_line_crosses_the_object(table, lone_box):
    sc = lone_box
    sil = silhouette(sc.frame, sc.box_mask, insertion_depth_m=0.02, metres_per_px=0.001, margin_m=0.1)
    placed = place_grasps(table, sc.world.T_world_object(0))
    hand = HandVolume.for_hand(HAND)
    r = filter_grasps(placed, settings=_settings(), height_map=None, hand=hand, silhouette=sil)
    T_ob = invert(sc.world.T_world_object(0))
    checked = np.flatnonzero(r.reason != CONE)
    assert checked.size >= 5
    clear = 0
    for j in checked:
        T = placed.T_base_hand[j]
        ends = np.array([T[:3, 3] + k * hand.closing_half_m * T[:3, 0] for k in (-1, 1)])
        e = ends @ T_ob[:3, :3].T + T_ob[:3, 3]     # in the box's frame: its top is 80 x 120 mm
        margin = np.minimum(0.04 - np.abs(e[:, 1]), 0.06 - np.abs(e[:, 2]))
        if np.all(np.abs(margin) > 0.004):            # clear of the edges by 4 px
            clear += 1
            on = bool((margin > 0).any())
            assert (r.reason[j] == FINGER_ON_OBJECT) == on, j
            assert r.reason[j] in (0, FINGER_ON_OBJECT)              # the lines all cross the box's middle
    assert clear >= 4
    assert (r.reason == FINGER_ON_OBJECT).any() and (r.reason == 0).any()
    assert np.all((r.consistency[r.keep] > 0) & (r.consistency[r.keep] <= 1))


def test_the_vectorised_filter_equals_its_per_grasp_reference(table, box_and_bottle):
    b = box_and_bottle
    sil = silhouette(b.frame, b.box_mask, insertion_depth_m=0.02, metres_per_px=0.001, margin_m=0.1)
    rng = np.random.default_rng(0)
    T0 = b.world.T_world_object(0)
    hand, hm = HandVolume.for_hand(HAND), _hmap(b)
    for _ in range(5):   # the box's pose nudged: other grasps cross the limits
        dT = pose(rotvec_to_matrix(rng.normal(0, 0.3, 3)), rng.normal(0, 0.03, 3))
        placed = place_grasps(table, dT @ T0)
        for kw in (dict(silhouette=sil), dict(silhouette=None)):
            fast = filter_grasps(placed, settings=_settings(rank_by="pfc"), height_map=hm,
                                 hand=hand, pose_confidence=0.7, **kw)
            slow = filter_grasps_reference(placed, settings=_settings(rank_by="pfc"),
                                           height_map=hm, hand=hand, pose_confidence=0.7, **kw)
            np.testing.assert_array_equal(fast.reason, slow.reason)
            np.testing.assert_array_equal(fast.order, slow.order)
            np.testing.assert_allclose(fast.consistency, slow.consistency, equal_nan=True)


def test_a_filter_result_says_how_many_each_reason_rejected(table, lone_box):
    placed = place_grasps(table, lone_box.world.T_world_object(0))
    r = filter_grasps(placed, settings=_settings(), height_map=_hmap(lone_box),
                      hand=HandVolume.for_hand(HAND))
    n_cone = int((r.reason == CONE).sum())
    assert r.counts()[CONE] == n_cone
    assert f"{n_cone} {REJECT_REASONS[CONE]}" in r.summary()
    assert r.summary().startswith(f"{int(r.keep.sum())} of {len(placed)} kept")


def test_an_unknown_hand_has_no_volume_and_says_which_hands_have():
    with pytest.raises(ValueError, match="three_finger"):
        HandVolume.for_hand("shadow_hand")


# ------------------------------------------------------------------ the nearest-grasp index
def _brute_nearest(table, T: np.ndarray, scale: float) -> tuple[int, float]:
    """The nearest row by the index's distance, by looking at every row."""
    from geometry import matrix_to_quat

    q = matrix_to_quat(T[:3, :3])
    best = (-1, math.inf)
    for j, Tj in enumerate(table.T_object_hand):
        qj = matrix_to_quat(Tj[:3, :3])
        dq = min(np.linalg.norm(q - qj), np.linalg.norm(q + qj))
        d = math.sqrt(float(np.sum((T[:3, 3] - Tj[:3, 3]) ** 2)) + (scale * dq) ** 2)
        if d < best[1]:
            best = (j, d)
    return best


@settings(max_examples=60, deadline=None)
@given(rv=st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
       p=st.lists(st.floats(-0.15, 0.15), min_size=3, max_size=3),
       scale=st.sampled_from([0.02, 0.1, 0.5]))
def test_the_index_returns_the_row_a_brute_force_search_finds(table, rv, p, scale):
    index = GraspIndex(table, rot_scale_m=scale)
    T = pose(rotvec_to_matrix(np.array(rv)), np.array(p))
    row, d = index.nearest(T)
    b_row, b_d = _brute_nearest(table, T, scale)
    assert d == pytest.approx(b_d, abs=1e-9)
    if row != b_row:   # only a tie may pick another row: grasps that differ by preshape alone
        np.testing.assert_allclose(table.T_object_hand[row], table.T_object_hand[b_row], atol=1e-12)


def test_the_index_finds_each_database_grasp_itself_and_its_scores(table):
    index = GraspIndex(table)
    for j in range(len(table)):
        row, d = index.nearest(table.T_object_hand[j])
        assert d < 1e-9 and np.allclose(table.T_object_hand[row], table.T_object_hand[j])
    assert index.scores(0)["quality"] == pytest.approx(float(table.quality[0]))
