"""The gripper map: monotonic fit of measured points, its inverse, the drivers taking it, and
gauge blocks measured on an emulated Barrett hand over a real pty."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration import (CalibrationError, GripperCalibration, fit_gripper_map,
                         gripper_driver_options, measure_gauge_blocks, read_gripper_points)
from drivers.gripper import open_gripper


@st.composite
def monotone_maps(draw):
    """Random strictly monotonic (counts, width) breakpoints, decreasing or increasing."""
    n = draw(st.integers(2, 8))
    steps = draw(st.lists(st.floats(1.0, 500.0), min_size=n - 1, max_size=n - 1))
    counts = draw(st.floats(0.0, 100.0)) + np.concatenate([[0.0], np.cumsum(steps)])
    dw = draw(st.lists(st.floats(1e-4, 0.05), min_size=n - 1, max_size=n - 1))
    widths = np.concatenate([[0.0], np.cumsum(dw)])
    if draw(st.booleans()):
        widths = widths[::-1].copy()
    return tuple(counts.tolist()), tuple(widths.tolist())


@settings(max_examples=60, deadline=None)
@given(monotone_maps(), st.floats(0.0, 1.0))
def test_width_map_round_trip_counts_to_width_and_back(m, frac):
    counts, widths = m
    cal = GripperCalibration("barrett", counts, widths, finger_width_m=0.02)
    c = counts[0] + frac * (counts[-1] - counts[0])
    assert cal.counts_at(cal.width_at(c)) == pytest.approx(c, abs=1e-6 * max(1.0, c))
    w = min(widths) + frac * (max(widths) - min(widths))
    assert cal.width_at(cal.counts_at(w)) == pytest.approx(w, abs=1e-9)


def test_noisy_non_monotonic_points_give_a_strictly_monotonic_map_and_residuals():
    rng = np.random.default_rng(0)
    counts = np.repeat(np.linspace(0, 255, 12), 3)
    true = 0.155 * (1 - counts / 255) ** 1.1          # a curved map, closing as counts rise
    measured = true + rng.normal(0, 0.0015, counts.shape)
    cal = fit_gripper_map(counts, measured, model="robotiq3f", mode="pinch",
                          finger_width_m=0.022)
    assert (np.diff(cal.width_m) < 0).all() and (np.diff(cal.counts) > 0).all()
    assert np.abs(cal.width_at(counts) - true).max() < 0.003
    assert cal.rms_width_m == pytest.approx(np.sqrt(((measured - cal.width_at(counts)) ** 2)
                                                    .mean()))
    assert cal.opening_m == pytest.approx(max(cal.width_m))


def test_measurements_that_do_not_change_are_refused_with_the_values():
    with pytest.raises(CalibrationError, match=r"do not change with the command"):
        fit_gripper_map([0, 100, 200], [0.1, 0.1, 0.1], model="barrett", finger_width_m=0.02)
    with pytest.raises(CalibrationError, match="two or more different commands"):
        fit_gripper_map([5, 5], [0.1, 0.2], model="barrett", finger_width_m=0.02)


def test_force_map_and_its_inverse():
    cal = fit_gripper_map([0, 255], [0.1, 0.0], model="robotiq3f", finger_width_m=0.02,
                          force_counts=[0, 128, 255], force_n=[15.0, 40.0, 60.0])
    assert cal.force_at(128) == pytest.approx(40.0)
    assert cal.counts_for_force(cal.force_at(200)) == pytest.approx(200.0)
    assert cal.force_map().counts == (0, 128, 255)


def test_scorer_projection_comes_from_the_calibrated_finger_width_and_opening():
    cal = GripperCalibration("barrett", (0.0, 17800.0), (0.19, 0.0), finger_width_m=0.025)
    proj = cal.projection(0.001, n_lines=5)
    assert (proj.finger_width_px, proj.open_width_px, proj.n_lines) == (25.0, 190.0, 5)


def test_robotiq3f_takes_a_calibrated_width_map_per_mode(emulator):
    cal = fit_gripper_map([0, 128, 255], [0.120, 0.050, 0.0], model="robotiq3f", mode="basic",
                          finger_width_m=0.02)
    emu = emulator("robotiq3f")
    with open_gripper("robotiq3f", emu.port, **gripper_driver_options([cal])) as g:
        assert g.spec.width_map == cal.width_map()
        assert g.spec.width.high == pytest.approx(0.120)
        assert g.spec.width_map.to_counts(0.050) == 128
    with open_gripper("robotiq3f", emu.port, mode="pinch",
                      **gripper_driver_options([cal])) as g:
        assert g.spec.width.high == pytest.approx(0.110)   # pinch: still the nominal map


def test_gauge_blocks_on_the_emulated_barrett_recover_its_map_and_the_driver_uses_it(emulator):
    emu = emulator("barrett", object_width_m=0.19)
    with open_gripper("barrett", emu.port, baudrate=38400, timeout_s=0.3) as g:
        g.activate(timeout_s=5)
        points = measure_gauge_blocks(g, [0.185, 0.17, 0.155],
                                      lambda w: emu.set(object_width_m=w))
    # The emulator's fingers meet a block where the nominal map puts its width.
    expected = [(0.2 - w) / 0.2 * 17800 for w in (0.185, 0.17, 0.155)]
    assert [c for c, _ in points] == pytest.approx(expected, abs=2)
    cal = fit_gripper_map([c for c, _ in points], [w for _, w in points], model="barrett",
                          finger_width_m=0.025)
    assert cal.rms_width_m < 1e-4
    # A calibration that says the hand is 10 mm narrower than nominal changes the command.
    shifted = GripperCalibration("barrett", (0.0, 17800.0), (0.19, 0.0), finger_width_m=0.025)
    emu.set(object_width_m=None)
    with open_gripper("barrett", emu.port, baudrate=38400, timeout_s=0.3,
                      **gripper_driver_options([shifted])) as g:
        g.activate(timeout_s=5)
        g.grasp(0.180, timeout_s=10)
        assert emu.stats()["positions"][:3] == [round(0.01 / 0.19 * 17800)] * 3


def test_a_bump_in_the_measurements_is_pooled_into_one_breakpoint():
    # The opening at 100 counts reads wider than at 50: isotonic regression pools the two.
    cal = fit_gripper_map([0, 50, 100, 150, 255], [0.100, 0.080, 0.085, 0.040, 0.0],
                          model="barrett", finger_width_m=0.02)
    assert cal.counts == (0.0, 75.0, 150.0, 255.0)
    assert cal.width_m == pytest.approx((0.100, 0.0825, 0.040, 0.0))
    # Residuals are about the piecewise-linear map: at 100 counts it reads 0.0825 - 0.0425 / 3.
    assert cal.max_width_m == pytest.approx(0.085 - (0.0825 - 0.0425 / 3))


def test_a_points_file_gives_counts_and_widths_or_forces_in_file_order(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text("counts,width_m,note\n0,0.150,open\n128,0.074,\n255,0.0,closed\n")
    assert read_gripper_points(p) == ([0.0, 128.0, 255.0], [0.150, 0.074, 0.0])
    p.write_text("force_n,counts\n15.5,0\n60,255\n")
    assert read_gripper_points(str(p), "force_n") == ([0.0, 255.0], [15.5, 60.0])


def test_a_bad_points_file_is_refused_naming_the_file_and_line(tmp_path):
    p = tmp_path / "pts.csv"
    with pytest.raises(CalibrationError, match=f"{p}: cannot read"):
        read_gripper_points(p)
    p.write_text("count,width_m\n0,0.15\n")
    with pytest.raises(CalibrationError, match="needs a header with columns counts,width_m"):
        read_gripper_points(p)
    p.write_text("counts,force_n\n0,10\n64,strong\n")
    with pytest.raises(CalibrationError, match="pts.csv, line 3: counts and force_n must be "
                                               "numbers, got '64', 'strong'"):
        read_gripper_points(p, "force_n")
    p.write_text("counts,width_m\n0\n")           # a short row: the width is missing
    with pytest.raises(CalibrationError, match="line 2: counts and width_m must be numbers"):
        read_gripper_points(p)


def test_cli_gauge_block_flow_asks_for_each_block_and_writes_the_map(emulator, tmp_path,
                                                                    monkeypatch, capsys):
    from calibration import load_gripper_map
    from onboard.cli import main

    emu = emulator("barrett", object_width_m=0.19)
    asked = []

    def operator(prompt: str) -> str:
        """The person at the cell: reads the prompt, puts that block between the fingers."""
        asked.append(prompt)
        emu.set(object_width_m=[0.185, 0.17, 0.155][len(asked) - 1])
        return ""

    monkeypatch.setattr("builtins.input", operator)
    out = tmp_path / "g.yaml"
    assert main(["calibrate", "gripper", "--model", "barrett", "--port", emu.port, "--blocks",
                 "0.185,0.17,0.155", "--finger-width", "0.025", "--out", str(out)]) == 0
    assert [a.split(" gauge")[0] for a in asked] == [f"put the {w} mm" for w in
                                                    ("185.0", "170.0", "155.0")]
    cal = load_gripper_map(out)
    assert cal.counts_at(0.17) == pytest.approx(0.03 / 0.2 * 17800, abs=2)
    assert cal.inputs["blocks"] == [0.185, 0.17, 0.155]
