"""Width as seen: the narrowest width of objects measured on the simulated D400 against the truth.

Lays fresh tables in the simulated cell (boxes and cylinders in random stable poses, YCB scans
with ``--ycb``), segments each frame as the loop does (the tabletop segmenter), builds each
object's silhouette as the image search does (fingertips scoring.insertion_depth_m past its
top, stopped above the table) and measures its narrowest width (scoring.narrowest_width_m:
the minimum Feret diameter) against the truth: the minimum Feret diameter of the object's
mesh cut at the same fingertip plane (its part above, projected along the approach). Prints,
per kind, the median and p95 of the error (measured - true, mm) of the silhouette's width
(what the stroke was compared with before) and of the width as seen (vision.seen_width,
what it is compared with now), and how often the truth lies within the latter's stated
uncertainty; the same against the readings alone (seen_width's baseline, without the holes
that colour gives back), on the same objects; then where the error lies: each side of the
seen outline against the truth along the truth's narrowest direction, the side facing the
camera (near) and the one it sees over the object's top (far). A mask over more than one
object, or over a piece of one, is left out (a segmentation error, not a width error).

    .venv/bin/python -m benchmarks.bench_width --tables 30 [--ycb ../shared/data/ycb]
        [--no-noise | --without edge_band|grazing|disparity|dropout]

``--without PART`` turns one part of the simulated D400's errors off (drivers.camera.DepthNoise:
the band of holes beside depth steps, the holes where a surface is seen at a grazing angle,
the stereo matching's disparity error, the random dropout), the rest as it is: the same
tables (same seed) with and without it attribute the width's bias to that part.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

INSERTION_M = 0.02   # the cell file's scoring.insertion_depth_m
# --without PART: the DepthNoise fields that turn that part of the D400's errors off
NOISE_PARTS = {"edge_band": {"edge_drop": 0.0}, "grazing": {"max_incidence_rad": math.pi / 2},
               "disparity": {"subpixel_px": 0.0}, "dropout": {"dropout": 0.0}}
NOISE_PART_NAMES = {"edge_band": "the holes beside depth steps", "grazing": "the holes at grazing "
                    "angles", "disparity": "the disparity error", "dropout": "the random dropout"}
CLEARANCE_M = 0.005  # scoring.clearance_m


def feret_min(points_xy: np.ndarray) -> tuple[float, np.ndarray]:
    """Minimum Feret diameter (metres) of 2-D points and the unit direction it is measured
    along: the narrowest width of their convex hull, the least extent over the directions
    normal to its edges (rotating calipers)."""
    from scipy.spatial import ConvexHull

    hull = points_xy[ConvexHull(points_xy).vertices]
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    proj = hull @ normals.T  # (hull points, directions)
    extent = proj.max(axis=0) - proj.min(axis=0)
    i = int(np.argmin(extent))
    return float(extent[i]), normals[i]


def feret_min_m(points_xy: np.ndarray) -> float:
    """Minimum Feret diameter (metres) of 2-D points (feret_min without its direction)."""
    return feret_min(points_xy)[0]


def section_above(vertices: np.ndarray, faces: np.ndarray, z_cut: float) -> np.ndarray:
    """(N, 3) points of a mesh's part above the plane z = z_cut (world frame, metres): its
    vertices above and the points where its edges cross the plane."""
    above = vertices[vertices[:, 2] >= z_cut]
    e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    a, b = vertices[e[:, 0]], vertices[e[:, 1]]
    cross = (a[:, 2] - z_cut) * (b[:, 2] - z_cut) < 0
    t = (z_cut - a[cross, 2]) / (b[cross, 2] - a[cross, 2])
    cut = a[cross] + t[:, None] * (b[cross] - a[cross])
    return np.concatenate([above, cut])


def true_section(obj, T_world_object: np.ndarray, insertion_m: float = INSERTION_M,
                 clearance_m: float = CLEARANCE_M) -> np.ndarray:
    """(N, 3) world points (metres) of a simulated object's part that fingertips insertion_m
    past its top meet (stopped clearance_m above the table at z = 0)."""
    v, f = obj.visual
    vw = v @ T_world_object[:3, :3].T + T_world_object[:3, 3]
    top = float(vw[:, 2].max())
    z_cut = max(top - insertion_m, min(top, clearance_m))
    return section_above(vw, np.asarray(f), z_cut)


def true_width_m(obj, T_world_object: np.ndarray, insertion_m: float = INSERTION_M,
                 clearance_m: float = CLEARANCE_M) -> float:
    """The narrowest width (metres) of a simulated object's part that fingertips insertion_m
    past its top meet (stopped clearance_m above the table at z = 0), seen from above."""
    return feret_min_m(true_section(obj, T_world_object, insertion_m, clearance_m)[:, :2])


def side_errors_m(outline_xy: np.ndarray, section_base: np.ndarray, T_base_plane: np.ndarray,
                  eye_base: np.ndarray) -> tuple[float, float]:
    """(near, far) errors (metres, measured - true) of each side of the seen outline along
    the truth's narrowest direction: outline_xy in the plane frame (vision.SeenWidth), the
    true section (N, 3) and the camera's eye in the base frame; the far side is the one whose
    outward normal points away from the eye (the side the camera sees over its top)."""
    if outline_xy.shape[0] < 3:
        return math.nan, math.nan
    T_plane_base = np.linalg.inv(T_base_plane)
    true_xy = (section_base @ T_plane_base[:3, :3].T + T_plane_base[:3, 3])[:, :2]
    eye_xy = (T_plane_base[:3, :3] @ eye_base + T_plane_base[:3, 3])[:2]
    _, u = feret_min(true_xy)
    if float((eye_xy - true_xy.mean(axis=0)) @ u) > 0:
        u = -u  # u points away from the eye: the far side
    far = float((outline_xy @ u).max() - (true_xy @ u).max())
    near = float((outline_xy @ -u).max() - (true_xy @ -u).max())
    return near, far


def kind_of(name: str) -> str:
    """The bench's kind of an object name: box (boxes, plates, bars), cylinder (cans,
    bottles) or scanned (YCB)."""
    if name.startswith("ycb_"):
        return "scanned"
    if name in ("cylinder", "wide_can", "bottle", "can", "mug"):
        return "cylinder"
    return "box" if name in ("box", "heavy_box", "wide_box", "plate", "bar") else name


@dataclass
class WidthSample:
    """One object seen once: its kind, true narrowest width, the silhouette's narrowest width
    (scoring.narrowest_width_m of its target), the width as seen (vision.seen_width) and that
    one's uncertainty, metres; its top's distance from the camera, metres; each side's error
    of the seen outline (metres); the width from the readings alone (seen_width with
    by_colour=False: the width before 2026-11-27), metres."""

    kind: str
    true_m: float
    silhouette_m: float
    seen_m: float
    uncertainty_m: float
    distance_m: float
    near_error_m: float = math.nan
    far_error_m: float = math.nan
    readings_m: float = math.nan


def measure(tables: int, seed: int, ycb: str | None, image: tuple[int, int],
            depth_noise: object = True) -> list[WidthSample]:
    """Widths of every object on ``tables`` fresh tables of the simulated cell (a mask over
    more than one object, or mostly not over one, is left out); depth_noise as
    SimCellSettings.depth_noise (True, False or a drivers.camera.DepthNoise)."""
    from tqdm import tqdm

    from offline_sim.cell import SimCell, SimCellSettings
    from scoring import narrowest_width_m
    from vision import TabletopSegmenter, neighbours, seen_width, silhouette

    kinds = ("box", "cylinder", "wide_box", "plate", "wide_can")
    settings = SimCellSettings(objects_per_table=(2, 4), builtin=(), random_primitives=kinds,
                               ycb_dir=ycb, image_width_px=image[0], image_height_px=image[1],
                               depth_noise=depth_noise)
    seg = TabletopSegmenter()
    out: list[WidthSample] = []
    with SimCell(settings, seed=seed, cache_dir=".graspline-cache") as sim:
        for _ in tqdm(range(tables), desc="tables", unit="table", file=sys.stderr):
            sim.new_table()
            frame = sim.camera.read()
            masks = seg.segment(frame)
            eye_z = frame.T_base_camera[2, 3]
            for i, m in enumerate(masks):
                ids = frame.instance_ids[m.mask]
                ids = ids[(ids > 0) & (ids < 1000)]  # 0 the table, 1000 the gripper
                if ids.size < 0.8 * m.mask.sum() or np.unique(ids).size > 1:
                    continue
                k = int(ids[0]) - 1
                if ids.size < 0.8 * np.count_nonzero(frame.instance_ids == k + 1):
                    continue  # a piece of the object (the segmenter cut it): not its width
                obj, T = sim.world.objects[k], sim.world.T_world_object(k)
                try:
                    sil = silhouette(frame, m, insertion_depth_m=INSERTION_M,
                                     metres_per_px=0.001, margin_m=0.07,
                                     obstacles=neighbours(masks, i), support=seg.last_plane,
                                     clearance_m=CLEARANCE_M)
                except ValueError:
                    continue
                seen = seen_width(frame, m, sil)
                section = true_section(obj, T)
                near, far = side_errors_m(seen.outline_xy, section, sil.T_base_plane,
                                          frame.T_base_camera[:3, 3])
                out.append(WidthSample(kind_of(obj.name), feret_min_m(section[:, :2]),
                                       narrowest_width_m(sil.target, 0.001), seen.width_m,
                                       seen.uncertainty_m, float(eye_z - sil.grasp_height_m
                                                                 - sil.insertion_depth_m),
                                       near, far,
                                       seen_width(frame, m, sil, by_colour=False).width_m))
    return out


def by_kind(samples: list[WidthSample], usable: Callable[[WidthSample], bool] = lambda s: True
            ) -> Iterator[tuple[str, list[WidthSample]]]:
    """(kind, its usable samples) for each kind in name order, then ("all", every usable
    sample); a kind with none left out."""
    for k in sorted({s.kind for s in samples}) + ["all"]:
        sel = [s for s in samples if k in ("all", s.kind) and usable(s)]
        if sel:
            yield k, sel


def table(samples: list[WidthSample]) -> None:
    """Per kind: objects, the median signed error (the bias) and the median and p95 |error|,
    mm, of the silhouette's width and of the width from the readings; the share of objects
    whose true width lies within the stated uncertainty of the latter."""
    print("| kind | objects | top's distance (m) | silhouette: bias (median, mm) | median abs "
          "| p95 abs | seen (vision.seen_width): bias | median abs | p95 abs | "
          "truth within the uncertainty |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, sel in by_kind(samples):
        raw = np.array([s.silhouette_m - s.true_m for s in sel]) * 1e3
        cor = np.array([s.seen_m - s.true_m for s in sel]) * 1e3
        unc = np.array([s.uncertainty_m for s in sel]) * 1e3
        d = np.array([s.distance_m for s in sel])
        print(f"| {k} | {len(sel)} | {d.min():.2f}-{d.max():.2f} | {np.median(raw):+.1f} | "
              f"{np.median(abs(raw)):.1f} | {np.percentile(abs(raw), 95):.1f} | "
              f"{np.median(cor):+.1f} | {np.median(abs(cor)):.1f} | "
              f"{np.percentile(abs(cor), 95):.1f} | {np.mean(abs(cor) <= unc):.0%} |")


def baseline_table(samples: list[WidthSample]) -> None:
    """Per kind, the same objects: the error (mm) of the width as seen and of the readings
    alone (the width before its holes were given back by colour), bias, median and p95
    |error|, and the share of truths within the stated uncertainty of each."""
    print("| kind | objects | seen: bias (median, mm) | median abs | p95 abs | within | "
          "readings alone: bias | median abs | p95 abs | within |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, sel in by_kind(samples, lambda s: math.isfinite(s.readings_m)):
        unc = np.array([s.uncertainty_m for s in sel]) * 1e3
        cells = []
        for err in (np.array([s.seen_m - s.true_m for s in sel]) * 1e3,
                    np.array([s.readings_m - s.true_m for s in sel]) * 1e3):
            cells.append(f"{np.median(err):+.1f} | {np.median(abs(err)):.1f} | "
                         f"{np.percentile(abs(err), 95):.1f} | {np.mean(abs(err) <= unc):.0%}")
        print(f"| {k} | {len(sel)} | {cells[0]} | {cells[1]} |")


def side_table(samples: list[WidthSample]) -> None:
    """Per kind: where the seen width's error lies, the median and 10th percentile of each
    side's error (mm) along the truth's narrowest direction, the side facing the camera
    (near) and the side it sees over the top (far)."""
    print("| kind | objects | near side: bias (median, mm) | p10 | far side: bias (median, mm) "
          "| p10 |")
    print("|---|---|---|---|---|---|")
    for k, sel in by_kind(samples, lambda s: math.isfinite(s.far_error_m)):
        near = np.array([s.near_error_m for s in sel]) * 1e3
        far = np.array([s.far_error_m for s in sel]) * 1e3
        print(f"| {k} | {len(sel)} | {np.median(near):+.1f} | {np.percentile(near, 10):+.1f} | "
              f"{np.median(far):+.1f} | {np.percentile(far, 10):+.1f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=30, help="fresh tables to lay and measure")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ycb", default=None, help="YCB folder (../shared/data/ycb)")
    p.add_argument("--image", default="640x480", help="camera size, WxH")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--no-noise", action="store_true", help="exact depth (no D400 noise)")
    noise.add_argument("--without", choices=sorted(NOISE_PARTS),
                       help="one part of the D400's errors off, the rest on")
    args = p.parse_args(argv)
    image = tuple(int(v) for v in args.image.lower().split("x"))
    depth_noise: object = not args.no_noise
    if args.without:
        from drivers.camera import DepthNoise

        depth_noise = DepthNoise(**NOISE_PARTS[args.without])
    samples = measure(args.tables, args.seed, args.ycb, image, depth_noise=depth_noise)
    from vision import WIDTH_UNCERTAINTY_PX

    how = " without noise" if args.no_noise else \
        (f" without {NOISE_PART_NAMES[args.without]}" if args.without else "")
    print(f"# narrowest width as seen, simulated D400 {args.image}{how}, {args.tables} tables, "
          f"seed {args.seed}; uncertainty {WIDTH_UNCERTAINTY_PX:g} camera pixels\n")
    table(samples)
    print("\nThe same objects, the width as seen against the readings alone (the baseline: "
          "before the holes at the outline were given back by colour):\n")
    baseline_table(samples)
    print("\nEach side of the seen outline against the truth, along the truth's narrowest "
          "direction:\n")
    side_table(samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
