"""Which copy of a judge dependency pytest runs on and which the tests import (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pluggy
import pytest

from patchjudge import runner


@pytest.mark.parametrize(
    ("listing", "names"),
    [
        (["pluggy", "iniconfig.py", "README.md", "_speedups.so", "x.pth"], {"pluggy", "iniconfig", "_speedups"}),
        (["py.typed", "pluggy.egg-info"], set()),
        ([], set()),
    ],
)  # fmt: skip
def test_top_level(listing: list[str], names: set[str]) -> None:
    assert runner.top_level(listing) == names


def test_the_tree_owns_all_but_the_stdlib_and_what_the_runner_keeps() -> None:
    provided = {"pluggy", "iniconfig", "packaging", "inspect", "json", "pytest", "_pytest"}
    provided |= {"hypothesis", "coverage", "patchjudge", "calc"}
    assert runner.tree_owned(provided) == {"pluggy", "iniconfig", "packaging", "calc"}


def test_runner_copies_are_the_judges_own_found_not_imported(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "src" / "pluggy").mkdir(parents=True)
    found = runner.runner_copies({"pluggy", "pytest", "json", "no_such_module_here"}, tree)
    assert found == {"pluggy": Path(pluggy.__file__).parent}


def test_a_copy_under_the_tree_is_never_the_runners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "tree"
    (tree / "src" / "calc").mkdir(parents=True)
    (tree / "src" / "calc" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tree / "src"))
    assert runner.runner_copies({"calc"}, tree) == {}
