"""A worker's failure reaches the lane as data and is rendered at the edge (issue 17).

The judge's stand-in sends each reason as a "worker_failure" event (cause,
worker, detail); the lane renders it with failure.worker_text. A property's
own text that reads like a worker failure is that property's text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from patchjudge import failure, testrun
from patchjudge.boundary import protocol, sandbox, standin
from patchjudge.boundary.protocol import Cause, Incident
from patchjudge.config import PropertiesSettings
from patchjudge.lanes.properties import judge_outcomes
from patchjudge.testrun import Outcome, TestRun

F = "eval/properties/test_total.py"


# The one-line reasons as they read before they were data: the same words.
@pytest.mark.parametrize(
    ("cause", "detail", "text"),
    [
        (Cause.CRASHED, "exit 3", f"the worker for {F} crashed (exit 3)"),
        (Cause.TIMEOUT, "5", f"the worker for {F} did not answer within the 5 s call deadline"),
        (Cause.GONE, "Broken pipe", f"the worker for {F} is gone (Broken pipe)"),
        (
            Cause.MALFORMED,
            "unknown tag b'X' at byte 0",
            f"the worker for {F} sent malformed data: unknown tag b'X' at byte 0",
        ),
        (
            Cause.PROTOCOL,
            "forged a reply to call 1000000, not asked",
            f"the worker for {F} broke the protocol: forged a reply to call 1000000, not asked",
        ),
        (
            Cause.UNCROSSABLE,
            "WireError: value nested deeper than 64",
            f"the worker for {F} returned a value that cannot cross: "
            "WireError: value nested deeper than 64",
        ),
        (
            Cause.INTERRUPT,
            "KeyboardInterrupt",
            f"the worker for {F}: the code under test raised KeyboardInterrupt"
            " (an interrupt fails the property)",
        ),
        (
            Cause.VERDICT,
            "function check raised: AssertionError: no",
            f"the worker for {F} did not return what the judge's function check raised: "
            "AssertionError: no (the judge's verdict stands)",
        ),
        (
            Cause.HANDLE_TO_JUDGE,
            "function key",
            f"the worker for {F} passed an object of the code under test to the judge's "
            "function key: the judge's functions get data only (pass plain values, or list "
            "the file in [properties] in_process)",
        ),
        (
            Cause.SANDBOX,
            "bwrap exited 1",
            f"the worker for {F} did not start: the sandbox failed before the worker ran "
            "(bwrap exited 1)",
        ),
    ],
)
def test_each_cause_renders_its_one_line(cause: Cause, detail: str, text: str) -> None:
    assert failure.worker_text(cause, F, detail) == text
    assert str(standin.WorkerFailure(Incident(cause, F, detail))) == text


def test_every_cause_has_its_words() -> None:
    assert set(failure.WORKER_TEXT) == set(Cause)


def _channel(*records: dict[str, object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


EVENT = {
    "event": "worker_failure",
    "nodeid": f"{F}::test_a",
    "when": "call",
    "cause": "crashed",
    "worker": F,
    "detail": "exit 3",
}


@pytest.mark.parametrize(
    ("records", "found", "garbled"),
    [
        ([EVENT], {(f"{F}::test_a", "call"): Incident(Cause.CRASHED, F, "exit 3")}, 0),
        # The first reason a phase had stands.
        (
            [EVENT, {**EVENT, "cause": "timeout", "detail": "5"}],
            {(f"{F}::test_a", "call"): Incident(Cause.CRASHED, F, "exit 3")},
            0,
        ),
        ([{**EVENT, "cause": "bored"}], {}, 1),
        ([{k: v for k, v in EVENT.items() if k != "detail"}], {}, 1),
    ],
)
def test_the_channel_carries_worker_failures_as_data(
    records: list[dict[str, object]], found: dict[tuple[str, str], Incident], garbled: int
) -> None:
    parsed = testrun.parse_channel(_channel(*records))
    assert (parsed["worker_failures"], parsed["garbled"]) == (found, garbled)


SETTINGS = PropertiesSettings(("eval/properties",), 1, 10, 60)
# What a property's assertion shows when the code returns text that reads like a reason.
LOOKALIKE = (
    "E   AssertionError: WorkerFailure: the worker for eval/properties/test_total.py "
    "crashed (exit 9)\nE   assert 'x' == 'y'"
)


def _run(failures: dict[tuple[str, str], Incident], longrepr: str) -> TestRun:
    nodeid = f"{F}::test_a"
    outcome = Outcome(nodeid, "call", "failed", "failed", False, longrepr, ())
    return TestRun(
        exitstatus=1,
        timed_out=False,
        started=True,
        finished=True,
        collected={nodeid: "run"},
        markers={},
        collect_errors={},
        outcomes=(outcome,),
        garbled=0,
        hypothesis={"max_examples": 10},
        worker_failures=failures,
    )


def test_a_propertys_text_that_reads_like_a_worker_failure_is_the_propertys() -> None:
    problems, _ = judge_outcomes(_run({}, LOOKALIKE), SETTINGS)
    assert problems == [
        f"property failed: {F}::test_a: WorkerFailure: the worker for {F} crashed (exit 9)"
    ]


def test_the_judges_record_of_a_worker_failure_is_the_reason() -> None:
    failures = {(f"{F}::test_a", "call"): Incident(Cause.CRASHED, F, "exit 9")}
    problems, _ = judge_outcomes(_run(failures, "E   whatever the text says"), SETTINGS)
    assert problems == [f"property failed: {F}::test_a: the worker for {F} crashed (exit 9)"]


def test_a_worker_failure_at_collection_names_the_module() -> None:
    run = _run({(F, "collect"): Incident(Cause.CRASHED, F, "exit 0")}, "")
    run = TestRun(**{**run.__dict__, "collect_errors": {F: "E   anything"}})
    problems, _ = judge_outcomes(run, SETTINGS)
    assert f"property module not importable: {F}: the worker for {F} crashed (exit 0)" in problems


# --- the sandbox's own failure apart from the program's (real bwrap) -------------------


def _boxed_worker(tmp_path: Path, readonly: tuple[str, ...]) -> standin.Worker:
    tree, home = tmp_path / "tree", tmp_path / "home"
    (tree / "mylib").mkdir(parents=True)
    (tree / "mylib" / "__init__.py").write_text("import os\n\nos._exit(3)\n")
    home.mkdir()
    spec = protocol.WorkerSpec(
        sys.executable,
        str(tree),
        str(home),
        ("mylib",),
        pythonpath=(".",),
        box=protocol.BoxSpec(str(tree), str(home), readonly),
        call_timeout_s=120,
    )
    return standin.Worker(spec, F, [])


def _close(worker: standin.Worker) -> None:
    assert worker.proc is not None and worker.proc.stderr is not None
    stderr = worker.proc.stderr
    worker.close()
    stderr.close()  # the judge's process would close it at its end


needs_bwrap = pytest.mark.skipif(sandbox.probe() is not None, reason="no sandbox starts here")


@needs_bwrap
def test_a_box_that_cannot_start_is_the_sandboxs_failure(tmp_path: Path) -> None:
    worker = _boxed_worker(tmp_path, (str(tmp_path / "missing"),))
    with pytest.raises(standin.WorkerFailure) as failed:
        worker.request(protocol.IMPORT, "mylib")
    _close(worker)
    assert failed.value.incident == Incident(Cause.SANDBOX, F, "bwrap exited 1")


@needs_bwrap
def test_a_program_that_exits_in_the_box_is_the_programs_failure(tmp_path: Path) -> None:
    # Honest look-alike: the same box starts; the code exits 3 as it imports.
    worker = _boxed_worker(tmp_path, ())
    with pytest.raises(standin.WorkerFailure) as failed:
        worker.request(protocol.IMPORT, "mylib")
    _close(worker)
    assert failed.value.incident == Incident(Cause.CRASHED, F, "exit 3")


@pytest.mark.parametrize(("status_fd", "flags"), [(7, ["--json-status-fd", "7"]), (None, [])])
def test_bwrap_reports_its_status_only_where_asked(status_fd: int | None, flags: list[str]) -> None:
    box = sandbox.Box(Path("/t/tree"), Path("/t/home"), status_fd=status_fd)
    argv = sandbox.bwrap_argv(box, ["python"], sandbox.Host("bwrap", ()))
    found = [argv[i : i + 2] for i, a in enumerate(argv) if a == "--json-status-fd"]
    assert [f for pair in found for f in pair] == flags
