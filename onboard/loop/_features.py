"""One candidate of a scored batch (scoring.Scores) read out by name: its features for the
trial log, and what holds its score down for a no-grasp message."""
from __future__ import annotations

import math

FEATURE_NAMES = ("d_t", "r_r", "s_a", "s_f", "score_d_t", "score_r_r", "score_s_a", "score_s_f",
                 "tan_score", "contact_height_m", "contact_tilt_rad", "section_m", "lever_m",
                 "torque_ratio", "score_contact", "score_torque", "score_tilt", "score_palm",
                 "score_swing", "body_collision")


def features(scores, j: int) -> dict[str, float]:
    """The raw features and feature scores of candidate j, by name (angles in radians, the
    finger offset s_f in pixels, heights and lengths in metres)."""
    out = {n: float(getattr(scores, n)[j]) for n in FEATURE_NAMES}
    out["r_r_rad"], out["s_a_rad"], out["s_f_px"] = out.pop("r_r"), out.pop("s_a"), out.pop("s_f")
    out["width_px"] = float(scores.width_px[j])
    out["collision"] = float(scores.collision[j])
    out["missing"] = float(scores.missing[j])
    # a colliding or missing candidate has no features (NaN): leave them out
    return {k: v for k, v in out.items() if math.isfinite(v)}


def limit_text(scores, j: int) -> str:
    """What holds a candidate's score down, when a depth term does: ', Tan 0.95, held down
    by the contact tilt (0.12)'; empty when Tan's score is itself the limit."""
    terms = {"the finger bodies (they land on something)": 0.0 if scores.body_collision[j] else 1.0,
             "the pads' contact height": scores.score_contact[j],
             "the torque about the grasp axis": scores.score_torque[j],
             "the contact tilt (a side leaning, a top under the finger, or a pinch above a "
             "section wider than the stroke)":
                 scores.score_tilt[j],
             "the palm (it grazes a neighbour's seen outline: it may land on it)":
                 scores.score_palm[j],
             "the swing about the grasp axis (held far off the mass centre)":
                 scores.score_swing[j]}
    terms = {k: float(v) for k, v in terms.items() if math.isfinite(v)}
    if not terms or min(terms.values()) >= 0.999:
        return ""
    name = min(terms, key=terms.get)
    return f", Tan {float(scores.tan_score[j]):.2f}, held down by {name} ({terms[name]:.2f})"
