"""Attacks on the visible test surface: a test that stops running is a deleted test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.attack_helpers import attack, git_mv
from tests.helpers import VISIBLE_TESTS

TESTS = "tests/test_calc.py"
EMPTY = "tests/test_calc.py::test_empty"
TWO = "tests/test_calc.py::test_two"


def _mark(decorator: str) -> str:
    return "import pytest\n" + VISIBLE_TESTS.replace("def test_two", f"{decorator}\ndef test_two")


def _rename(repo: Path) -> None:
    git_mv(repo, TESTS, "tests/test_calc_renamed.py")


Case = tuple[dict[str, str | bytes | None], Callable[[Path], None] | None, tuple[str, ...]]

CASES: dict[str, Case] = {
    "test deleted": (
        {TESTS: VISIBLE_TESTS.split("def test_two")[0]},
        None,
        (f"visible test gone: {TWO}",),
    ),
    "module deleted": ({TESTS: None}, None, (f"visible test gone: {EMPTY}",)),
    "module renamed": ({}, _rename, (f"visible test gone: {EMPTY}",)),
    "test renamed": (
        {TESTS: VISIBLE_TESTS.replace("def test_two", "def check_two")},
        None,
        (f"visible test gone: {TWO}",),
    ),
    "skipped": ({TESTS: _mark("@pytest.mark.skip")}, None, (f"newly skipped: {TWO}",)),
    "skipif true": (
        {TESTS: _mark("@pytest.mark.skipif(True, reason='flaky')")},
        None,
        (f"newly skipped: {TWO}",),
    ),
    "xfailed": ({TESTS: _mark("@pytest.mark.xfail")}, None, (f"newly xfailed: {TWO}",)),
    "module skipped at import": (
        {TESTS: "import pytest\npytest.skip('later', allow_module_level=True)\n" + VISIBLE_TESTS},
        None,
        (f"visible test gone: {EMPTY}",),
    ),
    "module fails collection": (
        {TESTS: "raise ImportError('no')\n" + VISIBLE_TESTS},
        None,
        ("visible suite at head: collection error: tests/test_calc.py",),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hidden_visible_test_is_rejected(tmp_path: Path, name: str) -> None:
    files, step, fragments = CASES[name]
    # Only tests/ changes: properties are not forced, pathfilter alone must catch it.
    judged = attack(tmp_path, files, before_commit=step)
    assert judged.decision == "reject", judged.explain()
    assert judged.says("pathfilter: ", *fragments), judged.explain()
    assert judged.result.code == 1, judged.explain()
