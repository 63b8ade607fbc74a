"""Vision figures and speed on SimCamera scenes: segmentation IoU, objects found, silhouette
agreement with the true footprint, segmentation + silhouette time per 640 x 480 frame, the
segmenter's finer cut against its segmentation, and SimCamera frames per second.

Scenes: offline_sim.objects.figure_scene seeds 0..N-1 (3 + seed % 6 objects, 3-8; boxes, cylinders and
the YCB meshes of ../shared/data/ycb when present), D400-like noise, seen straight down from
0.70 m and obliquely from (0.45, 0.15, 0.55) m; judged by vision.evaluate_frame, the function
the tests use. Baselines, measured in the same run on the same frames: the same segmenter on a
least-squares plane of all readings (no RANSAC) for quality and time, silhouettes of the
ground-truth mask on the noise-free frame, and SimCamera without its noise model. Times are the
median and p99 of every run (frames x repeats), not a best-of. Targets (not measured): the
20 ms frame budget and a D435's 30 frames/s. Needs the `sim` extra.

Run from the repository root:
    python -m benchmarks.bench_vision [--scenes 8] [--repeats 10]
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from offline_sim.objects import FIGURE_VIEWS, figure_scene, scene_footprint
from vision import SupportPlane, TabletopSegmenter, evaluate_frame, mask_iou, silhouette

BUDGET_MS = 20.0   # segmentation + silhouettes per 640 x 480 frame (issue, step 2)
CAMERA_FPS = 30.0  # a D435 streams 640 x 480 depth at 30 frames/s
YCB = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ycb"


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


def timed_vision(frame, seg, repeats: int) -> tuple[list[float], list[float], int]:
    """(seconds of segmentation + every mask's silhouette, seconds of segmentation alone: one
    entry per run, number of masks) over repeats runs."""
    t_all, t_seg = [], []
    n = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        masks = seg.segment(frame)
        t1 = time.perf_counter()
        for m in masks:
            silhouette(frame, m, support=seg.last_plane)
        t2 = time.perf_counter()
        t_all.append(t2 - t0)
        t_seg.append(t1 - t0)
        n = len(masks)
    return t_all, t_seg, n


def timed_finer(frame, seg, repeats: int) -> list[float]:
    """Seconds of the segmenter's finer cut (segment_finer) of the frame, one per run."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        seg.segment_finer(frame)
        out.append(time.perf_counter() - t0)
    return out


def timed_read(cam):
    """(frame, seconds) of one SimCamera read, after a first, untimed read that pays for
    imports; closes the camera."""
    with cam:
        cam.read()
        t0 = time.perf_counter()
        frame = cam.read()
        return frame, time.perf_counter() - t0


def evaluate(scene, frame, seg, seed: int, view: str):
    """evaluate_frame with the true footprint ray-cast from the scene's MuJoCo geometry."""
    return evaluate_frame(frame, scene.object_names, seg, seed=seed, view=view,
                          footprint=lambda k, s: scene_footprint(scene, k, s.T_base_plane,
                                                                 s.shape, s.metres_per_px))


def p99(xs) -> float:
    """99th percentile (linear interpolation)."""
    return float(np.percentile(xs, 99))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=8, help="seeded scenes per view")
    ap.add_argument("--repeats", type=int, default=10, help="timing runs per frame (all kept)")
    args = ap.parse_args()
    ycb = YCB if YCB.is_dir() else None

    seg, base = TabletopSegmenter(), LeastSquaresTabletop()
    rows = []
    frame_ms, seg_ms, base_ms, per_obj_ms, read_s, clean_read_s = [], [], [], [], [], []
    finer_ms = []
    for view in FIGURE_VIEWS:
        res, res_base, clean_sil = [], [], []
        for seed in range(args.scenes):
            scene, cam = figure_scene(seed, view, ycb_dir=ycb)
            frame, t = timed_read(cam)
            read_s.append(t)
            res.append(evaluate(scene, frame, seg, seed, view))
            res_base.append(evaluate(scene, frame, base, seed, view))
            t_all, t_seg, n = timed_vision(frame, seg, args.repeats)
            frame_ms += [1e3 * t for t in t_all]
            seg_ms += [1e3 * t for t in t_seg]
            finer_ms += [1e3 * t for t in timed_finer(frame, seg, args.repeats)]
            per_obj_ms += [1e3 * (a - b) / max(n, 1) for a, b in zip(t_all, t_seg)]
            base_ms += [1e3 * t for t in timed_vision(frame, base, args.repeats)[0]]
            _, clean = figure_scene(seed, view, ycb_dir=ycb, noise=False)
            exact, t = timed_read(clean)
            clean_read_s.append(t)
            for k, name in enumerate(scene.object_names, start=1):
                if name in res[-1].names:
                    s = silhouette(exact, exact.instance_ids == k)
                    clean_sil.append(mask_iou(s.target, scene_footprint(
                        scene, k, s.T_base_plane, s.shape, s.metres_per_px)))
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
        (f"segmentation + all silhouettes per frame, median (budget {BUDGET_MS:.0f} ms)",
         f"{np.median(frame_ms):.1f}", "ms", f"least-squares plane {np.median(base_ms):.1f} ms"),
        (f"segmentation + all silhouettes per frame, p99 (budget {BUDGET_MS:.0f} ms)",
         f"{p99(frame_ms):.1f}", "ms", f"least-squares plane {p99(base_ms):.1f} ms"),
        ("segmentation alone per frame, median / p99", f"{np.median(seg_ms):.1f} / {p99(seg_ms):.1f}",
         "ms", "-"),
        ("the finer cut per frame (asked where no grasp scores 0.5), median / p99",
         f"{np.median(finer_ms):.1f} / {p99(finer_ms):.1f}", "ms",
         f"segmentation {np.median(seg_ms):.1f} / {p99(seg_ms):.1f} ms"),
        ("one silhouette (1 mm/px), median / p99",
         f"{np.median(per_obj_ms):.2f} / {p99(per_obj_ms):.2f}", "ms", "-"),
        (f"SimCamera 640x480 frame, noise on, median (D435 streams {CAMERA_FPS:.0f}/s)",
         f"{1e3 * np.median(read_s):.0f}", "ms", f"noise off {1e3 * np.median(clean_read_s):.0f} ms"),
        ("SimCamera 640x480 frame, noise on, p99", f"{1e3 * p99(read_s):.0f}", "ms",
         f"noise off {1e3 * p99(clean_read_s):.0f} ms"),
    ]
    print(f"bench_vision: {args.scenes} scenes x {len(FIGURE_VIEWS)} views, 640x480, D400-like "
          f"noise, YCB meshes {'from ' + str(ycb) if ycb else 'absent'}; times: median and p99 "
          f"of all {len(frame_ms)} runs ({args.repeats} per frame)")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    header = ("figure", "value", "unit", "baseline (same run)")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    for row in [header] + rows:
        print("  ".join(c.ljust(w) if i in (0, 3) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


if __name__ == "__main__":
    main()
