"""Stage timing: each stage of a cycle timed (seconds) against the cell file's budgets."""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("graspline.loop")


class StageClock:
    """Times named stages (seconds) and reports those over their budget: each overrun is
    logged as a warning when it happens and kept in ``overruns`` for the trial's note. One
    clock serves a whole cycle, planning and execution alike."""

    def __init__(self, budgets_s: dict[str, float]) -> None:
        self.budgets_s = budgets_s
        self.stage_s: dict[str, float] = {}
        self.overruns: list[str] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the body as stage ``name``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, dt: float) -> str | None:
        """Count dt seconds to stage ``name``; the overrun's text when dt is over its budget."""
        self.stage_s[name] = self.stage_s.get(name, 0.0) + dt
        budget = self.budgets_s.get(name)
        if budget is None or dt <= budget:
            return None
        text = f"{name} {dt * 1e3:.0f} ms > {budget * 1e3:.0f} ms"
        self.overruns.append(text)
        log.warning("stage %s overran its budget: %.1f ms > %.1f ms", name, dt * 1e3,
                    budget * 1e3)
        return text
