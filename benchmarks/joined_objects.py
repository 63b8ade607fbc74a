"""Objects the segmentation joins with a neighbour, or cuts into pieces: the first cut against
the finer cut, on the tables bench_cell's best passes lay.

Each table is laid from a seed as bench_cell's best pass lays it (the cell file's objects, the
YCB scans) and seen once by the simulated D400, as the loop's first view of it. Each object
the camera sees (at least MIN_SEEN_PX pixels) is judged against the simulator's instance
ids, for each cut: joined when over JOINED_SHARE of its pixels lie in a mask another object
owns most of (a mug lying under the box that rests on it), split when more than one mask it
owns most of holds over PIECE_SHARE of its pixels (a lying mug's handle). The finer cut is
asked by the loop only where the first cut left no grasp scoring 0.5 (docs/picking-cell.md),
so its splits cost less than the first cut's; its joins are what it exists to part.

The baseline, measured on the same frames: the finer cut at the steps it had until
2026-12-06 (10 mm / 1.4 %).

Run from the repository root (about a minute a seed of 15 tables):

    .venv/bin/python -m benchmarks.joined_objects --cell benchmarks/jaws/2f85.yaml \\
        --seeds 81,91,101 --tables 15 --ycb ../shared/data/ycb
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MIN_SEEN_PX = 200     # an object seen by fewer pixels is not judged
JOINED_SHARE = 0.3    # of an object's seen pixels, in a mask another object owns most of
PIECE_SHARE = 0.1     # of an object's seen pixels, for a mask it owns most of to be a piece
BEFORE = (0.010, 0.014)  # the finer cut's steps until 2026-12-06 (fine_jump_m, fine_jump_ratio)


@dataclass
class Census:
    """One cut's count over the objects seen, with a line per object joined or split."""

    joined: int = 0
    split: int = 0
    lines: list[str] = field(default_factory=list)


def judge(ids: np.ndarray, masks: list[np.ndarray], names: list[str], where: str,
          census: Census) -> int:
    """Count the objects of one frame (ids: the simulator's instance id per pixel, 0 none)
    joined into another's mask or split into pieces by masks; returns how many were seen."""
    n = int(ids.max()) + 1
    owners = []
    for m in masks:
        count = np.bincount(ids[m], minlength=n)
        count[0] = 0
        owners.append(count)
    seen = 0
    for k in range(1, len(names) + 1):
        px = int(np.count_nonzero(ids == k))
        if px < MIN_SEEN_PX:
            continue
        seen += 1
        pieces = 0
        for count in owners:
            owner = int(count.argmax())
            if owner != k and count[k] > JOINED_SHARE * px:
                census.joined += 1
                census.lines.append(f"{where}: {names[k - 1]} ({count[k]} of {px} px) joined "
                                    f"to {names[owner - 1]}")
            elif owner == k and count[k] > PIECE_SHARE * px:
                pieces += 1
        if pieces > 1:
            census.split += 1
            census.lines.append(f"{where}: {names[k - 1]} in {pieces} pieces")
    return seen


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cell", default=None, help="the jaw's cell file (default the built-in cell)")
    p.add_argument("--seeds", default="81,91,101",
                   help="comma-separated seeds of the tables (a best pass lays bench_cell's "
                        "--seed + 1)")
    p.add_argument("--tables", type=int, default=15, help="tables laid per seed")
    p.add_argument("--ycb", default=None)
    p.add_argument("--verbose", action="store_true", help="a line per object joined or split")
    args = p.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise SystemExit(f"joined_objects: --seeds must be integers separated by commas, got "
                         f"{args.seeds!r}") from None
    if args.tables < 1:
        raise SystemExit(f"joined_objects: --tables must be at least 1, got {args.tables}")
    from tqdm import tqdm

    from benchmarks.bench_cell import cell_config
    from onboard import CellFileError, PickingCell, config_hash
    from vision import TabletopSegmenter

    first = TabletopSegmenter()
    before = TabletopSegmenter(fine_jump_m=BEFORE[0], fine_jump_ratio=BEFORE[1])
    cuts = {"the first cut (12 mm / 2 %)": first.segment,
            f"the finer cut ({first.fine_jump_m * 1e3:.0f} mm / "
            f"{first.fine_jump_ratio * 1e2:.1f} %)": first.segment_finer,
            f"baseline: the finer cut before ({BEFORE[0] * 1e3:.0f} mm / "
            f"{BEFORE[1] * 1e2:.1f} %)": before.segment_finer}
    counts = {name: Census() for name in cuts}
    seen = 0
    bar = tqdm(total=len(seeds) * args.tables, desc="tables", unit="table", file=sys.stderr)
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                config = cell_config(seed, Path(tmp), args.ycb, args.cell, None)
            except CellFileError as exc:
                raise SystemExit(f"joined_objects: {exc}") from None
            with PickingCell(config, config_hash(config), mode="best") as cell:
                sim, camera = cell.devices.truth, cell.devices.camera
                for t in range(args.tables):
                    if t:
                        sim.new_table()
                    frame = camera.read()
                    names = [o.name for o in sim.world.objects]
                    where = f"seed {seed} table {t + 1}"
                    for name, cut in cuts.items():
                        n = judge(frame.instance_ids, [m.mask for m in cut(frame)], names, where,
                                  counts[name])
                    seen += n  # the same objects whatever the cut
                    bar.update()
    bar.close()
    print(f"joined_objects: seeds {args.seeds}, {args.tables} tables each, the first view of "
          f"each; {seen} objects seen (at least {MIN_SEEN_PX} px)")
    print("| cut | objects joined with a neighbour | objects in pieces |")
    print("|---|---|---|")
    for name, c in counts.items():
        print(f"| {name} | {c.joined} of {seen} | {c.split} of {seen} |")
    if args.verbose:
        for name, c in counts.items():
            print(f"\n{name}:")
            print("\n".join(f"  {line}" for line in c.lines) or "  none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
