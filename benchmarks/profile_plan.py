"""Where PickingLoop.plan() spends its time: cProfile over seeded tables of the simulated cell.

Three tables of --objects objects (bench_loop's cell: 640 x 480, D400-like noise, the default
cell file, the segmenter's masks labelled with the simulator's names), each planned once to
warm up and then --repeats times under cProfile, on one Numba thread so that the functions'
times add up to the plan's. Prints the stage times per plan (the loop's StageClock) and the
functions by their own time. ``--path exhaustive`` profiles Tan's planning loop on every
object (``scoring.search: tan``, ``scoring.scene_budget: false``) instead of the default.

Run from the repository root:
    python -m benchmarks.profile_plan [--objects 6] [--repeats 4] [--path default|exhaustive]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import numba

PATH_KEYS = {"default": {}, "exhaustive": {"search": "tan", "scene_budget": False}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--objects", type=int, default=6)
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--path", choices=tuple(PATH_KEYS), default="default")
    p.add_argument("--rows", type=int, default=30, help="functions listed")
    args = p.parse_args()
    from benchmarks.bench_loop import NamedSegmenter, _cell_for, _loop_for, _plan_once
    from vision import make_segmenter

    numba.set_num_threads(1)
    config, sim = _cell_for(args.objects, 0)
    tabletop = make_segmenter(config.segmenter.backend, **config.segmenter.options)
    loops = []
    try:
        for k in range(3):
            if k:
                sim.new_table()
            frame = sim.camera.read()
            names = [o.name for o in sim.world.objects]
            loops.append(_loop_for(config, frame, NamedSegmenter(tabletop, names),
                                   **PATH_KEYS[args.path])[0])
    finally:
        sim.close()
    for loop in loops:
        _plan_once(loop, None)  # warm-up: Numba's cache, first-call costs
    stages: dict[str, float] = {}
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(args.repeats):
        for loop in loops:
            for k, v in _plan_once(loop, None)[0].items():
                stages[k] = stages.get(k, 0.0) + v
    prof.disable()
    n = args.repeats * len(loops)
    print(f"{args.path} path, {args.objects} objects, {n} plans on one thread: "
          f"{1e3 * (time.perf_counter() - t0) / n:.1f} ms a plan under the profiler; stages "
          + ", ".join(f"{k} {1e3 * v / n:.2f} ms" for k, v in stages.items()))
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.rows)
    print(out.getvalue())


if __name__ == "__main__":
    main()
