"""The worker's import rule: protocol, wire and worker import only the standard library (issue 17).

They run inside the code's process, before the code, loaded by the judge's loader
under random names (standin.LOADER): an import of patchjudge would be a fixed
name of the judge's there, and a third-party import one more thing the code
could replace. Each other's modules come from the loader, never from an import.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from patchjudge.boundary import protocol

BOUNDARY = Path(protocol.__file__).parent
PATCH_FACING = ("protocol.py", "wire.py", "worker.py")
# The one import outside the stdlib: coverage.py, from the code's own environment, only
# when the judge asks for executed lines (worker.main), as bare `coverage run` would.
ALLOWED = {"worker.py": frozenset({"coverage"})}
OURS = frozenset({"patchjudge", "protocol", "wire", "worker", "standin", "sandbox", "seccomp"})


def imported(source: str) -> list[tuple[int, str]]:
    """Pure: (line, module) for every import in `source`, `__import__("x")` included."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # A relative import has no module of its own: it is one of the package's.
            name = "." * node.level + (node.module or "")
            found.append((node.lineno, name))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.append((node.lineno, str(node.args[0].value)))
    return found


def breaches(name: str, source: str) -> list[str]:
    """Pure: each import of `source` (the file `name`) that is not the standard library's."""
    allowed = ALLOWED.get(name, frozenset())
    found = []
    for line, module in imported(source):
        top = module.partition(".")[0]
        if module == "__future__" or (top and top in allowed):
            continue
        if not top or top in OURS or top not in sys.stdlib_module_names:
            found.append(f"{name}:{line}: imports {module}")
    return found


@pytest.mark.parametrize("name", PATCH_FACING)
def test_patch_facing_modules_import_only_the_standard_library(name: str) -> None:
    source = (BOUNDARY / name).read_text()
    assert imported(source), "the walk found no import at all"
    assert breaches(name, source) == []


@pytest.mark.parametrize("name", PATCH_FACING)
@pytest.mark.parametrize(
    "added",
    [
        "import patchjudge",
        "from patchjudge.boundary import wire",
        "import hypothesis",
        "from pytest import fail",
        "from . import protocol",
        "import wire",
        "def f():\n    import attrs",
        "x = __import__('patchjudge.boundary.protocol')",
    ],
)
def test_an_import_outside_the_standard_library_breaks_the_rule(name: str, added: str) -> None:
    source = (BOUNDARY / name).read_text() + "\n" + added + "\n"
    assert breaches(name, source), added


def test_coverage_is_the_workers_alone() -> None:
    assert breaches("wire.py", "import coverage\n") == ["wire.py:1: imports coverage"]
    assert breaches("worker.py", "import coverage\n") == []
