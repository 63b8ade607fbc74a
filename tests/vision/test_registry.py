"""Backends by name: chosen in configuration, imported on demand, clear errors."""
import importlib.util
import subprocess
import sys

import pytest

import vision
from vision import BACKENDS, BackendUnavailable, TabletopSegmenter, make_segmenter, segmenter_class


def test_import_vision_loads_no_torch_or_detectron2():
    code = ("import sys, vision; vision.make_segmenter('tabletop'); "
            "print(sorted(m for m in ('torch', 'torchvision', 'detectron2', 'mujoco') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_backends_are_registered_by_name():
    assert set(BACKENDS) == {"tabletop", "maskrcnn", "detectron2"}
    seg = make_segmenter("tabletop", min_height_m=0.02, seed=3)
    assert isinstance(seg, TabletopSegmenter) and seg.name == "tabletop"
    assert (seg.min_height_m, seg.seed) == (0.02, 3)
    assert segmenter_class("tabletop") is TabletopSegmenter


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown segmentation backend 'yolo'; choose one of "
                                         r"detectron2, maskrcnn, tabletop"):
        make_segmenter("yolo")


def test_unknown_option_is_named_with_the_backend_options():
    with pytest.raises(ValueError, match=r"segmentation backend 'tabletop' has no option "
                                         r"'min_heigth_m'; its options: .*min_height_m"):
        make_segmenter("tabletop", min_heigth_m=0.02)


@pytest.mark.skipif(importlib.util.find_spec("detectron2") is not None,
                    reason="detectron2 is installed here")
def test_missing_detectron2_says_what_to_install():
    with pytest.raises(BackendUnavailable, match=r"segmentation backend 'detectron2' cannot be "
                                                 r"imported .*detectron2.*; install .*docs/vision.md"):
        make_segmenter("detectron2", config_file="x.yaml", weights_path="w.pth")
    with pytest.raises(ImportError):
        vision.Detectron2Segmenter  # noqa: B018 - the lazy attribute imports the backend


def test_missing_torch_says_which_extra_to_install():
    """Run where torch cannot be imported (a None entry in sys.modules blocks it)."""
    code = ("import sys; sys.modules['torch'] = None; import vision\n"
            "try:\n    vision.make_segmenter('maskrcnn', weights_path='w.pt')\n"
            "except vision.BackendUnavailable as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "segmentation backend 'maskrcnn' cannot be imported" in out.stdout
    assert "pip install 'graspline[learned]'" in out.stdout


def test_unknown_attribute_of_vision_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"module 'vision' has no attribute 'Nope'"):
        vision.Nope  # noqa: B018
    assert "MaskRCNNSegmenter" in dir(vision)
