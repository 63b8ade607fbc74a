"""Warm start (issue 24): the planning's Numba kernels are compiled or loaded from numba's
cache before the first frame, on the simulated cell, and the loop plans as it would have
without the warm-up."""
from __future__ import annotations

import numpy as np
import pytest

import scoring
import vision

pytest.importorskip("mujoco")

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _cell(tmp_path, name: str):
    from onboard import open_picking_cell

    return open_picking_cell(sim=True, seed=0, log_dir=str(tmp_path / name))


def _signatures() -> dict[str, list]:
    return {k: list(d.signatures)
            for k, d in {**scoring.jit_kernels(), **vision.jit_kernels()}.items()}


def test_after_warm_up_every_kernel_is_ready_and_a_cycle_compiles_nothing_more(tmp_path):
    with _cell(tmp_path, "log") as cell:
        warm = cell.warm_up()
        ready = _signatures()
        assert warm.kernels == len(ready) >= 17
        assert [k for k, sigs in ready.items() if not sigs] == []
        rec = cell.pick_record()
        # a whole cycle: segmented, searched, chosen, executed, its overlay drawn
        assert rec.outcome in ("success", "failure") and "overlay" in rec.images
        assert _signatures() == ready  # nothing compiled or loaded after the warm-up
        assert cell.log.warm_ups() == [warm] and cell.kernel_warm_up == warm


def test_warm_up_leaves_the_plans_as_they_are_without_it(tmp_path):
    with _cell(tmp_path, "warm") as warm, _cell(tmp_path, "cold") as cold:
        warm.warm_up()
        a, b = warm.loop.plan().choice, cold.loop.plan().choice
    assert a.object_label == b.object_label and a.score == b.score
    assert a.n_candidates == b.n_candidates
    np.testing.assert_array_equal(a.T_base_tcp, b.T_base_tcp)


def test_the_warm_up_command_readies_every_kernel_and_leaves_no_trial_log(capsys, tmp_path,
                                                                       monkeypatch):
    import re
    import tempfile

    from onboard.cli import main

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its throwaway log goes here
    assert main(["warm-up"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("warming up the planning kernels")
    assert re.fullmatch(r"(compiling kernels \.\.\. done|kernels loaded from cache) in "
                        r"\d+\.\d s.*", out[1]), out
    ready = _signatures()
    assert len(ready) >= 17 and [k for k, sigs in ready.items() if not sigs] == []
    assert list(tmp_path.iterdir()) == []  # the simulated cell's trial log is not kept
