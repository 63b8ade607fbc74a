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
    ("scoring:\n  join_touching: maybe\n", "scoring.join_touching", "maybe"),
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


@pytest.mark.parametrize("text, key, value", [
    ("budgets_s: {capture: fast}\n", "budgets_s.capture", "'fast'"),
    ("budgets_s: {search: 0.01, capture: fast}\n", "budgets_s.capture", "'fast'"),
    ("scoring: {masses_kg: {drill: heavy}}\n", "scoring.masses_kg.drill", "'heavy'"),
])
def test_a_bad_value_in_a_mapping_names_its_own_key_and_value(text, key, value):
    # msgspec says only "budgets_s[...]": the message must name the entry, not the mapping
    with pytest.raises(CellFileError) as e:
        parse_cell_file(text, "cellC.yaml")
    msg = str(e.value)
    assert msg.startswith(f"cellC.yaml: key '{key}': ") and msg.endswith(f"(value: {value})"), msg


def test_a_mapping_key_that_is_not_text_is_named():
    with pytest.raises(CellFileError, match=r"^c.yaml: key 'budgets_s.1': the names in budgets_s "
                                            r"must be text"):
        parse_cell_file("budgets_s: {1: 0.1}\n", "c.yaml")


# a cell with no simulated device (nothing of MuJoCo is built): its camera fails first
HARDWARE_CELL = ("gripper: {model: robotiq2f85, port: /dev/graspline-no-such-port}\n"
                 "arm: {kind: none}\nlog_dir: log\n")


def _cell_file(tmp_path, camera: str) -> str:
    p = tmp_path / "cell.yaml"
    p.write_text(f"camera: {camera}\n" + HARDWARE_CELL)
    return str(p)


def _setup_error(path: str) -> str:
    from onboard import CellSetupError, open_picking_cell

    with pytest.raises(CellSetupError) as e:
        open_picking_cell(path)
    return str(e.value)


def test_a_camera_error_at_opening_is_a_set_up_error_naming_the_cell_file(tmp_path):
    # RealSenseCamera raises CameraError (neither ValueError nor RuntimeError) for the file
    path = _cell_file(tmp_path, "{kind: recording, recording: absent.db3}")
    msg = _setup_error(path)
    assert msg.startswith(f"{path}: camera (recording): ") and "absent.db3" in msg, msg
    assert "does not exist" in msg


def test_realsense_without_pyrealsense2_says_what_to_install(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyrealsense2", None)   # import pyrealsense2 fails
    path = _cell_file(tmp_path, "{kind: realsense}")
    msg = _setup_error(path)
    assert msg.startswith(f"{path}: camera (realsense): pyrealsense2 cannot be loaded"), msg
    assert "pip install 'graspline[realsense]'" in msg and "libusb-1.0-0" in msg


@pytest.mark.parametrize("command", ["run", "serve"])
@pytest.mark.parametrize("camera", ["{kind: recording, recording: absent.db3}",
                                    "{kind: realsense}"])
def test_the_cli_prints_a_set_up_error_as_one_line_and_exits_2(tmp_path, monkeypatch, capsys,
                                                               command, camera):
    import sys

    from onboard.cli import main

    monkeypatch.setitem(sys.modules, "pyrealsense2", None)
    path = _cell_file(tmp_path, camera)
    if command == "run":   # run refuses arm.kind none before any device: give it an arm
        text = open(path).read()
        open(path, "w").write(text.replace("arm: {kind: none}", "arm: {kind: sim}"))
    assert main([command, "--config", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"graspline {command}: error: {path}: camera ("), err


def test_run_refuses_a_cell_whose_arm_the_controller_moves(tmp_path, capsys):
    from onboard.cli import main

    p = tmp_path / "cell.yaml"
    p.write_text("arm: {kind: none}\nlog_dir: log\ncamera: {width_px: 320, height_px: 240}\n")
    assert main(["run", "--config", str(p)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"graspline run: error: {p}: arm.kind is none, so picking is driven by "
                          f"the robot controller over `graspline serve`; `run` needs an arm"), err
    assert not (tmp_path / "log").exists(), "refused before any device or the log was opened"


def test_the_endpoints_default_port_is_50600_in_the_cell_file_the_sim_cell_and_serve(
        monkeypatch, capsys):
    from types import SimpleNamespace

    import onboard
    from onboard import sim_cell_file
    from onboard.cli import DEFAULT_PORT, main

    assert DEFAULT_PORT == 50600
    assert parse_cell_file("", "c.yaml").server.port == 50600
    server = sim_cell_file().server
    assert server.port == 50600
    # what `serve --sim` binds with no --host or --port: the simulated cell's address
    cell = SimpleNamespace(endpoint_address=(server.host, server.port))
    monkeypatch.setattr(onboard, "make_picking_service", lambda *a, **k: cell)
    monkeypatch.setattr(onboard, "serve", lambda service, host, port, *, ready: ready(host, port))
    assert main(["serve", "--sim"]) == 0
    assert capsys.readouterr().out == "listening on 127.0.0.1:50600\nstopped\n"
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "else 50600" in capsys.readouterr().out
