"""Intrinsics: pixels and camera-frame points map to each other, and a depth image deprojects
to the same points as its pixels do one by one."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.camera import Intrinsics

INTR = Intrinsics(width=64, height=48, fx=60.0, fy=58.0, cx=31.5, cy=23.0)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 63.0), st.floats(0.0, 47.0), st.floats(0.1, 5.0))
def test_deprojected_pixels_project_back_to_themselves(u, v, z):
    p = INTR.deproject_pixels(u, v, z)
    assert p.shape == (3,) and p[2] == z
    np.testing.assert_allclose(INTR.project(p)[0], [u, v], atol=1e-9)


def test_deproject_pixels_matches_the_depth_image_deprojection():
    depth = np.full((48, 64), 0.75, np.float32)
    depth[5, 7] = 0.0
    image = INTR.deproject(depth)
    v, u = np.nonzero(depth > 0)
    pixels = INTR.deproject_pixels(u, v, depth[v, u])
    np.testing.assert_allclose(pixels, image[v, u], rtol=1e-6)
    assert np.isnan(image[5, 7]).all()
