"""`graspline score`: score a silhouette image, write an overlay PNG and a JSON of the top grasps."""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from ._common import CliError, reported

MIN_OBJECT_AREA_PX = 20  # smaller components are segmentation specks, not objects


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``score`` subcommand."""
    p = sub.add_parser(
        "score", help="score grasps on a silhouette image (non-zero = object)",
        description="Search and score antipodal grasps on a silhouette image with the "
                    "image-space measure; writes IMAGE_grasps.png and IMAGE_grasps.json. "
                    "Without IMAGE, scores the built-in sample silhouette.")
    p.add_argument("image", nargs="?", type=Path,
                   help="silhouette PNG (any non-zero pixel is object); default: built-in sample")
    p.add_argument("--finger-width-px", type=float, default=15.0, help="finger width w (px)")
    p.add_argument("--open-width-px", type=float, default=100.0, help="open width r (px)")
    p.add_argument("--n-lines", type=int, default=15, help="grasp lines across the finger")
    p.add_argument("--top", type=int, default=10, help="grasps kept per object")
    p.add_argument("--out", type=Path, default=Path("out"), help="output folder")
    p.add_argument("--seed", type=int, default=0, help="random seed of the search")
    p.add_argument("--whole", action="store_true",
                   help="treat the whole silhouette as one object instead of one per component")
    p.set_defaults(func=run)


def _load_silhouette(path: Path) -> np.ndarray:
    """Read an image as a bool silhouette (non-zero in any channel = object)."""
    import cv2

    if not path.is_file():
        raise CliError(f"cannot read image {path}: no such file")
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None or img.size == 0:
        raise CliError(f"cannot read image {path}: not an image OpenCV can decode")
    if img.ndim == 3:
        img = img.any(axis=2)
    return img != 0


def _objects(sil: np.ndarray, whole: bool) -> list[np.ndarray]:
    """Masks of the objects to grasp: 8-connected components of at least MIN_OBJECT_AREA_PX."""
    import cv2

    if whole:
        return [sil]
    n, labels, stats, _ = cv2.connectedComponentsWithStats(sil.astype(np.uint8), connectivity=8)
    big = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= MIN_OBJECT_AREA_PX]
    return [labels == i for i in big]


def _grasp_record(rank: int, g, k: int) -> dict:
    """JSON-ready description of grasp k of a GraspSet (pixels, radians)."""
    sc = g.scores

    def num(v: float) -> float | None:
        return None if not math.isfinite(float(v)) else round(float(v), 6)

    return {
        "rank": rank, "x_px": num(g.x[k]), "y_px": num(g.y[k]), "theta_rad": num(g.theta[k]),
        "score": num(sc.score[k]), "collision": bool(sc.collision[k]),
        "missing": bool(sc.missing[k]), "width_px": num(sc.width_px[k]),
        "features": {"d_t": num(sc.d_t[k]), "r_r_rad": num(sc.r_r[k]),
                     "s_a_rad": num(sc.s_a[k]), "s_f_px": num(sc.s_f[k])},
        "feature_scores": {"d_t": num(sc.score_d_t[k]), "r_r": num(sc.score_r_r[k]),
                           "s_a": num(sc.score_s_a[k]), "s_f": num(sc.score_s_f[k])},
        "primary_contacts_px": {"left": [num(v) for v in sc.contact_left[k]],
                                "right": [num(v) for v in sc.contact_right[k]]},
    }


def run(args: argparse.Namespace) -> int:
    """Score the image's objects and write the overlay and JSON; print one line per object."""
    import cv2

    from scoring import GripperProjection, prepare_silhouette, search_grasps

    from .._overlay import draw_grasps
    from .._sample import sample_silhouette

    if args.top < 1:
        raise CliError(f"--top must be >= 1, got {args.top}")
    with reported(ValueError):
        projection = GripperProjection(args.finger_width_px, args.open_width_px, args.n_lines)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.image is None:
        sil = sample_silhouette() != 0
        stem = "sample_silhouette"
        cv2.imwrite(str(args.out / f"{stem}.png"), sil.astype(np.uint8) * 255)
        source = f"built-in sample (written to {args.out / (stem + '.png')})"
    else:
        sil = _load_silhouette(args.image)
        stem, source = args.image.stem, str(args.image)
    objects = _objects(sil, args.whole)
    if not objects:
        raise CliError(f"{source} has no object pixels (need a component of at least "
                       f"{MIN_OBJECT_AREA_PX} non-zero pixels)")

    t0 = time.perf_counter()
    prepared = prepare_silhouette(sil)
    records, xs, ys, ts, ss, labels = [], [], [], [], [], []
    print(f"scoring {len(objects)} object(s) in {source}")
    for n_obj, target in enumerate(objects, start=1):
        t_obj = time.perf_counter()
        g = search_grasps(prepared, projection, target=target, top_k=args.top, seed=args.seed)
        rows, cols = np.nonzero(target)
        records.append({
            "object": n_obj, "area_px": int(rows.size),
            "centroid_px": [round(float(cols.mean()), 2), round(float(rows.mean()), 2)],
            "candidates_scored": int(g.n_scored),
            "grasps": [_grasp_record(k + 1, g, k) for k in range(len(g))],
        })
        xs.append(g.x), ys.append(g.y), ts.append(g.theta), ss.append(g.scores.score)
        labels += [f"#{n_obj} {g.scores.score[0]:.2f}"] + [""] * (len(g) - 1) if len(g) else []
        best = f"{g.scores.score[0]:.3f}" if len(g) else "-"
        print(f"  object {n_obj}: area {rows.size} px, best score {best}, "
              f"{g.n_scored} candidates in {1e3 * (time.perf_counter() - t_obj):.1f} ms")

    order = np.argsort(-np.concatenate(ss), kind="stable")
    overlay = draw_grasps(sil, np.concatenate(xs)[order], np.concatenate(ys)[order],
                          np.concatenate(ts)[order], np.concatenate(ss)[order], projection,
                          labels=[labels[i] for i in order])
    png, js = args.out / f"{stem}_grasps.png", args.out / f"{stem}_grasps.json"
    cv2.imwrite(str(png), overlay)
    js.write_text(json.dumps({
        "image": source, "size_px": [int(sil.shape[1]), int(sil.shape[0])],
        "projection": {"finger_width_px": projection.finger_width_px,
                       "open_width_px": projection.open_width_px, "n_lines": projection.n_lines},
        "seed": args.seed, "elapsed_s": round(time.perf_counter() - t0, 4), "objects": records,
    }, indent=2))
    print(f"wrote {png} and {js}")
    return 0
