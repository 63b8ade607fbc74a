"""Settings of the kinematic closing: its tolerances, margins and limits (metres)."""
from __future__ import annotations

import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class ClosingSettings:
    """Tolerances and limits of the kinematic closing (metres).

    contact_tol_m : a gap this small is a contact (motion stops there);
    margin_m : gaps are measured up to this distance (MuJoCo's contact margin on hand geoms),
        which also caps one step; withdraw_m : how far back along the approach the hand starts
        (None: the object's bounding radius plus 1 cm); table : whether the table blocks the
        hand and fingers; max_steps : cap on steps per phase (a stuck search ends there).
    approach_margin_m : during the approach, gaps are measured up to this distance, the
        hand stops on a lattice of positions contact_tol_m / 2 apart, and a query clears the
        travel along each measured pair's direction and over the table's height
        (_approach.approach_lattice); more than margin_m makes a query dearer and saved none
        (docs/figures.md). The queries along the way leave out MuJoCo's extra contact points per pair
        (multiccd: a third of a query's cost), the contacts at the end have them. It used to
        accept None for an earlier stepped approach; that path is now only the tests'
        reference (tests/offline_sim/kinematic_reference.py), and None is refused.
    """

    contact_tol_m: float = 5e-4
    margin_m: float = 0.02
    withdraw_m: float | None = None
    table: bool = True
    max_steps: int = 400
    approach_margin_m: float = 0.02

    def __post_init__(self) -> None:
        if not 0 < self.contact_tol_m < self.margin_m:
            raise ValueError(f"ClosingSettings: need 0 < contact_tol_m < margin_m, got "
                             f"{self.contact_tol_m!r} and {self.margin_m!r}")
        if (isinstance(self.approach_margin_m, bool)
                or not isinstance(self.approach_margin_m, numbers.Real)
                or not self.approach_margin_m >= self.margin_m):
            raise ValueError(f"ClosingSettings: approach_margin_m must be a number >= margin_m "
                             f"({self.margin_m!r}), got {self.approach_margin_m!r}")
        if self.withdraw_m is not None and not self.withdraw_m >= 0:
            raise ValueError(f"ClosingSettings: withdraw_m must be >= 0, got {self.withdraw_m!r}")
        if self.max_steps < 1:
            raise ValueError(f"ClosingSettings: max_steps must be >= 1, got {self.max_steps!r}")
