"""recognise's guard around each ICP start (issue 22, item 5: a pose fit that does not
converge): an ICP that raises, gives a non-finite pose or carries the object far from its
start is refused with the reason, and recognise then reports the object unknown.

No public input reaches these cases with real data: recognise keeps only finite depth
readings within range, and its top-view gate turns away points that no model resembles before
any ICP runs. So this test imports the private module (vision._recognition) to feed the guard
what a degenerate input would give trimesh. The public paths (a handful of points, NaN depth,
a recogniser that raises, each through one loop cycle) are in
tests/onboard/test_database_bad_input.py."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("trimesh")

from vision import _recognition  # noqa: E402 - private: see the module docstring
from vision import register_points  # noqa: E402


def _model(seed: int = 0) -> np.ndarray:
    """(500, 3) points on a 10 x 6 x 4 cm box's surface, metres."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(-1.0, 1.0, (500, 3))
    axis = rng.integers(0, 3, 500)
    p[np.arange(500), axis] = np.sign(p[np.arange(500), axis])
    return p * np.array([0.05, 0.03, 0.02])


def test_a_converging_icp_passes_the_guard_unchanged():
    model = _model()
    seen = model[:200] + np.array([0.004, -0.003, 0.0])
    T, why = _recognition._registered(seen, model, np.eye(4))
    assert why == "" and T is not None
    np.testing.assert_array_equal(T, register_points(seen, model, np.eye(4)))
    assert np.linalg.norm(T[:3, 3] - [0.004, -0.003, 0.0]) < 0.002


@pytest.mark.parametrize("points, why", [
    (np.full((50, 3), np.nan), "ICP failed (ValueError: "),            # trimesh's KD-tree raises
    (np.full((50, 3), 1e300), "ICP failed (IndexError: "),             # no finite neighbour
])
def test_an_icp_that_raises_is_refused_with_the_reason(points, why):
    T, reason = _recognition._registered(points, _model(), np.eye(4))
    assert T is None and reason.startswith(why)


def test_an_icp_that_carries_the_object_away_from_its_start_diverged():
    model = _model()
    T0 = np.eye(4)
    T0[:3, 3] = (0.5, 0.0, 0.0)   # a start half a metre from where the points lie
    T, reason = _recognition._registered(model[:200], model, T0)
    assert T is None and reason.startswith("ICP diverged (moved the object 0.")
    assert _recognition.DIVERGED_M == 0.1
