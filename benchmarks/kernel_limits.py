"""How far the scoring kernel is from its limits: memory reads, cache lines and cycles per candidate.

The kernel's work per candidate is counted on the plain-Python reference, which makes the same
reads in the same order (tests hold the two together value for value): every read of the
silhouette mask (the collision scan, the coarse and the fine outline search), every read of
the smoothed silhouette (four per bilinear outline crossing) and of the normal field (one per
contact pixel). Each read's 64-byte cache line is noted, so the table gives the distinct
lines a candidate touches in each array: its memory traffic were nothing cached. The kernel
itself is then timed on one thread over the same candidates (median and p99 of --repeats
runs, nanoseconds per candidate), interleaved over the objects as bench_scoring draws them and
again sorted into 32 px tiles (neighbours in time read neighbouring pixels: what is left of
the difference is the share of cache misses in the time), which gives the time per read and, at the processor's
nominal clock (/proc/cpuinfo), the cycles per candidate and per read. Hardware counters
(instructions retired, cache misses) are not readable on every machine (a VM's perf says
"not supported"): the cycles are the measured time at the nominal clock, not a counter.

Run from the repository root:
    python -m benchmarks.kernel_limits [--candidates 2000] [--timed 200000] [--repeats 9]
"""
from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass, field

import numba
import numpy as np

LINE_B = 64  # a cache line


@dataclass
class Counts:
    """Reads and distinct cache lines per array over the candidates counted."""

    reads: dict[str, int] = field(default_factory=lambda: {"mask": 0, "blur": 0, "normals": 0})
    lines: dict[str, set] = field(default_factory=lambda: {"mask": set(), "blur": set(),
                                                           "normals": set()})
    lines_total: dict[str, int] = field(default_factory=lambda: {"mask": 0, "blur": 0,
                                                                 "normals": 0})

    def note(self, array: str, row: int, col: int, width: int, itemsize: int) -> None:
        """One read of array at (row, col) of a row-major image width pixels wide."""
        self.reads[array] += 1
        self.lines[array].add((row * width + col) * itemsize // LINE_B)

    def end_candidate(self) -> None:
        """Close one candidate: add its distinct lines to the totals."""
        for k, s in self.lines.items():
            self.lines_total[k] += len(s)
            s.clear()


def count_reads(sil: np.ndarray, x: np.ndarray, y: np.ndarray, t: np.ndarray,
                projection) -> Counts:
    """The reference's reads per array (and distinct cache lines per candidate) over the
    candidates, with the kernel's layout: the mask uint8, the smoothed silhouette and the
    normal field float32, each (H, W) row-major."""
    import scoring.reference as ref

    counts = Counts()
    w = sil.shape[1]
    value, bilinear, normal = ref._value, ref._bilinear, ref.reference_normal

    def counted_value(s, px, py):
        col, row = math.floor(px + 0.5), math.floor(py + 0.5)
        if 0 <= row < s.shape[0] and 0 <= col < s.shape[1]:
            counts.note("mask", row, col, w, 1)
        return value(s, px, py)

    def counted_bilinear(s, px, py, sigma):
        c0, r0 = math.floor(px), math.floor(py)
        for dr in (0, 1):
            for dc in (0, 1):
                counts.note("blur", r0 + dr, c0 + dc, w, 4)
        return bilinear(s, px, py, sigma)

    def counted_normal(s, row, col, m=7):
        counts.note("normals", row, col, w, 4)
        return normal(s, row, col, m)

    ref._value, ref._bilinear, ref.reference_normal = counted_value, counted_bilinear, counted_normal
    try:
        for k in range(x.size):
            ref.reference_score(sil, float(x[k]), float(y[k]), float(t[k]), projection)
            counts.end_candidate()
    finally:
        ref._value, ref._bilinear, ref.reference_normal = value, bilinear, normal
    return counts


def kernel_ns(prep, x, y, t, projection, repeats: int) -> tuple[float, float]:
    """(median, p99) nanoseconds per candidate of the kernel on one thread."""
    from scoring import score_candidates

    numba.set_num_threads(1)
    score_candidates(prep, x[:8], y[:8], t[:8], projection)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        score_candidates(prep, x, y, t, projection)
        runs.append((time.perf_counter() - t0) / x.size * 1e9)
    return float(np.median(runs)), float(np.percentile(runs, 99))


def nominal_ghz() -> float:
    """The processor's nominal clock from /proc/cpuinfo, GHz (NaN where not readable)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000.0
    except OSError:
        pass
    return math.nan


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--candidates", type=int, default=2000, help="candidates counted (reference)")
    p.add_argument("--timed", type=int, default=200_000, help="candidates timed (kernel)")
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args()
    from benchmarks.bench_scoring import bench_candidates, bench_silhouette
    from scoring import GripperProjection, prepare_silhouette, score_candidates

    sil = bench_silhouette()
    proj = GripperProjection(finger_width_px=15, open_width_px=100, n_lines=15)
    x, y, t = bench_candidates(sil, args.timed, grow_px=proj.open_width_px / 2)
    prep = prepare_silhouette(sil)
    ev = score_candidates(prep, x, y, t, proj).evaluated
    ghz = nominal_ghz()
    rows = []
    for name, sel in (("mix", np.ones(x.size, bool)), ("evaluated only", ev)):
        xs, ys, ts = x[sel], y[sel], t[sel]
        n = min(args.candidates, xs.size)
        c = count_reads(sil, xs[:n], ys[:n], ts[:n], proj)
        med, p99 = kernel_ns(prep, xs, ys, ts, proj, args.repeats)
        tiles = np.lexsort((xs // 32, ys // 32))
        tiled, _ = kernel_ns(prep, xs[tiles], ys[tiles], ts[tiles], proj, args.repeats)
        reads = sum(c.reads.values()) / n
        lines = sum(c.lines_total.values()) / n
        rows.append((name, c.reads, c.lines_total, n, reads, lines, med, p99, tiled))
    print(f"# {os.cpu_count()} cores, nominal clock {ghz:.2f} GHz, numba {numba.__version__}; "
          f"silhouette {sil.shape[1]} x {sil.shape[0]}: mask {sil.nbytes / 1024:.0f} KiB, smoothed "
          f"silhouette and normals {sil.size * 4 / 1024:.0f} KiB each; 15 px fingers, 100 px "
          f"opening, 15 grasp lines; {args.candidates} candidates counted, {args.timed} timed\n")
    print("| candidates | mask reads | smoothed reads | normal reads | reads / candidate | "
          "cache lines / candidate (KiB) | ns / candidate, 1 thread: median (p99) | "
          "cycles / candidate | ns / read | cycles / read | line traffic at the measured rate | "
          "ns / candidate in 32 px tiles |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r, lt, n, reads, lines, med, p99, tiled in rows:
        cyc = med * ghz
        print(f"| {name} | {r['mask'] / n:.0f} | {r['blur'] / n:.0f} | {r['normals'] / n:.0f} | "
              f"{reads:.0f} | {lines:.0f} ({lines * LINE_B / 1024:.1f}) | {med:.0f} ({p99:.0f}) | "
              f"{cyc:.0f} | {med / reads:.2f} | {cyc / reads:.1f} | "
              f"{lines * LINE_B / med:.2f} GB/s | {tiled:.0f} ({tiled / med:.2f} of it) |")


if __name__ == "__main__":
    main()
