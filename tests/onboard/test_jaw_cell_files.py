"""A jaw described by the cell file alone: every gripper key and the pad friction reach both
the simulated cell's jaw (its MuJoCo model) and the scorer's jaw limits."""
import math
from pathlib import Path

import msgspec
import numpy as np
import pytest

from onboard import (CameraConfig, CellFileError, PickingCell, config_hash, jaw_friction,
                     load_cell_file, parse_cell_file, sim_pad_friction)

JAWS = Path(__file__).resolve().parents[2] / "benchmarks" / "jaws"


def _hand_id(model, kind: str, name: str) -> int:
    """The id of the hand's geom or site ``name`` in the compiled cell (asserted present)."""
    import mujoco

    from offline_sim.dynamics import HAND_PREFIX

    i = mujoco.mj_name2id(model, getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}"), HAND_PREFIX + name)
    assert i >= 0, name
    return i


def _geom_size(model, name: str) -> np.ndarray:
    return model.geom_size[_hand_id(model, "geom", name)]


def test_the_short_pad_jaws_cell_file_builds_that_jaw_in_the_cell_and_the_scorer(tmp_path):
    config, _ = load_cell_file(JAWS / "short_pad.yaml")
    config = msgspec.structs.replace(config, log_dir=str(tmp_path),
                                     camera=CameraConfig(width_px=160, height_px=120),
                                     sim=msgspec.structs.replace(config.sim, pad_friction=0.5))
    with PickingCell(config, config_hash(config)) as cell:
        world = cell.devices.truth.world
        m = world.model
        # pads: half sizes (thickness, width, length) of 8 x 13 x 20 mm, friction 0.5
        assert np.allclose(_geom_size(m, "right_pad"), (0.004, 0.0065, 0.010), atol=1e-6)
        pad = _hand_id(m, "geom", "right_pad")
        assert m.geom_friction[pad][0] == pytest.approx(0.5)
        # the finger body behind the pad: 16 mm pad face to back, so 8 mm; 40 mm long
        assert np.allclose(_geom_size(m, "right_body"), (0.004, 0.0065, 0.020), atol=1e-6)
        # the TCP site 10 mm from the fingertips, as gripper.tcp_to_tip_m says
        tcp = _hand_id(m, "site", "tcp")
        assert m.site_pos[tcp][2] == pytest.approx(0.040 - 0.010, abs=1e-6)
        assert world.hand.aperture_m == pytest.approx(0.085)
        jaw = cell.loop.jaw
        assert (jaw.stroke_m, jaw.pad_length_m, jaw.finger_length_m, jaw.force_n) == \
            pytest.approx((0.085, 0.020, 0.040, 40.0))
        assert jaw.finger_thickness_m == pytest.approx(0.016)
        assert jaw.pad_width_m == pytest.approx(0.013)  # the torque term's pad/side overlap
        assert jaw.friction == pytest.approx(0.5)  # sim.pad_friction drives the scorer too
        assert cell.loop.projection.finger_width_px == pytest.approx(13.0)
        # the palm: 137 x 33 mm in the simulated jaw (open fingers with their bodies and
        # fingers' width, + 10 mm each side), and the scorer's palm check as large
        # (gripper.palm_length_m, gripper.palm_width_m)
        assert tuple(2.0 * _geom_size(m, "palm")[:2]) == pytest.approx((0.137, 0.033), abs=1e-6)
        assert (jaw.palm_length_m, jaw.palm_width_m) == pytest.approx((0.137, 0.033))


def test_a_cell_files_palm_is_the_palm_of_the_simulated_jaw_and_of_the_scorer(tmp_path):
    # the Franka hand's body (63 x 204 mm) is wider and longer than the simulated jaw's own
    # palm would be (37 x 128 mm): the cell file's keys build it in the simulator too, so
    # the scorer's palm check and the physics see one hand
    config, _ = load_cell_file(JAWS / "franka_hand.yaml")
    config = msgspec.structs.replace(config, log_dir=str(tmp_path),
                                     camera=CameraConfig(width_px=160, height_px=120))
    with PickingCell(config, config_hash(config)) as cell:
        m = cell.devices.truth.world.model
        assert tuple(2.0 * _geom_size(m, "palm")[:2]) == pytest.approx((0.204, 0.063), abs=1e-6)
        jaw = cell.loop.jaw
        assert (jaw.palm_length_m, jaw.palm_width_m) == pytest.approx((0.204, 0.063))
        assert (jaw.stroke_m, jaw.pad_length_m, jaw.pad_width_m, jaw.force_n) == \
            pytest.approx((0.080, 0.017, 0.017, 70.0))
    # only the width given: the palm as long as the open fingers with their bodies, in both
    only_width = msgspec.structs.replace(
        config, gripper=msgspec.structs.replace(config.gripper, palm_length_m=None))
    with PickingCell(only_width, config_hash(only_width)) as cell:
        m = cell.devices.truth.world.model
        assert 2.0 * _geom_size(m, "palm")[0] == pytest.approx(0.080 + 2 * 0.014, abs=1e-6)
        assert math.isnan(cell.loop.jaw.palm_length_m)  # the scorer's "open fingers + bodies"


def test_the_wide_jaws_cell_file_opens_140_mm():
    config, _ = load_cell_file(JAWS / "2f140.yaml")
    assert (config.gripper.open_width_m, config.gripper.force_n) == (0.140, 60.0)


@pytest.mark.parametrize("path", sorted(JAWS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_jaw_file_under_benchmarks_loads_and_is_named_after_its_file(path):
    config, _ = load_cell_file(path)  # CellFileError on a bad key or lengths that do not fit
    assert config.name == path.stem
    assert config.gripper.model == "sim_jaw"  # bench_cell's jaws are simulated ones


def test_the_narrow_jaws_cell_file_opens_50_mm():
    config, _ = load_cell_file(JAWS / "narrow_50.yaml")
    assert (config.gripper.open_width_m, config.gripper.force_n) == (0.050, 100.0)


def test_one_pad_friction_key_drives_both_the_simulated_jaw_and_the_scorer():
    only_sim = parse_cell_file("sim: {pad_friction: 0.5}\n")
    only_gripper = parse_cell_file("gripper: {pad_friction: 0.5}\n")
    neither = parse_cell_file("")
    both = parse_cell_file("gripper: {pad_friction: 0.8}\nsim: {pad_friction: 0.5}\n")
    assert (jaw_friction(only_sim), sim_pad_friction(only_sim)) == (0.5, 0.5)
    assert (jaw_friction(only_gripper), sim_pad_friction(only_gripper)) == (0.5, 0.5)
    assert (jaw_friction(neither), sim_pad_friction(neither)) == (1.0, 1.0)
    # written twice: the scorer believes the gripper's, the simulation is the sim's
    assert (jaw_friction(both), sim_pad_friction(both)) == (0.8, 0.5)
    hw = parse_cell_file("gripper: {model: robotiq2f85}\nsim: {pad_friction: 0.5}\n")
    assert jaw_friction(hw) == 1.0  # a real gripper's scorer does not read the sim section


@pytest.mark.parametrize("text, key", [
    ("gripper: {pad_length_m: 0.05, finger_length_m: 0.04}\n", "gripper.pad_length_m"),
    ("gripper: {pad_thickness_m: 0.01, finger_thickness_m: 0.01}\n", "gripper.finger_thickness_m"),
    ("gripper: {tcp_to_tip_m: 0.07}\n", "gripper.tcp_to_tip_m"),
    ("gripper: {pad_thickness_m: -0.001}\n", "gripper.pad_thickness_m"),
])
def test_a_jaw_whose_lengths_do_not_fit_together_is_refused_naming_the_key(text, key):
    with pytest.raises(CellFileError, match=key.replace(".", r"\.")):
        parse_cell_file(text, "jaw.yaml")


def test_the_pads_bound_the_first_search_and_the_fingers_the_deeper_one_on_a_bottle(tmp_path):
    import dataclasses

    config, _ = load_cell_file(JAWS / "short_pad.yaml")
    # both searches asked deeper than the 20 mm pads: the first stays within the pads, the
    # deeper one within the 40 mm fingers less the palm's margin and clearance above the top
    # (40 - 2 - 5 = 33 mm), and the contact counts only the pads' overlap
    config = msgspec.structs.replace(
        config, log_dir=str(tmp_path), camera=CameraConfig(width_px=640, height_px=480),
        scoring=msgspec.structs.replace(config.scoring, insertion_depth_m=0.03,
                                        deep_insertion_m=0.06))
    with PickingCell(config, config_hash(config)) as cell:
        sim = cell.devices.truth
        sim.use_settings(dataclasses.replace(sim.settings, builtin=("bottle",),
                                             random_primitives=False, objects_per_table=(2, 2)))
        recs = [cell.pick_record() for _ in range(3)]
    graded = [r.features for r in recs if "insertion_m" in r.features]
    assert graded, [(r.outcome, r.error) for r in recs]
    assert max(f["insertion_m"] for f in graded) <= 0.033 + 1e-9, graded
    assert max(f["contact_height_m"] for f in graded) <= 0.020 + 1e-6, graded


def test_the_searches_insertion_depths_follow_the_jaws_pads_and_fingers():
    from onboard.loop import insertion_depths

    config, _ = load_cell_file(JAWS / "short_pad.yaml")
    assert insertion_depths(config) == pytest.approx([0.02, 0.033])
    config, _ = load_cell_file(JAWS / "2f85.yaml")
    assert insertion_depths(config) == pytest.approx([0.02, 0.05])
    shallow = msgspec.structs.replace(config, scoring=msgspec.structs.replace(
        config.scoring, deep_insertion_m=0.0))
    assert insertion_depths(shallow) == pytest.approx([0.02])


def test_a_palm_width_that_is_not_positive_is_refused_naming_the_key():
    text = (JAWS / "short_pad.yaml").read_text().replace("palm_width_m: 0.033", "palm_width_m: 0")
    with pytest.raises(CellFileError, match="gripper.palm_width_m"):
        parse_cell_file(text, "short_pad.yaml")


def test_the_simulated_jaw_without_palm_keys_scores_with_the_palm_the_simulator_builds():
    built_in = parse_cell_file("")
    assert built_in.gripper.palm_m() == pytest.approx((0.042, 0.133))  # the 2F-85's jaw
    wide = parse_cell_file("gripper: {open_width_m: 0.14, finger_width_m: 0.03}\n")
    assert wide.gripper.palm_m() == pytest.approx((0.05, 0.188))
    real = parse_cell_file("gripper: {model: robotiq2f85, port: /dev/ttyUSB0}\n")
    assert all(math.isnan(v) for v in real.gripper.palm_m())  # unknown: between the fingers only


def test_sim_cell_settings_are_the_settings_the_cell_files_simulated_cell_runs_on(tmp_path):
    from onboard import CellSetupError, sim_cell_settings

    config, _ = load_cell_file(JAWS / "short_pad.yaml")
    config = msgspec.structs.replace(config, log_dir=str(tmp_path),
                                     camera=CameraConfig(width_px=160, height_px=120),
                                     sim=msgspec.structs.replace(config.sim, pad_friction=0.5))
    s = sim_cell_settings(config)
    # the finger body alone behind its pad (the cell file gives pad and body together)
    assert (s.open_width_m, s.pad_length_m, s.finger_thickness_m, s.pad_friction) == \
        pytest.approx((0.085, 0.020, 0.008, 0.5))
    assert (s.palm_length_m, s.palm_width_m, s.image_width_px) == (0.137, 0.033, 160)
    with PickingCell(config, config_hash(config)) as cell:
        assert cell.devices.truth.settings == s  # the cell the loop drives runs on them
    bad = msgspec.structs.replace(config, sim=msgspec.structs.replace(config.sim,
                                                                      ycb_dir=str(tmp_path / "no")))
    with pytest.raises(CellSetupError, match="ycb_dir"):
        sim_cell_settings(bad)


@pytest.mark.parametrize("open_width_m", [0.080, 0.083, 0.085, 0.1137, 0.140])
@pytest.mark.parametrize("palm", [None, (0.063, 0.204), (0.033, 0.137)])
def test_a_silhouettes_border_is_whole_pixels_and_reaches_past_the_palm(open_width_m, palm):
    """The border a silhouette keeps round its object: a whole number of pixels (half a
    pixel's shift redraws an outline a pixel wider on one side), at least the open fingers'
    room, and past the farthest corner of the palm the scorer checks."""
    from onboard.loop import silhouette_margin_m
    from scoring import JawLimits, palm_reach_m

    keys = "" if palm is None else f", palm_width_m: {palm[0]}, palm_length_m: {palm[1]}"
    config = parse_cell_file(f"gripper: {{open_width_m: {open_width_m}{keys}}}\n", "cell.yaml")
    width, length = config.gripper.palm_m()  # the scorer's palm (PickingLoop.jaw's)
    jaw = JawLimits(stroke_m=open_width_m, palm_width_m=width, palm_length_m=length)
    margin = silhouette_margin_m(config, jaw)
    px = margin / config.scoring.metres_per_px
    assert px == pytest.approx(round(px), abs=1e-6)
    assert margin >= 0.6 * open_width_m + 0.02 - 1e-9
    assert margin > palm_reach_m(jaw)
    if palm is not None:
        assert palm_reach_m(jaw) > math.hypot(palm[0], palm[1]) / 2  # its corner, and more
