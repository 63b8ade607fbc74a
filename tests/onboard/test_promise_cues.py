"""The promise order's cues, computed the cheap way, are numpy's values."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from onboard.loop._promise import _median  # private: its one-partition shortcut


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, st.integers(1, 400),
              elements=st.floats(0.25, 3.0, width=32, allow_nan=False)))
def test_the_readings_median_is_numpys_median_to_the_bit(depths):
    assert _median(depths) == float(np.median(depths))
