"""The visible suite's pure parts (issue 19): its run -> problems, the review line, blame."""

from __future__ import annotations

from typing import Any

import pytest

from patchjudge import render
from patchjudge.config import PropertiesSettings
from patchjudge.failure import last_line
from patchjudge.lanes.freeze import (
    SUITE_SHOWN,
    newly_skipped,
    ran_at,
    skipped_at_run,
    suite_verdict,
)
from patchjudge.lanes.pathfilter import collection_problems, uncollected_base_problems
from patchjudge.lanes.suitepass import estimated_tests, uses_hypothesis
from patchjudge.report import Decision, LaneReport, RunKey, Status
from patchjudge.testrun import Outcome, collection_error
from patchjudge.verdict import ALL_LANES, Unreadable, decide, suite_summary

A, B, C = "tests/test_x.py::test_a", "tests/test_x.py::test_b", "tests/test_x.py::test_c"
ASSERT = "    def test_b():\n>       assert 3 == 4\nE       assert 3 == 4\n"


def _o(nodeid: str, when: str, outcome: str, longrepr: str = "") -> Outcome:
    return Outcome(nodeid, when, outcome, outcome, False, longrepr, ())


def _passed(nodeid: str) -> list[Outcome]:
    return [_o(nodeid, w, "passed") for w in ("setup", "call", "teardown")]


def _counts(ran: int, passed: int, skipped: int, failed: list[str], excused: list[str]) -> Any:
    return {"ran": ran, "passed": passed, "failed": failed, "excused": excused, "skipped": skipped}


SUITE_CASES = [
    pytest.param(
        [A, B], [*_passed(A), *_passed(B)], (), 2, [], _counts(2, 2, 0, [], []), id="green"
    ),
    pytest.param(
        [A, B],
        [*_passed(A), _o(B, "setup", "passed"), _o(B, "call", "failed", ASSERT)],
        (),
        2,
        [f"suite: 1 failed: {B} — assert 3 == 4"],
        _counts(2, 1, 0, [B], []),
        id="one fails, named with its assertion",
    ),
    pytest.param(
        [A, B],
        [*_passed(A), _o(B, "call", "failed", ASSERT)],
        {B},
        2,
        [],
        _counts(2, 1, 0, [], [B]),
        id="a frozen failure is excused",
    ),
    pytest.param(
        [A],
        [_o(A, "setup", "failed", "E   fixture 'db' not found\n")],
        (),
        1,
        [f"suite: 1 failed: {A} (in setup) — fixture 'db' not found"],
        _counts(1, 0, 0, [A], []),
        id="an error in setup fails",
    ),
    pytest.param(
        [A],
        [*_passed(A)[:2], _o(A, "teardown", "failed", "E   OSError: gone\n")],
        (),
        1,
        [f"suite: 1 failed: {A} (in teardown) — OSError: gone"],
        _counts(1, 0, 0, [A], []),
        id="a pass whose teardown errors fails",
    ),
    pytest.param(
        [A, C],
        [*_passed(A), _o(C, "setup", "skipped")],
        (),
        2,
        [],
        _counts(2, 1, 1, [], []),
        id="a skip is no failure (pathfilter judges new skips)",
    ),
    pytest.param(
        [],
        [],
        (),
        3,
        ["suite: collected nothing at head; the base defines 3 test(s)"],
        _counts(0, 0, 0, [], []),
        id="nothing collected where base had tests",
    ),
    pytest.param([], [], (), 0, [], _counts(0, 0, 0, [], []), id="no tests at base or head"),
]


@pytest.mark.parametrize(
    ("collected", "outcomes", "frozen", "base", "problems", "ran"), SUITE_CASES
)
def test_suite_verdict(  # noqa: PLR0917 -- one parameter a table column
    collected: list[str],
    outcomes: list[Outcome],
    frozen: set[str],
    base: int,
    problems: list[str],
    ran: dict[str, Any],
) -> None:
    got_problems, got = suite_verdict(collected, outcomes, frozen, base)
    assert got_problems == problems
    assert got == {**ran, "problems": problems}


def test_suite_verdict_caps_the_named_failures_and_says_how_many_more() -> None:
    ids = [f"tests/test_x.py::test_{i}" for i in range(SUITE_SHOWN + 3)]
    problems, ran = suite_verdict(ids, [_o(n, "call", "failed", ASSERT) for n in ids], (), 9)
    assert len(problems) == 1
    assert problems[0].startswith(f"suite: {SUITE_SHOWN + 3} failed: {ids[0]} — assert 3 == 4;")
    assert problems[0].count(" — ") == SUITE_SHOWN
    assert problems[0].endswith("; and 3 more (freeze.json details.suite has all)")
    assert ran["failed"] == ids


SUMMARY_CASES = [
    ({**_counts(4, 4, 0, [], []), "problems": []}, "ran 4: 4 passed"),
    (
        {**_counts(5, 3, 1, [], [A]), "problems": []},
        "ran 5: 3 passed, 1 failed, excused (frozen or host-dependent), 1 skipped",
    ),
    ({**_counts(4, 3, 0, [B], []), "problems": ["suite: 1 failed: ..."]}, f"failed: 1 of 4: {B}"),
    (
        {**_counts(0, 0, 0, [], []), "problems": ["suite: timed out after 60 s"]},
        "failed: timed out after 60 s",
    ),
    ("not run: [suite] run = false", "not run: [suite] run = false"),
    (None, "not run: the freeze report says nothing of the visible suite"),
    ("ran 99: 99 passed", "not run: the freeze report says nothing of the visible suite"),
    ({"ran": "4"}, "not run: the freeze report's details.suite is malformed"),
    (
        {**_counts(1, 1, 0, [], []), "ran": -1},
        "not run: the freeze report's details.suite is malformed",
    ),
]


@pytest.mark.parametrize(("details", "line"), SUMMARY_CASES)
def test_suite_summary(details: Any, line: str) -> None:
    assert suite_summary(details) == line


MISSING = (
    "ImportError while importing test module '/tmp/patchjudge-ab12/tree/tests/test_x.py'.\n"
    "Traceback:\n"
    "tests/test_x.py:1: in <module>\n"
    "    import nosuch\n"
    "E   ModuleNotFoundError: No module named 'nosuch'\n"
)
SYNTAX = (
    'E     File "/tmp/patchjudge-ab12/tree/tests/test_x.py", line 1\n'
    "E       def (\n"
    "E           ^\n"
    "E   SyntaxError: invalid syntax\n"
)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (MISSING, "ModuleNotFoundError: No module named 'nosuch'"),
        (SYNTAX, "SyntaxError: invalid syntax"),
        (
            "ERROR: file or directory not found: tests\n\n",
            "ERROR: file or directory not found: tests",
        ),
        (
            "E   ImportError: cannot import name 'f' from 'm' (/tmp/patchjudge-x1/s/tree/src/m.py)",
            "ImportError: cannot import name 'f' from 'm' (src/m.py)",
        ),
        ("", ""),
    ],
)
def test_last_line(text: str, line: str) -> None:
    assert last_line(text) == line


def test_collection_error_names_the_file_and_the_exception() -> None:
    assert collection_error("tests/test_x.py", MISSING) == (
        "collection error: tests/test_x.py: ModuleNotFoundError: No module named 'nosuch'"
    )
    assert collection_error("", "") == "collection error: <session>"


BLAME_CASES = [
    pytest.param(
        {"tests/test_x.py": MISSING},
        {"tests/test_x.py": MISSING},
        [
            "the base does not collect: tests/test_x.py: "
            "ModuleNotFoundError: No module named 'nosuch' "
            "(not installed where the code runs: pin it in constraints/project.txt, or install it into the --python venv; else fix it at the merge base)"
        ],
        id="broken at both: the base's",
    ),
    pytest.param(
        {},
        {"tests/test_x.py": MISSING},
        [
            "visible suite at head: collection error: tests/test_x.py: "
            "ModuleNotFoundError: No module named 'nosuch'"
        ],
        id="broken at head only: the patch's",
    ),
    pytest.param(
        {"tests/test_x.py": MISSING}, {}, [], id="broken at base only: the patch fixed it"
    ),
    pytest.param({}, {}, [], id="both collect"),
]


BLAME_CASES.append(
    pytest.param(
        {"tests/test_x.py": SYNTAX},
        {"tests/test_x.py": SYNTAX},
        [
            f"the base does not collect: tests/test_x.py: {last_line(SYNTAX)} (fix it at the merge base)"
        ],
        id="broken at both, not a missing module: only the merge base can fix it",
    )
)


@pytest.mark.parametrize(("base", "head", "problems"), BLAME_CASES)
def test_collection_problems(
    base: dict[str, str], head: dict[str, str], problems: list[str]
) -> None:
    assert collection_problems(base, head) == problems


def test_tests_of_a_file_that_did_not_collect_at_base_must_be_collected_at_head() -> None:
    assert uncollected_base_problems({A, B}, [A, f"{B}[1]"]) == []
    assert uncollected_base_problems({A, B}, [A]) == [
        f"visible test gone: {B} (its file did not collect at base: read from its source)"
    ]


def _skip(nodeid: str, when: str = "setup", xfail: bool = False) -> Outcome:
    return Outcome(nodeid, when, "skipped", "skipped", xfail, "", ())


def test_skipped_at_run_is_a_plainly_runnable_test_that_skipped_once_running() -> None:
    states = {A: "run", B: "skip", C: "run", "t::d": "run", "t::e": "run"}
    outcomes = [
        _skip(A),  # a conftest hook or a fixture skipped it
        _skip(B),  # marked at collection: pathfilter's to judge
        *_passed(C),
        _o("t::d", "call", "skipped"),  # the code under test raised Skipped
        _skip("t::e", "call", xfail=True),  # pytest.xfail() from inside
        _o("t::e", "teardown", "failed"),  # ... but a failure is a failure
    ]
    assert skipped_at_run(states, outcomes) == [A, "t::d"]


def test_ran_at_counts_a_call_that_passed_or_failed() -> None:
    outcomes = [*_passed(A), _o(B, "call", "failed"), _skip(C), _o("t::d", "call", "skipped")]
    assert ran_at(outcomes) == {A, B}


@pytest.mark.parametrize(
    ("head", "base", "problems"),
    [
        ([A, B], {A, B}, [f"suite: 2 newly skipped at run time (they ran at base): {A}; {B}"]),
        ([A, B], {B}, [f"suite: 1 newly skipped at run time (they ran at base): {B}"]),
        ([A], set(), []),  # it skipped at base too (no network, say): the base's own skip
        ([], {A}, []),
    ],
)
def test_newly_skipped(head: list[str], base: set[str], problems: list[str]) -> None:
    assert newly_skipped(head, base) == problems


def test_newly_skipped_caps_the_list() -> None:
    ids = [f"t::test_{i}" for i in range(SUITE_SHOWN + 2)]
    (problem,) = newly_skipped(ids, set(ids))
    assert problem.endswith(f"{ids[SUITE_SHOWN - 1]}; and 2 more")


# --- review.suite and verdict.md through decide --------------------------------

KEY = RunKey("a" * 40, "b" * 40, "c" * 64)
PROPS = PropertiesSettings(("eval/properties",), 7, 9, 60)
OFF = "not run: [suite] run = false"


def _reports(freeze: LaneReport) -> dict[str, LaneReport | Unreadable | None]:
    rs: dict[str, LaneReport | Unreadable | None] = {
        lane: LaneReport(lane, Status.PASS, (), KEY, {}) for lane in ALL_LANES
    }
    rs["freeze"] = freeze
    # This run's seed, nothing for the review to hold (issue 18): only the suite is judged here.
    rs["properties"] = LaneReport(
        "properties", Status.PASS, (), KEY, {"seed": PROPS.seed, "unexercised": [], "probes": []}
    )
    return rs


def test_review_suite_is_read_only_from_a_freeze_report_that_counts() -> None:
    other_base = RunKey("d" * 40, "b" * 40, "c" * 64)
    stale = LaneReport("freeze", Status.PASS, (), other_base, {"suite": "ran 1: 1 passed"})
    review = decide(_reports(stale), KEY, PROPS).review
    assert review["suite"] == "not run: the freeze lane's report does not count for this run"
    missing = _reports(stale)
    missing["freeze"] = None
    assert decide(missing, KEY, PROPS).review["suite"].startswith("not run: ")


@pytest.mark.parametrize(
    ("status", "suite", "noted"),
    [
        (Status.PASS, OFF, True),
        (Status.PASS, "not run: no changed path forces freeze or properties", False),
        (Status.PASS, {**_counts(1, 1, 0, [], []), "problems": []}, False),
    ],
)
def test_verdict_md_says_plainly_when_an_accept_ran_no_project_test(
    status: Status, suite: Any, noted: bool
) -> None:
    verdict = decide(_reports(LaneReport("freeze", status, (), KEY, {"suite": suite})), KEY, PROPS)
    assert verdict.decision is Decision.ACCEPT_FOR_REVIEW
    assert ("the project's own tests were not run here" in render.markdown(verdict)) is noted


def test_verdict_md_adds_no_note_to_a_reject() -> None:
    rs = _reports(LaneReport("freeze", Status.PASS, (), KEY, {"suite": OFF}))
    rs["fixtures"] = LaneReport("fixtures", Status.FAIL, ("changed: x",), KEY, {})
    verdict = decide(rs, KEY, PROPS)
    assert verdict.decision is Decision.REJECT
    assert "not run here" not in render.markdown(verdict)
    assert r"- visible suite: not run: \[suite\] run = false" in render.markdown(verdict)


@pytest.mark.parametrize(
    ("sources", "uses"),
    [
        ([b"from hypothesis import given\n"], True),
        ([b"def test_a():\n    assert True\n", b"pytest_plugins = ['hypothesis.extra']\n"], True),
        ([b"def test_a():\n    assert True\n"], False),
        ([], False),
    ],
)
def test_uses_hypothesis(sources: list[bytes], uses: bool) -> None:
    assert uses_hypothesis(sources) is uses


@pytest.mark.parametrize(
    ("source", "count"),
    [
        (b"def test_a():\n    pass\n", 1),
        (b"class TestA:\n    def test_m(self):\n        pass\n\tdef test_t(self): pass\n", 2),
        (b"async def test_a():\n    pass\ndef helper():\n    pass\n", 1),
        (b"x = 'def test_in_a_string'\n# def test_commented\ndef  testing(): pass\n", 1),
        (b"", 0),
    ],
)
def test_the_suites_size_is_estimated_without_a_parse(source: bytes, count: int) -> None:
    """Whether xdist pays, judged from the `def test` lines (issue 20): no AST of the suite."""
    assert estimated_tests([source]) == count
    assert estimated_tests([source, source]) == 2 * count
