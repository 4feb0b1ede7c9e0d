"""The compat suite's pure part: outcomes from the lane's report, reasons by idiom, the ratchet."""

from __future__ import annotations

import pytest

from tests.compat_helpers import (
    SUITES,
    Outcomes,
    by_idiom,
    collection_errors,
    differences,
    error_line,
    idiom,
    oop_outcomes,
    ratchet,
    reason,
)

F = "eval/properties/test_a.py"
G = "eval/properties/test_b.py"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("def test():\n>   f()\nE   TypeError: no\nE   more\n", "TypeError: no"),
        ("a\n\nlast words\n\n", "last words"),
        ("", "no output"),
        ("E   ValueError: <Handle at 0x7f00ab>", "ValueError: <Handle at 0x...>"),
        ("E   " + "x" * 300, "x" * 200),
        ("E   'x',\nE   AssertionError: assert 1 == 2", "AssertionError: assert 1 == 2"),
        ("E   +-------------\nE   | inner words", "| inner words"),
        ("E   +-------------\nlast", "last"),
    ],
)
def test_error_line(text: str, line: str) -> None:
    assert error_line(text) == line


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("E   TypeError: Handle() takes no arguments", "a judge class subclasses a worker class"),
        (
            "E   TypeError: issubclass() arg 1 must be a class",
            "a stand-in class where the judge needs a real class (issubclass, isinstance)",
        ),
        (
            "E   TypeError: tzinfo argument must be None or of a tzinfo subclass, not type 'Handle'",
            "a handle where the judge needs the real object (a standard-library or C API)",
        ),
        (
            "E   TypeError: cannot pickle 'Handle' object",
            "a handle where the judge needs the real object (a standard-library or C API)",
        ),
        ("E   TypeError: cannot pickle '_thread.lock'", "pickle of a handle"),
        (
            "E   hypothesis.errors.InvalidArgument: Expected a SearchStrategy but got "
            "url=decoded_urls() (type=Handle)",
            "a strategy of the code under test drawn by the judge's hypothesis",
        ),
        (
            "E   AssertionError: assert <class 'patchjudge.boundary.standin.Handle'> is "
            "<class 'multidict._multidict_py.CIMultiDict'>",
            "type() of a handle (the stand-in's class)",
        ),
        ("E   AssertionError\n  gc.collect()", "object lifetime (gc) across the boundary"),
        (
            "E   the worker for eval/properties/t.py crashed (exit 3)",
            "worker crash or call deadline",
        ),
        ("E   AssertionError: assert 1 == 2", "other"),
    ],
)
def test_idiom_names_the_first_matching_pattern_own_line_first(text: str, name: str) -> None:
    assert idiom(text) == name


def test_reason_for_each_way_a_test_can_miss() -> None:
    oop = Outcomes(
        {f"{F}::t1": "failed", f"{G}::t3": "did not run", f"{G}::t4": "skipped"},
        {f"{F}::t1": "E   TypeError: cannot pickle 'x'"},
        {F: "E   TypeError: Handle() takes no arguments"},
    )
    assert reason(f"{F}::t1", oop) == "pickle of a handle: TypeError: cannot pickle 'x'"
    assert reason(f"{F}::t2", oop) == (
        "a judge class subclasses a worker class: at collection: "
        "TypeError: Handle() takes no arguments"
    )
    assert reason(f"{G}::t3", oop) == f"did not run: pytest stopped at the collection error in {F}"
    assert reason(f"{G}::t5", oop) == f"not run: pytest stopped at the collection error in {F}"
    clean = Outcomes({f"{G}::t4": "skipped"})
    assert reason(f"{G}::t4", clean) == "skipped out of process"
    assert reason(f"{G}::t5", clean) == "not collected out of process"


def test_differences_are_what_passes_bare_and_not_out_of_process() -> None:
    bare = Outcomes({"a": "passed", "b": "passed", "c": "failed", "d": "passed"})
    oop = Outcomes(
        {"a": "passed", "b": "failed", "c": "passed", "e": "passed"}, {"b": "E   KeyError: 1"}
    )
    assert differences(bare, oop) == {
        "b": "other: KeyError: 1",
        "d": "not collected out of process",
    }


def test_ratchet_both_ways() -> None:
    assert ratchet({"a": "why"}, {"a": "older why"}) == []
    assert ratchet({"a": "why", "b": "new"}, {"a": "why", "c": "fixed"}) == [
        "passes bare, not out of process: b: new",
        "listed as a known difference but passes out of process now (drop it): c",
    ]


def test_by_idiom_counts_the_name_before_the_colon_most_first() -> None:
    found = {"a": "x: 1", "b": "y: 2", "c": "y: 3", "d": "did not run: z"}
    assert by_idiom(found) == {"y": 2, "did not run": 1, "x": 1}


OUTPUT = """\
==================================== ERRORS ====================================
_____________ ERROR collecting eval/properties/test_a.py ______________
eval/properties/test_a.py:32: in <module>
E   TypeError: one
_____________ ERROR collecting eval/properties/test_b.py ______________
E   TypeError: two
=========================== short test summary info ============================
ERROR eval/properties/test_a.py - TypeError: one
"""


def test_collection_errors_split_pytests_sections_by_file() -> None:
    found = collection_errors(OUTPUT)
    assert sorted(found) == [F, G]
    assert error_line(found[F]) == "TypeError: one"
    assert error_line(found[G]) == "TypeError: two"
    assert collection_errors("1 passed in 0.1s") == {}


def test_oop_outcomes_read_passed_failed_reasons_and_collection_errors() -> None:
    report = {
        "reasons": [
            f"collection error: {F}",
            f"property did not run: {G}::t3",
            f"property skipped: {G}::t4 (only a passing property counts)",
            f"property failed: {G}::t2: the worker crashed",
        ],
        "details": {
            "passed": [f"{G}::t1"],
            "failed": [{"nodeid": f"{G}::t2", "falsifying": [], "longrepr": "E   boom"}],
            "output_tail": OUTPUT,
        },
    }
    got = oop_outcomes(report)
    assert got.status == {
        f"{G}::t1": "passed",
        f"{G}::t2": "failed",
        f"{G}::t3": "did not run",
        f"{G}::t4": "skipped",
    }
    assert got.text == {f"{G}::t2": "E   boom"}
    assert error_line(got.file_errors[F]) == "TypeError: one"
    assert got.passed() == {f"{G}::t1"}


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_suites_are_pinned_and_say_what_they_change(suite: object) -> None:
    from tests.compat_helpers import Suite

    assert isinstance(suite, Suite)
    assert len(suite.sha256) == 64 and int(suite.sha256, 16) >= 0
    assert suite.files and all(t.endswith(".py") for t in suite.files.values())
    for target, old, new, why in suite.adjustments:
        assert target in suite.files.values() and old != new and why


def test_the_suites_cover_the_idioms_of_issue_17() -> None:
    said = " ".join(s.idioms for s in SUITES)
    for needed in ("classes", "stateful", "iterators", "standard-library"):
        assert needed in said
