"""Mask R-CNN (torchvision) with weights the user trained, loaded from a file; never
downloads. torch and torchvision are imported here only, when this backend is chosen."""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torchvision
from torchvision.models.detection import MaskRCNN, maskrcnn_resnet50_fpn, maskrcnn_resnet50_fpn_v2
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

from drivers.camera import RGBDFrame

from ._base import Segmenter
from ._errors import WeightsError, WeightsNotFound
from ._types import ObjectMask

log = logging.getLogger(__name__)

ARCHITECTURES = ("resnet50_fpn", "resnet50_fpn_v2", "resnet34_fpn", "resnet18_fpn")
# The key whose first dimension is the number of classes (background included).
_CLASS_KEY = "roi_heads.box_predictor.cls_score.weight"


def build_maskrcnn(architecture: str, num_classes: int, *, min_size: int = 800,
                   max_size: int = 1333, max_detections: int = 100) -> MaskRCNN:
    """An untrained torchvision Mask R-CNN (no weights fetched) of a named architecture:
    "resnet50_fpn" and "resnet50_fpn_v2" are torchvision's maskrcnn_resnet50_fpn(_v2);
    "resnet18_fpn" and "resnet34_fpn" are MaskRCNN on resnet_fpn_backbone. num_classes counts
    the background class 0; max_detections caps the instances per image. Train it, then save
    ``{"state_dict": model.state_dict(), "architecture": ..., "num_classes": ...,
    "class_names": [...]}`` with torch.save."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {', '.join(ARCHITECTURES)}, "
                         f"got {architecture!r}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2 (background included), "
                         f"got {num_classes!r}")
    # weights=None and weights_backbone=None: nothing is fetched from a hub, ever.
    kwargs = dict(num_classes=num_classes, min_size=min_size, max_size=max_size,
                  box_detections_per_img=max_detections)
    if architecture == "resnet50_fpn":
        return maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, **kwargs)
    if architecture == "resnet50_fpn_v2":
        return maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None, **kwargs)
    backbone = resnet_fpn_backbone(backbone_name=architecture.split("_")[0], weights=None,
                                   trainable_layers=5)
    return MaskRCNN(backbone, **kwargs)


def _read_checkpoint(path: Path) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """(state dict, metadata) of a weights file: a plain state dict, or a dict holding one
    under "state_dict" or "model" beside optional "architecture", "num_classes", "class_names"."""
    if not path.is_file():
        raise WeightsNotFound(f"Mask R-CNN weights file {str(path)!r} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
        raise WeightsError(f"{str(path)!r} is not a PyTorch weights file torch.load can read "
                           f"safely: {exc}") from exc
    if not isinstance(data, Mapping):
        raise WeightsError(f"{str(path)!r} holds a {type(data).__name__}, not a state dict")
    for key in ("state_dict", "model"):
        if isinstance(data.get(key), Mapping):
            meta = {k: v for k, v in data.items() if k != key}
            return data[key], meta
    return data, {}


class MaskRCNNSegmenter(Segmenter):
    """Instances from a torchvision Mask R-CNN whose weights the user trained (a file).

    weights_path : torch.save file, a state dict or {"state_dict", "architecture",
        "num_classes", "class_names"} (see ``build_maskrcnn``). architecture, num_classes,
        class_names : override or supply what the file does not say; num_classes otherwise
        comes from the state dict's box predictor. class_names[k] names class k (0 is the
        background). score_threshold : detections scoring below it are dropped.
        mask_threshold : mask probability above which a pixel belongs to the instance.
        min_size, max_size : the network's input resize (pixels). max_detections : most
        instances kept per frame. device : torch device.

    ObjectMask.label is the class name (or the class index as text), confidence the detection
    score. A file that does not fit the architecture is a WeightsError naming the file.
    """

    name = "maskrcnn"

    def __init__(self, weights_path: str | Path, *, architecture: str | None = None,
                 num_classes: int | None = None, class_names: Sequence[str] | None = None,
                 score_threshold: float = 0.5, mask_threshold: float = 0.5,
                 min_size: int = 800, max_size: int = 1333, max_detections: int = 100,
                 device: str = "cpu"):
        for key, v in (("score_threshold", score_threshold), ("mask_threshold", mask_threshold)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"MaskRCNNSegmenter: {key} must be in [0, 1], got {v!r}")
        path = Path(weights_path)
        state, meta = _read_checkpoint(path)
        arch = architecture or meta.get("architecture") or "resnet50_fpn"
        if num_classes is None:
            num_classes = meta.get("num_classes")
        if num_classes is None:
            w = state.get(_CLASS_KEY)
            if w is None:
                raise WeightsError(f"{str(path)!r}: no {_CLASS_KEY!r} in the state dict, so it is "
                                   f"not a Mask R-CNN; is it the right file?")
            num_classes = int(w.shape[0])
        model = build_maskrcnn(arch, int(num_classes), min_size=min_size, max_size=max_size,
                               max_detections=max_detections)
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()
            raise WeightsError(
                f"{str(path)!r} does not fit Mask R-CNN {arch!r} with num_classes={num_classes}: "
                f"{' '.join(first[:3])[:600]}") from exc
        names = class_names if class_names is not None else meta.get("class_names")
        if names is not None and len(names) != num_classes:
            raise ValueError(f"MaskRCNNSegmenter: class_names has {len(names)} names for "
                             f"{num_classes} classes (background included) in {str(path)!r}")
        self.weights_path = path
        self.architecture = arch
        self.num_classes = int(num_classes)
        self.class_names = list(names) if names is not None else None
        self.score_threshold = float(score_threshold)
        self.mask_threshold = float(mask_threshold)
        self.device = torch.device(device)
        self.model = model.eval().to(self.device)
        log.info("Mask R-CNN %s, %d classes, from %s (torchvision %s)", arch, num_classes, path,
                 torchvision.__version__)

    def _label(self, k: int) -> str:
        """Name of class k."""
        return self.class_names[k] if self.class_names is not None else str(k)

    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        img = torch.from_numpy(np.ascontiguousarray(frame.color)).permute(2, 0, 1)
        img = img.to(self.device, torch.float32) / 255.0
        with torch.inference_mode():
            out = self.model([img])[0]
        keep = out["scores"] >= self.score_threshold
        masks = (out["masks"][keep, 0] > self.mask_threshold).cpu().numpy()
        scores = out["scores"][keep].cpu().numpy()
        labels = out["labels"][keep].cpu().numpy()
        result = [ObjectMask(mask=m, label=self._label(int(k)), confidence=float(s),
                             backend=self.name)
                  for m, s, k in zip(masks, scores, labels) if m.any()]
        return sorted(result, key=lambda o: -o.confidence)
