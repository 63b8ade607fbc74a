"""Value types of the image-space measure: gripper projection, parameters, scores."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ._checks import check_positive


@dataclass(frozen=True)
class GripperProjection:
    """A parallel-jaw gripper projected into a silhouette image (Tan Fig. 2), in pixels.

    finger_width_px : w, the width of a finger across the closing direction.
    open_width_px : r, the distance between the open fingers along the closing direction.
    n_lines : n, the number of grasp lines sampling the finger width (>= 1).
    """

    finger_width_px: float
    open_width_px: float
    n_lines: int

    def __post_init__(self) -> None:
        check_positive(self.finger_width_px, "finger_width_px", "GripperProjection")
        check_positive(self.open_width_px, "open_width_px", "GripperProjection")
        n = self.n_lines
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"GripperProjection: n_lines must be an integer >= 1, got {n!r}")

    def line_offsets_px(self) -> np.ndarray:
        """Offsets Δw_i of the n grasp lines across the closing direction, pixels (Tan eq. 3)."""
        n = int(self.n_lines)
        if n == 1:
            # eq. 3 divides by n - 1; a single line runs through the centre.
            return np.zeros(1)
        i = np.arange(1, n + 1, dtype=np.float64)
        return self.finger_width_px * (2.0 * i - n - 1.0) / (2.0 * (n - 1.0))


@dataclass(frozen=True)
class MeasureParams:
    """Thresholds, tolerances and weights of the measure; defaults are the paper's.

    Angles are radians, lengths pixels of the silhouette image.
    """

    d_t_threshold: float = 1.0                 # D_t ratio scoring 0 (Tan III-E)
    r_r_threshold_rad: float = math.radians(60.0)  # R_r scoring 0
    s_a_threshold_rad: float = math.radians(60.0)  # S_a scoring 0
    s_f_knee_fraction: float = 0.25            # S_f = w/4 ...
    s_f_knee_score: float = 0.7                # ... scores 0.7
    s_f_zero_fraction: float = 0.5             # S_f = w/2 scores 0
    k: float = 0.9                             # weight of the worst feature (eq. 16)
    secondary_tol_px: float = 2.0              # grasp points this close to the primary are contacts
    normal_window: int = 7                     # m of the m x m circular window (eqs. 6-8)
    coarse_step_px: int = 0                    # 0 = round(sqrt(r)), the paper's choice
    no_pivot_angle_rad: float = math.pi / 2        # R_r when no grasp point ever reaches a plate
    min_lever_fraction: float = 0.5            # R_r prefers points >= this * w from the pivot
    balance_tol_px: float = 0.5                # contacts this close to a primary share its load
    outline_sigma_px: float = 1.0              # blur placing outlines between pixels

    def __post_init__(self) -> None:
        for name in ("d_t_threshold", "r_r_threshold_rad", "s_a_threshold_rad",
                     "s_f_knee_fraction", "s_f_zero_fraction", "outline_sigma_px"):
            check_positive(getattr(self, name), name, "MeasureParams")
        if not self.s_f_knee_fraction < self.s_f_zero_fraction:
            raise ValueError(
                "MeasureParams: s_f_knee_fraction must be < s_f_zero_fraction, got "
                f"{self.s_f_knee_fraction!r} and {self.s_f_zero_fraction!r}")
        for name in ("k", "s_f_knee_score"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
                raise ValueError(f"MeasureParams: {name} must be in [0, 1], got {v!r}")
        for name in ("secondary_tol_px", "no_pivot_angle_rad", "min_lever_fraction",
                     "balance_tol_px"):
            check_positive(getattr(self, name), name, "MeasureParams", allow_zero=True)
        m = self.normal_window
        if isinstance(m, bool) or not isinstance(m, int) or m < 3 or m % 2 == 0:
            raise ValueError(f"MeasureParams: normal_window must be an odd integer >= 3, got {m!r}")
        c = self.coarse_step_px
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise ValueError(f"MeasureParams: coarse_step_px must be an integer >= 0, got {c!r}")

    def coarse_step(self, open_width_px: float) -> int:
        """Coarse search step in pixels for an open width r: sqrt(r) unless set (Tan III-C)."""
        if self.coarse_step_px > 0:
            return self.coarse_step_px
        return max(1, int(round(math.sqrt(open_width_px))))


@dataclass
class Scores:
    """Scores of a batch of candidates, one array entry per candidate.

    score : float32 in [0, 1]; 0 where collision or missing.
    collision, missing : bool indicators I_c and I_m.
    d_t : translation ratio (eq. 9); r_r : rotation, radians (eq. 10);
    s_a : contact-angle slippage, radians (eq. 13); s_f : force-zone offset, pixels (eq. 15).
    Raw features are NaN where the candidate collided or missed (not evaluated).
    score_d_t, score_r_r, score_s_a, score_s_f : the normalised feature scores in [0, 1].
    contact_left, contact_right : (N, 2) float32 (column, row) of the object pixel at each
        primary contact; NaN where not evaluated.
    width_px : float32 distance between the primaries' outlines along the closing direction,
        the opening at which both fingers touch; NaN where not evaluated.
    tan_score : float32, Tan et al.'s score (eq. 16) before the depth terms; equal to score
        under ``measure="tan2024"`` or without depth.
    body_collision, contact_height_m, contact_tilt_rad, section_m, lever_m, torque_ratio, score_contact,
        score_torque, score_tilt, score_palm, score_swing : the depth terms (see ``physical_terms``); False / NaN where not computed.
    """

    score: np.ndarray
    collision: np.ndarray
    missing: np.ndarray
    d_t: np.ndarray
    r_r: np.ndarray
    s_a: np.ndarray
    s_f: np.ndarray
    score_d_t: np.ndarray
    score_r_r: np.ndarray
    score_s_a: np.ndarray
    score_s_f: np.ndarray
    contact_left: np.ndarray
    contact_right: np.ndarray
    width_px: np.ndarray
    tan_score: np.ndarray
    body_collision: np.ndarray
    contact_height_m: np.ndarray
    contact_tilt_rad: np.ndarray
    section_m: np.ndarray
    lever_m: np.ndarray
    torque_ratio: np.ndarray
    score_contact: np.ndarray
    score_torque: np.ndarray
    score_tilt: np.ndarray
    score_palm: np.ndarray
    score_swing: np.ndarray

    @classmethod
    def empty(cls, n: int) -> "Scores":
        """Allocate outputs for n candidates."""
        f = lambda: np.empty(n, dtype=np.float32)  # noqa: E731
        b = lambda: np.empty(n, dtype=np.bool_)  # noqa: E731
        p = lambda: np.empty((n, 2), dtype=np.float32)  # noqa: E731
        return cls(f(), b(), b(), f(), f(), f(), f(), f(), f(), f(), f(), p(), p(), f(),
                   f(), b(), f(), f(), f(), f(), f(), f(), f(), f(), f(), f())

    def __len__(self) -> int:
        return len(self.score)

    @property
    def evaluated(self) -> np.ndarray:
        """Mask of candidates that reached full evaluation (no collision, no miss)."""
        return ~(self.collision | self.missing)

    def take(self, index: np.ndarray) -> "Scores":
        """The scores of the candidates selected by an index or mask array."""
        return Scores(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @staticmethod
    def concatenate(parts: "list[Scores]") -> "Scores":
        """Join the scores of several batches in order."""
        return Scores(**{f.name: np.concatenate([getattr(p, f.name) for p in parts])
                         for f in fields(Scores)})
