"""Throughput of the image-space scoring kernel against its plain-Python reference.

A 640 x 480 silhouette with rectangles, ellipses, a polygon and a ring (drawn with
scoring.shapes, as the tests draw theirs); a gripper of 15 px
fingers, 100 px opening and 15 grasp lines; candidates uniform in each object's bounding box
grown by half the open width, θ uniform. Prints one table (figure, unit, baseline) and the
floors this machine must reach. Every timing is run --repeats times (the reference
--reference-repeats times) and the table gives the median and the p99 of all the runs, not the
best; the baselines (the plain-Python reference, one thread) are measured in the same run.

Run: python benchmarks/bench_scoring.py [--candidates 1000000] [--repeats 10]
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import time
from dataclasses import dataclass

import cv2
import numba
import numpy as np

from scoring import DepthView, GripperProjection, JawLimits, prepare_silhouette, score_candidates
from scoring.reference import reference_score
from scoring.shapes import ellipse, polygon, rectangle, ring

PAPER_MS_PER_CANDIDATE = 2.04  # Tan et al. 2021, IV-B: Python on an i7-8750H
FLOOR_MIX_PER_S = 1_000_000    # all cores, the whole mix (issue 2)
FLOOR_EVAL_PER_S = 400_000     # all cores, fully evaluated candidates only


def bench_silhouette() -> np.ndarray:
    """(480, 640) uint8: two rectangles, two ellipses, a polygon and a ring (scoring.shapes)."""
    shape = (480, 640)
    return (rectangle(shape, (85, 110), 70, 120)
            | rectangle(shape, (260, 110), 150, 40, math.radians(30))
            | ellipse(shape, (470, 110), 45, 30, math.radians(20))
            | ellipse(shape, (580, 330), 25, 40)
            | polygon(shape, np.array([[90, 290], [170, 300], [150, 420], [80, 400], [100, 350]]))
            | ring(shape, (340, 350), 44, 30))


def bench_candidates(sil: np.ndarray, n: int, grow_px: float, seed: int = 0) -> tuple:
    """n candidates spread evenly over the objects, uniform in each grown bounding box."""
    n_obj, _, stats, _ = cv2.connectedComponentsWithStats(sil, connectivity=8)
    rng = np.random.default_rng(seed)
    per = -(-n // (n_obj - 1))
    xs, ys = [], []
    for i in range(1, n_obj):
        x0, y0, w, h = stats[i, :4]
        xs.append(rng.uniform(x0 - grow_px, x0 + w + grow_px, per))
        ys.append(rng.uniform(y0 - grow_px, y0 + h + grow_px, per))
    order = rng.permutation(per * (n_obj - 1))[:n]  # interleave objects: balanced threads
    return np.concatenate(xs)[order], np.concatenate(ys)[order], rng.uniform(0, np.pi, n)


@dataclass(frozen=True)
class Rates:
    """Items per second of the median run and of the p99 (slow) run of fn()."""

    median: float
    p99: float


def rates(fn, n_items: int, repeats: int) -> Rates:
    """Time ``repeats`` runs of fn() over n_items items; keep every run."""
    t = np.array([_timed(fn) for _ in range(repeats)])
    return Rates(n_items / float(np.median(t)), n_items / float(np.percentile(t, 99)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1_000_000)
    ap.add_argument("--reference", type=int, default=300, help="candidates for the reference")
    ap.add_argument("--repeats", type=int, default=10, help="timed runs of the kernel per figure")
    ap.add_argument("--reference-repeats", type=int, default=3, help="timed runs of the reference")
    args = ap.parse_args()

    sil = bench_silhouette()
    proj = GripperProjection(finger_width_px=15, open_width_px=100, n_lines=15)
    x, y, t = bench_candidates(sil, args.candidates, grow_px=proj.open_width_px / 2)

    t0 = time.perf_counter()
    prep = prepare_silhouette(sil)
    score_candidates(prep, x[:8], y[:8], t[:8], proj)
    compile_s = time.perf_counter() - t0  # first call: compile, or load numba's cache
    prep_ms = 1e3 * np.array([_timed(lambda: prepare_silhouette(sil)) for _ in range(args.repeats)])

    all_cores = numba.config.NUMBA_NUM_THREADS
    scores = score_candidates(prep, x, y, t, proj)
    ev = scores.evaluated
    xe, ye, te = x[ev], y[ev], t[ev]
    kernel = {}
    for threads in sorted({1, all_cores}):
        numba.set_num_threads(threads)
        kernel[threads] = (
            rates(lambda: score_candidates(prep, x, y, t, proj), x.size, args.repeats),
            rates(lambda: score_candidates(prep, xe, ye, te, proj), xe.size, args.repeats))
    numba.set_num_threads(all_cores)
    # graspline's measure: Tan's kernel plus the depth terms, on a flat 20 mm height map
    view = DepthView(np.where(sil != 0, 0.02, np.nan).astype(np.float32), 0.001,
                     (320.0, 240.0), 0.3, sil != 0)
    deep = dict(jaw=JawLimits(finger_thickness_m=0.014), depth=view)
    score_candidates(prep, x[:8], y[:8], t[:8], proj, **deep)  # compile
    tan_n = rates(lambda: score_candidates(prep, x, y, t, proj, measure="tan2024"), x.size,
                  args.repeats)
    deep_n = rates(lambda: score_candidates(prep, x, y, t, proj, **deep), x.size, args.repeats)

    n_ref = min(args.reference, x.size)
    ref = rates(lambda: [reference_score(sil, x[k], y[k], t[k], proj) for k in range(n_ref)],
                n_ref, args.reference_repeats)
    n_ref_ev = min(args.reference, xe.size)
    ref_ev = rates(lambda: [reference_score(sil, xe[k], ye[k], te[k], proj) for k in range(n_ref_ev)],
                   n_ref_ev, args.reference_repeats)

    mix1, ev1 = kernel[1]
    mixn, evn = kernel[all_cores]
    paper_rate = 1e3 / PAPER_MS_PER_CANDIDATE
    rows = [
        ("candidates/s, mix, 1 thread, median", f"{mix1.median:,.0f}", "1/s",
         f"reference {ref.median:,.0f}/s", f"x{mix1.median / ref.median:,.0f}"),
        ("candidates/s, mix, 1 thread, p99 run", f"{mix1.p99:,.0f}", "1/s",
         f"reference {ref.p99:,.0f}/s", f"x{mix1.p99 / ref.p99:,.0f}"),
        (f"candidates/s, mix, {all_cores} threads, median", f"{mixn.median:,.0f}", "1/s",
         f"1 thread {mix1.median:,.0f}/s", f"x{mixn.median / mix1.median:.2f}"),
        (f"candidates/s, mix, {all_cores} threads, p99 run", f"{mixn.p99:,.0f}", "1/s",
         f"1 thread {mix1.p99:,.0f}/s", f"x{mixn.p99 / mix1.p99:.2f}"),
        ("time per candidate, mix, all threads, median", f"{1e6 / mixn.median:.3f}", "us",
         f"paper {PAPER_MS_PER_CANDIDATE * 1e3:.0f} us (cited)", f"x{mixn.median / paper_rate:,.0f}"),
        ("fully evaluated fraction of the mix", f"{ev.mean():.3f}", "-", "-", "-"),
        ("candidates/s, evaluated only, 1 thread, median", f"{ev1.median:,.0f}", "1/s",
         f"reference {ref_ev.median:,.0f}/s", f"x{ev1.median / ref_ev.median:,.0f}"),
        ("candidates/s, evaluated only, 1 thread, p99 run", f"{ev1.p99:,.0f}", "1/s",
         f"reference {ref_ev.p99:,.0f}/s", f"x{ev1.p99 / ref_ev.p99:,.0f}"),
        (f"candidates/s, evaluated only, {all_cores} threads, median", f"{evn.median:,.0f}", "1/s",
         f"1 thread {ev1.median:,.0f}/s", f"x{evn.median / ev1.median:.2f}"),
        (f"candidates/s, evaluated only, {all_cores} threads, p99 run", f"{evn.p99:,.0f}", "1/s",
         f"1 thread {ev1.p99:,.0f}/s", f"x{evn.p99 / ev1.p99:.2f}"),
        (f"candidates/s, mix, graspline (depth terms), {all_cores} threads, median",
         f"{deep_n.median:,.0f}", "1/s", f"tan2024 {tan_n.median:,.0f}/s",
         f"x{deep_n.median / tan_n.median:.2f}"),
        (f"candidates/s, mix, graspline (depth terms), {all_cores} threads, p99 run",
         f"{deep_n.p99:,.0f}", "1/s", f"tan2024 {tan_n.p99:,.0f}/s",
         f"x{deep_n.p99 / tan_n.p99:.2f}"),
        ("prepare silhouette (blur, normals), median / p99",
         f"{np.median(prep_ms):.2f} / {np.percentile(prep_ms, 99):.2f}", "ms", "-", "-"),
        ("first call (compile or cache load)", f"{compile_s:.2f}", "s", "-", "-"),
    ]
    print(f"bench_scoring: {args.candidates:,} candidates on a 640x480 silhouette, n_lines=15, "
          f"r=100 px, w=15 px; {args.repeats} runs per kernel figure; reference on {n_ref} "
          f"(+{n_ref_ev} evaluated) candidates, {args.reference_repeats} runs")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numba {numba.__version__} ({numba.threading_layer()} threads)")
    widths = [max(len(r[i]) for r in rows + [("figure", "value", "unit", "baseline", "ratio")])
              for i in range(5)]
    for row in [("figure", "value", "unit", "baseline", "ratio")] + rows:
        print("  ".join(c.ljust(w) if i in (0, 3) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
    for name, value, floor in (("mix, all cores", mixn, FLOOR_MIX_PER_S),
                               ("evaluated only, all cores", evn, FLOOR_EVAL_PER_S)):
        verdict = "meets" if value.median >= floor else "BELOW"
        print(f"floor {name}: {floor:,}/s -> {verdict} (median run {value.median:,.0f}/s, "
              f"p99 run {value.p99:,.0f}/s)")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
