"""Vision figures and speed on SimCamera scenes: segmentation IoU, objects found, silhouette
agreement with the true footprint, segmentation + silhouette time per 640 x 480 frame, and
SimCamera frames per second.

Scenes: seeds 0..N-1 of offline_sim.build_tabletop_scene with 3 + seed % 6 objects (3-8;
boxes, cylinders and the YCB meshes of ../shared/data/ycb when present), D400-like noise,
seen straight down from 0.70 m and obliquely from (0.45, 0.15, 0.55) m. Baselines measured
in the same run: the same segmenter on a least-squares plane of all readings (no RANSAC),
silhouettes of the ground-truth mask on the noise-free frame, the 20 ms frame budget and a
D435's 30 frames/s. Needs the `sim` extra. Run: python benchmarks/bench_vision.py [--scenes N]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.vision.figures

from tests.vision.figures import (VIEWS, evaluate, iou, scene_and_camera,  # noqa: E402
                                  true_footprint, ycb_dir)
from vision import SupportPlane, TabletopSegmenter, silhouette  # noqa: E402

BUDGET_MS = 20.0   # segmentation + silhouettes per 640 x 480 frame (issue, step 2)
CAMERA_FPS = 30.0  # a D435 streams 640 x 480 depth at 30 frames/s


class LeastSquaresTabletop(TabletopSegmenter):
    """Baseline: the tabletop segmenter on a least-squares plane through every reading."""

    def fit_plane(self, frame):
        z = frame.depth_m
        ok = z > 0
        v, u = np.nonzero(ok)
        intr = frame.intrinsics
        p = np.stack([(u - intr.cx) / intr.fx * z[ok], (v - intr.cy) / intr.fy * z[ok], z[ok]], 1)
        c = p.mean(axis=0)
        n = np.linalg.eigh((p - c).T @ (p - c))[1][:, 0]
        off = -float(n @ c)
        n, off = (-n, -off) if off < 0 else (n, off)
        return SupportPlane(normal=n, offset_m=off, n_inliers=len(p),
                            rms_m=float(np.sqrt(np.mean((p @ n + off) ** 2))))


def timed_vision(frame, seg, repeats: int) -> tuple[float, float, int]:
    """(best seconds of segmentation + every mask's silhouette, best seconds of segmentation
    alone, number of masks) over repeats runs."""
    best_all = best_seg = np.inf
    n = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        masks = seg.segment(frame)
        t1 = time.perf_counter()
        for m in masks:
            silhouette(frame, m, support=seg.last_plane)
        t2 = time.perf_counter()
        best_all, best_seg, n = min(best_all, t2 - t0), min(best_seg, t1 - t0), len(masks)
    return best_all, best_seg, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=8, help="seeded scenes per view")
    ap.add_argument("--repeats", type=int, default=10, help="timing runs per frame (best kept)")
    args = ap.parse_args()

    seg, base = TabletopSegmenter(), LeastSquaresTabletop()
    rows = []
    frame_ms, seg_ms, per_obj_ms, read_s, n_frames = [], [], [], 0.0, 0
    for view in VIEWS:
        res, res_base, clean_sil = [], [], []
        for seed in range(args.scenes):
            scene, cam = scene_and_camera(seed, view)
            with cam:
                cam.read()  # the first read pays for imports
                t0 = time.perf_counter()
                frame = cam.read()
                read_s += time.perf_counter() - t0
                n_frames += 1
            res.append(evaluate(scene, frame, seg, seed=seed, view=view))
            res_base.append(evaluate(scene, frame, base, seed=seed, view=view))
            t_all, t_seg, n = timed_vision(frame, seg, args.repeats)
            frame_ms.append(1e3 * t_all)
            seg_ms.append(1e3 * t_seg)
            per_obj_ms.append(1e3 * (t_all - t_seg) / max(n, 1))
            _, clean = scene_and_camera(seed, view, noise=False)
            with clean:
                exact = clean.read()
            for k, name in enumerate(scene.object_names, start=1):
                if name in res[-1].names:
                    s = silhouette(exact, exact.instance_ids == k)
                    clean_sil.append(iou(s.target, true_footprint(scene, k, s)))
        seg_iou = np.concatenate([r.seg_iou for r in res])
        base_iou = np.concatenate([r.seg_iou for r in res_base])
        sil = np.concatenate([r.sil_iou for r in res])
        found, base_found = sum(r.found for r in res), sum(r.found for r in res_base)
        rows += [
            (f"{view}: segmentation IoU, mean", f"{seg_iou.mean():.3f}", "-",
             f"least-squares plane {base_iou.mean():.3f}"),
            (f"{view}: segmentation IoU, min", f"{seg_iou.min():.3f}", "-",
             f"least-squares plane {base_iou.min():.3f}"),
            (f"{view}: objects found / total", f"{found}/{seg_iou.size}", "-",
             f"least-squares plane {base_found}/{base_iou.size}"),
            (f"{view}: extra masks (fragments)", f"{sum(r.extra for r in res)}", "-",
             f"least-squares plane {sum(r.extra for r in res_base)}"),
            (f"{view}: silhouette IoU vs true footprint, mean", f"{np.nanmean(sil):.3f}", "-",
             f"GT mask, no noise {np.mean(clean_sil):.3f}"),
            (f"{view}: silhouette IoU vs true footprint, min", f"{np.nanmin(sil):.3f}", "-",
             f"GT mask, no noise {np.min(clean_sil):.3f}"),
        ]
    rows += [
        ("segmentation + all silhouettes per frame, median", f"{np.median(frame_ms):.1f}", "ms",
         f"budget {BUDGET_MS:.0f} ms"),
        ("segmentation + all silhouettes per frame, worst", f"{np.max(frame_ms):.1f}", "ms",
         f"budget {BUDGET_MS:.0f} ms"),
        ("segmentation alone per frame, median", f"{np.median(seg_ms):.1f}", "ms", "-"),
        ("one silhouette (1 mm/px), median", f"{np.median(per_obj_ms):.2f}", "ms", "-"),
        ("SimCamera 640x480 frames/s, noise on", f"{n_frames / read_s:.1f}", "1/s",
         f"D435 stream {CAMERA_FPS:.0f}/s"),
    ]
    print(f"bench_vision: {args.scenes} scenes x {len(VIEWS)} views, 640x480, D400-like noise, "
          f"YCB meshes {'from ' + str(ycb_dir()) if ycb_dir() else 'absent'}; times are the "
          f"best of {args.repeats} runs per frame")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    header = ("figure", "value", "unit", "baseline")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    for row in [header] + rows:
        print("  ".join(c.ljust(w) if i in (0, 3) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


if __name__ == "__main__":
    main()
