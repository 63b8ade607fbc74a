"""The cell file: every error names the file, the key and the value; a good file loads."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from onboard import CellFileError, load_cell_file, parse_cell_file


def test_defaults_load_from_an_empty_file(tmp_path):
    p = tmp_path / "cell.yaml"
    p.write_text("")
    config, digest = load_cell_file(p)
    assert config.gripper.open_width_m == 0.085 and config.camera.kind == "sim"
    assert len(digest) == 64


def test_relative_paths_are_taken_from_the_cell_files_folder(tmp_path):
    p = tmp_path / "cell.yaml"
    p.write_text("log_dir: logs\ncalibration:\n  hand_eye: cal/he.yaml\n")
    config, _ = load_cell_file(p)
    assert config.log_dir == str(tmp_path / "logs")
    assert config.calibration.hand_eye == str(tmp_path / "cal" / "he.yaml")


@pytest.mark.parametrize("text, key, value", [
    ("gripper:\n  force_n: -5\n", "gripper.force_n", "-5"),
    ("gripper:\n  force_n: strong\n", "gripper.force_n", "strong"),
    ("arm:\n  home_m: [0, 1]\n", "arm.home_m", "[0.0, 1.0]"),
    ("scoring:\n  min_score: 1.5\n", "scoring.min_score", "1.5"),
    ("budgets_s:\n  capture: 0\n", "budgets_s.capture", "0"),
    ("camera:\n  kind: webcam\n", "camera.kind", "webcam"),
    ("scoring:\n  measure: tan2020\n", "scoring.measure", "tan2020"),
    ("scoring:\n  masses_kg:\n    drill: -1\n", "scoring.masses_kg.drill", "-1"),
    ("gripper:\n  finger_thickness_m: -0.01\n", "gripper.finger_thickness_m", "-0.01"),
    ("gripper:\n  pad_friction: 0\n", "gripper.pad_friction", "0"),
])
def test_a_bad_value_names_file_key_and_value(text, key, value):
    with pytest.raises(CellFileError) as e:
        parse_cell_file(text, "cellA.yaml")
    msg = str(e.value)
    assert "cellA.yaml" in msg and key in msg and value in msg


def test_an_unknown_key_is_named_as_a_typo():
    with pytest.raises(CellFileError, match=r"cellB.yaml: unknown key 'gripper.forse_n'"):
        parse_cell_file("gripper:\n  forse_n: 40\n", "cellB.yaml")


def test_an_unknown_stage_budget_lists_the_stages():
    with pytest.raises(CellFileError, match="budgets_s.capturing.*stages are capture"):
        parse_cell_file("budgets_s:\n  capturing: 0.1\n", "c.yaml")


def test_broken_yaml_and_a_missing_file_are_cell_file_errors(tmp_path):
    with pytest.raises(CellFileError, match="not valid YAML"):
        parse_cell_file("gripper: [\n", "c.yaml")
    with pytest.raises(CellFileError, match="cannot be read"):
        load_cell_file(tmp_path / "absent.yaml")


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(
                        st.sampled_from(["camera", "gripper", "arm", "scoring", "force_n",
                                         "kind", "port", "x"]), c, max_size=3), max_leaves=8))
def test_any_parsed_document_loads_or_raises_a_cell_file_error(doc):
    import yaml

    try:
        parse_cell_file(yaml.safe_dump(doc), "fuzz.yaml")
    except CellFileError as exc:
        assert str(exc).startswith("fuzz.yaml")
