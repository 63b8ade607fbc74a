"""`graspline score`: files written, their contents, and one-line errors."""
import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from onboard.cli import main
from scoring import GripperProjection, score_candidates
from scoring.shapes import rectangle, wedge


@pytest.fixture
def silhouette_png(tmp_path):
    sil = rectangle((200, 260), (80.0, 100.0), 50, 70) | wedge((200, 260), (190.0, 100.0), 30, 60, 90)
    path = tmp_path / "scene.png"
    cv2.imwrite(str(path), sil * 255)
    return path


def test_score_writes_overlay_and_json_with_top_grasps(silhouette_png, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["score", str(silhouette_png), "--finger-width-px", "15", "--open-width-px", "100",
               "--top", "3", "--out", str(out)])
    assert rc == 0
    report = json.loads((out / "scene_grasps.json").read_text())
    sil = cv2.imread(str(silhouette_png), cv2.IMREAD_GRAYSCALE) > 0
    assert report["projection"] == {"finger_width_px": 15.0, "open_width_px": 100.0, "n_lines": 15}
    assert len(report["objects"]) == 2
    for obj in report["objects"]:
        grasps = obj["grasps"]
        assert 1 <= len(grasps) <= 3
        assert [g["rank"] for g in grasps] == list(range(1, len(grasps) + 1))
        scores = [g["score"] for g in grasps]
        assert scores == sorted(scores, reverse=True)
        best = grasps[0]
        assert best["score"] > 0.7 and not best["collision"] and not best["missing"]
        assert set(best["features"]) == {"d_t", "r_r_rad", "s_a_rad", "s_f_px"}
        assert 0 < best["width_px"] < 100
        assert set(best["primary_contacts_px"]) == {"left", "right"}
        # the reported scores are the measure of the reported grasps on the whole image
        again = score_candidates(sil, [g["x_px"] for g in grasps], [g["y_px"] for g in grasps],
                                 [g["theta_rad"] for g in grasps], GripperProjection(15, 100, 15))
        np.testing.assert_allclose(again.score, scores, atol=1e-5)
    # the rectangle (the smaller object) is found where it was drawn
    rect = report["objects"][1]
    assert rect["centroid_px"] == pytest.approx([80.0, 100.0], abs=0.5)
    assert rect["area_px"] == pytest.approx(50 * 70, rel=0.05)
    overlay = cv2.imread(str(out / "scene_grasps.png"))
    assert overlay.shape[0] > 400 and overlay.shape[1] == 520  # scaled x2, colour bar below
    greenish = (overlay[..., 1] > 150) & (overlay[..., 2] < 120) & (overlay[..., 0] < 120)
    assert greenish.sum() > 200  # high-scoring grasps drawn in green over the grey silhouette
    assert "object 1" in capsys.readouterr().out


def test_score_without_image_uses_the_built_in_sample(tmp_path):
    rc = main(["score", "--out", str(tmp_path), "--top", "2"])
    assert rc == 0
    assert (tmp_path / "sample_silhouette.png").is_file()
    report = json.loads((tmp_path / "sample_silhouette_grasps.json").read_text())
    assert len(report["objects"]) >= 5


def test_unreadable_image_exits_non_zero_with_one_line(tmp_path, capsys):
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not a png")
    assert main(["score", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cannot read image" in err and "broken.png" in err


def test_missing_image_exits_non_zero(tmp_path, capsys):
    assert main(["score", str(tmp_path / "nope.png")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_empty_image_exits_non_zero_with_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), np.zeros((50, 50), np.uint8))
    assert main(["score", str(empty), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no object pixels" in err


def test_bad_gripper_width_exits_non_zero(silhouette_png, capsys):
    assert main(["score", str(silhouette_png), "--open-width-px", "0"]) == 2
    assert "open_width_px" in capsys.readouterr().err


def test_console_entry_runs_as_module(silhouette_png, tmp_path):
    r = subprocess.run([sys.executable, "-m", "onboard", "score", str(silhouette_png), "--top", "1",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "scene_grasps.json").is_file()
