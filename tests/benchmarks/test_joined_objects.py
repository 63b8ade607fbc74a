"""How joined_objects counts an object the segmentation joined with a neighbour or cut into
pieces, against the simulator's instance ids."""
import numpy as np

from benchmarks.joined_objects import Census, judge

NAMES = ["box", "mug", "bottle"]


def _ids() -> np.ndarray:
    """Three objects of 400 px each side by side (ids 1, 2, 3) on a 20 x 70 image."""
    ids = np.zeros((20, 70), np.int64)
    ids[:, 0:20], ids[:, 25:45], ids[:, 50:70] = 1, 2, 3
    return ids


def test_an_object_inside_a_mask_its_neighbour_owns_is_counted_joined():
    ids = _ids()
    joined = (ids == 1) | (ids == 2)
    joined[:, 25:30] = False  # the mug's near edge apart: its other 300 px still joined
    joined[:, 0:5] = True
    census = Census()
    box_more = np.zeros_like(joined)
    box_more[:, 0:20] = True  # the box owns the joined mask only if it has more pixels
    seen = judge(ids, [joined | box_more, ids == 3], NAMES, "t", census)
    assert seen == 3
    assert census.joined == 1 and census.split == 0
    assert "mug (300 of 400 px) joined to box" in census.lines[0]


def test_an_object_in_two_masks_of_its_own_is_counted_split_and_a_crumb_is_not():
    ids = _ids()
    head, body, crumb = (np.zeros(ids.shape, bool) for _ in range(3))
    head[:, 25:32] = True    # 140 px: a piece
    body[:, 32:45] = True    # 260 px
    crumb[:2, 50:60] = True  # 20 px of the bottle: under a tenth of it
    rest = ids == 3
    rest[:2, 50:60] = False
    census = Census()
    judge(ids, [ids == 1, head, body, crumb, rest], NAMES, "t", census)
    assert census.split == 1 and census.joined == 0
    assert census.lines == ["t: mug in 2 pieces"]


def test_an_object_seen_by_too_few_pixels_is_not_judged():
    ids = _ids()
    ids[5:, 50:70] = 0  # the bottle seen by 100 px only
    census = Census()
    assert judge(ids, [ids == 1, ids == 2], NAMES, "t", census) == 2
