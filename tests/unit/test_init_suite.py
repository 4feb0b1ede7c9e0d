"""Pure parts of init's suite run at the adoption commit (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge.commands.init import (
    InitOptions,
    SuiteRun,
    _tree_copy,
    read_suite,
    suite_lines,
    suite_off,
    suite_said,
)
from patchjudge.repeat import Tally
from patchjudge.testrun import Outcome, TestRun

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


def _run(collected: dict[str, str], outcomes: tuple[Outcome, ...]) -> TestRun:
    return TestRun(0, False, True, True, collected, {}, {}, outcomes, 0)


def test_read_suite_names_each_failure_as_the_freeze_lane_does() -> None:
    outcomes = (
        _outcome("t.py::a", "call", "passed"),
        _outcome("t.py::b", "setup", "failed", "E   OSError: no fixture\nE   more"),
        _outcome("t.py::c", "call", "failed", "E   AssertionError: 1 != 2"),
        _outcome("t.py::d", "setup", "skipped"),
    )
    found = _run(dict.fromkeys(["t.py::a", "t.py::b", "t.py::c", "t.py::d"], "run"), outcomes)
    nodes = dict.fromkeys(found.collected, Tally(0, 1))
    got = read_suite(found, nodes, ())
    assert got == SuiteRun(
        4, 1, 1, ("t.py::b (in setup) — OSError: no fixture", "t.py::c — 1 != 2"), ()
    )


def test_read_suite_keeps_why_a_run_says_nothing() -> None:
    found = _run({"t.py::a": "run"}, ())
    assert read_suite(found, {}, ("collection error: t.py: E",)).trouble == (
        "collection error: t.py: E",
    )
    # A node id collected that never ran: the run cannot be believed.
    assert read_suite(found, {}, ()).trouble == ("node id did not run: t.py::a",)
    # A tree that shadows a judge module is the code's own process: tolerated, as in the lane.
    shadow = "the tested tree shadows a judge module: inspect.py"
    nodes = {"t.py::a": Tally(0, 1)}
    assert read_suite(found, nodes, (shadow,)).trouble == ()


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
