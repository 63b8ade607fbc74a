"""Measure A, the Ferrari-Canny ε, against analytic values and its invariances."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from offline_sim.quality import contact_wrenches, ferrari_canny  # noqa: E402


@pytest.mark.parametrize("mu", [0.2, 0.5, 1.0])
def test_symmetric_two_contact_planar_grasp_has_its_analytic_epsilon(mu):
    # Contacts at (±R, 0) pushing inwards; unit cone edges (n ± μt)/√(1+μ²), torque / R.
    # The hull is a tetrahedron whose faces all lie μ / (√(μ²+2) √(1+μ²)) from the origin.
    R = 0.04
    eps = ferrari_canny([[R, 0], [-R, 0]], [[-1, 0], [1, 0]], mu=mu, torque_scale_m=R)
    assert eps == pytest.approx(mu / (math.sqrt(mu * mu + 2) * math.sqrt(1 + mu * mu)), rel=1e-9)


def test_two_point_contacts_in_space_are_not_force_closure():
    # nothing resists a twist about the line through two point contacts
    assert ferrari_canny([[0.03, 0, 0], [-0.03, 0, 0]], [[-1, 0, 0], [1, 0, 0]], mu=0.8) == 0.0


def test_frictionless_contacts_are_not_force_closure():
    p = [[0.03, 0, 0], [-0.03, 0, 0], [0, 0.03, 0], [0, -0.03, 0]]
    n = [[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]]
    assert ferrari_canny(p, n, mu=0.0) == 0.0


def test_contacts_all_pushing_one_way_are_not_force_closure():
    p = [[0.03, 0, 0.01], [0.03, 0.01, -0.01], [0.03, -0.01, 0.0]]
    assert ferrari_canny(p, [[-1, 0, 0]] * 3, mu=0.5) == 0.0


def box_pad_contacts(offset=0.0):
    """Two square pads of four contacts each, squeezing a box along x, shifted along z."""
    corners = np.array([[0, y, z] for y in (-0.01, 0.01) for z in (-0.01, 0.01)], float)
    left = corners + [-0.03, 0, offset]
    right = corners + [0.03, 0, offset]
    return np.vstack([left, right]), np.vstack([[[1, 0, 0]] * 4, [[-1, 0, 0]] * 4])


def test_pad_grasp_is_force_closure_and_centred_beats_offset():
    p, n = box_pad_contacts()
    centred = ferrari_canny(p, n, mu=0.5, torque_scale_m=0.05)
    p2, n2 = box_pad_contacts(offset=0.03)
    offset = ferrari_canny(p2, n2, mu=0.5, torque_scale_m=0.05)
    assert centred > 0 and 0 <= offset < centred


def test_more_friction_raises_epsilon():
    p, n = box_pad_contacts()
    values = [ferrari_canny(p, n, mu=m, torque_scale_m=0.05) for m in (0.2, 0.4, 0.8)]
    # strictly: wider cones widen the hull (equal values would mean mu is ignored)
    assert 0 < values[0] < values[1] < values[2]


angles = st.floats(-math.pi, math.pi)


@settings(max_examples=40, deadline=None)
@given(angles, angles, angles, st.tuples(*[st.floats(-0.1, 0.1)] * 3))
def test_epsilon_is_invariant_to_rotating_the_grasp(a, b, c, shift):
    from scipy.spatial.transform import Rotation

    p, n = box_pad_contacts()
    R = Rotation.from_euler("xyz", [a, b, c]).as_matrix()
    base = ferrari_canny(p, n, mu=0.5, torque_scale_m=0.05)
    turned = ferrari_canny(p @ R.T + shift, n @ R.T, mu=0.5, torque_scale_m=0.05,
                           centre=np.asarray(shift))
    # the 8-edge pyramid turns with its tangent basis, not with the grasp: ε may move by the
    # linearisation's share, 1 - cos(π/8) ≈ 8 %, but no more
    assert turned == pytest.approx(base, rel=0.08)


def test_wrenches_are_unit_forces_on_the_cone():
    w = contact_wrenches([[0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]], mu=0.5, n_edges=6)
    assert w.shape == (6, 6)
    np.testing.assert_allclose(np.linalg.norm(w[:, :3], axis=1), 1.0)
    cone_angle = np.arccos(w[:, 2])
    np.testing.assert_allclose(cone_angle, math.atan(0.5))


@pytest.mark.parametrize("kwargs,message", [
    (dict(positions=[[0, 0, 0]], normals=[[1, 0]]), r"positions and normals must both be \(N, 3\)"),
    (dict(positions=[[0, 0, 0]], normals=[[1, 0, 0]], mu=-1), r"mu must be finite and >= 0, got -1"),
    (dict(positions=[[0, 0, 0]], normals=[[1, 0, 0]], torque_scale_m=0), r"torque_scale_m must be finite and > 0, got 0"),
])
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ferrari_canny(**kwargs)
