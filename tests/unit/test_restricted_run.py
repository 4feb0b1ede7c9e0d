"""testrun.restricted: a run of more property files read as the freeze lane's files alone."""

from __future__ import annotations

from patchjudge import testrun

A = "eval/properties/test_a.py::test_one"
B = "eval/properties/test_b.py::test_two"


def _outcome(nodeid: str, outcome: str = "passed", raw: str | None = None) -> testrun.Outcome:
    return testrun.Outcome(nodeid, "call", outcome, raw, False, "", ())


def _run(**changes: object) -> testrun.TestRun:
    base = testrun.TestRun(
        exitstatus=0,
        timed_out=False,
        started=True,
        finished=True,
        collected={A: "run", B: "run"},
        markers={A: (), B: ()},
        collect_errors={"eval/properties/test_c.py": "boom", "": "session"},
        outcomes=(_outcome(A), _outcome(B)),
        garbled=0,
    )
    return testrun.TestRun(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_what_other_files_collected_is_dropped() -> None:
    got = testrun.restricted(_run(), ["eval/properties/test_a.py"], 60)
    assert dict(got.collected) == {A: "run"}
    assert dict(got.markers) == {A: ()}
    assert dict(got.collect_errors) == {"": "session"}
    assert not got.timed_out


def test_a_sign_of_tampering_in_another_file_is_kept() -> None:
    run = _run(outcomes=(_outcome(A), _outcome(B, "passed", raw="failed")))
    got = testrun.restricted(run, ["eval/properties/test_a.py"], 60)
    assert any(B in t for t in got.tampering())


def test_a_main_pass_past_its_own_limit_is_a_time_out() -> None:
    run = _run(review_phase={"main_seconds": 61.0, "ran": True})
    assert testrun.restricted(run, ["eval/properties/test_a.py"], 60).timed_out
    assert testrun.restricted(run, ["eval/properties/test_a.py"], 62).timed_out is False
