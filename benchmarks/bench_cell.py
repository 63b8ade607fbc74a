"""The picking loop on the simulated cell: does a high score mean a grasp that holds?

Runs ``--trials`` trials in validate mode (grasps drawn across the five score levels, Tan et
al.'s protocol) and ``--best`` trials of the best-grasp policy, on fresh tables of the
built-in objects and random boxes, plates, bars, cans (and YCB scans with ``--ycb``), and
prints: success and object movement per score level, the AUC of score against success with
a bootstrap interval clustered by object kind, the top level's success, the policy's
success; the frame-to-command latency (segment + silhouette + search + choose, from a frame
in hand to the grasp handed to the arm; excluding arm motion and the simulator's render),
median and p99, with the render time of the same frames as the in-run reference; trials
per minute. ``--soak N`` instead runs N best-policy trials and reports resident memory at
the start and the end and the longest cycle.

Beside the loop's score, Tan et al.'s measure alone is rescored on the same graded trials
(its logged ``tan_score``): AUC with the same clustered interval, per group, success per
level. ``--compare tan2024`` runs a second best-policy pass with Tan's measure alone on the
same seed, and both passes print the top grasp per object over the objects the jaw can hold
(the narrowest true width, from above, of the part within the pads' length of the object's
top, within the stroke: a lying mug whose body fits beside its handle is holdable) and how
many objects wider than the stroke there each refused (never tried), from the simulator's
truth where the objects settled (one thrown off the table as it settled counts in neither).
Tan's pass spends trials on the wide objects and so reaches fewer tables: ``--compare-best N``
gives it more trials, and ``pool_runs`` compares the two on the tables both reached.
``--cell FILE`` runs the cell that cell file describes (a jaw under benchmarks/jaws/),
``--pad-friction`` overriding its pads' friction (both keys). ``--search antipodal`` and
``--scene-budget`` set the cell file's ``scoring.search`` and ``scoring.scene_budget`` (issue
24's faster planning) for every pass.

Run from the repository root:

    .venv/bin/python -m benchmarks.bench_cell --trials 300 --best 60 [--ycb ../shared/data/ycb]
    .venv/bin/python -m benchmarks.bench_cell --cell benchmarks/jaws/short_pad.yaml \
        --pad-friction 0.5 --trials 300 --best 60 --compare tan2024
    .venv/bin/python -m benchmarks.bench_cell --trials 60 --best 30 --seed 1 \
        --search antipodal --scene-budget
    .venv/bin/python -m benchmarks.bench_cell --soak 1000 --image 320x240
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import resource
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

LEVEL_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0 + 1e-9)
PLAN_STAGES = ("segment", "silhouette", "search", "choose")


def auc(scores: np.ndarray, success: np.ndarray) -> float:
    """Area under the ROC curve of score against success (Mann-Whitney U / n1 n0), ties 1/2."""
    pos, neg = scores[success], scores[~success]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    allv = np.concatenate([pos, neg])[order]
    # average ranks over ties
    i = 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1] == allv[i]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j) + 1
        i = j + 1
    u = ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2
    return float(u / (len(pos) * len(neg)))


def clustered_bootstrap(scores, success, cluster, n_boot=1000, seed=0):
    """(2.5 %, 97.5 %) of the AUC resampling whole clusters (objects) with replacement."""
    rng = np.random.default_rng(seed)
    ids = np.unique(cluster)
    groups = [np.flatnonzero(cluster == c) for c in ids]
    vals = []
    for _ in range(n_boot):
        pick = np.concatenate([groups[k] for k in rng.integers(len(groups), size=len(groups))])
        a = auc(scores[pick], success[pick])
        if np.isfinite(a):
            vals.append(a)
    return (float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) if vals else (np.nan, np.nan)


def rss_mib() -> float:
    """Resident set size now, MiB (from /proc; the peak where /proc is absent)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cell_config(seed: int, log_dir: Path, ycb: str | None, cell_file: str | None,
                pad_friction: float | None):
    """The cell file a run uses: the built-in simulated cell, or ``cell_file`` with the run's
    seed, log folder and YCB folder (when given); pad_friction, when given, replaces both pad
    friction keys (the simulated pads' and the scorer's)."""
    import msgspec

    from onboard import load_cell_file, sim_cell_file

    if cell_file is None:
        return sim_cell_file(seed=seed, log_dir=str(log_dir), ycb_dir=ycb,
                             pad_friction=1.0 if pad_friction is None else pad_friction)
    config, _ = load_cell_file(cell_file)
    rep = msgspec.structs.replace
    sim = rep(config.sim, seed=seed, ycb_dir=ycb or config.sim.ycb_dir)
    gripper = config.gripper
    if pad_friction is not None:
        sim = rep(sim, pad_friction=pad_friction)
        gripper = rep(gripper, pad_friction=pad_friction)
    return rep(config, log_dir=str(log_dir), sim=sim, gripper=gripper,
               scoring=rep(config.scoring, seed=seed))


@dataclass
class TableObject:
    """An object of a laid table, from the simulator's truth: its name, its footprint where it
    settled (the convex hull of its mesh seen from above, (n, 2) x, y, metres), its narrowest true
    width seen from above (metres) and that of its part the pads reach (within the pads'
    length of its top, stopped above the table; metres), which says whether the jaw can hold it;
    on_table: False for an object thrown off the table as the table settled (laid against
    another), which no one could grasp."""

    name: str
    footprint: np.ndarray
    width_m: float
    reach_width_m: float = math.nan
    on_table: bool = True


@dataclass
class Truth:
    """What each table held (by table number) and, per trial, the (table, object index) its
    grasp was on (None for no grasp or no object within ATTRIBUTION_M); grasps that were on
    no object. reach_m: how far below an object's top the pads reach (their length)."""

    stroke_m: float
    reach_m: float = math.inf
    tables: dict[int, list[TableObject]] = field(default_factory=dict)
    grasped: list[tuple[int, int] | None] = field(default_factory=list)
    unattributed: int = 0


def _footprint(obj, T: np.ndarray) -> np.ndarray:
    """(n, 2) the convex hull, seen from above, of an object at pose T (x, y, metres)."""
    from scipy.spatial import ConvexHull

    xy = (obj.visual[0] @ T[:3, :3].T + T[:3, 3])[:, :2]
    return xy[ConvexHull(xy).vertices]


def _hull_distance(p: np.ndarray, hull: np.ndarray) -> float:
    """Distance (metres) of point p (2,) from a convex polygon (n, 2, counter-clockwise), 0 inside."""
    a, b = hull, np.roll(hull, -1, axis=0)
    e = b - a
    if np.all(e[:, 0] * (p[1] - a[:, 1]) - e[:, 1] * (p[0] - a[:, 0]) >= 0):
        return 0.0
    t = np.clip(((p - a) * e).sum(axis=1) / np.maximum((e * e).sum(axis=1), 1e-12), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + t[:, None] * e - p, axis=1)))


def _table_objects(sim, reach_m: float = math.inf) -> list[TableObject]:
    """The objects of the simulated cell's current table where they settled (not as laid: an
    object laid against another tips over or is thrown off the table), their widths whole and
    within reach_m of their top, and whether they stayed on the table."""
    from benchmarks.bench_width import true_width_m

    out = []
    for obj, T, on in zip(sim.world.objects, sim.settled_poses, sim.settled_on_table):
        if not on:  # nothing of it above the table to measure
            out.append(TableObject(obj.name, _footprint(obj, T), math.nan, math.nan, False))
            continue
        out.append(TableObject(obj.name, _footprint(obj, T),
                               true_width_m(obj, T, insertion_m=np.inf),
                               true_width_m(obj, T, insertion_m=reach_m)))
    return out


def _footprints_now(sim) -> tuple[int, list[np.ndarray]]:
    """(the table's number, its objects' footprints where they stand now)."""
    w = sim.world
    return sim.tables, [_footprint(obj, w.T_world_object(k)) for k, obj in enumerate(w.objects)]


def _note_truth(truth: Truth, sim, rec, before: tuple[int, list[np.ndarray]]) -> None:
    """Record the table a trial picked from (once, as laid) and the object its grasp was on:
    the one whose footprint, where the objects stood as the trial began (as laid when the
    trial laid a new table), is nearest the grasp's TCP, within ATTRIBUTION_M; None else."""
    table = sim.tables
    if table not in truth.tables:
        truth.tables[table] = _table_objects(sim, truth.reach_m)
    where = before[1] if before[0] == table else [o.footprint for o in truth.tables[table]]
    hit = None
    if rec.T_base_tcp is not None and where:
        xy = np.asarray(rec.T_base_tcp)[:2, 3]
        d = [_hull_distance(xy, f) for f in where]
        k = int(np.argmin(d))
        hit = (table, k) if d[k] < ATTRIBUTION_M else None
    truth.grasped.append(hit)
    truth.unattributed += rec.T_base_tcp is not None and hit is None


def run(n: int, mode: str, seed: int, ycb: str | None, image: tuple[int, int], log_dir: Path,
        checkpoint: int = 0, finger_thickness_m: float | None = None,
        measure: str = "graspline", pad_friction: float | None = None, join_touching: bool = True,
        deep_insertion_m: float | None = None, cell_file: str | None = None,
        truth: Truth | None = None, search: str | None = None, scene_budget: bool | None = None,
        operator_when_asked: bool = False):
    """n trials on a fresh simulated cell; (records, wall seconds per trial, the number of the
    table each trial picked from). checkpoint > 0:
    print resident memory and the longest cycle so far every that many trials. truth: filled
    with the tables' objects and the object each grasp was on. operator_when_asked: the
    simulated operator takes a part off the hand only when the loop asks (as on a real cell),
    not as every cycle starts."""
    import msgspec
    from tqdm import tqdm

    from onboard import CameraConfig, PickingCell, config_hash

    config = cell_config(seed, log_dir, ycb, cell_file, pad_friction)
    config = msgspec.structs.replace(
        config, camera=CameraConfig(width_px=image[0], height_px=image[1]),
        scoring=msgspec.structs.replace(config.scoring, measure=measure,
                                        join_touching=join_touching))
    if deep_insertion_m is not None:
        config = msgspec.structs.replace(config, scoring=msgspec.structs.replace(
            config.scoring, deep_insertion_m=deep_insertion_m))
    recs, walls, tables = [], [], []
    if search is not None or scene_budget is not None:  # else the cell file's
        config = msgspec.structs.replace(config, scoring=msgspec.structs.replace(
            config.scoring, search=search or config.scoring.search,
            scene_budget=config.scoring.scene_budget if scene_budget is None else scene_budget))
    with PickingCell(config, config_hash(config), mode=mode) as cell:
        if finger_thickness_m is not None:  # an experiment: rebuild the cell's jaw thinner
            _thin_fingers(cell, finger_thickness_m)
        if operator_when_asked:  # read as each cycle starts: nothing is rebuilt or redrawn
            sim = cell.devices.truth
            sim.settings = dataclasses.replace(sim.settings, operator_watches_hand=False)
        for _ in tqdm(range(n), desc=mode, unit="trial", file=sys.stderr):
            before = _footprints_now(cell.devices.truth) if truth is not None else None
            t0 = time.perf_counter()
            recs.append(cell.pick_record())
            walls.append(time.perf_counter() - t0)
            tables.append(cell.devices.truth.tables)  # the table laid for this trial
            if truth is not None:
                _note_truth(truth, cell.devices.truth, recs[-1], before)
            if checkpoint and len(walls) % checkpoint == 0:
                print(f"| after {len(walls)} trials | RSS {rss_mib():.0f} MiB | longest cycle "
                      f"{max(walls):.2f} s | median {np.median(walls):.2f} s |", flush=True)
        taken = cell.devices.truth.taken_off_hand
        if taken:  # each would have been carried into the next approach (SimCell.take_off_hand)
            print(f"{mode}: the operator took {taken} object(s) off the hand (the release over "
                  f"the bin had not dropped them)")
        approach_stops(mode, recs, cell.devices.truth.hand_checks)
    return recs, np.array(walls), tables


def approach_stops(mode: str, recs, hand_checks: int) -> None:
    """Print how many approaches stopped, how many where the planning frame showed nothing
    under the hand, and how many times the loop asked the operator to see to the hand."""
    stops = [r for r in recs if r.error and "during approach" in r.error]
    unseen = sum("nothing under the hand" in r.error for r in stops)
    print(f"{mode}: {len(stops)} approaches stopped, {unseen} of them where the frame showed "
          f"nothing under the hand; the loop asked the operator to see to the hand "
          f"{hand_checks} time(s)")


def _thin_fingers(cell, finger_thickness_m: float) -> None:
    """Rebuild the simulated cell with fingers of another thickness behind the pads."""

    sim = cell.devices.truth
    sim.use_settings(dataclasses.replace(sim.settings, finger_thickness_m=finger_thickness_m))


def kind_of(label: str) -> str:
    """The object kind of a simulated object's label (its catalogue name)."""
    return label.split("@")[0] or "unknown"


def level_table(recs) -> None:
    """Success and movement per score level."""
    graded = [r for r in recs if r.success is not None and r.score is not None]
    s = np.array([r.score for r in graded])
    ok = np.array([bool(r.success) for r in graded])
    mv = np.array([abs(r.truth_movement_m) if r.truth_movement_m is not None else np.nan for r in graded])
    mv_img = np.array([abs(r.movement_m) if r.movement_m is not None else np.nan for r in graded])
    rot = np.array([r.truth_movement_rad if r.truth_movement_rad is not None else np.nan for r in graded])
    print("| score level | trials | success | mean movement along closing (truth, mm) | "
          "(image, mm) | mean rotation (truth, deg) |")
    print("|---|---|---|---|---|---|")
    for lo, hi in zip(LEVEL_EDGES[:-1], LEVEL_EDGES[1:]):
        sel = (s >= lo) & (s < hi)
        held = sel & ok  # Tan et al. measured movement on the successful trials only
        print(f"| {lo:.1f}-{min(hi, 1.0):.1f} | {sel.sum()} | "
              f"{(ok[sel].mean() if sel.any() else np.nan):.0%} | "
              f"{np.nanmean(mv[held]) * 1e3 if held.any() else np.nan:.1f} | "
              f"{np.nanmean(mv_img[held]) * 1e3 if held.any() else np.nan:.1f} | "
              f"{np.degrees(np.nanmean(rot[held])) if held.any() else np.nan:.1f} |")
    kinds = np.array([kind_of(r.object_label) for r in graded])
    a = auc(s, ok)
    lo, hi = clustered_bootstrap(s, ok, kinds)
    print(f"\nAUC of score against success: {a:.3f} (95 % interval by object kind {lo:.3f}-{hi:.3f}), "
          f"{len(graded)} graded trials, success overall {ok.mean():.0%}")
    top = s >= 0.8
    print(f"top level (0.8-1): {ok[top].mean():.1%} of {top.sum()}")
    print("\n| object kind | trials | success | AUC |")
    print("|---|---|---|---|")
    for k in sorted(set(kinds)):
        sel = kinds == k
        print(f"| {k} | {sel.sum()} | {ok[sel].mean():.0%} | {auc(s[sel], ok[sel]):.2f} |")


# The ablation: each row rescores the same graded trials from their logged features, one
# depth term added to (or R_r taken out of) Tan's score at a time.
def tan_without_r_r(f: dict) -> float:
    """Tan's eq. 16 over d_t, s_a and s_f only (R_r left out), from the logged feature scores."""
    if "score_d_t" not in f or f["tan_score"] == 0.0:
        return 0.0
    s = [f["score_d_t"], f["score_s_a"], f["score_s_f"]]
    lo = min(s)
    return 0.9 * lo + 0.1 * (sum(s) - lo) / 2.0


# a candidate that collided or missed has no depth terms logged; its Tan score is 0 anyway
DEPTH_NEUTRAL = {"body_collision": 0.0, "score_contact": 1.0, "score_torque": 1.0,
                 "score_tilt": 1.0, "score_palm": 1.0, "score_swing": 1.0}


def swing_factor(f: dict) -> float:
    """The swing term as logged; in a log from before it (2026-12-06) it is read from the
    logged lever at the default DepthParams.swing_lever_m (1 without a lever: mass centre
    unknown), as the scorer would have."""
    if "score_swing" in f:
        return f["score_swing"]
    from scoring import swing_score

    return swing_score(f.get("lever_m", math.nan))


def depth_factor(f: dict) -> float:
    """The depth terms' product, 0 on a finger-body collision (the palm factor 1 where a log
    from before it, 2026-12-06, has none: no graze was marked down then; the swing term
    read from the lever where a log has none: swing_factor)."""
    return (1 - f["body_collision"]) * f["score_contact"] * f["score_torque"] * f["score_tilt"] \
        * f.get("score_palm", 1.0) * swing_factor(f)


ABLATIONS = (
    ("Tan et al. (tan2024)", lambda f: f["tan_score"]),
    ("- R_r (Tan without the rotation feature)", tan_without_r_r),
    ("+ finger bodies", lambda f: f["tan_score"] * (1 - f["body_collision"])),
    ("+ contact height", lambda f: f["tan_score"] * f["score_contact"]),
    ("+ torque about the grasp axis", lambda f: f["tan_score"] * f["score_torque"]),
    ("+ contact tilt (lean above the widest point)", lambda f: f["tan_score"] * f["score_tilt"]),
    ("+ palm graze (a wide palm over a seen outline)",
     lambda f: f["tan_score"] * f.get("score_palm", 1.0)),
    ("+ swing about the grasp axis (held off the mass centre)",
     lambda f: f["tan_score"] * swing_factor(f)),
    ("graspline (every term)", lambda f: f["tan_score"] * depth_factor(f)),
    ("graspline - R_r", lambda f: tan_without_r_r(f) * depth_factor(f)),
)


GROUPS = {"boxes": ("box", "heavy_box", "wide_box", "plate", "bar"),
          "cylinders": ("cylinder", "wide_can", "bottle")}


def group_of(label: str) -> str:
    """The independent check's grouping: boxes, cylinders, scanned objects, other shapes."""
    kind = kind_of(label)
    if kind.startswith("ycb_"):
        return "scanned (YCB)"
    return next((g for g, kinds in GROUPS.items() if kind in kinds), "other built-in shapes")


def group_table(recs) -> None:
    """Per group: trials, success, AUC of the score and of Tan's, top-level success."""
    graded = [r for r in recs if r.success is not None and r.score is not None]
    groups = np.array([group_of(r.object_label) for r in graded])
    ok = np.array([bool(r.success) for r in graded])
    s = np.array([r.score for r in graded])
    tan = np.array([r.features.get("tan_score", r.score) for r in graded])
    print("\n| group | trials | success | AUC | AUC of Tan's score | level 0.8-1 success |")
    print("|---|---|---|---|---|---|")
    for g in sorted(set(groups)) + ["all"]:
        m = groups == g if g != "all" else np.ones(len(groups), bool)
        top = m & (s >= 0.8)
        print(f"| {g} | {m.sum()} | {ok[m].mean():.0%} | {auc(s[m], ok[m]):.3f} | "
              f"{auc(tan[m], ok[m]):.3f} | "
              f"{(f'{ok[top].mean():.0%} of {top.sum()}' if top.any() else '-')} |")


def tan_beside(recs) -> None:
    """Tan's measure alone rescored on the same graded trials (its logged tan_score) beside
    the loop's score: AUC with the interval clustered by object kind, per group, and
    success per score level of each."""
    graded = [r for r in recs if r.success is not None and r.score is not None]
    if not graded:
        return
    ok = np.array([bool(r.success) for r in graded])
    kinds = np.array([kind_of(r.object_label) for r in graded])
    groups = np.array([group_of(r.object_label) for r in graded])
    loop = np.array([r.score for r in graded])
    tan = np.array([r.features.get("tan_score", r.score) for r in graded])
    print(f"\n| the same {len(graded)} graded trials | the loop's score | Tan's measure alone "
          f"(rescored) |")
    print("|---|---|---|")
    cells = []
    for s in (loop, tan):
        lo, hi = clustered_bootstrap(s, ok, kinds)
        cells.append(f"{auc(s, ok):.3f} [{lo:.3f}, {hi:.3f}]")
    print(f"| AUC [95 % interval by kind] | {cells[0]} | {cells[1]} |")
    for g in sorted(set(groups)):
        m = groups == g
        print(f"| AUC, {g} ({m.sum()} trials) | {auc(loop[m], ok[m]):.3f} | "
              f"{auc(tan[m], ok[m]):.3f} |")
    for lo, hi in zip(LEVEL_EDGES[:-1], LEVEL_EDGES[1:]):
        row = []
        for s in (loop, tan):
            sel = (s >= lo) & (s < hi)
            row.append(f"{ok[sel].mean():.0%} of {sel.sum()}" if sel.any() else "-")
        print(f"| success at {lo:.1f}-{min(hi, 1.0):.1f} | {row[0]} | {row[1]} |")


def offered_none(holdable: set, tried: set, declined_tables: set) -> list[tuple[int, int]]:
    """The holdable objects (table, index) never tried on a table the loop left after a cycle
    that offered no grasp: it saw them and found nothing to try (an independent check that
    tries every object counts these as missed). The rest never tried were on tables the
    pass ended on."""
    return sorted(h for h in holdable - tried if h[0] in declined_tables)


def objects_summary(recs, truth: Truth, tables: list[int],
                    only_tables: set[int] | None = None) -> dict:
    """From the simulator's truth: the top grasp per object (the first grasp on each object
    the jaw can hold: the narrowest true width of its part within the pads' reach of its top
    within the stroke), the holdable objects offered no grasp (offered_none; tables: each
    record's table), and the objects wider than the stroke there that were never tried
    (refused), counted over the tables the pass saw (only_tables: over those of them). The
    whole object's width would call a lying mug wide, though its body beside the handle fits
    the stroke and holds."""
    keep = set(truth.tables) if only_tables is None else set(only_tables)
    holdable, wide = set(), set()
    for t, objs in truth.tables.items():
        for k, o in enumerate(objs):
            if o.on_table and t in keep:
                (holdable if o.reach_width_m <= truth.stroke_m else wide).add((t, k))
    first: dict[tuple[int, int], bool] = {}
    tried = set()
    for r, hit, t in zip(recs, truth.grasped, tables):
        if hit is None or r.success is None or t not in keep:
            continue
        tried.add(hit)
        if hit in holdable and hit not in first:
            first[hit] = bool(r.success)
    by_group: dict[str, list[bool]] = {}
    for (t, k), held in first.items():
        by_group.setdefault(group_of(truth.tables[t][k].name), []).append(held)
    declined = {t for r, t in zip(recs, tables) if r.outcome == "no_grasp" and t in keep}
    none = [f"{truth.tables[t][k].name} ({truth.tables[t][k].reach_width_m * 1e3:.0f} mm)"
            for t, k in offered_none(holdable, tried, declined)]
    return {"held": sum(first.values()), "tried": len(first), "holdable": len(holdable),
            "wide": len(wide), "refused": len(wide - tried), "by_group": by_group,
            "offered_none": none, "unattributed": truth.unattributed}


def objects_table(passes: dict[str, dict]) -> None:
    """The top grasp per object and the refusals of each best-policy pass, side by side."""
    names = list(passes)
    print("\n| best-grasp policy, from the simulator's truth | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    cells = [f"{p['held'] / max(p['tried'], 1):.1%} ({p['held']} of {p['tried']} tried; "
             f"{p['holdable']} holdable seen)" for p in passes.values()]
    print("| top grasp held, objects the jaw can hold (narrowest true width within the pads' "
          "length of the top, within the stroke) | " + " | ".join(cells) + " |")
    cells = [f"{p['held']} of {p['tried'] + len(p['offered_none'])}" for p in passes.values()]
    print("| top grasp held, the same objects and those offered no grasp (their table left "
          "after a cycle without one; counted as missed) | " + " | ".join(cells) + " |")
    cells = [", ".join(p["offered_none"]) or "none" for p in passes.values()]
    print("| holdable objects offered no grasp (name, narrowest true width within the pads' "
          "reach) | " + " | ".join(cells) + " |")
    groups = sorted({g for p in passes.values() for g in p["by_group"]})
    for g in groups:
        cells = [(f"{sum(p['by_group'][g])}/{len(p['by_group'][g])}" if g in p["by_group"]
                  else "-") for p in passes.values()]
        print(f"| top grasp held, {g} | " + " | ".join(cells) + " |")
    cells = [f"{p['refused']} of {p['wide']}" for p in passes.values()]
    print("| objects wider than the stroke within the pads' length of the top, refused (never "
          "tried) | " + " | ".join(cells) + " |")
    cells = [str(p["unattributed"]) for p in passes.values()]
    print(f"| grasps on no object's footprint (within {ATTRIBUTION_M * 1e3:.0f} mm; left out) | "
          + " | ".join(cells) + " |")


def ablation_table(recs) -> None:
    """AUC and top-level success of each ablation row on the same graded trials."""
    graded = [r for r in recs if r.success is not None and "tan_score" in r.features]
    if not any("score_contact" in r.features for r in graded):
        print("\n(no graded trial has the depth terms logged: run with --measure graspline)")
        return
    ok = np.array([bool(r.success) for r in graded])
    kinds = np.array([kind_of(r.object_label) for r in graded])
    print(f"\n| measure ({len(graded)} graded trials) | AUC | 95 % interval by kind | "
          f"level 0.8-1 success | trials at 0.8-1 |")
    print("|---|---|---|---|---|")
    for name, f in ABLATIONS:
        s = np.array([f({**DEPTH_NEUTRAL, **r.features}) for r in graded])
        lo, hi = clustered_bootstrap(s, ok, kinds)
        top = s >= 0.8
        print(f"| {name} | {auc(s, ok):.3f} | {lo:.3f}-{hi:.3f} | "
              f"{(ok[top].mean() if top.any() else np.nan):.0%} | {top.sum()} |")


def no_grasp_reasons(recs) -> None:
    """How many no-grasp cycles each reason gave (a table left with only objects the jaw
    cannot hold gives one per cycle until the cell lays it anew)."""
    import collections
    import re

    why = collections.Counter()
    for r in recs:
        if r.outcome != "no_grasp":
            continue
        text = r.error
        if "wider than the jaw" in text:
            why["an object wider than the stroke"] += 1
        elif "than the pads' friction holds" in text:
            why["an object heavier than the pads' friction"] += 1
        elif m := re.search(r"held down by ([^(]+) \(", text):
            why[f"best grasp held down by {m.group(1).strip()}"] += 1
        else:
            why[text.split(" (")[0][:60]] += 1
    for k, v in why.most_common():
        print(f"  no grasp, {k}: {v} cycles")


def failure_pictures(recs, path: Path, min_score: float = 0.6, most: int = 12) -> int:
    """A PNG of the failed trials that scored at least min_score: each one's chosen grasp over
    its silhouette beside the camera's colour image, captioned with the object, the score and
    why it failed. Returns how many it shows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bad = [r for r in recs if r.success is False and r.score is not None and r.score >= min_score
           and "overlay" in r.images and "before_color" in r.images]
    bad = sorted(bad, key=lambda r: -r.score)[:most]
    if not bad:
        return 0
    fig, axes = plt.subplots(len(bad), 2, figsize=(7, 3.2 * len(bad)), squeeze=False)
    for (a_img, a_col), r in zip(axes, bad):
        a_img.imshow(plt.imread(r.images["overlay"]))
        a_col.imshow(plt.imread(r.images["before_color"]))
        why = (r.error or "closed, then not held after the lift")[:70]
        a_img.set_title(f"#{r.trial_id} {r.object_label}, score {r.score:.2f}", fontsize=8)
        a_col.set_title(why, fontsize=7)
        for ax in (a_img, a_col):
            ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=70)
    plt.close(fig)
    return len(bad)


def dump(recs, path: Path, tables: list[int]) -> None:
    """One JSON line per trial: label, table, outcome, success, score and features, error,
    notes."""
    import json

    with open(path, "w") as fh:
        for r, table in zip(recs, tables):
            fh.write(json.dumps({"label": r.object_label, "table": table, "outcome": r.outcome,
                                 "success": r.success, "score": r.score, "features": r.features,
                                 "error": r.error,
                                 "note": r.note}) + "\n")


def dump_truth(truth: Truth, path: Path) -> None:
    """The simulator's truth of a best-policy pass as JSON: every table's objects (name, the
    narrowest true width whole and within the pads' reach of the top, mm; on_table, holdable)
    and, per trial, the [table, object index] its grasp was on (null: none), so a failure or
    a wide object tried can be named afterwards."""
    import json

    def mm(w: float) -> float | None:
        return round(w * 1e3, 1) if math.isfinite(w) else None

    tables = {str(t): [{"name": o.name, "width_mm": mm(o.width_m),
                        "reach_width_mm": mm(o.reach_width_m),
                        "on_table": o.on_table,
                        "holdable": bool(o.on_table and o.reach_width_m <= truth.stroke_m)}
                       for o in objs]
              for t, objs in truth.tables.items()}
    path.write_text(json.dumps({"stroke_mm": round(truth.stroke_m * 1e3, 1), "tables": tables,
                                "grasped": [list(h) if h else None for h in truth.grasped]},
                               indent=1))


SAME_OBJECT_M = 0.04  # grasps on one table and kind this close are on the same object
ATTRIBUTION_M = 0.01  # a grasp's TCP this close to an object's footprint (x, y) is on it


def first_attempts(recs, tables: list[int]) -> None:
    """Success of the top grasp per object: the first grasp tried on each object of each
    table (a retry after a failure tries the next grasp down, so it is not a top grasp). An
    object is told from another of its kind on the same table by where it was grasped:
    within SAME_OBJECT_M of an earlier grasp is the same object."""
    earlier: dict[tuple[int, str], list[np.ndarray]] = {}
    firsts = []
    for r, table in zip(recs, tables):
        if r.success is None or r.T_base_tcp is None:
            continue
        xy = np.asarray(r.T_base_tcp)[:2, 3]
        seen = earlier.setdefault((table, r.object_label), [])
        if not any(np.linalg.norm(xy - p) < SAME_OBJECT_M for p in seen):
            firsts.append(bool(r.success))
        if not r.success:  # an object that held has left the table
            seen.append(xy)
    tried = [r for r in recs if r.success is not None]
    print(f"top grasp per object (the first grasp tried on each object of each table): "
          f"{np.mean(firsts):.1%} of {len(firsts)} objects; retries after a failure: "
          f"{len(tried) - len(firsts)}, {sum(bool(r.success) for r in tried) - sum(firsts)} held")


def latency_table(recs, walls) -> None:
    """Frame-to-command latency against the render time of the same frames."""
    plan = np.array([sum(r.stage_s.get(k, 0.0) for k in PLAN_STAGES) for r in recs
                     if r.score is not None])
    render = np.array([r.stage_s.get("capture", np.nan) for r in recs if r.score is not None])
    print("\n| figure | median | p99 | unit |")
    print("|---|---|---|---|")
    print(f"| frame-to-command latency (segment+silhouette+search+choose) | "
          f"{np.median(plan) * 1e3:.0f} | {np.percentile(plan, 99) * 1e3:.0f} | ms |")
    print(f"| reference: simulated capture (ray-cast render) of the same frames | "
          f"{np.nanmedian(render) * 1e3:.0f} | {np.nanpercentile(render, 99) * 1e3:.0f} | ms |")
    print(f"| whole cycle, wall (simulated arm motion included) | {np.median(walls):.2f} | "
          f"{np.percentile(walls, 99):.2f} | s |")
    print(f"| trials per minute (wall) | {60.0 / walls.mean():.1f} | | trials/min |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=300, help="validate-mode trials")
    p.add_argument("--best", type=int, default=60, help="best-policy trials")
    p.add_argument("--soak", type=int, default=0, help="instead: a soak of N best-policy trials")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ycb", default=None, help="YCB folder (../shared/data/ycb)")
    p.add_argument("--image", default="640x480", help="camera size, WxH")
    p.add_argument("--finger-thickness", type=float, default=None,
                   help="experiment: the jaw's finger bodies this thick (m; default 0.01)")
    p.add_argument("--measure", default="graspline", help="graspline (default) or tan2024")
    p.add_argument("--cell", default=None, metavar="FILE",
                   help="run the cell this cell file describes (benchmarks/jaws/*.yaml)")
    p.add_argument("--compare", default=None, choices=("tan2024",),
                   help="a second best-policy pass with this measure, on the same seed")
    p.add_argument("--compare-best", type=int, default=None, metavar="N",
                   help="the compared pass's trials (default --best's): more, so that it "
                        "reaches the tables the loop's pass did (it spends trials on the "
                        "objects wider than the stroke; pool_runs compares the tables both "
                        "reached)")
    p.add_argument("--pad-friction", type=float, default=None,
                   help="pad friction, both keys (0.5: taped; default the cell file's, 1.0)")
    p.add_argument("--no-join-touching", action="store_true",
                   help="the torque term sees the target mask alone (scoring.join_touching off)")
    p.add_argument("--deep-insertion", type=float, default=None,
                   help="the second search's fingertips this far past the object's top (m; "
                        "0: one search at scoring.insertion_depth_m)")
    p.add_argument("--search", default=None, choices=("tan", "antipodal"),
                   help="the image search's sampler (scoring.search; default the cell file's)")
    p.add_argument("--scene-budget", action=argparse.BooleanOptionalAction, default=None,
                   help="objects searched in order of promise, stop at 0.95 "
                        "(scoring.scene_budget; default the cell file's)")
    p.add_argument("--out", default=None, help="folder for the trial logs (default: a temp one)")
    p.add_argument("--operator-when-asked", action="store_true",
                   help="the simulated operator takes a part off the hand only when the loop "
                        "asks, as on a real cell (default: as every cycle starts)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    try:
        image = tuple(int(v) for v in args.image.lower().split("x"))
    except ValueError:
        raise SystemExit(f"bench_cell: --image must be WxH in pixels (640x480), "
                         f"got {args.image!r}") from None
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_cell-"))
    out.mkdir(parents=True, exist_ok=True)
    kw = dict(measure=args.measure, pad_friction=args.pad_friction,
              join_touching=not args.no_join_touching, deep_insertion_m=args.deep_insertion,
              cell_file=args.cell, search=args.search, scene_budget=args.scene_budget,
              operator_when_asked=args.operator_when_asked)
    from onboard import CellFileError

    try:  # the cell file read once here: a bad one ends in its one-line reason
        jaw_config = cell_config(args.seed, out, None, args.cell, None).gripper
    except CellFileError as exc:
        raise SystemExit(f"bench_cell: {exc}") from None
    stroke_m, reach_m = jaw_config.open_width_m, jaw_config.pad_length_m
    if args.soak:
        rss0 = rss_mib()
        print(f"| soak start | RSS {rss0:.0f} MiB | | |", flush=True)
        recs, walls, _ = run(args.soak, "best", args.seed, args.ycb, image, out / "soak",
                          checkpoint=50)
        rss1 = rss_mib()
        print(f"| soak: {args.soak} trials | start | end | unit |\n|---|---|---|---|")
        print(f"| resident memory | {rss0:.0f} | {rss1:.0f} | MiB |")
        print(f"| longest cycle | | {walls.max():.2f} | s (median {np.median(walls):.2f}) |")
        print(f"| outcomes | | {sum(r.outcome == 'success' for r in recs)} success, "
              f"{sum(r.outcome == 'failure' for r in recs)} failure, "
              f"{sum(r.outcome == 'no_grasp' for r in recs)} no grasp, "
              f"{sum(r.outcome == 'error' for r in recs)} error | |")
        return 0
    from onboard import jaw_friction, sim_pad_friction

    used = cell_config(args.seed, out, None, args.cell, args.pad_friction)
    print(f"# cell {args.cell or 'built-in (2F-85)'}, stroke {stroke_m * 1e3:.0f} mm, measure "
          f"{args.measure}, pad friction {sim_pad_friction(used):g} (the scorer's "
          f"{jaw_friction(used):g}), image {args.image}, "
          f"seed {args.seed}, YCB {'on' if args.ycb else 'off'}, touching masks "
          f"{'not joined' if args.no_join_touching else 'joined'}, deep search "
          f"{'as the cell file' if args.deep_insertion is None else args.deep_insertion}, "
          f"search {args.search or 'as the cell file'}, scene budget "
          f"{ {True: 'on', False: 'off', None: 'as the cell file'}[args.scene_budget]}\n")
    if args.trials:
        recs, walls, tables = run(args.trials, "validate", args.seed, args.ycb, image, out / "validate",
                          finger_thickness_m=args.finger_thickness, **kw)
        dump(recs, out / "validate.jsonl", tables)
        print(f"## validate mode: {args.trials} trials\n")
        shown = failure_pictures(recs, out / "failures_validate.png")
        print(f"({shown} failures at score >= 0.6 drawn in {out / 'failures_validate.png'})\n")
        level_table(recs)
        group_table(recs)
        tan_beside(recs)
        ablation_table(recs)
        latency_table(recs, walls)
    if args.best:
        btruth = Truth(stroke_m, reach_m)
        brecs, bwalls, btables = run(args.best, "best", args.seed + 1, args.ycb, image,
                                     out / "best", truth=btruth, **kw)
        dump(brecs, out / "best.jsonl", btables)
        dump_truth(btruth, out / "best_truth.json")
        graded = [r for r in brecs if r.success is not None]
        nog = sum(r.outcome == "no_grasp" for r in brecs)
        print(f"\n## best-grasp policy: {args.best} trials\n")
        print(f"success {np.mean([bool(r.success) for r in graded]):.1%} of {len(graded)} grasps "
              f"tried; {nog} cycles offered no grasp")
        no_grasp_reasons(brecs)
        first_attempts(brecs, btables)
        group_table(brecs)
        level_table(brecs)
        latency_table(brecs, bwalls)
        passes = {f"the loop's score ({args.measure})": objects_summary(brecs, btruth, btables)}
        if args.compare:
            ctruth = Truth(stroke_m, reach_m)
            n_compare = args.best if args.compare_best is None else args.compare_best
            crecs, _, ctables = run(n_compare, "best", args.seed + 1, args.ycb, image,
                                    out / f"best_{args.compare}", truth=ctruth,
                                    **{**kw, "measure": args.compare})
            dump(crecs, out / f"best_{args.compare}.jsonl", ctables)
            dump_truth(ctruth, out / f"best_{args.compare}_truth.json")
            print(f"\n## best-grasp policy with {args.compare} alone: {n_compare} trials, same "
                  f"seed\n")
            no_grasp_reasons(crecs)
            first_attempts(crecs, ctables)
            passes[f"{args.compare} alone"] = objects_summary(crecs, ctruth, ctables)
            # the same seed lays the same tables; the compared pass reaches fewer of them
            both = set(btruth.tables) & set(ctruth.tables)
            passes[f"the loop's score, the {len(both)} tables both reached"] = \
                objects_summary(brecs, btruth, btables, both)
            passes[f"{args.compare} alone, the same tables"] = \
                objects_summary(crecs, ctruth, ctables, both)
        objects_table(passes)
    print(f"\ntrial logs under {out} (graspline trials report DIR --out REPORT)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
