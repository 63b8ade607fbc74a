"""The house rules of docs/design.md, read from the source: imports flow one way between the
packages, no package imports another's private modules, heavy libraries load on demand, and no
module of ours points outside the repository."""
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("geometry", "scoring", "drivers", "vision", "calibration", "offline_sim", "onboard")
# What each package may import at module level (docs/design.md, "The direction of imports").
ALLOWED = {
    "geometry": set(),
    "scoring": {"geometry"},
    "drivers": {"scoring", "geometry"},
    "vision": {"drivers", "scoring", "geometry"},
    "calibration": {"drivers", "vision", "scoring", "geometry"},
    "offline_sim": {"drivers", "scoring", "geometry"},
    "onboard": {"vision", "drivers", "calibration", "scoring", "geometry"},
}
# onboard reaches offline_sim only inside a function, for the simulated cell.
LAZY = {"onboard": {"offline_sim"}}
HEAVY = {"mujoco", "torch", "torchvision", "pyrealsense2", "ray", "trimesh", "coacd",
         "detectron2", "open3d"}
# Backends that a registry imports by name when a cell file chooses them: the whole module is
# the on-demand unit (vision's registry; `import vision` alone loads neither).
BACKEND_MODULES = {"vision/_maskrcnn.py", "vision/_detectron2.py"}


def _modules():
    """(package, path) of every module of ours."""
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield package, path


def _imports(tree: ast.Module):
    """(module name, lineno, at module level?) of every absolute import in a module."""
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            yield node.module, node.lineno, id(node) in top
            for name in names:  # `from pkg import _private`
                yield name, node.lineno, id(node) in top


def _module_level_imports(tree: ast.Module):
    """Imports at module level, inside `if`/`try` blocks at module level too."""
    for node in tree.body:
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                break
            if isinstance(inner, ast.Import):
                yield from ((a.name, inner.lineno) for a in inner.names)
            elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                yield inner.module, inner.lineno


def _violations():
    """Every breach of the rules, as 'path:line: what'."""
    out = []
    for package, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(REPO)
        for name, line, _ in _imports(tree):
            root = name.split(".")[0]
            if root in PACKAGES and root != package:
                if root not in ALLOWED[package] | LAZY.get(package, set()):
                    out.append(f"{rel}:{line}: {package} imports {name}")
                if any(part.startswith("_") for part in name.split(".")[1:]):
                    out.append(f"{rel}:{line}: {package} imports {root}'s private {name}")
        for name, line in _module_level_imports(tree):
            root = name.split(".")[0]
            if root in HEAVY and str(rel) not in BACKEND_MODULES:
                out.append(f"{rel}:{line}: {name} imported at module level (load it on demand)")
            if root in LAZY.get(package, set()):
                out.append(f"{rel}:{line}: {package} imports {root} at module level")
    return out


def test_packages_import_only_downward_and_never_each_others_private_modules():
    assert _violations() == []


def test_the_rule_catches_an_upward_a_private_and_an_eager_import():
    tree = ast.parse("import mujoco\nfrom onboard import PickingCell\n"
                     "from vision._kernels import x\n\ndef f():\n    import torch\n")
    names = {n for n, _, _ in _imports(tree)}
    assert {"mujoco", "onboard", "vision._kernels", "torch"} <= names
    assert [n for n, _ in _module_level_imports(tree)] == ["mujoco", "onboard", "vision._kernels"]


def test_no_module_points_to_documents_outside_the_repository():
    outside = ("shared/DESIGN", "shared/papers", "see DESIGN.md")
    pointers = [str(path.relative_to(REPO)) for _, path in _modules()
                if any(o in path.read_text(encoding="utf-8") for o in outside)]
    assert pointers == []
