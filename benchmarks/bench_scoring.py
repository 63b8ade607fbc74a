"""Throughput of the image-space scoring kernel against its plain-Python reference.

A 640 x 480 silhouette with rectangles, ellipses, a polygon and a ring (drawn with
scoring.shapes, as the tests draw theirs); a gripper of 15 px
fingers, 100 px opening and 15 grasp lines; candidates uniform in each object's bounding box
grown by half the open width, θ uniform. Prints one table (figure, unit, baseline) and the
floors this machine must reach. Every timing is run --repeats times (the reference
--reference-repeats times) and the table gives the median and the p99 of all the runs, not the
best; the baselines (the plain-Python reference, one thread) are measured in the same run.

--baseline-tree PATH compares this checkout's kernel with another checkout's (an older commit,
say): the same measurement runs --rounds times for each tree, alternating which goes first,
each in a subprocess whose PYTHONPATH is that tree; it prints both tables (every round's runs
pooled) and the ratio of this tree's candidates/s to the baseline's.

Run from the repository root, with the project installed (``make install``):
    python -m benchmarks.bench_scoring [--candidates 1000000] [--repeats 10]
    python -m benchmarks.bench_scoring --baseline-tree ../base [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numba
import numpy as np


import scoring
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


def bench_tall(sil: np.ndarray) -> np.ndarray:
    """(480, 640) bool: the ring and the upright ellipse of bench_silhouette, the objects
    the palm benchmark stands 80 mm tall."""
    shape = sil.shape
    return (ring(shape, (340, 350), 44, 30) | ellipse(shape, (580, 330), 25, 40)) & (sil != 0)


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


@dataclass(frozen=True)
class Timing:
    """Seconds of every timed run of one figure, each over n_items items."""

    n_items: int
    seconds: list[float]

    def rates(self) -> Rates:
        """Items per second of the median run and of the p99 (slow) run."""
        t = np.asarray(self.seconds)
        return Rates(self.n_items / float(np.median(t)), self.n_items / float(np.percentile(t, 99)))

    def pooled(self, other: Timing) -> Timing:
        """This timing's runs and other's (same n_items) together."""
        assert self.n_items == other.n_items, (self.n_items, other.n_items)
        return Timing(self.n_items, self.seconds + other.seconds)


@dataclass
class Figures:
    """Everything one measurement gives: timings by name (see KERNEL_FIGURES), set-up numbers."""

    timings: dict[str, Timing]
    prep_ms: list[float]
    compile_s: list[float]
    evaluated_fraction: float
    threads: int
    scoring_file: str
    machine: str = field(default_factory=lambda: (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numba {numba.__version__} ({numba.threading_layer()} threads)"))

    def pooled(self, other: Figures) -> Figures:
        """The runs of two measurements of the same tree, together."""
        return Figures({k: t.pooled(other.timings[k]) for k, t in self.timings.items()},
                       self.prep_ms + other.prep_ms, self.compile_s + other.compile_s,
                       self.evaluated_fraction, self.threads, self.scoring_file, self.machine)

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "timings": {k: t.__dict__ for k, t in self.timings.items()}})

    @classmethod
    def from_json(cls, text: str) -> Figures:
        d = json.loads(text)
        d["timings"] = {k: Timing(**t) for k, t in d["timings"].items()}
        return cls(**d)


# the kernel figures compared between trees: key, label (the thread count filled in)
KERNEL_FIGURES = (("mix1", "mix, 1 thread"), ("mixn", "mix, {n} threads"),
                  ("ev1", "evaluated only, 1 thread"), ("evn", "evaluated only, {n} threads"),
                  ("tan_n", "mix, tan2024, {n} threads"),
                  ("deep_n", "mix, graspline (depth terms), {n} threads"),
                  ("deep_ev", "evaluated only, graspline (depth terms), {n} threads"),
                  ("palm_n", "mix, graspline with a wide palm by tall neighbours, {n} threads"))


def timing(fn, n_items: int, repeats: int) -> Timing:
    """Time ``repeats`` runs of fn() over n_items items; keep every run."""
    return Timing(n_items, [_timed(fn) for _ in range(repeats)])


def measure(args: argparse.Namespace) -> Figures:
    """Time the kernel, its parallel scaling, the depth terms and the reference, as args say."""
    sil = bench_silhouette()
    proj = GripperProjection(finger_width_px=15, open_width_px=100, n_lines=15)
    x, y, t = bench_candidates(sil, args.candidates, grow_px=proj.open_width_px / 2)

    t0 = time.perf_counter()
    prep = prepare_silhouette(sil)
    score_candidates(prep, x[:8], y[:8], t[:8], proj)
    compile_s = time.perf_counter() - t0  # first call: compile, or load numba's cache
    prep_ms = [1e3 * _timed(lambda: prepare_silhouette(sil)) for _ in range(args.repeats)]

    all_cores = numba.config.NUMBA_NUM_THREADS
    scores = score_candidates(prep, x, y, t, proj)
    ev = scores.evaluated
    xe, ye, te = x[ev], y[ev], t[ev]
    tm = {}
    for threads in sorted({1, all_cores}):
        numba.set_num_threads(threads)
        key = "1" if threads == 1 else "n"
        tm["mix" + key] = timing(lambda: score_candidates(prep, x, y, t, proj), x.size, args.repeats)
        tm["ev" + key] = timing(lambda: score_candidates(prep, xe, ye, te, proj), xe.size,
                                args.repeats)
    numba.set_num_threads(all_cores)
    tm.setdefault("mixn", tm["mix1"])  # one core: the all-cores figures are the 1-thread ones
    tm.setdefault("evn", tm["ev1"])
    # graspline's measure: Tan's kernel plus the depth terms, on a flat 20 mm height map
    view = DepthView(np.where(sil != 0, 0.02, np.nan).astype(np.float32), 0.001,
                     (320.0, 240.0), 0.3, sil != 0)
    deep = dict(jaw=JawLimits(finger_thickness_m=0.014), depth=view)
    score_candidates(prep, x[:8], y[:8], t[:8], proj, **deep)  # compile
    tm["tan_n"] = timing(lambda: score_candidates(prep, x, y, t, proj, measure="tan2024"), x.size,
                         args.repeats)
    tm["deep_n"] = timing(lambda: score_candidates(prep, x, y, t, proj, **deep), x.size,
                          args.repeats)
    # issue 24's second figure: fully evaluated candidates with the depth terms
    tm["deep_ev"] = timing(lambda: score_candidates(prep, xe, ye, te, proj, **deep), xe.size,
                           args.repeats)
    # a palm wider than the fingers (the Franka hand's, 204 x 63 mm) over a scene where two
    # objects stand 80 mm tall, higher than the 60 mm fingers: its own check runs
    tall = bench_tall(sil)
    palm_view = DepthView(np.where(sil != 0, np.where(tall, 0.08, 0.02), np.nan).astype(np.float32),
                          0.001, (320.0, 240.0), 0.3, sil != 0)
    palm = dict(jaw=JawLimits(finger_thickness_m=0.014, palm_width_m=0.063, palm_length_m=0.204),
                depth=palm_view)
    score_candidates(prep, x[:8], y[:8], t[:8], proj, **palm)  # compile
    tm["palm_n"] = timing(lambda: score_candidates(prep, x, y, t, proj, **palm), x.size,
                          args.repeats)

    n_ref = min(args.reference, x.size)
    tm["ref"] = timing(lambda: [reference_score(sil, x[k], y[k], t[k], proj) for k in range(n_ref)],
                       n_ref, args.reference_repeats)
    n_ref_ev = min(args.reference, xe.size)
    tm["ref_ev"] = timing(
        lambda: [reference_score(sil, xe[k], ye[k], te[k], proj) for k in range(n_ref_ev)],
        n_ref_ev, args.reference_repeats)
    return Figures(tm, prep_ms, [compile_s], float(ev.mean()), all_cores, scoring.__file__)


def print_table(fig: Figures, args: argparse.Namespace) -> None:
    """The table of one measurement (figure, value, unit, baseline, ratio) and the floors."""
    r = {k: t.rates() for k, t in fig.timings.items()}
    mix1, ev1, mixn, evn, ref, ref_ev = (r[k] for k in ("mix1", "ev1", "mixn", "evn", "ref", "ref_ev"))
    tan_n, deep_n = r["tan_n"], r["deep_n"]
    deep_ev = r.get("deep_ev", deep_n)  # a baseline tree's bench_scoring may not time it
    all_cores = fig.threads
    paper_rate = 1e3 / PAPER_MS_PER_CANDIDATE
    prep_ms = np.asarray(fig.prep_ms)
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
        ("fully evaluated fraction of the mix", f"{fig.evaluated_fraction:.3f}", "-", "-", "-"),
        ("candidates/s, evaluated only, 1 thread, median", f"{ev1.median:,.0f}", "1/s",
         f"reference {ref_ev.median:,.0f}/s", f"x{ev1.median / ref_ev.median:,.0f}"),
        ("candidates/s, evaluated only, 1 thread, p99 run", f"{ev1.p99:,.0f}", "1/s",
         f"reference {ref_ev.p99:,.0f}/s", f"x{ev1.p99 / ref_ev.p99:,.0f}"),
        (f"candidates/s, evaluated only, {all_cores} threads, median", f"{evn.median:,.0f}", "1/s",
         f"1 thread {ev1.median:,.0f}/s", f"x{evn.median / ev1.median:.2f}"),
        (f"candidates/s, evaluated only, {all_cores} threads, p99 run", f"{evn.p99:,.0f}", "1/s",
         f"1 thread {ev1.p99:,.0f}/s", f"x{evn.p99 / ev1.p99:.2f}"),
        *_against_tan(f"mix, graspline (depth terms), {all_cores} threads", deep_n, tan_n),
        *_against_tan(f"evaluated only, graspline (depth terms), {all_cores} threads", deep_ev,
                      evn),
        *([] if "palm_n" not in r else _against_tan(
            f"mix, graspline with a 204 x 63 mm palm by 80 mm neighbours, {all_cores} threads",
            r["palm_n"], tan_n)),
        ("prepare silhouette (blur, normals), median / p99",
         f"{np.median(prep_ms):.2f} / {np.percentile(prep_ms, 99):.2f}", "ms", "-", "-"),
        ("first call (compile or cache load), longest", f"{max(fig.compile_s):.2f}", "s", "-", "-"),
    ]
    n_runs = len(fig.timings["mix1"].seconds)
    print(f"bench_scoring: {args.candidates:,} candidates on a 640x480 silhouette, n_lines=15, "
          f"r=100 px, w=15 px; {n_runs} runs per kernel figure; reference on "
          f"{fig.timings['ref'].n_items} (+{fig.timings['ref_ev'].n_items} evaluated) candidates, "
          f"{len(fig.timings['ref'].seconds)} runs")
    print(f"machine: {fig.machine}; scoring from {fig.scoring_file}")
    _print_rows([("figure", "value", "unit", "baseline", "ratio")] + rows, left=(0, 3))
    for name, value, floor in (("mix, all cores", mixn, FLOOR_MIX_PER_S),
                               ("evaluated only, all cores", evn, FLOOR_EVAL_PER_S)):
        verdict = "meets" if value.median >= floor else "BELOW"
        print(f"floor {name}: {floor:,}/s -> {verdict} (median run {value.median:,.0f}/s, "
              f"p99 run {value.p99:,.0f}/s)")


def _against_tan(label: str, rates: Rates, tan: Rates) -> list[tuple[str, ...]]:
    """The median and p99-run rows of a figure of graspline's measure beside Tan's alone."""
    return [(f"candidates/s, {label}, {which}", f"{getattr(rates, attr):,.0f}", "1/s",
             f"tan2024 {getattr(tan, attr):,.0f}/s",
             f"x{getattr(rates, attr) / getattr(tan, attr):.2f}")
            for which, attr in (("median", "median"), ("p99 run", "p99"))]


def print_comparison(this: Figures, base: Figures) -> None:
    """Candidates/s of this tree and the baseline side by side, median and p99 run, and ratios."""
    rows = [("figure", "this median", "base median", "ratio", "this p99", "base p99", "ratio")]
    for key, label in KERNEL_FIGURES:
        if this.threads == 1 and key in ("mixn", "evn"):
            continue  # the same runs as the 1-thread figures
        if key not in this.timings or key not in base.timings:
            continue  # an older tree's bench_scoring does not time it
        a, b = this.timings[key].rates(), base.timings[key].rates()
        rows.append((label.format(n=this.threads), f"{a.median:,.0f}", f"{b.median:,.0f}",
                     f"{a.median / b.median:.3f}", f"{a.p99:,.0f}", f"{b.p99:,.0f}",
                     f"{a.p99 / b.p99:.3f}"))
    print("candidates/s, this tree / baseline (ratio > 1: this tree faster)")
    _print_rows(rows, left=(0,))


def compare(args: argparse.Namespace) -> None:
    """Measure this tree and the baseline tree in alternating subprocesses; print both and the ratio."""
    # here, not at the top: the measuring subprocess runs this file against the baseline
    # tree's packages, where benchmarks/_baseline.py may not exist
    from benchmarks._baseline import alternate_rounds, baseline_trees

    trees = baseline_trees(args.baseline_tree, "scoring")
    runs = alternate_rounds(trees, args.rounds, lambda tree: _measure_in_subprocess(tree, args),
                            lambda fig: fig.scoring_file)
    for name in ("this", "base"):
        print(f"\n== {name} tree: {trees[name]} ({args.rounds} rounds pooled)")
        print_table(runs[name], args)
    print()
    print_comparison(runs["this"], runs["base"])


def _measure_in_subprocess(tree: Path, args: argparse.Namespace) -> Figures:
    """This benchmark's measurement, run as a script (so the repository root of the caller is not
    on sys.path) with PYTHONPATH=tree: tree's scoring package is the one measured."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--json", "--candidates",
           str(args.candidates), "--repeats", str(args.repeats), "--reference", str(args.reference),
           "--reference-repeats", str(args.reference_repeats)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{out.stderr}")
    return Figures.from_json(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1_000_000)
    ap.add_argument("--reference", type=int, default=300, help="candidates for the reference")
    ap.add_argument("--repeats", type=int, default=10, help="timed runs of the kernel per figure")
    ap.add_argument("--reference-repeats", type=int, default=3, help="timed runs of the reference")
    ap.add_argument("--baseline-tree", metavar="PATH",
                    help="another checkout whose kernel to measure beside this one")
    ap.add_argument("--rounds", type=int, default=2,
                    help="with --baseline-tree: measurements of each tree, alternating order")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a subprocess's output
    args = ap.parse_args()
    if args.baseline_tree:
        compare(args)
    elif args.json:
        print(measure(args).to_json())
    else:
        print_table(measure(args), args)


def _print_rows(rows: list[tuple[str, ...]], left: tuple[int, ...]) -> None:
    """Columns padded to their widest cell; columns in ``left`` left-aligned, others right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) if i in left else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
