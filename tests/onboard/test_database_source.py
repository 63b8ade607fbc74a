"""The database as a grasp source: proposing the best kept grasp of the recognised object,
choosing it with the hand's preshape, the reasons reaching the trial log, the cell file's
database section, and a cell without that section planning exactly as before.

Real parts: a database built by ``graspline db build``, frames ray-cast over offline_sim's
cell world, the simulated cell itself; the recogniser is the scene's ground truth through
the pinned signature (frame, mask) -> Recognition."""
from __future__ import annotations

import sqlite3

import msgspec
import numpy as np
import pytest

pytest.importorskip("mujoco")

from onboard import (CellFileError, DatabaseConfig, GraspChoice, TrialLog,  # noqa: E402
                     TrialRecord, parse_cell_file, sim_cell_file)
from onboard.loop import (GRASP_SOURCES, REJECT_REASONS, DatabaseSource, ImageSearch,  # noqa: E402
                          NO_TRUTH, Proposal, Recognition, SourceSetup, StageClock,
                          grasp_sources)
from tests.onboard.db_scene import HAND, TEST_MARGIN_M, build_database, tabletop  # noqa: E402


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    return build_database(tmp_path_factory.mktemp("db") / "grasps.sqlite", pfc=False)


def _config(db_path, **kw):
    section = DatabaseConfig(path=str(db_path), hand=HAND, collision_margin_m=TEST_MARGIN_M, **kw)
    return msgspec.structs.replace(sim_cell_file(), database=section)


def truth_recogniser(scene):
    """The scene's ground truth through the recogniser's signature: the object under the
    mask (the frame's instance ids), its name and true pose, confidence 1."""
    names = {1: "box", 2: "bottle"}

    def recognise(frame, mask) -> Recognition:
        ids = frame.instance_ids[mask.mask]
        k = int(np.bincount(ids[ids > 0]).argmax()) if (ids > 0).any() else 0
        if k == 0:
            return Recognition(None, None, 0.0, None, None, "nothing under the mask")
        return Recognition(names[k], scene.world.T_world_object(k - 1), 1.0, 0, 0.0)

    return recognise


def _source(db_path, scene, seed: int = 0, **kw) -> DatabaseSource:
    """The database source on the scene, its recogniser the scene's truth, its random stream
    (validate mode's draws) seeded with seed as the loop's is."""
    config = _config(db_path, **kw)
    setup = SourceSetup(config, None, None, np.random.default_rng(seed), None, NO_TRUTH)
    return DatabaseSource(setup, recogniser=truth_recogniser(scene))


def test_the_source_proposes_the_best_kept_grasp_and_chooses_it_with_the_hands_preshape(db_path):
    scene = tabletop()
    source = _source(db_path, scene)
    clock = StageClock({})
    p = source.propose(scene.frame, [scene.box_mask], 0, clock)
    assert isinstance(p, Proposal) and p.source is source
    d = p.detail
    assert d.row == d.result.order[0] and d.result.keep[d.row]
    assert p.score == pytest.approx(d.result.rank_value[d.row])
    assert p.score == pytest.approx(d.result.rank_value[d.result.keep].max())
    choice, level = source.choose(p, scene.frame, [scene.box_mask], clock, validate=False)
    assert isinstance(choice, GraspChoice) and level == -1
    assert choice.source == "database" and choice.object_label == "box"
    np.testing.assert_array_equal(choice.T_base_tcp, d.placed.T_base_hand[d.row])
    with sqlite3.connect(db_path) as con:   # the preshape the database stored for that grasp
        blob, = con.execute("SELECT preshape FROM grasps WHERE candidate = ?",
                            (int(d.placed.candidate[d.row]),)).fetchone()
    np.testing.assert_array_equal(choice.preshape, np.frombuffer(blob, "<f8"))
    n_cone = int((d.result.reason == 1).sum())
    assert n_cone > 0 and choice.features["db_reject_cone"] == n_cone
    assert choice.features["db_kept"] == int(d.result.keep.sum())
    assert [choice.features[f"preshape_{k}"] for k in range(len(choice.preshape))] == \
        list(choice.preshape)
    assert {"search", "silhouette"} <= set(clock.stage_s)


def test_validate_draws_kept_grasps_across_quality_levels_repeatably_by_seed(db_path):
    scene = tabletop()
    clock = StageClock({})

    def draws(seed: int) -> list[tuple[int, int, float]]:
        """(row, level, score) of 12 validate-mode choices of a source seeded with seed."""
        source = _source(db_path, scene, seed)
        p = source.propose(scene.frame, [scene.box_mask], 0, clock)
        out = []
        for _ in range(12):
            choice, level = source.choose(p, scene.frame, [scene.box_mask], clock,
                                          validate=True)
            row = int(choice.features["db_row"])
            assert p.detail.result.keep[row]            # only grasps the filter kept
            np.testing.assert_array_equal(choice.T_base_tcp, p.detail.placed.T_base_hand[row])
            assert choice.score == pytest.approx(p.detail.result.rank_value[row])
            assert choice.features["db_level"] == level
            out.append((row, level, choice.score))
        return out

    first = draws(0)
    assert draws(0) == first                          # seeded: the same draws again
    assert draws(1) != first
    levels = {lvl for _, lvl, _ in first}
    assert len(levels) >= 3, first                    # across the levels, not the top only
    assert all(0 <= lvl <= 4 for lvl in levels)


def test_the_rejection_reasons_reach_the_trial_log_and_read_back(db_path, tmp_path):
    scene = tabletop()
    source = _source(db_path, scene)
    clock = StageClock({})
    p = source.propose(scene.frame, [scene.box_mask], 0, clock)
    choice, _ = source.choose(p, scene.frame, [scene.box_mask], clock, validate=False)
    log = TrialLog(tmp_path / "trials")
    tid = log.begin(object_label=choice.object_label)
    rec = TrialRecord.from_choice(choice, started_at_s=1.0)
    rec.trial_id, rec.outcome, rec.success = tid, "success", True
    log.finish(rec)
    back = log.get(tid)
    assert back.source == "database"
    reasons = {k: v for k, v in back.features.items() if k.startswith("db_reject_")}
    assert reasons == {k: v for k, v in choice.features.items() if k.startswith("db_reject_")}
    assert reasons["db_reject_cone"] == int((p.detail.result.reason == 1).sum())
    log.close()


def test_an_object_the_database_lacks_or_no_recogniser_knows_gives_the_reason(db_path):
    scene = tabletop((0.13, 0.0))
    source = _source(db_path, scene)
    bottle = type(scene.box_mask)(scene.frame.instance_ids == 2, None, 1.0, "ground_truth")
    why = source.propose(scene.frame, [scene.box_mask, bottle], 1, StageClock({}))
    assert isinstance(why, str) and "'bottle' is not in the grasp database" in why
    table_only = type(scene.box_mask)(scene.frame.instance_ids == 0, None, 1.0, "ground_truth")
    why = source.propose(scene.frame, [table_only], 0, StageClock({}))
    assert isinstance(why, str) and "not recognised (nothing under the mask)" in why


def test_when_every_grasp_is_rejected_the_source_says_why_by_reason(db_path):
    scene = tabletop((0.11, 0.0))      # the bottle so near that every hand from above hits it
    why = _source(db_path, scene).propose(scene.frame, [scene.box_mask], 0, StageClock({}))
    assert isinstance(why, str) and "no database grasp works here: 0 of 20 kept" in why
    assert REJECT_REASONS[1] in why and REJECT_REASONS[3] in why


def test_the_cell_files_database_section_is_checked_naming_key_and_file():
    c = parse_cell_file("database: {path: g.sqlite, hand: three_finger, rank_by: pfc, "
                        "approach_cone_deg: 20, workspace_m: [[-0.3, -0.2, 0], [0.3, 0.2, 0.4]], "
                        "collision_margin_m: 0.004}\n", "cell.yaml")
    assert (c.database.rank_by, c.database.approach_cone_deg, c.database.workspace_m[1][2]) == \
        ("pfc", 20.0, 0.4)
    for text, msg in [
        ("database: {path: g.sqlite, hand: h, rank_by: best}", "cell.yaml: key 'database.rank_by'"),
        ("database: {path: g.sqlite}", "cell.yaml: key 'database': Object missing required field `hand`"),
        ("database: {path: g, hand: h, approach_cone_deg: 200}",
         "cell.yaml: key 'database.approach_cone_deg' must be in [0, 180], got 200"),
        ("database: {path: g, hand: h, workspace_m: [[0, 0, 0], [1, 1]]}",
         "cell.yaml: key 'database.workspace_m' must be [[xmin, ymin, zmin], [xmax, ymax, zmax]]"),
        ("database: {path: g, hand: h, collision_margin_m: -1}",
         "cell.yaml: key 'database.collision_margin_m' must be >= 0, got -1"),
        ("database: {path: g, hand: h, cone: 3}", "cell.yaml: unknown key 'database.cone'"),
    ]:
        with pytest.raises(CellFileError) as e:
            parse_cell_file(text, "cell.yaml")
        assert msg in str(e.value)
    assert parse_cell_file("", "cell.yaml").database is None


def test_a_hand_the_database_lacks_is_refused_naming_the_cell_file_key(db_path):
    config = msgspec.structs.replace(_config(db_path), database=DatabaseConfig(
        path=str(db_path), hand="underactuated"))
    setup = SourceSetup(config, None, None, np.random.default_rng(0), None, NO_TRUTH)
    with pytest.raises(Exception, match="'database.hand'"):
        DatabaseSource(setup, recogniser=truth_recogniser(tabletop()))
    missing = msgspec.structs.replace(config, database=DatabaseConfig(
        path=str(db_path.parent / "none.sqlite"), hand=HAND))
    setup = SourceSetup(missing, None, None, np.random.default_rng(0), None, NO_TRUTH)
    with pytest.raises(Exception, match="'database.path'.*none.sqlite"):
        DatabaseSource(setup, recogniser=truth_recogniser(tabletop()))


def _plan_key(plan):
    c = plan.choice
    if not isinstance(c, GraspChoice):
        return ("no grasp", c.reason)
    return (c.source, c.T_base_tcp.tobytes(), c.score, tuple(sorted(c.features.items())),
            c.x_px, c.y_px, c.theta_rad, c.n_candidates, plan.mask_index)


def test_a_cell_without_the_database_section_plans_exactly_as_before(db_path, tmp_path):
    from onboard import PickingCell, config_hash

    plain = sim_cell_file(seed=0, log_dir=str(tmp_path / "a"))
    assert grasp_sources(plain) == GRASP_SOURCES == (ImageSearch,)
    a = PickingCell(plain, config_hash(plain))
    # the same cell with its sources built as before step 8: the image search alone
    b = PickingCell(plain, config_hash(plain))
    try:
        assert [type(s) for s in a.loop.planner.sources] == [ImageSearch]
        setup = SourceSetup(plain, b.loop.projection, b.loop.jaw, np.random.default_rng(0),
                            b.loop.segmenter, b.loop.truth, b.loop.failed)
        b.loop.planner.sources = [ImageSearch(setup)]
        for _ in range(2):
            assert _plan_key(a.loop.plan()) == _plan_key(b.loop.plan())
    finally:
        a.close()
        b.close()
    # with the section, the database is asked too (the simulated cell's truth recognises)
    on = msgspec.structs.replace(plain, database=_config(db_path, recogniser="truth").database,
                                 log_dir=str(tmp_path / "c"))
    c = PickingCell(on, config_hash(on))
    try:
        assert [type(s) for s in c.loop.planner.sources] == [ImageSearch, DatabaseSource]
        plan = c.loop.plan()
        assert plan.frame is not None and plan.masks
        source = c.loop.planner.sources[1]
        for i, mask in enumerate(plan.masks):   # the cell's truth names each object it asks
            name = c.loop.truth.object_name(plan.frame, mask)
            found = source.propose(plan.frame, plan.masks, i, StageClock({}))
            if name == "box":
                assert isinstance(found, Proposal) or "no database grasp works" in found
            elif name is not None:
                assert found == f"object {i}: {name!r} is not in the grasp database"
    finally:
        c.close()


def test_the_sections_recogniser_is_vision_by_default_and_truth_only_on_the_simulated_cell(
        db_path):
    from onboard.loop import database_source

    from vision import SupportPlane, TabletopSegmenter

    # a real cell (no ground truth): vision.recognise over the database's objects, built once,
    # on the segmenter's support plane
    scene = tabletop()
    segmenter = TabletopSegmenter()
    # this scene's floor outweighs its small table in a RANSAC fit: the segmenter is given
    # the table's plane (base z = 0, in the camera frame), as it finds it on a cell's table
    T = scene.frame.T_base_camera
    normal = T[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    origin_cam = T[:3, :3].T @ -T[:3, 3]
    segmenter.last_plane = SupportPlane(normal, -float(normal @ origin_cam), 1000, 0.0)
    setup = SourceSetup(_config(db_path), None, None, np.random.default_rng(0), segmenter,
                        NO_TRUTH)
    source = database_source(setup)
    found = source.propose(scene.frame, [scene.box_mask], 0, StageClock({}))
    # recognised as the box from its depth alone (the label is not a model's name here)
    assert isinstance(found, Proposal) and found.detail.recognition.name == "box"
    assert found.detail.recognition.confidence >= 0.5
    truth = SourceSetup(_config(db_path, recogniser="truth"), None, None,
                        np.random.default_rng(0), None, NO_TRUTH)
    with pytest.raises(ValueError, match="'database.recogniser' is 'truth', which only the "
                                         "simulated cell has"):
        database_source(truth)
    given = database_source(SourceSetup(_config(db_path), None, None, np.random.default_rng(0),
                                        None, NO_TRUTH, recogniser=truth_recogniser(tabletop())))
    assert isinstance(given, DatabaseSource)


def test_the_truth_recogniser_on_hardware_is_a_one_line_cell_file_error(db_path):
    text = (f"camera: {{kind: realsense}}\ndatabase: {{path: {db_path}, hand: {HAND}, "
            f"recogniser: truth}}\n")
    with pytest.raises(CellFileError, match=r"^cell.yaml: key 'database.recogniser' is 'truth', "
                                            r"the simulated cell's ground truth, but "
                                            r"camera.kind is 'realsense'; use 'vision' on "
                                            r"hardware$"):
        parse_cell_file(text, "cell.yaml")


def test_a_ycb_scan_in_the_cell_takes_its_bare_name_in_a_ycb_database():
    from onboard.loop import database_name

    assert database_name("ycb_banana", {"banana", "mug"}) == "banana"
    assert database_name("ycb_banana", {"ycb_banana", "banana"}) == "ycb_banana"
    assert database_name("banana", {"banana"}) == "banana"
    assert database_name("ycb_drill", {"banana"}) == "ycb_drill"   # unknown: stays as named


def test_a_cell_file_naming_a_missing_database_ends_in_one_line_naming_the_key(tmp_path,
                                                                               capsys):
    from onboard.cli import main

    cell = tmp_path / "cell.yaml"
    cell.write_text(f"database: {{path: {tmp_path / 'nope.db'}, hand: three_finger}}\n"
                    f"log_dir: {tmp_path / 'log'}\n")
    assert main(["run", "--config", str(cell), "--trials", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("graspline run: error: ")
    assert "database.path" in err[-1] and "nope.db" in err[-1] and "does not exist" in err[-1]
    assert not any("Traceback" in line for line in err)
