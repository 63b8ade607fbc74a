"""The validation report: a trial log -> one HTML page with PNG plots.

Follows Tan et al.'s validation (sec. V, Fig. 8): trials grouped by score level, the success
rate and the mean object movement of the successful trials per level. Added: Wilson intervals,
a reliability curve, the ROC curve and its AUC, Spearman's rank correlation of score and
success, trials per level, stage latencies, and each trial's chosen grasp.

Departures from the paper, and why: five levels by default, not ten (a cell's validation run
is smaller than their 1000 grasps; ``n_levels`` sets it). The movement score is the mean of
|translation along the closing direction| / (open width / 2) and rotation / 60 degrees, each
capped at 1: the paper normalised translation by 100 image pixels, which has no meaning for
another camera; half the open width is the farthest the fingers can push the object, the scale
the translation predictor D_t uses.
"""
from __future__ import annotations

import html
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ._trials import TrialLog, TrialRecord
from ._types import KernelWarmUp

ROTATION_NORM_RAD = math.radians(60.0)   # Tan et al.'s rotation threshold
DEFAULT_HALF_OPEN_M = 0.04               # translation scale when a trial has no width_m
_THUMB_PX = 160


@dataclass(frozen=True)
class LevelStats:
    """Closed trials in one score level [lo, hi): counts, success rate with its Wilson 95 %
    interval, mean score, and the mean movement (score, metres, radians) of the successes."""

    lo: float
    hi: float
    n: int
    k: int
    rate: float
    ci_lo: float
    ci_hi: float
    mean_score: float
    n_moved: int
    movement_score: float
    movement_m: float
    movement_rad: float

    @property
    def label(self) -> str:
        """"0.2-0.4" style name of the level."""
        return f"{self.lo:.1f}-{self.hi:.1f}"


@dataclass(frozen=True)
class GroupStats:
    """Validation figures of one group of closed trials (all, or one mode)."""

    name: str
    n: int
    k: int
    auc: float | None
    spearman_rho: float | None
    spearman_p: float | None
    levels: list[LevelStats]
    fpr: np.ndarray
    tpr: np.ndarray


def wilson_interval(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a success rate k/n (95 % by default); (nan, nan) for n = 0.

    Always lo <= k/n <= hi: at k = 0 or k = n the formula's bound equals the rate exactly,
    and float rounding could put it a hair on the wrong side (1 - 1e-16 for 4/4), so the
    bounds are clipped to the rate (and to [0, 1])."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def roc_auc(scores: np.ndarray, success: np.ndarray) -> float | None:
    """Area under the ROC curve of score against success: the Mann-Whitney U of the
    successes' scores over the failures', / (n_success n_failure), ties counted half. None
    unless both outcomes occur."""
    from scipy.stats import rankdata

    s, y = np.asarray(scores, np.float64), np.asarray(success, bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return None
    ranks = rankdata(s)  # average ranks for ties
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def roc_curve(scores: np.ndarray, success: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """False- and true-positive rates as the acceptance threshold falls through the scores
    (tied scores enter together), from (0, 0) to (1, 1)."""
    s, y = np.asarray(scores, np.float64), np.asarray(success, bool)
    n1, n0 = max(1, int(y.sum())), max(1, int((~y).sum()))
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1] if len(s) else np.array([], int)
    tp, fp = np.cumsum(y)[last], np.cumsum(~y)[last]
    return np.r_[0.0, fp / n0], np.r_[0.0, tp / n1]


def movement_score(rec: TrialRecord) -> float | None:
    """Tan et al.'s object-movement score of one trial in [0, 1] (see the module docstring),
    or None without a movement estimate."""
    if rec.movement_m is None or rec.movement_rad is None:
        return None
    half = rec.width_m / 2 if rec.width_m else DEFAULT_HALF_OPEN_M
    return 0.5 * (min(1.0, abs(rec.movement_m) / half)
                  + min(1.0, abs(rec.movement_rad) / ROTATION_NORM_RAD))


def group_stats(name: str, records: list[TrialRecord], n_levels: int = 5) -> GroupStats:
    """Per-level and overall validation figures of closed, scored trials."""
    from scipy.stats import spearmanr

    recs = [r for r in records if r.success is not None and r.score is not None]
    s = np.array([r.score for r in recs], np.float64)
    y = np.array([r.success for r in recs], bool)
    edges = np.linspace(0.0, 1.0, n_levels + 1)
    level = np.clip((s * n_levels).astype(int), 0, n_levels - 1)
    levels = []
    for i in range(n_levels):
        at = np.flatnonzero(level == i)
        n, k = len(at), int(y[at].sum())
        lo, hi = wilson_interval(k, n)
        moved = [recs[j] for j in at if y[j] and movement_score(recs[j]) is not None]
        levels.append(LevelStats(
            lo=float(edges[i]), hi=float(edges[i + 1]), n=n, k=k,
            rate=k / n if n else math.nan, ci_lo=lo, ci_hi=hi,
            mean_score=float(s[at].mean()) if n else math.nan, n_moved=len(moved),
            movement_score=float(np.mean([movement_score(r) for r in moved])) if moved else math.nan,
            movement_m=float(np.mean([abs(r.movement_m) for r in moved])) if moved else math.nan,
            movement_rad=float(np.mean([r.movement_rad for r in moved])) if moved else math.nan))
    rho = p = None
    if len(s) >= 3 and np.ptp(s) > 0 and 0 < y.sum() < len(y):
        res = spearmanr(s, y)
        rho, p = float(res.statistic), float(res.pvalue)
    fpr, tpr = roc_curve(s, y)
    return GroupStats(name=name, n=len(recs), k=int(y.sum()), auc=roc_auc(s, y),
                      spearman_rho=rho, spearman_p=p, levels=levels, fpr=fpr, tpr=tpr)


# -- plots ------------------------------------------------------------------------------------

def _figure(w: float = 6.4, h: float = 4.2):
    """A matplotlib Figure on the Agg canvas (no pyplot: no global backend, no GUI)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


_COLOURS = {"all": "#1f4e79", "best": "#2e8b57", "validate": "#c0504d"}


def _plot_levels(groups: list[GroupStats], path: Path) -> None:
    """Tan Fig. 8: success rate per score level (line, Wilson intervals, counts) and the mean
    movement score of the successes (bars, right axis)."""
    fig = _figure(7.0, 4.4)
    ax = fig.add_subplot()
    ax2 = ax.twinx()
    width = 0.2 / max(1, len(groups)) * 0.9
    for gi, g in enumerate(groups):
        c = _COLOURS.get(g.name, None)
        x = np.array([(lv.lo + lv.hi) / 2 for lv in g.levels])
        rate = np.array([lv.rate for lv in g.levels])
        # matplotlib refuses negative error bars: never below 0 (empty levels stay NaN)
        err = np.array([[lv.rate - lv.ci_lo for lv in g.levels],
                        [lv.ci_hi - lv.rate for lv in g.levels]])
        err = np.where(np.isnan(err), err, np.maximum(err, 0.0))
        ax.errorbar(x, rate, yerr=err, color=c, marker="o", capsize=3, lw=2,
                    label=f"success rate, {g.name}", zorder=3)
        for xi, lv in zip(x, g.levels):
            if lv.n:
                ax.annotate(f"{lv.k}/{lv.n}", (xi, lv.rate), textcoords="offset points",
                            xytext=(6, 6 + 10 * gi), fontsize=7, color=c)
        off = (gi - (len(groups) - 1) / 2) * width
        mv = np.array([lv.movement_score for lv in g.levels])
        has = np.isfinite(mv)  # no bar where no success had a movement estimate (not a 0)
        if has.any():
            ax2.bar((x + off)[has], mv[has], width=width, color=c, alpha=0.3,
                    label=f"movement score, {g.name}")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.1)
    ax2.set_ylim(0, 1.1)
    ax.set_xticks(np.linspace(0, 1, len(groups[0].levels) + 1))
    ax.set_xlabel("grasp score level")
    ax.set_ylabel("success rate (95 % Wilson interval)")
    ax2.set_ylabel("mean movement score of successes (bars)")
    ax.set_zorder(ax2.get_zorder() + 1)
    ax.patch.set_visible(False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=7)
    ax.set_title("Success rate and object movement per score level (Tan et al. Fig. 8)",
                 fontsize=9)
    fig.savefig(path)


def _plot_reliability(groups: list[GroupStats], path: Path) -> None:
    """Observed success rate against the mean score of each level, with the diagonal."""
    fig = _figure(4.6, 4.4)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="score = success rate")
    for g in groups:
        lv = [v for v in g.levels if v.n]
        ax.errorbar([v.mean_score for v in lv], [v.rate for v in lv],
                    yerr=[[max(0.0, v.rate - v.ci_lo) for v in lv],
                          [max(0.0, v.ci_hi - v.rate) for v in lv]],
                    marker="o", capsize=3, color=_COLOURS.get(g.name), label=g.name)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel("mean score in level")
    ax.set_ylabel("observed success rate")
    ax.set_title("Reliability", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.savefig(path)


# said where no group has both outcomes (the demo's best grasps all held, say): an empty ROC
NO_ROC_PLOT = "no curve: the trials need\nsuccesses and failures both"
NO_ROC_TEXT = ("No ROC curve: every closed trial had the same outcome, and the curve needs "
               "successes and failures both. Grasps drawn across the score levels "
               "(<code>graspline demo --validate</code>, <code>graspline run --validate</code>) "
               "give both.")


def _plot_roc(groups: list[GroupStats], path: Path) -> None:
    """ROC curve of score against success, AUC in the legend."""
    fig = _figure(4.6, 4.4)
    ax = fig.add_subplot()
    # labelled: the legend's one entry when no group has a curve (every trial held, say)
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="chance")
    for g in groups:
        if g.auc is not None:
            # straight segments: a run of tied scores enters at once (a diagonal), as in the AUC
            ax.plot(g.fpr, g.tpr, color=_COLOURS.get(g.name), lw=2,
                    label=f"{g.name}: AUC {g.auc:.3f} (n={g.n})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate (failures accepted)")
    ax.set_ylabel("true-positive rate (successes accepted)")
    ax.set_title("ROC of the score as a success predictor", fontsize=9)
    if all(g.auc is None for g in groups):
        ax.text(0.3, 0.8, NO_ROC_PLOT, ha="center", va="center", fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "none"})
    ax.legend(fontsize=7, loc="lower right")
    fig.savefig(path)


def _plot_counts(groups: list[GroupStats], path: Path) -> None:
    """Closed trials per score level, successes and failures stacked, one bar per group."""
    fig = _figure(6.0, 3.6)
    ax = fig.add_subplot()
    width = 0.2 / len(groups) * 0.9
    for gi, g in enumerate(groups):
        x = np.array([(lv.lo + lv.hi) / 2 for lv in g.levels]) + \
            (gi - (len(groups) - 1) / 2) * width
        k = np.array([lv.k for lv in g.levels])
        n = np.array([lv.n for lv in g.levels])
        c = _COLOURS.get(g.name)
        ax.bar(x, k, width=width, color=c, label=f"{g.name}: success")
        ax.bar(x, n - k, bottom=k, width=width, color=c, alpha=0.35, hatch="//",
               label=f"{g.name}: failure")
    ax.set_xlim(0, 1)
    ax.set_xticks(np.linspace(0, 1, len(groups[0].levels) + 1))
    ax.set_xlabel("grasp score level")
    ax.set_ylabel("closed trials")
    ax.set_title("Trials per score level", fontsize=9)
    ax.legend(fontsize=7)
    fig.savefig(path)


# a cycle's stage slower than this many times the stage's median is counted as an outlier in
# its plot's title (a first cycle that compiled the kernels is hundreds of times slower)
OUTLIER_X_MEDIAN = 10.0


def _plot_latency(records: list[TrialRecord],
                  path: Path) -> list[tuple[str, int, float, float, int]]:
    """One histogram per stage (milliseconds) on a log scale, so that an outlier seconds long
    leaves the milliseconds readable; median and p99 in each legend, the cycles over
    OUTLIER_X_MEDIAN times the median counted in the title; returns (stage, n, median_s,
    p99_s, outliers) rows in the order stages first appear."""
    stages: dict[str, list[float]] = {}
    for r in records:
        for k, v in r.stage_s.items():
            stages.setdefault(k, []).append(v)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    rows = []
    for k, v in stages.items():
        med = float(np.median(v))
        slow = int(np.count_nonzero(np.asarray(v) > OUTLIER_X_MEDIAN * med)) if med > 0 else 0
        rows.append((k, len(v), med, float(np.percentile(v, 99)), slow))
    if not rows:
        return rows
    cols = min(3, len(rows))
    nrows = math.ceil(len(rows) / cols)
    fig = _figure(3.2 * cols, 2.4 * nrows)
    for i, (name, n, med, p99, slow) in enumerate(rows):
        ax = fig.add_subplot(nrows, cols, i + 1)
        ms = np.asarray(stages[name]) * 1000.0
        # log-spaced bins over the positive times (a stage can take 0 ms at this clock's
        # resolution: those sit in the first bin)
        lo = max(float(ms[ms > 0].min()) if np.any(ms > 0) else 1e-3, 1e-3)
        hi = max(float(ms.max()), lo * 1.01)
        bins = np.geomspace(lo, hi, min(30, max(5, n // 2)) + 1)
        ax.hist(np.clip(ms, lo, hi), bins=bins, color="#1f4e79", alpha=0.8,
                label=f"median {med * 1e3:.3g} ms\np99 {p99 * 1e3:.3g} ms\nn={n}")
        ax.set_xscale("log")
        ax.axvline(max(med * 1e3, lo), color="k", lw=1)
        ax.axvline(max(p99 * 1e3, lo), color="#c0504d", lw=1, ls="--")
        ax.set_title(name + (f" ({slow} over {OUTLIER_X_MEDIAN:g}x median)" if slow else ""),
                     fontsize=9)
        ax.set_xlabel("ms (log scale)", fontsize=8)
        # plain numbers, and only a few: on a narrow range matplotlib labels every minor tick
        # as "3x10^0", and the labels run into each other
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0), numticks=6))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, handlelength=0, handletextpad=0)
    fig.savefig(path)
    return rows


def _plot_truth(records: list[TrialRecord], path: Path) -> tuple[float, float, int] | None:
    """Image-estimated movement against the simulator's truth (translation mm, rotation deg);
    returns (RMS error m, RMS error rad, n) or None without such trials."""
    both = [r for r in records if None not in (r.movement_m, r.movement_rad,
                                                r.truth_movement_m, r.truth_movement_rad)]
    if not both:
        return None
    est_t = np.array([r.movement_m for r in both])
    tru_t = np.array([r.truth_movement_m for r in both])
    est_r = np.array([r.movement_rad for r in both])
    tru_r = np.array([r.truth_movement_rad for r in both])
    rms_t = float(np.sqrt(np.mean((est_t - tru_t) ** 2)))
    rms_r = float(np.sqrt(np.mean((est_r - tru_r) ** 2)))
    fig = _figure(7.0, 3.4)
    for i, (est, tru, unit, scale, rms) in enumerate(
            ((est_t, tru_t, "mm", 1e3, rms_t * 1e3), (est_r, tru_r, "deg", 180 / math.pi,
                                                      math.degrees(rms_r)))):
        ax = fig.add_subplot(1, 2, i + 1)
        lim = [min(est.min(), tru.min()) * scale, max(est.max(), tru.max()) * scale]
        ax.plot(lim, lim, ls="--", color="grey", lw=1)
        ax.scatter(tru * scale, est * scale, s=12, color="#1f4e79",
                   label=f"RMS error {rms:.3g} {unit}, n={len(both)}")
        ax.set_xlabel(f"simulator truth ({unit})")
        ax.set_ylabel(f"from before/after depth ({unit})")
        ax.set_title("translation along closing" if i == 0 else "rotation", fontsize=9)
        ax.legend(fontsize=7)
    fig.savefig(path)
    return rms_t, rms_r, len(both)


# -- the page ---------------------------------------------------------------------------------

def _fmt(v: float | None, spec: str = ".3f") -> str:
    return "&ndash;" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _gallery(records: list[TrialRecord], out: Path) -> list[str]:
    """Copy each trial's overlay and a thumbnail into out/overlays, and beside it a database
    grasp's panel (db_grasp) where the trial has one; HTML figure elements."""
    items = []
    folder = out / "overlays"
    for r in records:
        src = r.images.get("overlay")
        if src is None or not Path(src).is_file():
            continue
        folder.mkdir(exist_ok=True)
        link = _thumbnail(Path(src), folder, str(r.trial_id), f"trial {r.trial_id}")
        if link is None:
            continue
        cap = (f"#{r.trial_id} {html.escape(r.object_label)} score {_fmt(r.score, '.2f')} "
               f"{html.escape(r.outcome)}")
        panel = r.images.get("db_grasp")
        if panel is not None and Path(panel).is_file():
            db_link = _thumbnail(Path(panel), folder, f"{r.trial_id}_db_grasp",
                                 f"trial {r.trial_id} database grasp")
            if db_link is not None:
                link += " " + db_link.replace("<a ", "<a class=db_grasp ", 1)
                cap += " (right: the database grasp in the object's frame)"
        items.append(f"<figure>{link}<figcaption>{cap}</figcaption></figure>")
    return items


def _thumbnail(src: Path, folder: Path, stem: str, alt: str) -> str | None:
    """Copy src to folder/stem.png with a thumbnail beside it; the HTML link of the
    thumbnail to the copy, None when src is not an image."""
    full, thumb = folder / f"{stem}.png", folder / f"{stem}_thumb.png"
    shutil.copyfile(src, full)
    img = cv2.imread(str(full), cv2.IMREAD_COLOR)
    if img is None:
        return None
    f = _THUMB_PX / max(img.shape[:2])
    cv2.imwrite(str(thumb), cv2.resize(img, None, fx=min(1.0, f), fy=min(1.0, f),
                                       interpolation=cv2.INTER_AREA))
    return f'<a href="overlays/{full.name}"><img src="overlays/{thumb.name}" alt="{alt}"></a>'


_CSS = """body{font-family:sans-serif;margin:2em;max-width:1100px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;
text-align:right}th{background:#eee}img.plot{max-width:100%;margin:.5em 0}
.gallery{display:flex;flex-wrap:wrap;gap:8px}.gallery figure{margin:0;font-size:11px}
.note{color:#555}"""


def write_report(log_dir: str | Path, out_dir: str | Path, *, n_levels: int = 5) -> Path:
    """Write the validation report of the trial log in log_dir to out_dir/index.html with its
    PNG plots beside it; return the HTML path. Trials are grouped by mode ("best",
    "validate") where both occur, besides all together."""
    if isinstance(n_levels, bool) or not isinstance(n_levels, int) or n_levels < 1:
        raise ValueError(f"write_report: n_levels must be an integer >= 1, got {n_levels!r}")
    log_dir, out = Path(log_dir), Path(out_dir)
    if not (log_dir / "trials.sqlite").is_file():
        from ._trials import TrialLogError

        raise TrialLogError(f"no trial log in {log_dir} (no trials.sqlite)")
    with TrialLog(log_dir) as log:
        records = log.records()
        warm_ups = log.warm_ups()
    out.mkdir(parents=True, exist_ok=True)
    finished = [r for r in records if r.finished_at_s is not None]
    closed = [r for r in records if r.success is not None and r.score is not None]
    by_outcome: dict[str, int] = {}
    for r in records:
        key = r.outcome if r.finished_at_s is not None or r.outcome != "pending" else "unfinished"
        by_outcome[key] = by_outcome.get(key, 0) + 1
    body = [f"<h1>Grasp validation report</h1><p class=note>Trial log "
            f"<code>{html.escape(str(log_dir.resolve()))}</code>: {len(records)} trial(s); "
            + ", ".join(f"{html.escape(k)} {v}" for k, v in sorted(by_outcome.items()))
            + ". A trial counts when its outcome is success or failure and it has a score.</p>"]
    if not records:
        body.append("<p id=empty>The log has no trials yet.</p>")
    elif not closed:
        body.append("<p id=empty>No closed trials yet: no trial has a confirmed success or "
                    "failure with a score, so there is nothing to validate.</p>")
    else:
        modes = sorted({r.mode for r in closed})
        groups = [group_stats("all", closed, n_levels)]
        if len(modes) > 1:
            groups += [group_stats(m, [r for r in closed if r.mode == m], n_levels)
                       for m in modes]
        body.append(_summary_table(groups))
        _plot_levels(groups, out / "levels.png")
        body.append("<h2>Success rate and object movement per score level</h2>"
                    "<p class=note>Movement score: mean of |translation along the closing "
                    "direction| / (open width / 2) and rotation / 60&deg;, each capped at 1, "
                    "over the successful trials only (as in the paper).</p>"
                    '<img class=plot src="levels.png" alt="levels">')
        body.append(_levels_table(groups))
        _plot_reliability(groups, out / "reliability.png")
        _plot_roc(groups, out / "roc.png")
        body.append('<h2>Reliability and ROC</h2>')
        if all(g.auc is None for g in groups):
            body.append(f"<p>{NO_ROC_TEXT}</p>")
        body.append('<img class=plot src="reliability.png" alt="reliability"> '
                    '<img class=plot src="roc.png" alt="roc">')
        _plot_counts(groups, out / "counts.png")
        body.append('<h2>Trials per score level</h2><img class=plot src="counts.png" '
                    'alt="counts">')
    truth = _plot_truth(finished, out / "movement_truth.png")
    if truth is not None:
        body.append(f"<h2>Object movement: image estimate against the simulator</h2>"
                    f"<p id=truth>RMS error {truth[0] * 1e3:.2f} mm along the closing direction, "
                    f"{math.degrees(truth[1]):.2f}&deg; rotation, over {truth[2]} trials.</p>"
                    f'<img class=plot src="movement_truth.png" alt="movement truth">')
    lat = _plot_latency(finished, out / "latency.png")
    body.append(_warm_up_line(warm_ups))
    if lat:
        rows = "".join(f"<tr data-stage='{html.escape(k)}'><td>{html.escape(k)}</td><td>{n}</td>"
                       f"<td>{med * 1e3:.3g}</td><td>{p99 * 1e3:.3g}</td><td>{slow}</td></tr>"
                       for k, n, med, p99, slow in lat)
        body.append(f"<h2>Stage latency</h2><table><tr><th>stage</th><th>n</th><th>median "
                    f"ms</th><th>p99 ms</th><th>over {OUTLIER_X_MEDIAN:g}x median</th></tr>"
                    f"{rows}</table>"
                    f'<img class=plot src="latency.png" alt="latency">')
    gallery = _gallery(finished, out)
    if gallery:
        body.append("<h2>Chosen grasps</h2><div class=gallery>" + "".join(gallery) + "</div>")
    page = out / "index.html"
    page.write_text("<!doctype html><html><head><meta charset=utf-8><title>graspline "
                    f"validation</title><style>{_CSS}</style></head><body>"
                    + "\n".join(body) + "</body></html>\n", encoding="utf-8")
    return page


def _warm_up_line(warm_ups: list[KernelWarmUp]) -> str:
    """The paragraph "warm-up: X s ...": the kernels' warm-up before the first cycle, apart
    from the cycles' latencies; several starts of the cell on one log: the last and the
    longest."""
    if not warm_ups:
        return ("<p id=warm-up>warm-up: not recorded (a log written before warm-ups were "
                "recorded: its first cycle may include the kernels' compilation)</p>")
    last = warm_ups[-1]
    how = (f"{last.compiled} kernel signature(s) compiled" if last.compiled
           else "kernels loaded from numba's cache")
    text = f"warm-up: {last.seconds:.2f} s before the first cycle ({how})"
    if len(warm_ups) > 1:
        longest = max(warm_ups, key=lambda w: w.seconds)
        text += f"; {len(warm_ups)} starts on this log, the longest {longest.seconds:.2f} s"
    return (f"<p id=warm-up>{html.escape(text)}; not counted in the stage latencies "
            f"below.</p>")


def _summary_table(groups: list[GroupStats]) -> str:
    rows = "".join(
        f"<tr data-group='{g.name}'><td>{g.name}</td><td class=n>{g.n}</td><td class=k>{g.k}"
        f"</td><td class=rate>{_fmt(100 * g.k / g.n if g.n else None, '.1f')}%</td>"
        f"<td class=auc>{_fmt(g.auc)}</td><td class=rho>{_fmt(g.spearman_rho)}</td>"
        f"<td class=p>{_fmt(g.spearman_p, '.2g')}</td></tr>" for g in groups)
    return ("<h2>Summary</h2><table><tr><th>group</th><th>closed trials</th><th>successes</th>"
            "<th>success rate</th><th>ROC AUC</th><th>Spearman &rho;</th><th>p</th></tr>"
            f"{rows}</table>")


def _levels_table(groups: list[GroupStats]) -> str:
    rows = []
    for g in groups:
        for lv in g.levels:
            rows.append(
                f"<tr data-group='{g.name}' data-level='{lv.label}'><td>{g.name}</td>"
                f"<td>{lv.label}</td><td class=n>{lv.n}</td><td class=k>{lv.k}</td>"
                f"<td class=rate>{_fmt(100 * lv.rate if lv.n else None, '.1f')}%</td>"
                f"<td class=ci>{_fmt(100 * lv.ci_lo if lv.n else None, '.1f')}&ndash;"
                f"{_fmt(100 * lv.ci_hi if lv.n else None, '.1f')}%</td>"
                f"<td class=mscore>{_fmt(lv.movement_score)}</td>"
                f"<td class=mm>{_fmt(lv.movement_m * 1e3, '.2f')}</td>"
                f"<td class=deg>{_fmt(math.degrees(lv.movement_rad), '.2f')}</td>"
                f"<td class=nm>{lv.n_moved}</td></tr>")
    return ("<table><tr><th>group</th><th>score level</th><th>trials</th><th>successes</th>"
            "<th>success rate</th><th>95 % Wilson</th><th>movement score</th>"
            "<th>|translation| mm</th><th>rotation &deg;</th><th>with movement</th></tr>"
            + "".join(rows) + "</table>")
