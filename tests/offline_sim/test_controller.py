"""The grasp controller and measures drive a hand in a world they did not build: a table with
two objects and the hand on a carrier, as the simulated cell will have; the closing law stops
at the torque limit."""
import numpy as np
import pytest

pytest.importorskip("mujoco")

from geometry import frame_from_approach, invert, matrix_to_quat, pose  # noqa: E402
from offline_sim.dynamics import (GraspController, GraspProbe, HAND_PREFIX,  # noqa: E402
                                  LiftSchedule, SimSettings, attach_hand, hand_drives, hold_servos,
                                  shake_direction)
from offline_sim.hands import parallel_jaw  # noqa: E402

PAD_HALF_M = 0.0175  # the TCP sits at the pad centre of the default jaw

CELL_XML = """<mujoco model="two_object_cell">
  <option timestep="0.003" integrator="implicitfast" cone="elliptic" impratio="10"
          solver="Newton" iterations="50" tolerance="1e-8"/>
  <worldbody>
    <geom name="table" type="box" pos="0 0 -0.02" size="0.6 0.6 0.02" contype="1" conaffinity="3"
          friction="0.8 0.005 0.0001" solref="0.006 1" solimp="0.95 0.99 0.001"/>
    <body name="near" pos="-0.15 0 0.04"><freejoint/>
      <geom type="box" size="0.025 0.025 0.04" contype="1" conaffinity="3" friction="0.8 0.005 0.0001"
            solref="0.006 1" solimp="0.95 0.99 0.001"/></body>
    <body name="far" pos="0.15 0.05 0.04"><freejoint/>
      <geom type="box" size="0.025 0.025 0.04" contype="1" conaffinity="3" friction="0.8 0.005 0.0001"
            solref="0.006 1" solimp="0.95 0.99 0.001"/></body>
    <body name="arm" gravcomp="1">
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <joint name="x" type="slide" axis="1 0 0" armature="1"/>
      <joint name="y" type="slide" axis="0 1 0" armature="1"/>
      <joint name="z" type="slide" axis="0 0 1" armature="1"/>
      <body name="flange"/>
    </body>
  </worldbody>
  <actuator>
    <position name="x" joint="x" kp="20000" dampratio="1"/>
    <position name="y" joint="y" kp="20000" dampratio="1"/>
    <position name="z" joint="z" kp="20000" dampratio="1"/>
  </actuator>
</mujoco>"""


def _cell(hand):
    """(model, data, carrier ids, probe of the far box, near box body) of the two-object cell."""
    import mujoco

    spec = mujoco.MjSpec.from_string(CELL_XML)
    attach_hand(spec, hand, "flange")
    m = spec.compile()
    d = mujoco.MjData(m)
    ident = lambda kind, name: mujoco.mj_name2id(m, kind, name)  # noqa: E731
    O = mujoco.mjtObj
    links = np.full(m.nbody, -1, np.int64)
    for k, name in enumerate(hand.links):
        links[ident(O.mjOBJ_BODY, HAND_PREFIX + name)] = k
    probe = GraspProbe(ident(O.mjOBJ_BODY, "far"), ident(O.mjOBJ_SITE, HAND_PREFIX + hand.tcp_site),
                       ident(O.mjOBJ_GEOM, "table"), links)
    carrier = np.array([ident(O.mjOBJ_ACTUATOR, a) for a in "xyz"])
    return m, d, carrier, probe, ident(O.mjOBJ_BODY, "near"), ident(O.mjOBJ_BODY, "flange")


def _put_tcp(m, d, flange: int, tcp: int, T_world_tcp: np.ndarray) -> None:
    """Move the hand's mount so that its TCP lands on T_world_tcp (carrier at zero)."""
    import mujoco

    m.body_pos[flange], m.body_quat[flange] = 0.0, (1.0, 0.0, 0.0, 0.0)
    mujoco.mj_forward(m, d)
    T_root_tcp = pose(d.site_xmat[tcp].reshape(3, 3), d.site_xpos[tcp])
    T_world_root = T_world_tcp @ invert(T_root_tcp)
    m.body_pos[flange] = T_world_root[:3, 3]
    m.body_quat[flange] = matrix_to_quat(T_world_root[:3, :3])
    mujoco.mj_forward(m, d)


def test_controller_lifts_one_box_of_two_in_a_cell_it_did_not_build():
    hand = parallel_jaw()
    m, d, carrier, probe, near, flange = _cell(hand)
    s = SimSettings()
    # TCP over the far box's centre, approaching down, pads a pad-half below its top face
    T_world_tcp = pose(frame_from_approach([0.0, 0.0, -1.0], 0.0), [0.15, 0.05, 0.08 - PAD_HALF_M])
    _put_tcp(m, d, flange, probe.tcp_site, T_world_tcp)
    drives = hand_drives(m, hand, HAND_PREFIX)
    hold_servos(m, d, drives.act_ids)
    near0, far0 = d.xpos[near].copy(), d.xpos[probe.object_body].copy()

    ctl = GraspController(m, d, drives, carrier, s)
    close_s = ctl.close()
    assert 0.05 < close_s < s.close_max_s  # both pads stalled against the box
    # the closing law stopped the servo between the stall fraction of τm and τm (2 x 60 N:
    # the coupled fingers split it, 60 N per pad)
    force = np.abs(d.actuator_force[drives.act_ids])
    np.testing.assert_array_equal(drives.act_tau_max, [120.0])
    assert np.all(force >= s.stall_torque_fraction * drives.act_tau_max - 0.5)
    assert np.all(force <= drives.act_tau_max + 1e-6)
    # v = v0 (1 - τ/τm): the target stopped short of where the servo would exceed τm, instead
    # of running on to the end of its range (kp x lag = servo force)
    ids = drives.act_ids
    lag = d.ctrl[ids] - d.actuator_length[ids]
    assert np.all(lag * m.actuator_gainprm[ids, 0] <= drives.act_tau_max)
    dropped = ctl.lift(LiftSchedule(ctl.t_s, s, shake_direction(None), False))
    assert not dropped

    contacts, on_table = probe.contacts(m, d, True)
    assert not on_table and set(contacts.links.tolist()) == {0, 1}
    assert d.xpos[probe.object_body][2] - far0[2] == pytest.approx(s.lift_height_m, abs=0.005)
    np.testing.assert_allclose(d.xpos[near], near0, atol=1e-4)  # the other box stays put
    # held still after the lift: the pads' contact forces carry the far box's weight
    assert contacts.forces.sum(axis=0)[2] == pytest.approx(m.body_mass[probe.object_body] * 9.81, rel=0.05)
