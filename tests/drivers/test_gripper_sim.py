"""SimGripper beyond the common contract (test_gripper_contract.py), the model registry and
the lightweight import of the drivers package."""
from __future__ import annotations

import subprocess
import sys

import pytest

from drivers.gripper import (MODELS, Gripper, GripperTimeout, SimGripper, gripper_class,
                             open_gripper)


def test_sim_grasp_stops_on_the_object_with_kinematic_time():
    with SimGripper(object_width_m=0.03) as g:
        g.activate()
        r = g.grasp(0.0, speed_mps=0.1, force_n=50)
    assert r.object_detected and r.width_m == 0.03
    assert r.elapsed_s == pytest.approx((0.085 - 0.03) / 0.1)


def test_sim_motion_past_its_timeout_raises_with_the_fingers_where_they_were():
    with SimGripper(object_width_m=0.03) as g:
        g.activate()
        with pytest.raises(GripperTimeout, match="not finished within 0.5 s"):
            g.grasp(0.0, speed_mps=0.02, timeout_s=0.5)     # 55 mm at 20 mm/s: 2.75 s
        st = g.status()
        assert st.width_m == pytest.approx(0.085 - 0.02 * 0.5) and not st.object_detected
        # the next motion starts from there: 45 mm left to the object
        assert g.grasp(0.0, speed_mps=0.1).elapsed_s == pytest.approx(0.045 / 0.1)


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
