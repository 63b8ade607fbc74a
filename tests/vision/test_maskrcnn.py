"""The torchvision Mask R-CNN backend on weights a test makes: a small untrained network saved
to a file, loaded by path; the loader's errors name the file."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the maskrcnn backend needs the `learned` extra")
pytest.importorskip("torchvision", reason="the maskrcnn backend needs the `learned` extra")

from drivers.camera import Intrinsics, RGBDFrame  # noqa: E402
from vision import (BackendUnavailable, MaskRCNNSegmenter, ObjectMask, WeightsError,  # noqa: E402
                    WeightsNotFound, build_maskrcnn, make_segmenter)

SMALL = dict(min_size=96, max_size=128, max_detections=8)  # keeps the CPU run short
NAMES = ["background", "box", "can"]


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """A resnet18-FPN Mask R-CNN, 3 classes, random weights, saved with its metadata."""
    torch.manual_seed(0)
    model = build_maskrcnn("resnet18_fpn", 3, min_size=96, max_size=128)
    path = tmp_path_factory.mktemp("weights") / "maskrcnn_r18.pt"
    torch.save({"state_dict": model.state_dict(), "architecture": "resnet18_fpn",
                "num_classes": 3, "class_names": NAMES}, path)
    return path


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    color = rng.integers(0, 256, (96, 128, 3), dtype=np.uint8)
    color[30:70, 40:90] = (200, 40, 40)
    return RGBDFrame(color=color, depth_m=np.full((96, 128), 0.7, np.float32),
                     intrinsics=Intrinsics(128, 96, 100.0, 100.0, 63.5, 47.5))


@pytest.fixture(scope="module")
def segmenter(weights):
    return make_segmenter("maskrcnn", weights_path=weights, score_threshold=0.0, **SMALL)


def test_weights_file_loads_by_name_and_segments_a_frame(segmenter, frame, weights):
    seg = segmenter
    assert isinstance(seg, MaskRCNNSegmenter)
    assert (seg.architecture, seg.num_classes, seg.class_names) == ("resnet18_fpn", 3, NAMES)
    # the network holds the file's weights, every tensor of them
    saved = torch.load(weights, weights_only=True)["state_dict"]
    held = seg.model.state_dict()
    assert held.keys() == saved.keys()
    assert all(torch.equal(held[k].cpu(), saved[k]) for k in saved)
    found = seg.segment(frame)
    # An untrained network finds nothing meaningful (but, at threshold 0, finds something);
    # what it returns must be well formed.
    assert 1 <= len(found) <= 8
    for o in found:
        assert isinstance(o, ObjectMask) and o.backend == "maskrcnn"
        assert o.mask.shape == (96, 128) and o.mask.dtype == np.bool_ and o.mask.any()
        assert o.label in NAMES[1:] and 0.0 <= o.confidence <= 1.0
    assert [o.confidence for o in found] == sorted((o.confidence for o in found), reverse=True)


def test_score_threshold_drops_weak_detections(segmenter, frame):
    everything = segmenter.segment(frame)
    assert everything, "torchvision keeps detections scoring >= 0.05; an untrained net has some"
    cut = float(np.median([o.confidence for o in everything]))
    segmenter.score_threshold = cut
    try:
        kept = segmenter.segment(frame)
    finally:
        segmenter.score_threshold = 0.0
    assert kept and all(o.confidence >= cut for o in kept) and len(kept) <= len(everything)


def test_a_plain_state_dict_takes_num_classes_from_its_box_predictor(tmp_path, frame):
    torch.manual_seed(1)
    path = tmp_path / "plain.pth"
    torch.save(build_maskrcnn("resnet18_fpn", 5).state_dict(), path)
    seg = MaskRCNNSegmenter(path, architecture="resnet18_fpn", score_threshold=0.0, **SMALL)
    assert seg.num_classes == 5 and seg.class_names is None
    found = seg.segment(frame)
    assert found and all(o.label in {"1", "2", "3", "4"} for o in found)


def test_missing_file_is_named(tmp_path):
    missing = tmp_path / "nope.pt"
    with pytest.raises(WeightsNotFound, match=rf"weights file '{missing}' does not exist"):
        MaskRCNNSegmenter(missing)
    with pytest.raises(FileNotFoundError):  # the built-in meaning too
        make_segmenter("maskrcnn", weights_path=missing)


def test_wrong_num_classes_is_named(weights):
    with pytest.raises(WeightsError, match=rf"'{weights}' does not fit Mask R-CNN 'resnet18_fpn' "
                                           r"with num_classes=4"):
        MaskRCNNSegmenter(weights, num_classes=4, **SMALL)


def test_wrong_architecture_is_named(weights):
    with pytest.raises(WeightsError, match=rf"'{weights}' does not fit Mask R-CNN 'resnet34_fpn'"):
        MaskRCNNSegmenter(weights, architecture="resnet34_fpn", **SMALL)


def test_a_file_that_is_not_weights_is_named(tmp_path):
    junk = tmp_path / "notes.pt"
    junk.write_text("not a checkpoint")
    with pytest.raises(WeightsError, match=rf"'{junk}' is not a PyTorch weights file"):
        MaskRCNNSegmenter(junk)
    other = tmp_path / "other.pt"
    torch.save({"layer.weight": torch.zeros(2)}, other)
    with pytest.raises(WeightsError, match=rf"'{other}': no 'roi_heads.box_predictor"):
        MaskRCNNSegmenter(other)


def test_class_names_must_match_the_classes(weights):
    with pytest.raises(ValueError, match=r"class_names has 2 names for 3 classes"):
        MaskRCNNSegmenter(weights, class_names=["background", "box"], **SMALL)


def test_unknown_architecture_is_named():
    with pytest.raises(ValueError, match=r"architecture must be one of .* got 'vgg'"):
        build_maskrcnn("vgg", 3)


def test_backend_unavailable_is_an_import_error():
    assert issubclass(BackendUnavailable, ImportError)
