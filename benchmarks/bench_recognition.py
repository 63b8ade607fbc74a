"""Recognition figures on the simulated cell: which database object each segmented object is,
and how far its estimated pose is from the truth, per object kind.

Scenes: seeded SimCell tables (offline_sim.cell, 3-5 of the built-in objects in random stable
poses, settled), the cell's camera 0.75 m above the table, 640 x 480, D400-like depth noise
on. Masks from vision's tabletop segmenter; a mask counts for its object when it holds at least
90 % of the object's visible pixels (a mask the segmenter split or merged is counted apart).
Models: offline_sim.database.surface_points of each built-in object (what the database
stores) and its stable poses, prepared once (vision.prepare_models).

Per kind: identification rate (name right, confidence >= 0.5) with the share reported unknown
and the share confidently wrong (another name, or the right one with its pose off by more than
1 cm or 15 degrees modulo symmetry: the failures a grasp would pay for),
pose error median, p95 and p99 of the rightly named (translation mm, rotation degrees, modulo the
model's symmetry: ModelLibrary.pose_error), recognition time per object median and p99
(milliseconds, every call). Baseline in the same run on the same masks: recognise(icp=False),
the same identification and scoring from the principal-axes start poses without ICP.

Run from the repository root:
    python -m benchmarks.bench_recognition [--tables 12] [--seed 0] [--candidates 3]
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from collections import defaultdict

import numpy as np

from offline_sim.cell import SimCell, SimCellSettings
from offline_sim.database import surface_points
from offline_sim.objects import BUILTIN_OBJECTS, builtin_object
from vision import ObjectModel, TabletopSegmenter, fit_support_plane, prepare_models, recognise


WRONG_M, WRONG_DEG = 0.01, 15.0  # a named object whose pose is off by more counts as wrong


def whole_objects(frame, masks, world):
    """(mask, name, T_base_object) of masks holding >= 90 % of one object's pixels, and the
    number of masks that do not."""
    out, partial = [], 0
    for m in masks:
        ids = frame.instance_ids[m.mask]
        ids = ids[ids > 0]
        if len(ids) == 0:
            partial += 1
            continue
        k = int(np.bincount(ids).argmax())
        if np.count_nonzero(ids == k) < 0.9 * np.count_nonzero(frame.instance_ids == k):
            partial += 1
            continue
        out.append((m, world.objects[k - 1].name, world.T_world_object(k - 1)))
    return out, partial


def pct(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=12, help="simulated tables (3-5 objects each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--candidates", type=int, default=3,
                    help="(model, stable pose) pairs refined per object (recognise's max_candidates)")
    args = ap.parse_args()

    t0 = time.perf_counter()
    models = [ObjectModel(n, surface_points(o), o.stable_poses)
              for n, o in ((n, builtin_object(n)) for n in BUILTIN_OBJECTS)]
    lib = prepare_models(models)
    prep_s = time.perf_counter() - t0
    seg = TabletopSegmenter()
    stats = {v: defaultdict(lambda: defaultdict(list)) for v in ("icp", "no_icp")}
    partial_masks = 0
    settings = SimCellSettings(random_primitives=False, objects_per_table=(3, 5))
    with SimCell(settings, seed=args.seed, cache_dir=None) as cell:
        for t in range(args.tables):
            if t:
                cell.new_table()
            frame = cell.camera.read()
            plane = fit_support_plane(frame)
            seen, partial = whole_objects(frame, seg.segment(frame), cell.world)
            partial_masks += partial
            for mask, name, T_true in seen:
                for variant, icp in (("icp", True), ("no_icp", False)):
                    s = stats[variant][name]
                    t1 = time.perf_counter()
                    r = recognise(frame, mask, lib, support=plane, icp=icp,
                                  max_candidates=args.candidates)
                    s["ms"].append(1000 * (time.perf_counter() - t1))
                    s["right"].append(r.name == name)
                    s["unknown"].append(r.name is None)
                    wrong = r.name is not None and r.name != name
                    if r.name == name:
                        dt, dr = lib.pose_error(name, r.T_base_object, T_true)
                        s["mm"].append(1000 * dt)
                        s["deg"].append(np.degrees(dr))
                        wrong = dt > WRONG_M or np.degrees(dr) > WRONG_DEG
                    s["wrong"].append(wrong)
            print(f"table {t + 1}/{args.tables}: {len(seen)} objects", flush=True)

    print(f"\nrecognition on {args.tables} simulated tables (seed {args.seed}), 640 x 480, depth "
          f"noise on, {args.candidates} candidates refined; models prepared in {prep_s:.2f} s; "
          f"{partial_masks} masks split or merged "
          f"by the segmenter left out")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"numpy {np.__version__}\n")
    head = (f"{'object':<10} {'method':<7} {'n':>3} {'ident':>6} {'unkn':>5} {'wrong':>6} {'mm med':>7} "
            f"{'mm p95':>7} {'mm p99':>7} {'deg med':>8} {'deg p95':>8} {'deg p99':>8} "
            f"{'ms med':>7} {'ms p99':>7}  symmetry")
    print(head)
    print("-" * len(head))
    for name in BUILTIN_OBJECTS:
        for variant in ("icp", "no_icp"):
            s = stats[variant].get(name)
            if not s:
                continue
            print(f"{name:<10} {variant:<7} {len(s['right']):>3} {np.mean(s['right']):>6.0%} "
                  f"{np.mean(s['unknown']):>5.0%} {np.mean(s['wrong']):>6.0%} "
                  f"{pct(s['mm'], 50):>7.1f} {pct(s['mm'], 95):>7.1f} {pct(s['mm'], 99):>7.1f} "
                  f"{pct(s['deg'], 50):>8.1f} {pct(s['deg'], 95):>8.1f} {pct(s['deg'], 99):>8.1f} "
                  f"{pct(s['ms'], 50):>7.0f} "
                  f"{pct(s['ms'], 99):>7.0f}  {lib.symmetry(name) if variant == 'icp' else ''}")
    for variant in ("icp", "no_icp"):
        allv = {k: sum((stats[variant][n][k] for n in stats[variant]), []) for k in
                ("right", "unknown", "wrong", "mm", "deg", "ms")}
        print(f"{'all':<10} {variant:<7} {len(allv['right']):>3} {np.mean(allv['right']):>6.0%} "
              f"{np.mean(allv['unknown']):>5.0%} {np.mean(allv['wrong']):>6.0%} "
              f"{pct(allv['mm'], 50):>7.1f} "
              f"{pct(allv['mm'], 95):>7.1f} {pct(allv['mm'], 99):>7.1f} {pct(allv['deg'], 50):>8.1f} "
              f"{pct(allv['deg'], 95):>8.1f} {pct(allv['deg'], 99):>8.1f} {pct(allv['ms'], 50):>7.0f} "
              f"{pct(allv['ms'], 99):>7.0f}")


if __name__ == "__main__":
    main()
