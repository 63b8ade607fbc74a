"""The vision figures on SimCamera scenes of 3-8 objects with the D400-like noise model:
segmentation IoU against the ground-truth instance ids, and silhouette agreement with the
true footprint ray-cast from the MuJoCo geometry. benchmarks/bench_vision.py prints them."""
import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the figures need SimCamera scenes: install the `sim` extra")

from .figures import evaluate, scene_and_camera, ycb_dir  # noqa: E402

SEEDS = range(8)  # 3 + seed % 6 objects: 3 to 8


@pytest.fixture(scope="module", params=["straight-down", "oblique"])
def results(request):
    view = request.param
    out = []
    for seed in SEEDS:
        scene, cam = scene_and_camera(seed, view)
        with cam:
            out.append(evaluate(scene, cam.read(), seed=seed, view=view))
    return out


@pytest.mark.slow
def test_scenes_hold_three_to_eight_objects_with_ycb_meshes_when_present(results):
    counts = [len(r.names) for r in results]
    assert min(counts) >= 2 and max(counts) <= 8  # minus any cut off by the image border
    names = {n for r in results for n in r.names}
    if ycb_dir() is not None:
        assert names & {"banana", "power_drill", "master_chef_can", "cracker_box", "mustard_bottle"}


@pytest.mark.slow
def test_every_object_is_found_and_mean_iou_is_at_least_0_85(results):
    seg = np.concatenate([r.seg_iou for r in results])
    assert sum(r.found for r in results) == seg.size
    assert seg.mean() >= 0.85, seg
    # Depth alone cannot tell a part of an object above another part (the drill's handle)
    # from a second object touching it: at most one such fragment per frame.
    assert max(r.extra for r in results) <= 1


@pytest.mark.slow
def test_silhouettes_agree_with_the_true_footprint(results):
    sil = np.concatenate([r.sil_iou for r in results])
    assert not np.isnan(sil).any()
    # Oblique views miss the far side of rounded objects below their top (a banana's), so
    # the bar is lower there; straight down the footprint is seen whole.
    bar = 0.9 if results[0].view == "straight-down" else 0.85
    assert sil.mean() >= bar, sil
    assert sil.min() >= (0.8 if results[0].view == "straight-down" else 0.55), sil
