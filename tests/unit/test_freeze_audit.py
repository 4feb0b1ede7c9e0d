"""The freeze audit as a table: a valid row, then every rule failing alone."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from patchjudge import repeat, testrun
from patchjudge.config import parse_ledger
from patchjudge.freezefile import FreezeRow
from patchjudge.lanes.freeze import audit, property_failures, rerun_verdicts

LEDGER = parse_ledger(
    b'[map]\n"src/**" = ["freeze"]\n[freeze]\nmax_age_days = 14\nmin_fail_count = 2\n'
)
TODAY = dt.date(2026, 12, 1)
PROP = "eval/properties/test_totals.py::test_never_negative"
PROPS = {PROP, "eval/properties/test_totals.py::test_sum"}

VALID = FreezeRow(
    nodeid="tests/test_clock.py::test_timestamp_order",
    owner="qa-rotation",
    reason="wall-clock assertion races the sandbox clock",
    created=dt.date(2026, 11, 24),
    expires=dt.date(2026, 12, 8),
    fail_count=3,
    runs=12,
    required_properties=(PROP,),
)


def test_a_valid_row_passes() -> None:
    assert audit([VALID], LEDGER, TODAY, PROPS) == []


def test_boundaries_that_still_pass() -> None:
    edge = dataclasses.replace(
        VALID,
        expires=TODAY,  # expires today: still valid today
        created=TODAY - dt.timedelta(days=14),  # exactly max_age_days
        fail_count=2,  # exactly min_fail_count
        runs=2,  # runs == fail_count
    )
    assert audit([edge], LEDGER, TODAY, PROPS) == []


L = "freeze[0] tests/test_clock.py::test_timestamp_order: "


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"expires": dt.date(2026, 11, 30), "created": dt.date(2026, 11, 20)},
            "expired on 2026-11-30 (today is 2026-12-01)",
        ),
        ({"owner": ""}, "no owner"),
        ({"owner": "  "}, "no owner"),
        ({"reason": ""}, "no reason"),
        (
            {"fail_count": 1},
            "fail_count 1 < min_fail_count 2: not enough evidence of flakiness",
        ),
        ({"runs": 2}, "runs 2 < fail_count 3"),
        (
            {"created": dt.date(2026, 11, 23)},
            "expires 15 days after created (max_age_days 14)",
        ),
        ({"created": dt.date(2026, 12, 9)}, "expires before it was created"),
        (
            {"nodeid": "eval/properties/test_totals.py::test_sum"},
            "a property test may not be frozen",
        ),
        ({"nodeid": "eval/test_judge.py::test_x"}, "a judge path may not be frozen"),
        (
            {"required_properties": ()},
            "required_properties is empty: a freeze must leave a property on",
        ),
        (
            {"required_properties": ("eval/properties/test_totals.py::test_gone",)},
            "required property eval/properties/test_totals.py::test_gone does not exist",
        ),
        (
            {"required_properties": ("tests/test_calc.py::test_two",)},
            "required property tests/test_calc.py::test_two is not under eval/properties",
        ),
    ],
)
def test_each_rule_fails_alone(change: dict[str, object], problem: str) -> None:
    row = dataclasses.replace(VALID, **change)  # type: ignore[arg-type]
    problems = audit([row], LEDGER, TODAY, PROPS)
    assert len(problems) == 1, problems
    label = f"freeze[0] {row.nodeid}: "
    assert problems[0].startswith(label)
    assert problems[0][len(label) :].startswith(problem)


def test_rows_are_named_by_index() -> None:
    second = dataclasses.replace(VALID, nodeid="tests/test_b.py::test_b", owner="")
    assert audit([VALID, second], LEDGER, TODAY, PROPS) == [
        "freeze[1] tests/test_b.py::test_b: no owner"
    ]


def test_ledger_settings_move_the_thresholds() -> None:
    strict = parse_ledger(b'[map]\n"a" = []\n[freeze]\nmin_fail_count = 4\nmax_age_days = 7\n')
    problems = audit([VALID], strict, TODAY, PROPS)
    assert [p[len(L) :].split(" ")[0] for p in problems] == ["fail_count", "expires"]


def _outcome(nodeid: str, outcome: str, when: str = "call") -> testrun.Outcome:
    return testrun.Outcome(nodeid, when, outcome, outcome, False, "", ())


def _run(collected: list[str], outcomes: list[testrun.Outcome]) -> testrun.TestRun:
    return testrun.TestRun(
        0, False, True, True, dict.fromkeys(collected, "run"), {}, {}, tuple(outcomes), 0
    )


def test_required_properties_must_pass_in_this_run() -> None:
    other = "eval/properties/test_totals.py::test_sum"
    run = _run(
        [PROP, other],
        [_outcome(PROP, "passed", "setup"), _outcome(PROP, "failed"), _outcome(other, "skipped")],
    )
    assert property_failures(run, [PROP, other, "eval/properties/x.py::gone"]) == [
        f"required property failed: {PROP}",
        f"required property did not pass: {other}",
    ]
    ok = _run([PROP], [_outcome(PROP, "passed")])
    assert property_failures(ok, [PROP]) == []


def test_rerun_verdicts_table() -> None:
    rows = [
        VALID,
        dataclasses.replace(VALID, nodeid="tests/test_b.py::test_still_flaky"),
        dataclasses.replace(VALID, nodeid="tests/test_b.py::test_gone"),
        dataclasses.replace(VALID, nodeid="tests/test_b.py::test_short"),
    ]
    tallies = {
        VALID.nodeid: repeat.Tally(0, 12),
        "tests/test_b.py::test_still_flaky": repeat.Tally(5, 12),
        "tests/test_b.py::test_short": repeat.Tally(1, 1),
    }
    collected = {VALID.nodeid, "tests/test_b.py::test_still_flaky", "tests/test_b.py::test_short"}
    problems, skipped = rerun_verdicts(rows, collected, tallies, 12)
    assert problems == [
        f"frozen test turned green: {VALID.nodeid}: 0/12 failed, registry evidence 3/12; "
        "only a human graduates it",
        "frozen node id no longer exists: tests/test_b.py::test_gone",
        "frozen test ran 1 of 12 reruns: tests/test_b.py::test_short",
    ]
    assert skipped == ["tests/test_b.py::test_still_flaky"]
