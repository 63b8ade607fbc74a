"""The trial record of a cycle: Plan + Execution -> TrialRecord and TrialImages, pure
functions of their inputs (the loop writes them to the trial log)."""
from __future__ import annotations

import logging

import numpy as np

from scoring import GripperProjection

from .._movement import MovementError, object_movement, pose_movement
from .._overlay import draw_database_grasp, draw_grasps, draw_hand_grasp
from .._trials import TrialImages, TrialRecord
from ._truth import HAND_INSTANCE
from ._types import DatabaseGraspView, Execution, Plan

OVERRUN = "budget overrun: "  # how a stage's overrun reads in the trial's note
log = logging.getLogger("graspline.loop")


def trial_mode(plan: Plan) -> str:
    """"validate" for a grasp a validate-mode draw took from a score level, else "best"."""
    return "validate" if plan.level >= 0 else "best"


def judged_outcome(ex: Execution | None, *, pending: bool = False
                   ) -> tuple[str, bool | None, str]:
    """(outcome, success, outcome_source) of a cycle: the simulator's verdict where it saw
    the lift, else the gripper's and the after-image's; "pending" (the controller will
    report it) or "no_grasp" when nothing was executed."""
    if ex is None:
        return ("pending" if pending else "no_grasp"), None, "gripper+image"
    if ex.truth.lifted is not None and ex.success is not None:
        success = ex.truth.lifted
        return ("success" if success else "failure"), success, "simulator"
    return ex.outcome, ex.success, "gripper+image"


def image_movement(plan: Plan, ex: Execution | None
                   ) -> tuple[tuple[float | None, float | None], np.ndarray | None]:
    """((translation m, rotation rad), centroid (3,) base frame) of the object's movement
    while the fingers closed, from the before and after-close depth (Tan et al.'s
    measure); ((None, None), None) where it cannot be estimated."""
    c = plan.grasp
    if c is None or ex is None or ex.after_close is None:
        return (None, None), None
    after = ex.after_close
    exclude = None if after.instance_ids is None else after.instance_ids >= HAND_INSTANCE
    try:
        mv = object_movement(plan.masks[plan.mask_index].mask, plan.frame.depth_m,
                             after.depth_m, plan.frame.intrinsics, plan.frame.T_base_camera,
                             c.T_base_tcp[:3, 0], exclude_after=exclude)
    except MovementError as exc:
        log.info("no image estimate of the object's movement: %s", exc)
        return (None, None), None
    return (mv.translation_m, mv.rotation_rad), mv.centroid_base


def _truth_movement(plan: Plan, ex: Execution, centroid: np.ndarray | None
                    ) -> tuple[float | None, float | None]:
    """The simulator's movement of the object (m, rad): at the image estimate's centroid
    where both are known, so the two compare alike; else as the execution measured it."""
    t = ex.truth
    if t.poses is not None and centroid is not None:
        mv = pose_movement(*t.poses, plan.grasp.T_base_tcp[:3, 0], point_base=centroid)
        return mv.translation_m, mv.rotation_rad
    return t.movement_m, t.movement_rad


def trial_record(plan: Plan, ex: Execution | None, *, trial_id: int, started_at_s: float,
                 cell_hash: str, stage_s: dict[str, float], overruns: list[str],
                 pending: bool = False) -> TrialRecord:
    """The record of one cycle: the chosen grasp (or why none), what the execution did (None:
    nothing executed; pending: the controller executes and reports), the judged outcome,
    the object's movement from the images and from the simulator, the stage times (s), and
    in the note the budget overruns and the objects the database could not serve."""
    c = plan.grasp
    mode = trial_mode(plan)
    if c is not None:
        rec = TrialRecord.from_choice(c, started_at_s=started_at_s, cell_hash=cell_hash, mode=mode)
        rec.trial_id = trial_id
    else:
        rec = TrialRecord(trial_id=trial_id, started_at_s=started_at_s, cell_hash=cell_hash,
                          mode=mode, error=plan.choice.reason)
    rec.stage_s = dict(stage_s)
    rec.outcome, rec.success, rec.outcome_source = judged_outcome(ex, pending=pending)
    (rec.movement_m, rec.movement_rad), centroid = image_movement(plan, ex)
    notes = [OVERRUN + o for o in overruns] + list(plan.fallbacks)
    if ex is not None:
        rec.gripper_status = ex.gripper_status
        rec.gripper_width_m = ex.gripper_width_m
        rec.object_detected = ex.object_detected
        rec.truth_movement_m, rec.truth_movement_rad = _truth_movement(plan, ex, centroid)
        rec.error = ex.error or ""
        if ex.judge_note:
            notes.append(ex.judge_note)
    rec.note = "; ".join(notes)
    return rec


def trial_images(plan: Plan, ex: Execution | None, projection: GripperProjection) -> TrialImages:
    """The trial's pictures: before and after-close colour and depth (Tan et al.'s BA images),
    the silhouette and the chosen grasp drawn over it, and for a database grasp its panel
    (the grasp in its object's frame, as tall as the overlay)."""
    out = TrialImages()
    if plan.frame is not None:
        out.before_color, out.before_depth_m = plan.frame.color, plan.frame.depth_m
    if ex is not None and ex.after_close is not None:
        out.after_color, out.after_depth_m = ex.after_close.color, ex.after_close.depth_m
    c = plan.grasp
    if plan.sil is not None and c is not None:
        out.silhouette = plan.sil.image
        if c.preshape is not None:  # a multi-finger hand's database grasp: not a jaw
            out.overlay = draw_hand_grasp(
                plan.sil.image, c.x_px, c.y_px, c.theta_rad, c.score,
                c.width_m / plan.sil.metres_per_px,
                f"{c.source} grasp, {c.object_label}: TCP and closing line", scale=2)
            if plan.view is not None:
                out.db_grasp = database_panel(plan.view, c.score, out.overlay.shape[0])
        else:
            out.overlay = draw_grasps(plan.sil.image, np.array([c.x_px]), np.array([c.y_px]),
                                      np.array([c.theta_rad]), np.array([c.score]), projection,
                                      scale=2, unseen=plan.sil.unseen)
    return out


def database_panel(view: DatabaseGraspView, score: float, height_px: int) -> np.ndarray:
    """BGR panel of a database grasp in its object's frame, seen along its approach, titled
    with the object, the database candidate, quality, P(fc) and the pose confidence."""
    pfc = "-" if not np.isfinite(view.pfc) else f"{view.pfc:.2f}"
    title = [f"{view.object_name}: database candidate {view.candidate}",
             f"quality {view.quality:.2f}  P(fc) {pfc}  (ranked by {view.rank_by})",
             f"pose confidence {view.pose_confidence:.2f}",
             "object frame, seen along the approach"]
    return draw_database_grasp(view.points_object, view.T_object_hand, view.hand_centre,
                               view.hand_half, view.closing_half_m, score, title, height_px)
