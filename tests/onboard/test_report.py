"""The validation report from a real trial log whose outcomes depend on the score in a known
way: the figures written in the HTML are checked against values worked out here."""
import math
import re
import time

import numpy as np
import pytest

pytest.importorskip("scipy")
pytest.importorskip("matplotlib")

from onboard import (TrialImages, TrialLog, TrialRecord, roc_auc, wilson_interval,  # noqa: E402
                     write_report)

SUCCESSES = [1, 2, 4, 6, 8]   # of 8 trials in each of the five score levels
PER_LEVEL = 8


def planned_trials(mode_of=lambda i, j: "validate"):
    """(score, success, mode) per trial: in level i, the SUCCESSES[i] highest scores succeed."""
    out = []
    for i, k in enumerate(SUCCESSES):
        for j in range(PER_LEVEL):
            score = 0.2 * i + 0.2 * (j + 0.5) / PER_LEVEL
            out.append((score, j >= PER_LEVEL - k, mode_of(i, j)))
    return out


def build_log(path, plan, with_extras=True):
    """A log with the planned closed trials, plus (with_extras) a pending one, a no-grasp
    one and one only begun, none of which may count."""
    with TrialLog(path) as log:
        for n, (score, ok, mode) in enumerate(plan):
            tid = log.begin(object_label="mug", mode=mode)
            rec = TrialRecord(
                trial_id=tid, started_at_s=time.time(), mode=mode, score=score, width_m=0.08,
                outcome="success" if ok else "failure", success=ok, outcome_source="simulator",
                stage_s={"capture": 0.030 + 0.001 * (n % 5), "search": 0.004 + 0.0001 * n},
                movement_m=0.01 * (1 - score) if ok else None,
                movement_rad=0.3 * (1 - score) if ok else None,
                truth_movement_m=0.01 * (1 - score) + 0.001 if ok else None,
                truth_movement_rad=0.3 * (1 - score) if ok else None)
            imgs = TrialImages(overlay=np.full((60, 80, 3), (0, 200, 0), np.uint8)) if n < 3 else None
            log.finish(rec, imgs)
        if with_extras:
            tid = log.begin()
            log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), score=0.99,
                                   outcome="pending"))
            tid = log.begin()
            log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), outcome="no_grasp"))
            log.begin()


def cell(page: str, group: str, level: str | None, cls: str) -> str:
    """Text of the cell of class cls in the row of group (and level) in the report's tables."""
    row = f"<tr data-group='{group}'" + (f" data-level='{level}'>" if level else ">")
    start = page.index(row)
    m = re.compile(rf"<td class={cls}>([^<]*)</td>").search(page, start)
    assert m and m.start() < page.index("</tr>", start), (group, level, cls)
    return m.group(1)


def naive_auc(plan):
    """P(score of a success > score of a failure), ties half: every pair counted."""
    pos = [s for s, ok, _ in plan if ok]
    neg = [s for s, ok, _ in plan if not ok]
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def test_report_writes_per_level_rates_auc_and_movement(tmp_path):
    plan = planned_trials()
    build_log(tmp_path / "log", plan)
    page_path = write_report(tmp_path / "log", tmp_path / "out")
    assert page_path == tmp_path / "out" / "index.html"
    page = page_path.read_text()
    assert cell(page, "all", None, "n") == str(len(plan))
    assert cell(page, "all", None, "k") == str(sum(SUCCESSES))
    assert float(cell(page, "all", None, "auc")) == pytest.approx(naive_auc(plan), abs=5e-4)
    for i, k in enumerate(SUCCESSES):
        level = f"{0.2 * i:.1f}-{0.2 * (i + 1):.1f}"
        assert cell(page, "all", level, "n") == str(PER_LEVEL)
        assert cell(page, "all", level, "k") == str(k)
        assert cell(page, "all", level, "rate") == f"{100 * k / PER_LEVEL:.1f}%"
        lo, hi = wilson_interval(k, PER_LEVEL)
        assert cell(page, "all", level, "ci") == f"{100 * lo:.1f}&ndash;{100 * hi:.1f}%"
        # movement of the successes: translation / 0.04 m and rotation / 60 deg, averaged
        scores = [s for s, ok, _ in plan if ok and int(s * 5) == i]
        want = np.mean([0.5 * (min(1, 0.01 * (1 - s) / 0.04) + min(1, 0.3 * (1 - s) / math.radians(60)))
                        for s in scores])
        assert float(cell(page, "all", level, "mscore")) == pytest.approx(want, abs=5e-4)
        assert float(cell(page, "all", level, "mm")) == pytest.approx(
            np.mean([10 * (1 - s) for s in scores]), abs=0.0051)
    # success rises with the level, so the rank correlation is positive
    assert float(cell(page, "all", None, "rho")) > 0.5
    # the pending, no-grasp and only-begun trials are counted but not validated
    assert "pending 1" in page and "no_grasp 1" in page and "unfinished 1" in page
    for png in ("levels.png", "reliability.png", "roc.png", "counts.png", "latency.png",
                "movement_truth.png"):
        assert (tmp_path / "out" / png).stat().st_size > 5000, png
        assert f'src="{png}"' in page
    # image movement is 1 mm off the simulator's along the closing direction, rotation exact
    assert re.search(r"<p id=truth>RMS error 1\.00 mm along the closing direction, 0\.00&deg;", page)
    assert "<tr data-stage='capture'><td>capture</td><td>40</td><td>32</td>" in page
    # three overlays in the gallery, thumbnails linking to the full images
    assert page.count('<figure><a href="overlays/') == 3
    assert (tmp_path / "out" / "overlays" / "1_thumb.png").is_file()


def test_report_splits_best_and_validate_when_both_are_logged(tmp_path):
    plan = planned_trials(lambda i, j: "best" if i == 4 else "validate")
    build_log(tmp_path / "log", plan, with_extras=False)
    page = write_report(tmp_path / "log", tmp_path / "out").read_text()
    assert cell(page, "best", None, "n") == str(PER_LEVEL)
    assert cell(page, "best", None, "k") == str(SUCCESSES[4])
    assert cell(page, "best", "0.8-1.0", "rate") == "100.0%"
    assert cell(page, "best", "0.0-0.2", "n") == "0"
    assert cell(page, "validate", None, "n") == str(4 * PER_LEVEL)
    assert float(cell(page, "validate", None, "auc")) == pytest.approx(
        naive_auc([p for p in plan if p[2] == "validate"]), abs=5e-4)
    # every best trial succeeded: no ROC for that group
    assert cell(page, "best", None, "auc") == "&ndash;"
    assert "No ROC curve" not in page   # the validate group has its curve


def test_a_report_whose_trials_all_held_says_why_its_roc_is_empty(tmp_path):
    plan = [p for p in planned_trials(lambda i, j: "best") if p[1]]   # the held ones only
    build_log(tmp_path / "log", plan, with_extras=False)
    page = write_report(tmp_path / "log", tmp_path / "out").read_text()
    assert cell(page, "all", None, "auc") == "&ndash;"
    assert "<p>No ROC curve: every closed trial had the same outcome" in page
    assert "graspline demo --validate" in page


def test_report_on_empty_log_and_on_log_without_closed_trials_says_so(tmp_path):
    with TrialLog(tmp_path / "empty"):
        pass
    page = write_report(tmp_path / "empty", tmp_path / "out1").read_text()
    assert "<p id=empty>The log has no trials yet.</p>" in page
    with TrialLog(tmp_path / "open") as log:
        tid = log.begin()
        log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), score=0.7,
                               stage_s={"capture": 0.03}))
    page = write_report(tmp_path / "open", tmp_path / "out2").read_text()
    assert "No closed trials yet" in page and "pending 1" in page
    assert "<tr data-stage='capture'>" in page  # timings are still shown


def test_roc_auc_matches_pairwise_count_with_ties():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 5, 60) / 4.0  # many ties
    y = rng.random(60) < s
    plan = list(zip(s, y, ["validate"] * 60))
    assert roc_auc(s, y) == pytest.approx(naive_auc(plan), abs=1e-12)
    assert roc_auc(s, np.ones(60, bool)) is None


def test_wilson_interval_known_values():
    # Wilson 95 % for 8/10 (a textbook case): 0.490 .. 0.943
    lo, hi = wilson_interval(8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0


def test_wilson_interval_holds_the_rate_for_every_count_below_400():
    # at k = 0 and k = n the bound equals the rate; rounding once put it outside (4/4, 0/69)
    for n in range(1, 400):
        for k in range(n + 1):
            lo, hi = wilson_interval(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0, (k, n, lo, hi)


def test_report_with_an_all_success_level_and_an_all_failure_level(tmp_path):
    # 4/4 in the top level and 0/69 in the bottom one: the counts whose rounded Wilson bound
    # fell outside the rate and made matplotlib refuse the error bars (make run's crash)
    plan = [(0.9 + 0.01 * j, True, "best") for j in range(4)]
    plan += [(0.001 * (j + 1), False, "best") for j in range(69)]
    build_log(tmp_path / "log", plan, with_extras=False)
    page = write_report(tmp_path / "log", tmp_path / "out").read_text()
    assert cell(page, "all", "0.8-1.0", "rate") == "100.0%"
    assert cell(page, "all", "0.0-0.2", "rate") == "0.0%"
    for png in ("levels.png", "reliability.png"):
        assert (tmp_path / "out" / png).stat().st_size > 5000, png


def test_a_database_grasps_panel_shows_beside_its_overlay_and_a_jaw_trial_is_drawn_as_before(
        tmp_path):
    import cv2

    overlay = np.full((60, 80, 3), (0, 200, 0), np.uint8)
    panel = np.full((60, 50, 3), (200, 0, 0), np.uint8)
    with TrialLog(tmp_path / "log") as log:
        for images in (TrialImages(overlay=overlay),                     # the jaw's trial
                       TrialImages(overlay=overlay, db_grasp=panel)):    # a database grasp
            tid = log.begin(object_label="box")
            log.finish(TrialRecord(trial_id=tid, started_at_s=1.0, object_label="box",
                                   score=0.5, outcome="success", success=True), images)
        assert "db_grasp" not in log.get(1).images and "db_grasp" in log.get(2).images
    page = write_report(tmp_path / "log", tmp_path / "report").read_text()
    # the jaw's figure: its overlay alone, exactly as the report drew it before the panel
    assert ('<figure><a href="overlays/1.png"><img src="overlays/1_thumb.png" alt="trial 1">'
            '</a><figcaption>#1 box score 0.50 success</figcaption></figure>') in page
    # the database grasp's figure: its overlay, then the panel beside it, named
    assert ('<figure><a href="overlays/2.png"><img src="overlays/2_thumb.png" alt="trial 2">'
            '</a> <a class=db_grasp href="overlays/2_db_grasp.png"><img '
            'src="overlays/2_db_grasp_thumb.png" alt="trial 2 database grasp"></a>'
            "<figcaption>#2 box score 0.50 success (right: the database grasp in the object's "
            "frame)</figcaption></figure>") in page
    assert page.count("db_grasp.png") == 1
    copied = cv2.imread(str(tmp_path / "report" / "overlays" / "2_db_grasp.png"))
    np.testing.assert_array_equal(copied, panel)


def test_report_shows_the_warm_up_apart_from_the_cycles_and_counts_slow_cycles(tmp_path):
    from onboard import KernelWarmUp

    build_log(tmp_path / "log", planned_trials(), with_extras=False)
    with TrialLog(tmp_path / "log") as log:
        log.record_warm_up(KernelWarmUp(42.25, 17, 9, 8, at_s=time.time()))
        # a first cycle that compiled the kernels: a search a thousand times the others
        tid = log.begin(object_label="mug")
        log.finish(TrialRecord(trial_id=tid, started_at_s=time.time(), score=0.5, width_m=0.08,
                               outcome="success", success=True, outcome_source="simulator",
                               stage_s={"capture": 0.03, "search": 40.0}))
    page = write_report(tmp_path / "log", tmp_path / "out").read_text()
    assert ("<p id=warm-up>warm-up: 42.25 s before the first cycle (9 kernel signature(s) "
            "compiled); not counted in the stage latencies below.</p>") in page
    # 40 searches of 4-8 ms and one of 40 s: one over 10x the median, none of the captures
    assert "<tr data-stage='search'><td>search</td><td>41</td>" in page
    assert re.search(r"<tr data-stage='search'>(<td>[^<]*</td>){4}<td>1</td></tr>", page)
    assert re.search(r"<tr data-stage='capture'>(<td>[^<]*</td>){4}<td>0</td></tr>", page)
    assert (tmp_path / "out" / "latency.png").stat().st_size > 5000


def test_report_of_a_log_without_a_warm_up_says_so(tmp_path):
    build_log(tmp_path / "log", planned_trials(), with_extras=False)
    page = write_report(tmp_path / "log", tmp_path / "out").read_text()
    assert "<p id=warm-up>warm-up: not recorded" in page
