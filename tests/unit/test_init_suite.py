"""Pure parts of init's suite run at the adoption commit (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge.commands.init import (
    InitOptions,
    SuiteRun,
    _tree_copy,
    believable,
    defined_here,
    read_suite,
    suite_lines,
    suite_off,
    suite_said,
)
from patchjudge.testrun import Outcome

LEDGER_OFF = b'[gate]\nbase = "main"\n\n[suite]\npaths = ["tests"]\nrun = false\n'


@pytest.mark.parametrize(
    ("options", "existing", "said"),
    [
        (InitOptions(), None, None),
        (InitOptions(no_suite_run=True), None, "--no-suite-run"),
        (InitOptions(no_suite_run=True), LEDGER_OFF, "--no-suite-run"),
        (InitOptions(), LEDGER_OFF, "kept from the existing eval/gate.toml"),
        (InitOptions(), LEDGER_OFF.replace(b"false", b"true"), None),
        (InitOptions(), b'[suite]\nrun = "false"\n', None),  # not a bool: not an opt-out
        (InitOptions(), b"[suite\nrun = false\n", None),  # no TOML: nothing said
        (InitOptions(), b"\xff\xfe", None),
        (InitOptions(), b"suite = 1\n", None),
    ],
)
def test_suite_off(options: InitOptions, existing: bytes | None, said: str | None) -> None:
    assert suite_off(options, existing) == said


def _failed(n: int) -> SuiteRun:
    return SuiteRun(n + 1, 1, 0, tuple(f"t.py::t{i} — boom" for i in range(n)), ())


def test_five_failures_are_shown_then_how_many_more() -> None:
    lines = suite_lines(_failed(7), ["tests"])
    assert lines[0] == "the visible suite (tests) fails at this commit: 7 of 8 tests"
    assert lines[1:6] == [f"  t.py::t{i} — boom" for i in range(5)]
    assert lines[6:] == ["  and 2 more"]
    assert suite_lines(_failed(5), ["tests"])[-1] == "  t.py::t4 — boom"


def test_trouble_is_a_suite_that_does_not_collect() -> None:
    s = SuiteRun(0, 0, 0, (), ("collection error: tests/test_a.py: ImportError: x",))
    assert not s.green
    assert suite_lines(s, ["tests", "more"]) == [
        "the visible suite (tests, more) does not collect at this commit",
        "  collection error: tests/test_a.py: ImportError: x",
    ]


def test_a_suite_that_collected_nothing_is_no_green_start() -> None:
    s = SuiteRun(0, 0, 0, (), ())
    assert not s.green
    assert suite_lines(s, ["tests"]) == [
        "the visible suite (tests) collected no test at this commit"
    ]


def test_green_says_its_counts() -> None:
    assert SuiteRun(3, 3, 0, (), ()).green
    assert (
        suite_said(SuiteRun(3, 3, 0, (), ()))
        == "the visible suite passes at this commit (3 passed)"
    )
    assert suite_said(SuiteRun(4, 3, 1, (), ())).endswith("(3 passed, 1 skipped)")


def _outcome(nodeid: str, when: str, outcome: str, longrepr: str = "") -> Outcome:
    return Outcome(nodeid, when, outcome, None, False, longrepr, ())


def test_read_suite_names_each_failure_as_the_freeze_lane_does() -> None:
    outcomes = (
        _outcome("t.py::a", "call", "passed"),
        _outcome("t.py::b", "setup", "failed", "E   OSError: no fixture\nE   more"),
        _outcome("t.py::c", "call", "failed", "E   AssertionError: 1 != 2"),
        _outcome("t.py::d", "setup", "skipped"),
    )
    got = read_suite(["t.py::a", "t.py::b", "t.py::c", "t.py::d"], outcomes, ())
    assert got == SuiteRun(
        4, 1, 1, ("t.py::b (in setup) — OSError: no fixture", "t.py::c — 1 != 2"), ()
    )


def test_read_suite_keeps_why_a_run_says_nothing() -> None:
    said = read_suite(["t.py::a"], (), ("collection error: t.py: E",))
    assert said.trouble == ("collection error: t.py: E",)
    # A tree that shadows a judge module is the code's own process: tolerated, as in the lane.
    shadow = "the tested tree shadows a judge module: inspect.py"
    assert believable([shadow]) and not believable([shadow, "timed out after 600 s"])
    assert read_suite(["t.py::a"], (_outcome("t.py::a", "call", "passed"),), (shadow,)).green


def test_a_run_that_is_not_a_collection_error_is_said_as_such() -> None:
    s = SuiteRun(0, 0, 0, (), ("timed out after 600 s",))
    assert suite_lines(s, ["tests"])[0] == "the visible suite (tests) cannot be run at this commit"


def test_defined_here_counts_the_test_functions_of_the_suites_files(tmp_path: Path) -> None:
    # The freeze lane's xdist estimate: functions and methods, parametrize ids aside.
    (tmp_path / "tests/sub").mkdir(parents=True)
    (tmp_path / "tests/test_a.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('i', range(9))\ndef test_a(i):\n    pass\n\n"
        "class TestB:\n    def test_b(self):\n        pass\n"
    )
    (tmp_path / "tests/sub/c_test.py").write_text("def test_c():\n    pass\n")
    (tmp_path / "tests/helpers.py").write_text("def test_not_a_test_file():\n    pass\n")
    (tmp_path / "test_top.py").write_text("def test_t():\n    pass\n")
    assert defined_here(tmp_path, ["tests", "test_top.py"]) == 4
    assert defined_here(tmp_path, ["tests/sub"]) == 1


def test_the_adoption_tree_holds_the_tracked_files_then_the_judges_links_as_links(
    tmp_path: Path,
) -> None:
    top = tmp_path / "repo"
    (top / "pkg").mkdir(parents=True)
    (top / "pkg/__init__.py").write_text("X = 1\n")
    (top / "pkg/alias.py").symlink_to("__init__.py")
    (top / "sub").mkdir()  # a gitlink: a directory, nothing to copy
    (top / "eval").mkdir()
    (top / "eval/gate.toml").write_text("# the old ledger\n")
    tracked = ["eval/gate.toml", "pkg/__init__.py", "pkg/alias.py", "sub"]
    tree = _tree_copy(top, tmp_path / "tree", tracked, {"eval/gate.toml": b"# init's\n"})
    assert (tree / "pkg/alias.py").is_symlink()
    assert (tree / "pkg/alias.py").readlink() == Path("__init__.py")
    assert (tree / "pkg/alias.py").read_text() == "X = 1\n"
    assert (tree / "eval/gate.toml").read_text() == "# init's\n"  # what init would write wins
    assert not (tree / "sub").exists()
