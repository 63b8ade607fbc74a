"""The ``graspline`` command line as a whole: its commands are the ones users and the docs
know, each one's ``--help`` works, and it runs as ``python -m onboard.cli``."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from onboard.cli import build_parser, main

# What the command line offered before it became a package (docs and scripts depend on it),
# in the order `graspline --help` lists them: command -> its actions or flows.
COMMANDS = {
    "score": (), "gripper": (), "db": ("info", "top", "build"), "record": (),
    "trials": ("list", "show", "outcome", "report"), "serve": (), "demo": (), "run": (),
    "calibrate": ("board", "intrinsics", "hand-eye", "depth", "gripper", "check"),
    "warm-up": (),   # added since: the kernels compiled ahead of a cell's first start
}


def _choices(argv: list[str], capsys) -> list[str]:
    """The choices argparse names when ``argv`` ends in an unknown command."""
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "no-such-command"])
    assert exit_.value.code == 2
    listed = re.search(r"invalid choice: .*\(choose from (.*)\)", capsys.readouterr().err)
    assert listed, "argparse's message changed"
    return [name.strip("'\"") for name in listed.group(1).split(", ")]


def test_the_commands_are_the_ones_the_cli_always_had(capsys):
    assert _choices([], capsys) == list(COMMANDS)
    for command, actions in COMMANDS.items():
        if actions:
            assert _choices([command], capsys) == list(actions), command


@pytest.mark.parametrize("argv", [[]] + [[c] for c in COMMANDS]
                         + [[c, a] for c, actions in COMMANDS.items() for a in actions],
                         ids=lambda argv: " ".join(argv) or "graspline")
def test_every_commands_help_prints_its_usage_and_exits_0(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {' '.join(['graspline', *argv])} ")


def test_a_command_line_without_a_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([])
    assert exit_.value.code == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


def test_python_dash_m_onboard_cli_runs_the_command_line():
    r = subprocess.run([sys.executable, "-m", "onboard.cli", "trials", "list", "no-such-log"],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "graspline trials: error: no trial log in no-such-log (no trials.sqlite)\n"
