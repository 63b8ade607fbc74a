"""Calibration files: round trips, and corrupt, partial, wrong-kind or wrong-version files
rejected with a message naming the file and the key (hypothesis over the loaders)."""
from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration import (VERSION, CalibrationFileError, DepthCalibration, DepthSample,
                         GripperCalibration, HandEyeCalibration, IntrinsicsCalibration,
                         MethodResult, load_calibration, load_depth_correction,
                         load_gripper_map, load_hand_eye, load_intrinsics, save_calibration)
from geometry import pose_from_rvec
from drivers.camera import Intrinsics

LOADERS = {"intrinsics": load_intrinsics, "hand_eye": load_hand_eye,
           "depth": load_depth_correction, "gripper": load_gripper_map}


def _intrinsics(fx=612.5, coeffs=(0.1, -0.2, 0.001, -0.002, 0.0)) -> IntrinsicsCalibration:
    return IntrinsicsCalibration(
        Intrinsics(640, 480, fx, 611.0, 321.0, 240.5, "brown_conrady", coeffs), 0.12,
        ("a.png", "b.png"), (0.1, 0.14), (("c.png", 2.5),), (0.3, 0.3, 0.2, 0.2), 0.8,
        {"squares_x": 7}, "2026-11-23T10:00:00Z", {"source": "images x"})


def _hand_eye() -> HandEyeCalibration:
    T = pose_from_rvec([0.1, 0.2, 0.3], [0.01, 0.02, 0.05])
    F = pose_from_rvec([3.0, 0.0, 0.1], [0.5, 0.0, 0.0])
    return HandEyeCalibration("eye_in_hand", T, F, "park", 0.0005, 0.001, 0.0011, 0.002, 0.0003,
                              0.0004, 12, (MethodResult("park", T, 0.0005, 0.001),),
                              ("only 12 poses",), "2026-11-23T10:00:00Z", {"images": "x"})


def _depth() -> DepthCalibration:
    s = (DepthSample(0.5, 0.501, 0.001, 0.0008, 0.0007, 5000),
         DepthSample(1.0, 1.004, 0.004, 0.0028, 0.0026, 4000))
    return DepthCalibration(s, 0.9963, 0.003, 0.0002, (), "2026-11-23T10:00:00Z", {"n": 2})


def _gripper() -> GripperCalibration:
    return GripperCalibration("robotiq3f", (0.0, 100.0, 255.0), (0.155, 0.09, 0.0), 0.022,
                              "basic", (0.0, 255.0), (15.0, 60.0), 0.0004, 0.001, 0.5,
                              "2026-11-23T10:00:00Z", {"points": "p.csv"})


RESULTS = {"intrinsics": _intrinsics, "hand_eye": _hand_eye, "depth": _depth,
           "gripper": _gripper}


def _same(a, b) -> None:
    """Field-by-field equality, arrays compared exactly."""
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if name == "methods":
            assert [(m.method, m.rms_translation_m) for m in x] == \
                   [(m.method, m.rms_translation_m) for m in y]
            assert all(np.array_equal(m.T, n.T) for m, n in zip(x, y))
        elif isinstance(x, np.ndarray):
            assert np.array_equal(x, y), name
        else:
            assert x == y, name


@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_every_kind_round_trips_through_its_file(tmp_path, kind):
    cal = RESULTS[kind]()
    path = save_calibration(cal, tmp_path / f"{kind}.yaml")
    _same(LOADERS[kind](path), cal)
    _same(load_calibration(path), cal)
    text = path.read_text()
    assert f"graspline_calibration: {kind}" in text and f"version: {VERSION}" in text


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fx=st.floats(1.0, 1e5), k=st.lists(st.floats(-10, 10), min_size=5, max_size=5))
def test_intrinsics_round_trip_any_valid_values(tmp_path, fx, k):
    cal = _intrinsics(fx, tuple(k))
    _same(load_intrinsics(save_calibration(cal, tmp_path / "i.yaml")), cal)


def _save_doc(path, doc) -> None:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _doc(tmp_path, kind) -> dict:
    return yaml.safe_load(save_calibration(RESULTS[kind](), tmp_path / "good.yaml").read_text())


def _leaves(d, prefix=""):
    """Dotted paths of the required structure's leaves (mappings' keys, not list items)."""
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v:
            yield from _leaves(v, key)
        else:
            yield key


def _pop(doc, key):
    *parents, last = key.split(".")
    for p in parents:
        doc = doc[p]
    del doc[last]


def _put(doc, key, value):
    *parents, last = key.split(".")
    for p in parents:
        doc = doc[p]
    doc[last] = value


@pytest.mark.parametrize("kind,key", [
    ("intrinsics", "result.fx"), ("hand_eye", "result.T_tcp_camera"), ("depth", "result.scale"),
    ("gripper", "result.width.width_m"), ("gripper", "result.finger_width_m"),
    ("intrinsics", "residuals.rms_px"), ("hand_eye", "residuals.rms_translation_m")])
def test_partial_file_names_the_missing_key_and_the_file(tmp_path, kind, key):
    doc = _doc(tmp_path, kind)
    _pop(doc, key)
    path = tmp_path / "partial.yaml"
    _save_doc(path, doc)
    with pytest.raises(CalibrationFileError, match=rf"{path}: key '{key}': missing"):
        LOADERS[kind](path)


def test_truncated_file_is_reported_as_corrupt_with_its_name(tmp_path):
    good = save_calibration(_hand_eye(), tmp_path / "he.yaml").read_text()
    path = tmp_path / "cut.yaml"
    # Cut inside the 4 x 4 matrix's flow list: not valid YAML any more.
    path.write_text(good[:good.index("T_tcp_camera") + 40])
    with pytest.raises(CalibrationFileError, match=rf"{path}: is not valid YAML at line \d+"):
        load_hand_eye(path)


def test_wrong_version_kind_and_values_are_named(tmp_path):
    path = tmp_path / "x.yaml"
    doc = _doc(tmp_path, "intrinsics")
    _save_doc(path, {**doc, "version": VERSION + 1})
    with pytest.raises(CalibrationFileError, match=r"key 'version': version 2 is newer"):
        load_intrinsics(path)
    _save_doc(path, doc)
    with pytest.raises(CalibrationFileError,
                       match=r"key 'graspline_calibration': is a intrinsics calibration, "
                             r"expected gripper"):
        load_gripper_map(path)
    bad = copy.deepcopy(doc)
    bad["result"]["fy"] = "six hundred"
    _save_doc(path, bad)
    with pytest.raises(CalibrationFileError,
                       match=r"key 'result.fy': must be a finite number, got 'six hundred'"):
        load_intrinsics(path)
    he = _doc(tmp_path, "hand_eye")
    he["result"]["T_tcp_camera"][0][0] = 2.0
    _save_doc(path, he)
    with pytest.raises(CalibrationFileError, match=r"key 'result.T_tcp_camera': must be a "
                                                   r"rigid transform \(.*\), got rotation error"):
        load_hand_eye(path)
    g = _doc(tmp_path, "gripper")
    g["result"]["width"]["width_m"] = [0.1, 0.12, 0.0]
    _save_doc(path, g)
    with pytest.raises(CalibrationFileError, match=r"key 'result': width_m must be strictly "
                                                   r"monotonic"):
        load_gripper_map(path)


@pytest.mark.parametrize("key, value, message", [
    ("result.width.width_m", [0.19, 0.1, -0.5],
     r"key 'result.width.width_m': values must be >= 0, got -0.5 at index 2"),
    ("result.force.force_n", [-15.0, 60.0],
     r"key 'result.force.force_n': values must be >= 0, got -15.0 at index 0"),
    ("result.model", "foo", r"key 'result.model': must be one of .*robotiq3f.*, got 'foo'"),
    ("date", "yesterday", r"key 'date': must be an ISO 8601 date .*, got 'yesterday'"),
])
def test_a_gripper_map_with_impossible_values_is_refused_naming_file_and_key(tmp_path, key,
                                                                             value, message):
    doc = _doc(tmp_path, "gripper")
    _put(doc, key, value)
    path = tmp_path / "gripper.yaml"
    _save_doc(path, doc)
    with pytest.raises(CalibrationFileError, match=rf"^calibration file {re.escape(str(path))}: "
                                                   rf"{message}$"):
        load_gripper_map(path)


def test_missing_and_empty_files_are_named(tmp_path):
    with pytest.raises(CalibrationFileError, match=r"nope.yaml: does not exist"):
        load_intrinsics(tmp_path / "nope.yaml")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(CalibrationFileError, match=r"empty.yaml: must hold a mapping"):
        load_depth_correction(tmp_path / "empty.yaml")


JUNK = st.one_of(st.none(), st.text(max_size=5), st.booleans(), st.just(float("nan")),
                 st.integers(-3, 3), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(RESULTS)), data=st.data())
def test_any_damaged_key_loads_or_fails_with_a_file_error_naming_the_file(tmp_path, kind, data):
    doc = _doc(tmp_path, kind)
    key = data.draw(st.sampled_from(sorted(_leaves(doc))))
    if data.draw(st.booleans()):
        _pop(doc, key)
    else:
        _put(doc, key, data.draw(JUNK))
    path = tmp_path / "damaged.yaml"
    _save_doc(path, doc)
    try:
        LOADERS[kind](path)
    except CalibrationFileError as exc:
        assert str(path) in str(exc)
        # The key named is the damaged one, one of its parents, or an envelope key.
        assert exc.key is None or key.startswith(exc.key.split("[")[0]) or \
            exc.key.startswith(key) or exc.key in ("result", "graspline_calibration")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0))
def test_a_file_cut_anywhere_loads_or_fails_with_a_file_error(tmp_path, cut):
    good = save_calibration(_gripper(), tmp_path / "g.yaml").read_text()
    path = tmp_path / "cut.yaml"
    path.write_text(good[:math.floor(cut * len(good))])
    try:
        load_gripper_map(path)
    except CalibrationFileError as exc:
        assert str(path) in str(exc)
