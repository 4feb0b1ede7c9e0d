"""The second harness's record in the main pass's channel, and what the lane takes of it (issue 20)."""

from __future__ import annotations

import json

from patchjudge import review, review_phase, testrun
from patchjudge.config import PropertiesSettings
from patchjudge.lanes.properties import judged_in_session

SETTINGS = PropertiesSettings(("eval/properties",), 1, 10, 60)
A, B = "eval/properties/test_a.py::test_a", "eval/properties/test_b.py::test_b"


def _line(event: str, **fields: object) -> bytes:
    # As pytest_plugin.emit writes it, the prefix inside the event's name.
    return json.dumps({"event": event, **fields}).encode()


def _report(nodeid: str, outcome: str, longrepr: str = "") -> dict[str, object]:
    return {
        "nodeid": nodeid,
        "when": "call",
        "outcome": outcome,
        "raw": outcome,
        "wasxfail": False,
        "longrepr": longrepr,
        "falsifying": [],
        "called": True,
    }


def _channel(*second: bytes, main_passed: bool = True) -> bytes:
    main = [
        _line("start"),
        _line("collected", items=[{"nodeid": n, "state": "run", "markers": []} for n in (A, B)]),
        *(_line("report", **_report(n, "passed" if main_passed else "failed")) for n in (A, B)),
        _line("finish", exitstatus=0),
    ]
    return b"\n".join([*main, *second]) + b"\n"


def _second(*events: bytes) -> testrun.TestRun | None:
    parsed = testrun.parse_channel(_channel(*events))
    found = parsed.get("second")
    return None if found is None else testrun.second_run(found, False)


WHOLE = (
    _line("second:start"),
    _line("second:collected", items=[{"nodeid": n, "state": "run", "markers": []} for n in (A, B)]),
    _line("second:report", **_report(A, "passed")),
    _line("second:report", **_report(B, "failed", "AssertionError: assert [2, 1] == [1, 2]")),
    _line("second:stale", nodeids=[]),
    _line("second:finish", exitstatus=1),
)


def test_the_main_pass_record_holds_none_of_the_second_harness_events() -> None:
    parsed = testrun.parse_channel(_channel(*WHOLE))
    assert parsed["garbled"] == 0
    assert [(o.nodeid, o.outcome) for o in parsed["outcomes"]] == [(A, "passed"), (B, "passed")]
    second = testrun.second_run(parsed["second"], False)
    assert [(o.nodeid, o.outcome) for o in second.outcomes] == [(A, "passed"), (B, "failed")]


def test_a_failure_in_the_second_harness_reads_as_its_own_pytest_would() -> None:
    here, problems, passed = judged_in_session(_second(*WHOLE), (), [A, B], SETTINGS)
    assert here == {A, B}
    assert passed == [A]
    [problem] = problems
    assert problem.startswith(f"property failed: {B}"), problem


def test_a_stale_node_id_is_left_to_the_lane() -> None:
    events = [e for e in WHOLE if b"second:stale" not in e]
    events.insert(-1, _line("second:stale", nodeids=[B]))
    here, problems, passed = judged_in_session(_second(*events), (B,), [A, B], SETTINGS)
    assert here == {A}
    assert (problems, passed) == ([], [A])


def test_a_record_without_its_finish_judges_nothing() -> None:
    # The process ended mid-phase (its deadline, a crash): the lane runs them all itself.
    events = [e for e in WHOLE if b"second:finish" not in e]
    assert judged_in_session(_second(*events), (), [A, B], SETTINGS) == (set(), [], [])
    assert judged_in_session(None, (), [A, B], SETTINGS) == (set(), [], [])


def test_a_node_id_the_phase_did_not_collect_is_left_to_the_lane() -> None:
    here, _, passed = judged_in_session(_second(*WHOLE), (), [A, B, "x.py::t"], SETTINGS)
    assert here == {A, B} and passed == [A]


def _file(path: str, changed: set[int]) -> review.ChangedFile:
    return review.ChangedFile(path, "", "utf-8", frozenset(changed), None)


def test_a_changed_line_run_at_import_runs_every_test_again() -> None:
    files = [_file("src/m.py", {3, 7})]
    executed = {"": {"src/m.py": (3,)}, A: {"src/m.py": (7,)}, B: {"src/m.py": (1,)}}
    assert review_phase.second_nodeids(executed, files, {}, [A, B]) == [A, B]
    # A def line that only binds (the lane's `inert`) is not a hit at import.
    assert review_phase.second_nodeids(executed, files, {"src/m.py": [3]}, [A, B]) == [A]


def test_what_a_judge_file_computed_at_import_is_replayed_only_by_its_own_pytest() -> None:
    files = [_file("src/m.py", {3})]
    at_import = {"": {"src/m.py": (3,)}}

    def replayable(executed: dict, askers: set[str]) -> bool:  # type: ignore[type-arg]
        return review_phase.replayable(
            executed, files, inert={}, askers=askers, nodeids=[], items={}
        )

    # Only the re-imported modules (none here) may have asked the code at import.
    assert replayable(at_import, set())
    assert not replayable(at_import, {"/judge/eval/properties/conftest.py"})
    assert not replayable(at_import, {""})  # a request with no judge file on the stack
    # No changed line ran at import: what they computed then is the base's code's.
    assert replayable({A: {"src/m.py": (3,)}}, {"/judge/eval/properties/conftest.py"})
