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


@pytest.mark.parametrize(
    ("data", "pace", "tests"),
    [
        (b'{"pace": 0.25, "tests": 180}', 0.25, 180),
        (b'{"pace": 0.25}', 0.25, None),  # a shard's run: its size is not the suite's
        (b"0.25", 0.25, None),  # an earlier version's bare number
        (b'{"pace": -1, "tests": 180}', None, None),
        (b'{"pace": 0.25, "tests": 0}', 0.25, None),
        (b'{"pace": 0.25, "tests": true}', 0.25, None),
        (b'{"pace": 0.25, "tests": "180"}', 0.25, None),
        (b'{"tests": 180}', None, None),
        (b"not json", None, None),
        (None, None, None),
    ],
)
def test_remembered_size_and_pace(
    data: bytes | None, pace: float | None, tests: int | None
) -> None:
    from patchjudge.lanes.flakes import remembered_pace, remembered_tests

    assert (remembered_pace(data), remembered_tests(data)) == (pace, tests)


@pytest.mark.parametrize(
    ("pace", "tests", "shard", "one"),
    [
        (0.01, 180, (1, 1), True),  # toolz: a 2 s suite
        (None, 180, (1, 1), False),  # never run here: collected first
        (0.01, None, (1, 1), False),
        (0.01, 180, (1, 4), False),  # a shard needs the collection to pick its ids
        # 12 x 180 s over 2 workers: still one pytest (batches each started one, issue 20);
        # its progress comes from the channel (repeat.Watch).
        (1.0, 180, (1, 1), True),
    ],
)
def test_one_session_for_a_known_whole_suite_however_long(
    pace: float | None, tests: int | None, shard: tuple[int, int], one: bool
) -> None:
    from patchjudge.lanes.flakes import Shard, one_session

    assert one_session(pace, tests, Shard(*shard)) is one


def test_progress_from_the_channel_at_most_every_interval() -> None:
    said: list[str] = []
    now = [100.0]
    watch = repeat.Watch(said.append, 40, clock=lambda: now[0])
    line = b'{"event": "report", "nodeid": "t.py::a", "when": "teardown"}\n'
    watch(line * 5)
    now[0] += repeat.PROGRESS_S - 1
    watch(line * 5 + b'{"event": "report", "when": "call"}\n')
    assert said == []  # not yet an interval since the start
    now[0] += 1
    watch(line * 10)
    assert said == ["20/40 test runs in 30 s, ~30 s left"]
    now[0] += 1
    watch(line)
    assert len(said) == 1  # the next one waits an interval
    assert watch.done == 21
