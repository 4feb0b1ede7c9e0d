"""A package of the tested tree is the tree's alone (red team, session 13, redteam7).

A tree package that merges portions of its name (`pkgutil.extend_path`) also
found, in the code's venv, the installed project's files the tree lacks: in a
run of the base's tree those are the head's build.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchjudge.pytest_plugin import TreeOnly

MERGING = "import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n"


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    tree, site = tmp_path / "tree", tmp_path / "site"
    files = {
        tree / "rt7pkg" / "__init__.py": MERGING,
        tree / "rt7pkg" / "own.py": "WHERE = 'tree'\n",
        site / "rt7pkg" / "__init__.py": "",
        site / "rt7pkg" / "own.py": "WHERE = 'site'\n",
        site / "rt7pkg" / "_speedups.py": "WHERE = 'site'\n",
        site / "rt7other" / "__init__.py": MERGING,
        site / "rt7other" / "extra.py": "WHERE = 'site'\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(sys, "path", [str(tree), str(site), *sys.path])
    monkeypatch.setattr(sys, "meta_path", [TreeOnly([str(tree)]), *sys.meta_path])
    yield tree, site
    for name in [n for n in sys.modules if n.split(".")[0] in ("rt7pkg", "rt7other")]:
        del sys.modules[name]


def test_a_tree_package_imports_its_own_submodules_and_no_other_portions(
    roots: tuple[Path, Path],
) -> None:
    assert importlib.import_module("rt7pkg.own").WHERE == "tree"
    # Without TreeOnly, extend_path found it in the site: the head's build at base.
    with pytest.raises(ModuleNotFoundError, match=r"rt7pkg\._speedups"):
        importlib.import_module("rt7pkg._speedups")


def test_a_package_from_elsewhere_keeps_its_portions(roots: tuple[Path, Path]) -> None:
    assert importlib.import_module("rt7other.extra").WHERE == "site"
