"""Measuring this tree against a baseline checkout: rounds in alternating order, each tree's
figures taken in a subprocess that imports that tree's package, pooled per tree."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

F = TypeVar("F")


def baseline_trees(baseline_tree: str, package: str) -> dict[str, Path]:
    """{"this": this checkout, "base": baseline_tree}; SystemExit when the baseline has no package."""
    here = Path(__file__).resolve().parents[1]
    trees = {"this": here, "base": Path(baseline_tree).resolve()}
    if not (trees["base"] / package / "__init__.py").is_file():
        raise SystemExit(f"--baseline-tree {baseline_tree}: no {package} package there")
    return trees


def alternate_rounds(trees: dict[str, Path], rounds: int, measure: Callable[[Path], F],
                     imported_from: Callable[[F], str]) -> dict[str, F]:
    """Each tree measured rounds times, this tree first in even rounds and the baseline first in
    odd ones (so that a drift of the machine's load falls on both), the figures pooled per tree
    (F.pooled); SystemExit when a run imported the package from elsewhere than its tree."""
    runs: dict[str, F] = {}
    for i in range(rounds):
        for name in (("this", "base") if i % 2 == 0 else ("base", "this")):
            fig = measure(trees[name])
            if not Path(imported_from(fig)).resolve().is_relative_to(trees[name]):
                raise SystemExit(f"{name} tree {trees[name]} measured from {imported_from(fig)}")
            runs[name] = runs[name].pooled(fig) if name in runs else fig
            print(f"round {i + 1}/{rounds}: measured {name} tree {trees[name]}", flush=True)
    return runs
