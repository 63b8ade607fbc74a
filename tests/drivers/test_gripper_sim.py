"""SimGripper, the model registry and the lightweight import of the drivers package."""
from __future__ import annotations

import subprocess
import sys

import pytest

from drivers.gripper import (MODELS, Gripper, GripperFault, SimGripper, gripper_class,
                             open_gripper)


def test_sim_grasp_stops_on_the_object_with_kinematic_time():
    with SimGripper(object_width_m=0.03) as g:
        g.activate()
        r = g.grasp(0.0, speed_mps=0.1, force_n=50)
    assert r.object_detected and r.width_m == 0.03
    assert r.elapsed_s == pytest.approx((0.085 - 0.03) / 0.1)


def test_sim_grasp_without_object_reaches_the_width():
    g = SimGripper()
    g.activate()
    r = g.grasp(0.02, speed_mps=0.05)
    assert not r.object_detected and r.width_m == 0.02
    assert g.open().width_m == 0.085
    g.close()


def test_sim_checks_ranges_like_the_real_drivers():
    with SimGripper() as g:
        g.activate()
        with pytest.raises(ValueError, match=r"force_n must be within \[20, 235\] N, got 500"):
            g.grasp(0.01, force_n=500)
        assert g.commands == [("activate", 0.0)]      # nothing commanded


def test_sim_requires_activation():
    with SimGripper() as g, pytest.raises(GripperFault, match="activation bit"):
        g.grasp(0.01)


def test_sim_is_a_gripper_and_registered():
    assert isinstance(open_gripper("sim", "sim"), Gripper)
    assert set(MODELS) >= {"robotiq2f85", "robotiq2f140", "robotiq3f", "barrett"}


def test_unknown_model_names_the_choices():
    with pytest.raises(ValueError, match="model must be one of robotiq2f85, robotiq2f140"):
        gripper_class("ur5")


def test_importing_drivers_loads_neither_pyserial_nor_pymodbus():
    code = ("import sys, drivers, drivers.gripper, drivers.gripper.emulators; "
            "print(any(m.split('.')[0] in ('serial', 'pymodbus') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
