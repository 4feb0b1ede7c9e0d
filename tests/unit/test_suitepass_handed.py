"""The freeze lane takes pathfilter's suite pass without a tree of its own (issue 20)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from patchjudge import repeat, treepyc
from patchjudge.lanes import suitepass
from patchjudge.workspace import Shared

SPEC = repeat.Spec(nodeids=(), count=1, conftest_roots=("tests",))
PASS = object()  # stands for a repeat.FirstPass: only passed through


def _run(shared: Shared | None) -> Any:
    return SimpleNamespace(shared=shared)


def test_the_one_pass_an_earlier_lane_made_comes_with_its_key() -> None:
    shared = Shared({("collection", "head", SPEC): "other", ("suite_pass", SPEC, ("tests",)): PASS})
    assert suitepass.earlier_pass(_run(shared)) == (SPEC, ("tests",), PASS)


def test_a_pass_made_in_this_process_is_found_too() -> None:
    # The gate's one process: pathfilter computed it through run.once, freeze asks after.
    shared = Shared()
    shared.get(("suite_pass", SPEC, ("tests",)), lambda: PASS)
    assert suitepass.earlier_pass(_run(shared)) == (SPEC, ("tests",), PASS)


def test_none_two_or_no_sharing_make_the_lane_build_its_tree() -> None:
    two = Shared(
        {("suite_pass", SPEC, ("tests",)): PASS, ("suite_pass", SPEC, ("tests", "more")): PASS}
    )
    assert suitepass.earlier_pass(_run(two)) is None
    assert suitepass.earlier_pass(_run(Shared({("collection", "head"): PASS}))) is None
    assert suitepass.earlier_pass(_run(None)) is None


def _tree_run(tmp_path: Path, isolation: str = "sandbox", python: str | None = None) -> Any:
    return SimpleNamespace(
        environ={"PATCHJUDGE_CACHE_DIR": str(tmp_path / "cache")},
        repo=tmp_path / "repo",
        isolation=isolation,
        code=SimpleNamespace(python=python),
        ledger=SimpleNamespace(gate=SimpleNamespace(pythonpath=(".",))),
        shared=None,
        box=None,
        once=lambda key, compute: (compute(), False),
    )


def _small_tree(root: Path) -> Path:
    for rel, text in {
        "pkg/__init__.py": "",
        "pkg/mod.py": "def one():\n    return 1\n",
        "tests/test_a.py": "from pkg.mod import one\n\ndef test_a():\n    assert one() == 1\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _pycs(tree: Path) -> list[str]:
    return sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.pyc"))


def test_the_suites_pass_starts_on_the_judges_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Boxed, the judge's interpreter: the tree's modules compiled and its test files
    # rewritten before the pass's pytest starts (issue 20), as the flakes lane does.
    tree = _small_tree(tmp_path / "tree")
    seen: list[list[str]] = []

    def first_pass(tree: Path, *args: Any, **kwargs: Any) -> object:
        seen.append(_pycs(tree))
        return PASS

    monkeypatch.setattr(repeat, "first_pass", first_pass)
    assert suitepass.head_pass(_tree_run(tmp_path), tree, SPEC, ("tests",), tmp_path) == (
        PASS,
        False,
    )
    tail = treepyc.pytest_tail()
    tag = sys.implementation.cache_tag
    assert seen == [
        [
            f"pkg/__pycache__/__init__.{tag}.pyc",
            f"pkg/__pycache__/mod.{tag}.pyc",
            f"tests/__pycache__/test_a{tail}",
        ]
    ]


def test_unboxed_or_another_interpreter_the_pass_compiles_its_own(tmp_path: Path) -> None:
    # Unboxed there is no judge's cache (cache.placement); another venv's interpreter
    # reads bytecode of its own version, which the judge cannot write.
    for run in (_tree_run(tmp_path, isolation="process"), _tree_run(tmp_path, python="/x/py")):
        tree = _small_tree(tmp_path / "tree")
        assert suitepass.tree_bytecode(run, tree, ("tests",)) is None
        assert _pycs(tree) == []
