"""Detectron2 instance segmentation, used when detectron2 is installed (built from source,
see docs/vision.md). Weights come from a local file; nothing is downloaded."""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from detectron2 import model_zoo
from detectron2.config import get_cfg
from detectron2.engine import DefaultPredictor

from drivers.camera import RGBDFrame

from ._base import Segmenter
from ._errors import WeightsError, WeightsNotFound
from ._types import ObjectMask

log = logging.getLogger(__name__)


def _config_path(config_file: str | Path) -> str:
    """A config file by path, or by model-zoo name ("COCO-InstanceSegmentation/...yaml")."""
    p = Path(config_file)
    if p.is_file():
        return str(p)
    try:
        return model_zoo.get_config_file(str(config_file))
    except RuntimeError as exc:
        raise WeightsNotFound(f"detectron2 config {str(config_file)!r} is neither a file nor "
                              f"a model-zoo config name") from exc


class Detectron2Segmenter(Segmenter):
    """Instances from a Detectron2 model (DefaultPredictor) with weights the user trained.

    config_file : the model's yacs config, a path or a model-zoo name (e.g.
        "COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml"). weights_path : the trained
        weights, a local .pth/.pkl file. num_classes : ROI_HEADS.NUM_CLASSES when the config
        does not already say (detectron2 counts no background class). class_names[k] names
        class k. score_threshold : ROI_HEADS.SCORE_THRESH_TEST. device : "cpu" or "cuda".

    ObjectMask.label is the class name (or index as text), confidence the detection score.
    """

    name = "detectron2"

    def __init__(self, config_file: str | Path, weights_path: str | Path, *,
                 num_classes: int | None = None, class_names: Sequence[str] | None = None,
                 score_threshold: float = 0.5, device: str = "cpu"):
        if not (isinstance(score_threshold, (int, float)) and math.isfinite(score_threshold)
                and 0.0 <= score_threshold <= 1.0):
            raise ValueError(f"Detectron2Segmenter: score_threshold must be in [0, 1], got "
                             f"{score_threshold!r}")
        weights = Path(weights_path)
        if not weights.is_file():
            raise WeightsNotFound(f"detectron2 weights file {str(weights)!r} does not exist")
        cfg = get_cfg()
        cfg.merge_from_file(_config_path(config_file))
        cfg.MODEL.WEIGHTS = str(weights)
        cfg.MODEL.DEVICE = device
        cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = float(score_threshold)
        if num_classes is not None:
            cfg.MODEL.ROI_HEADS.NUM_CLASSES = int(num_classes)
        if class_names is not None and len(class_names) != cfg.MODEL.ROI_HEADS.NUM_CLASSES:
            raise ValueError(f"Detectron2Segmenter: class_names has {len(class_names)} names "
                             f"for {cfg.MODEL.ROI_HEADS.NUM_CLASSES} classes")
        try:
            self.predictor = DefaultPredictor(cfg)
        except Exception as exc:  # noqa: BLE001 - detectron2 raises many types for a bad file
            raise WeightsError(f"detectron2 could not build the model of {str(config_file)!r} "
                               f"with weights {str(weights)!r}: {exc}") from exc
        self.weights_path = weights
        self.class_names = list(class_names) if class_names is not None else None
        self.score_threshold = float(score_threshold)
        log.info("detectron2 model %s with weights %s", config_file, weights)

    def _segment(self, frame: RGBDFrame) -> list[ObjectMask]:
        # DefaultPredictor takes BGR and converts to cfg.INPUT.FORMAT itself.
        out = self.predictor(np.ascontiguousarray(frame.color[:, :, ::-1]))["instances"].to("cpu")
        masks = out.pred_masks.numpy().astype(bool)
        scores = out.scores.numpy()
        classes = out.pred_classes.numpy()
        result = []
        for m, s, k in zip(masks, scores, classes):
            if s < self.score_threshold or not m.any():
                continue
            label = self.class_names[int(k)] if self.class_names is not None else str(int(k))
            result.append(ObjectMask(mask=m, label=label, confidence=float(s), backend=self.name))
        return sorted(result, key=lambda o: -o.confidence)
