"""The Detectron2 backend: runs only where detectron2 is installed (built from source, see
docs/vision.md); elsewhere test_registry checks that choosing it says what to install."""
import numpy as np
import pytest

detectron2 = pytest.importorskip(
    "detectron2", reason="detectron2 is not installed (it is built from source: see "
                         "docs/vision.md)")

from drivers.camera import Intrinsics, RGBDFrame  # noqa: E402
from vision import ObjectMask, WeightsNotFound, make_segmenter  # noqa: E402

ZOO = "COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_1x.yaml"


def test_missing_weights_file_is_named(tmp_path):
    with pytest.raises(WeightsNotFound, match=r"weights file .*nope.pth' does not exist"):
        make_segmenter("detectron2", config_file=ZOO, weights_path=tmp_path / "nope.pth")


def test_missing_config_is_named(tmp_path):
    weights = tmp_path / "w.pth"
    weights.write_bytes(b"")
    with pytest.raises(WeightsNotFound, match=r"config 'no/such.yaml' is neither a file nor"):
        make_segmenter("detectron2", config_file="no/such.yaml", weights_path=weights)


def test_segments_a_frame_with_weights_made_here(tmp_path):
    """Weights of an untrained model built from the zoo config, saved and loaded by path."""
    import torch
    from detectron2.config import get_cfg
    from detectron2.model_zoo import get_config_file
    from detectron2.modeling import build_model

    cfg = get_cfg()
    cfg.merge_from_file(get_config_file(ZOO))
    cfg.MODEL.DEVICE = "cpu"
    cfg.MODEL.ROI_HEADS.NUM_CLASSES = 2
    path = tmp_path / "model.pth"
    torch.save({"model": build_model(cfg).state_dict()}, path)
    seg = make_segmenter("detectron2", config_file=ZOO, weights_path=path, num_classes=2,
                         class_names=["box", "can"], score_threshold=0.0)
    color = np.random.default_rng(0).integers(0, 256, (96, 128, 3), dtype=np.uint8)
    frame = RGBDFrame(color=color, depth_m=np.full((96, 128), 0.7, np.float32),
                      intrinsics=Intrinsics(128, 96, 100.0, 100.0, 63.5, 47.5))
    found = seg.segment(frame)
    # An untrained network finds nothing meaningful but, at threshold 0, finds something (its
    # class scores sit near 1/3, its mask logits near 0): what it returns must be well formed.
    assert 1 <= len(found) <= 100   # TEST.DETECTIONS_PER_IMAGE
    for o in found:
        assert isinstance(o, ObjectMask) and o.backend == "detectron2"
        assert o.mask.shape == (96, 128) and o.mask.dtype == np.bool_ and o.mask.any()
        assert o.label in {"box", "can"} and 0.0 <= o.confidence <= 1.0
    assert [o.confidence for o in found] == sorted((o.confidence for o in found), reverse=True)
