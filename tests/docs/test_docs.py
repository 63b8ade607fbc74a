"""The README and docs/ cannot rot: their Python examples run, their command lines parse, their
links resolve.

- Every fenced ```python block runs in a fresh namespace, in a temporary directory. A block
  whose first line is ``# requires: NAME[, NAME]`` runs only where each NAME imports (an
  optional extra such as mujoco); ``# not run: REASON`` marks a sketch that needs hardware or a
  live frame: it is compiled, and the graspline names it imports must still exist.
  A block right after an HTML comment that names a test file (``<!-- ...: tests/x.py runs this
  block -->``) is run by that test instead; the test file must exist and read this page.
- Every line in a ```console, ```bash or ```sh block that starts with ``graspline `` (or
  ``$ graspline``, ``.venv/bin/graspline``) parses with ``onboard.cli.build_parser()``.
- Every relative link ``[text](path)`` points at a file of the repository.
"""
from __future__ import annotations

import ast
import importlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
OUR_PACKAGES = ("geometry", "scoring", "vision", "drivers", "calibration", "offline_sim", "onboard")
SHELL_FENCES = ("console", "bash", "sh", "shell")
FENCE = re.compile(r"^```(\S*)\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Block:
    """One fenced block: the page, the line its first body line is on (1-based), the
    info string, the body, and the line just above the fence."""

    page: Path
    line: int
    lang: str
    body: str
    before: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, j = i, i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        before = lines[start - 1] if start > 0 else ""
        blocks.append(Block(page, start + 2, m.group(1), "\n".join(lines[start + 1:j]) + "\n", before))
        i = j + 1
    return blocks


ALL_BLOCKS = [b for page in PAGES for b in _blocks(page)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]


def _directive(block: Block, word: str) -> str | None:
    """The text after ``# word:`` on the block's first line, or None."""
    first = block.body.lstrip("\n").splitlines()[0] if block.body.strip() else ""
    m = re.match(rf"#\s*{word}:\s*(.+)$", first.strip())
    return m.group(1).strip() if m else None


def _tested_elsewhere(block: Block) -> str | None:
    """The test file an HTML comment above the block names, or None."""
    m = re.match(r"<!--.*?(tests/\S+\.py).*-->", block.before.strip())
    return m.group(1) if m else None


def _check_our_imports(block: Block) -> None:
    """Every ``from <graspline package> import name`` in the block names something that exists
    (where the package imports here without an optional extra)."""
    for node in ast.walk(ast.parse(block.body, filename=block.where)):
        if not (isinstance(node, ast.ImportFrom) and node.module
                and node.module.split(".")[0] in OUR_PACKAGES):
            continue
        try:
            module = importlib.import_module(node.module)
        except ImportError as exc:  # an optional extra is missing: nothing to check here
            if exc.name and exc.name.split(".")[0] in OUR_PACKAGES:
                raise AssertionError(f"{block.where}: no module {node.module}") from exc
            continue
        for alias in node.names:
            assert hasattr(module, alias.name), f"{block.where}: {node.module} has no {alias.name}"


def test_the_pages_exist_and_have_blocks():
    assert (REPO / "docs" / "index.md").exists()
    assert PYTHON_BLOCKS, "no python blocks found"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.where for b in PYTHON_BLOCKS])
def test_python_example_runs(block: Block, tmp_path, monkeypatch):
    tested_by = _tested_elsewhere(block)
    if tested_by:
        test_file = REPO / tested_by
        assert test_file.exists(), f"{block.where}: {tested_by} does not exist"
        page = str(block.page.relative_to(REPO)).split("/")
        assert all(part in test_file.read_text(encoding="utf-8") for part in page), \
            f"{block.where}: {tested_by} does not read {block.page.name}"
        pytest.skip(f"run by {tested_by}")
    code = compile(block.body, block.where, "exec")
    _check_our_imports(block)
    if (reason := _directive(block, "not run")) is not None:
        pytest.skip(f"{block.where}: not run ({reason})")
    if (required := _directive(block, "requires")) is not None:
        for name in (n.strip() for n in required.split(",")):
            pytest.importorskip(name, reason=f"{block.where} requires {name}")
    monkeypatch.chdir(tmp_path)
    exec(code, {"__name__": "__docs_example__"})


def _cli_lines() -> list[tuple[str, str]]:
    """(file:line, command line) of every graspline command shown in a shell block."""
    found = []
    for block in ALL_BLOCKS:
        if block.lang not in SHELL_FENCES:
            continue
        lines = block.body.splitlines()
        k = 0
        while k < len(lines):
            number, text = block.line + k, lines[k]
            while text.rstrip().endswith("\\") and k + 1 < len(lines):  # continued lines
                k += 1
                text = text.rstrip()[:-1] + " " + lines[k].strip()
            k += 1
            text = re.sub(r"^\s*\$\s*", "", text).strip()
            text = re.sub(r"^(\S*/)?\.venv/bin/graspline\b", "graspline", text)
            text = re.sub(r"^.*?\S*python\S* -m onboard\.cli\b", "graspline", text)
            if text.startswith("graspline "):
                found.append((f"{block.page.relative_to(REPO)}:{number}", text))
    return found


CLI_LINES = _cli_lines()


def test_there_are_command_lines_to_check():
    assert len(CLI_LINES) >= 10, CLI_LINES


@pytest.mark.parametrize("where, line", CLI_LINES, ids=[w for w, _ in CLI_LINES])
def test_command_line_parses(where: str, line: str, capsys):
    from onboard.cli import build_parser

    command = line.split(" #", 1)[0]            # a trailing shell comment
    command = command.split(" &", 1)[0].rstrip(" &")  # run in the background
    # `[--opt A|B]` shows an optional part: the line must parse without every such part, and
    # with every one of them (taking the first of alternatives A|B)
    without = re.sub(r"\s*\[[^\[\]]*\]", "", command)
    with_all = re.sub(r"\[([^\[\]]*)\]", lambda m: re.sub(r"(\S+?)(\|\S+)+", r"\1", m.group(1)),
                      command)
    for variant in dict.fromkeys([without, with_all]):
        try:
            words = shlex.split(variant)
        except ValueError as exc:
            pytest.fail(f"{where}: cannot split {variant!r}: {exc}")
        try:
            build_parser().parse_args(words[1:])
        except SystemExit as exc:
            if exc.code not in (0, None):
                pytest.fail(f"{where}: graspline does not parse {variant!r}: "
                            f"{capsys.readouterr().err.strip().splitlines()[-1:]}")


def _links() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        in_fence = False
        for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if FENCE.match(text) or text.strip() == "```":
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(text):
                found.append((f"{page.relative_to(REPO)}:{number}", target))
    return found


LINKS = _links()


def test_relative_links_point_at_files_of_the_repository():
    bad = []
    for where, target in LINKS:
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        page = REPO / where.split(":")[0]
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists() or REPO not in path.parents:
            bad.append(f"{where}: {target}")
    assert not bad, "links to nothing in the repository:\n" + "\n".join(bad)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces to -)."""
    anchors, in_fence = set(), False
    for text in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(text) or text.strip() == "```":
            in_fence = not in_fence
        elif not in_fence and (m := re.match(r"^#{1,6}\s+(.*)$", text)):
            anchors.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def test_links_to_a_heading_name_one_that_exists():
    bad = []
    for where, target in LINKS:
        if re.match(r"^[a-z]+:", target) or "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        page = REPO / where.split(":")[0]
        path = (page.parent / file).resolve() if file else page
        if path.suffix == ".md" and path.exists() and anchor not in _anchors(path):
            bad.append(f"{where}: {target}")
    assert not bad, "links to headings that do not exist:\n" + "\n".join(bad)


def test_nothing_points_outside_the_repository():
    bad = [f"{p.relative_to(REPO)}:{n}" for p in PAGES
           for n, text in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if re.search(r"shared/(DESIGN|STYLE)\.md|shared/papers", text)]
    assert not bad, "pages point to the team's shared folder:\n" + "\n".join(bad)


def test_images_stay_small():
    big = [f"{p.relative_to(REPO)}: {p.stat().st_size // 1024} KB"
           for p in (REPO / "docs").glob("*.png") if p.stat().st_size > 300 * 1024]
    assert not big, big
