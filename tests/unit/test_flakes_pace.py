"""xdist decided from measured test time, not from counts (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge import repeat

S = repeat.XDIST_START_S


@pytest.mark.parametrize(
    ("setting", "serial_s", "cpus", "workers"),
    [
        # 2,160 runs of 1 ms tests: counts said xdist, the time it would save says no.
        ("auto", 2.2, 2, 0),
        # 600 runs of a second each: counts said no, the time says yes.
        ("auto", 600.0, 2, 2),
        ("auto", 2 * S + 0.01, 2, 2),  # saves half of it: just over the start-up
        ("auto", 2 * S, 2, 0),
        ("auto", 1.5 * S + 0.01, 4, 4),
        ("auto", 10**6, 1, 0),
        ("auto", 10**6, None, 0),
        ("0", 10**6, 8, 0),
        (3, 0.0, 1, 3),
        ("2", 0.0, 8, 2),
    ],
)
def test_workers_for(setting: str | int, serial_s: float, cpus: int | None, workers: int) -> None:
    assert repeat.workers_for(setting, serial_s, cpus) == workers


def test_junit_seconds_sums_the_cases_and_ignores_junk(tmp_path: Path) -> None:
    xml = tmp_path / "junit.xml"
    xml.write_text(
        '<testsuites><testsuite time="99">'
        '<testcase classname="t" name="a" time="0.25"/>'
        '<testcase classname="t" name="b" time="1.5"><failure/></testcase>'
        '<testcase classname="t" name="c" time="not a number"/>'
        '<testcase classname="t" name="d" time="-3"/>'
        '<testcase classname="t" name="e"/>'
        "</testsuite></testsuites>"
    )
    assert repeat.junit_seconds(xml) == 1.75


def test_serial_seconds_counts_what_junit_does_not_see() -> None:
    # 180 tests of 1 ms by JUnit, 11 runs left: the item overhead dominates.
    assert repeat.serial_seconds(0.18, 180, 11) == 11 * (0.18 + 180 * repeat.RUN_OVERHEAD_S)
    assert repeat.serial_seconds(5.0, 3, 0) == 0


@pytest.mark.parametrize(
    ("data", "pace"),
    [
        (b"0.25", 0.25),
        (b"0", 0.0),
        (b"3", 3.0),
        (None, None),
        (b"-1", None),
        (b"1e9", None),  # an hour a test is no pace: never trusted to turn xdist off
        (b"true", None),
        (b'"0.2"', None),
        (b"NaN", None),
        (b"not json", None),
    ],
)
def test_remembered_pace(data: bytes | None, pace: float | None) -> None:
    from patchjudge.lanes.flakes import remembered_pace

    assert remembered_pace(data) == pace
