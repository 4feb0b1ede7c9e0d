"""Which copy of a judge dependency the runner (pytest) uses and which the tests import (issue 19).

A project that is pluggy or iniconfig is the code under test and a module pytest
runs on. One process holds one module a name: pytest binds the runner's copy at
start-up, the plugin then forgets it, and the tests import the tree's. Stdlib only:
the plugin imports this before any tested code runs.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

# The runner cannot hand these to the tree: pytest itself, the judge's plugin and
# what it drives (hypothesis, coverage) are one copy a process, the one that runs.
# A tree that is one of them is tested against the runner's copy without --python.
RUNNER_KEEPS = frozenset({
    "pytest", "_pytest", "patchjudge", "hypothesis", "_hypothesis_pytestplugin",
    "_hypothesis_ftz_detector", "_hypothesis_globals", "coverage",
})  # fmt: skip


def top_level(names: Iterable[str]) -> set[str]:
    """Pure: the module names a pythonpath listing (file and folder names) provides."""
    found = set()
    for name in names:
        module = name.split(".", 1)[0]
        if module and (name.endswith((".py", ".pyc", ".so", ".pyd")) or "." not in name):
            found.add(module)
    return found


def tree_owned(provided: Iterable[str]) -> set[str]:
    """Pure: of the names the tree provides, those its tests import as the tree's own.

    The standard library stays the standard library's (a tree's `inspect.py`
    is honest and stays unimported); what the runner keeps stays the runner's.
    """
    return {n for n in provided if n not in sys.stdlib_module_names and n not in RUNNER_KEEPS}


def runner_copies(provided: Iterable[str], tree: Path) -> dict[str, Path]:
    """name -> the judge's own copy of each judge dependency the tree provides.

    For an interpreter of another venv, where `[gate] install` replaced that
    copy with the project's build: linked ahead of its site-packages, pytest
    starts on the judge's copy, as it does in the judge's venv. Found, never
    imported; nothing under the tree (the judge's process does not import it).
    """
    found: dict[str, Path] = {}
    for name in sorted(tree_owned(provided)):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        locations = list(spec.submodule_search_locations or ())
        path = Path(locations[0] if locations else str(spec.origin))
        if not path.exists() or path.resolve().is_relative_to(tree.resolve()):
            continue
        found[name] = path
    return found


def judges_copy_reason(names: Iterable[str]) -> str:
    """Pure: why a suite run without --python says nothing of the tree's copy of `names`."""
    shown = ", ".join(sorted(names))
    return (
        f"the tree provides {shown}, which the judge's pytest runs on: without --python its"
        " visible suite ran on the judge's copy, not the tree's; pass --python with the"
        " code's own venv (nox -s gate does)"
    )
