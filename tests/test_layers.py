"""The layers of DESIGN.md, checked on every import in the repo's Python code: product code
(driver/, models/, nicsim/, bench/) and the verification library (tb/, scripts/) never import
from tests/; the models and the driver never import the testbench or the tools above them;
tb/ never imports nicsim/ or bench/.

Every `import`/`from` statement counts, at any depth (inside functions too), and so does a
module named by a string: `importlib.import_module("tests.x")`, or a cocotb test module passed
to a runner as "tests.x" (docstrings and comments are prose, not imports).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# package -> the top-level packages it must not import
FORBIDDEN = {
    "driver": {"tests", "tb", "nicsim", "bench"},
    "models": {"tests", "tb", "nicsim", "bench"},
    "tb": {"tests", "nicsim", "bench"},
    "nicsim": {"tests"},
    "bench": {"tests"},
    "scripts": {"tests"},
    "examples": {"tests"},
}
_MODULE_STRING = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module name) of everything `path` imports or names as a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
              and _MODULE_STRING.match(node.value)):
            out.append((node.lineno, node.value))
    return out


def _files(package: str) -> list[Path]:
    return sorted(p for p in (REPO_ROOT / package).rglob("*.py") if ".venv" not in p.parts)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layers(package: str) -> None:
    bad = []
    for path in _files(package):
        for line, mod in imported_modules(path):
            top = mod.split(".")[0]
            if top in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(REPO_ROOT)}:{line}: {mod}")
    assert not bad, f"{package}/ imports what its layer must not (DESIGN.md, Layers):\n  " + "\n  ".join(bad)


def test_the_scan_sees_every_kind_of_import(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text('"""Mentions tests.driver.env in prose."""\n'
                   "import tests.a\n"
                   "from tests.b import x\n"
                   "def f():\n"
                   "    from tests.c import y\n"
                   "    import importlib\n"
                   "    importlib.import_module('tests.d')\n"
                   "    run('tests.rtl.cocotb_e', 'hello world', 'a.b c')\n")
    mods = [m for _, m in imported_modules(src) if m.startswith("tests")]
    assert sorted(mods) == ["tests.a", "tests.b", "tests.c", "tests.d", "tests.rtl.cocotb_e"]
