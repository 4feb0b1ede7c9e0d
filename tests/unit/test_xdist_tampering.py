"""An xdist run's reports are checked as a single process's are (the freeze lane's suite pass).

The workers have no channel: before, their reports reached the controller's plugin
with no raw outcome and no call evidence, so a conftest that rewrote outcomes in
the workers went unseen whenever the suite pass used xdist (red team, session 17).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge import repeat
from tests.attack_helpers import ANSWER_THE_CALL, FLIP

SUITE = """
def test_fails():
    assert 0


def test_passes():
    pass
"""

# A fresh report in place of pytest's (what the worker recorded is not on it).
REPLACE = """
import pytest
from _pytest.reports import TestReport


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    old = outcome.get_result()
    outcome.force_result(
        TestReport(old.nodeid, old.location, old.keywords, "passed", None, old.when)
    )
"""

IDS = ("tests/test_s.py::test_fails", "tests/test_s.py::test_passes")


def _once(tmp_path: Path, conftest: str, workers: int) -> tuple[str, ...]:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_s.py").write_text(SUITE)
    (tree / "tests" / "conftest.py").write_text(conftest)
    spec = repeat.Spec(IDS, 1, workers=workers, conftest_roots=("tests",))
    _, problems = repeat.once(tree, spec, tmp_path / "run", {})
    return problems


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize(
    ("conftest", "expected"),
    [
        (FLIP, "outcome rewritten in-process: tests/test_s.py::test_fails (call) was failed"),
        (
            ANSWER_THE_CALL,
            "passed without pytest calling its test function: tests/test_s.py::test_fails",
        ),
        (REPLACE, "outcome rewritten in-process: tests/test_s.py::test_fails (call) was "),
    ],
    ids=["flip", "answer", "replace"],
)
def test_a_rewrite_in_the_tests_process_is_caught_with_and_without_xdist(
    tmp_path: Path, conftest: str, expected: str, workers: int
) -> None:
    problems = _once(tmp_path, conftest, workers)
    assert any(p.startswith(expected) for p in problems), problems


@pytest.mark.parametrize("workers", [0, 2])
def test_an_honest_xdist_run_has_no_tampering(tmp_path: Path, workers: int) -> None:
    assert _once(tmp_path, "import pytest\n", workers) == ()
