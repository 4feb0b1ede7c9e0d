"""The property's changes to its environment reach the code, and nothing else does (issue 17).

In process `monkeypatch.setenv("TZ", ...)` or `patch.dict(os.environ, ...)` is
the library's environment too (whenever's suite). Out of process the worker's
environment is its own: the judge sends what the tests changed since its
pytest started (protocol.ENVIRON), never a value of its own it had then
(PATCHJUDGE_SEED_KEY), never a name the worker's harness owns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge.boundary import protocol, standin
from patchjudge.boundary.standin import environ_changes
from tests.unit.test_standin import outcomes, run_judge

BASE = {"PATCHJUDGE_SEED_KEY": "secret", "LIB_KEPT": "judge", "TZ": "UTC", "PATH": "/usr/bin"}


def test_a_name_unchanged_since_the_start_never_crosses() -> None:
    assert environ_changes(BASE, dict(BASE)) == ()
    now = {**BASE, "LIB_NEW": "1", "TZ": "AAA-1"}
    assert environ_changes(BASE, now) == (("LIB_NEW", "1"), ("TZ", "AAA-1"))


def test_a_deleted_name_crosses_as_none_and_a_restored_one_not_at_all() -> None:
    now = {k: v for k, v in BASE.items() if k != "TZ"}
    assert environ_changes(BASE, now) == (("TZ", None),)
    assert environ_changes(BASE, {**now, "TZ": "UTC"}) == ()


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "TMPDIR", "PYTHONPATH", "PYTHONHASHSEED", "LD_PRELOAD", "GLIBC_TUNABLES",
     "MALLOC_ARENA_MAX", "PATCHJUDGE_SEED_KEY", "PYTEST_CURRENT_TEST", "COVERAGE_PROCESS_START"],
)  # fmt: skip
def test_a_name_of_the_workers_harness_never_crosses(name: str) -> None:
    assert environ_changes(BASE, {**BASE, name: "changed"}) == ()
    assert environ_changes(BASE, {k: v for k, v in BASE.items() if k != name}) == ()
    assert not protocol.environ_ok(((name, "changed"),))


def test_a_request_sends_again_only_what_the_tests_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    before = standin._environ_changes()
    assert standin._environ_changes() is before  # nothing changed: no new changes to send
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "x.py::t (call)")  # pytest's, every phase
    assert standin._environ_changes() is before
    monkeypatch.setenv("LIB_ZONE", "/zones")
    assert dict(standin._environ_changes())["LIB_ZONE"] == "/zones"
    monkeypatch.undo()
    assert standin._environ_changes() == before


def test_a_value_naming_the_judges_tree_never_crosses() -> None:
    # whenever: TZ set to a tzif file next to the properties, at a module's import.
    hidden = ("/tmp/x/judge",)
    assert not standin.environ_crosses("TZ", "/tmp/x/judge/eval/properties/tzif/A", hidden)
    assert not standin.environ_crosses("LIB_PATH", "/a:/tmp/x/judge/data", hidden)
    assert standin.environ_crosses("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", hidden)
    assert standin.environ_crosses("TZ", None, hidden)  # a deletion names no path
    now = {**BASE, "TZ": "/tmp/x/judge/zone", "LIB_NEW": "1"}
    assert environ_changes(BASE, now, hidden) == (("LIB_NEW", "1"),)


@pytest.mark.parametrize(
    "changes",
    [[("TZ", "UTC")], (("TZ", 1),), (("A=B", "x"),), (("", "x"),), (("TZ", "a\0b"),),
     (("TZ", "UTC"), ("TZ", None)), (("TZ",),)],
)  # fmt: skip
def test_the_worker_refuses_an_environment_not_of_the_protocols_shape(changes: object) -> None:
    assert not protocol.environ_ok(changes)


LIBRARY = """
import os


def env(name):
    return os.environ.get(name)


def after(fn, name):
    fn()
    return os.environ.get(name)
"""

PROPERTIES = """
import os
import pathlib
import unittest.mock

import mylib
from patchjudge.boundary import protocol, standin, wire

REFUSED = ("PATH", "HOME", "PYTHONHASHSEED", "LD_LIBRARY_PATH", "PATCHJUDGE_SEED_KEY")


def test_the_judges_own_environment_never_crosses(monkeypatch):
    assert mylib.env("LIB_KEPT") is None and mylib.env("PATCHJUDGE_SEED_KEY") is None
    monkeypatch.setenv("LIB_KEPT", "judge")  # its value when the judge started: no change
    monkeypatch.setenv("LIB_NEW", "1")
    assert mylib.env("LIB_KEPT") is None and mylib.env("LIB_NEW") == "1"


def test_names_of_the_workers_harness_keep_the_workers_values(monkeypatch):
    before = {name: mylib.env(name) for name in REFUSED}
    assert before["HOME"] and before["PATH"] and before["PATCHJUDGE_SEED_KEY"] is None
    for name in REFUSED:
        monkeypatch.setenv(name, "/set/by/the/property")
    assert {name: mylib.env(name) for name in REFUSED} == before


def test_a_path_in_the_judges_tree_leaves_the_workers_value(monkeypatch):
    monkeypatch.setenv("LIB_FILE", "/elsewhere/zone")
    assert mylib.env("LIB_FILE") == "/elsewhere/zone"
    monkeypatch.setenv("LIB_FILE", str(pathlib.Path(__file__).parent / "zones" / "a"))
    assert mylib.env("LIB_FILE") is None  # the worker's own: it had none


def test_a_callbacks_change_reaches_the_code_it_returns_to(monkeypatch):
    assert mylib.after(lambda: monkeypatch.setenv("LIB_CB", "set"), "LIB_CB") == "set"


def test_z_a_change_undone_is_undone_in_the_worker_and_sent_once():
    assert mylib.env("LIB_NEW") is None and mylib.env("LIB_CB") is None  # the undos crossed
    w = standin._state.current()
    writes = []
    real = os.write

    def counting(fd, data):
        if fd == w.fd_out:
            writes.append(bytes(data))
        return real(fd, data)

    os.write = counting
    try:
        with unittest.mock.patch.dict(os.environ, {"LIB_MODE": "fast"}):
            assert mylib.env("LIB_MODE") == "fast" and mylib.env("LIB_MODE") == "fast"
        assert mylib.env("LIB_MODE") is None
    finally:
        os.write = real
    messages = [
        [wire.decode(f, lambda ref: ref) for f in wire.split_frames(data)[0]] for data in writes
    ]
    sent = [m[1] for write in messages for m in write if m[0] == protocol.ENVIRON]
    # The change, then its undo, each once, in the write of the next request after it.
    assert sent == [(("LIB_MODE", "fast"),), ()], messages
    assert all(write[-1][0] == protocol.QUERY for write in messages)
"""

TESTS = {
    "test_a_callbacks_change_reaches_the_code_it_returns_to": "PASSED",
    "test_a_path_in_the_judges_tree_leaves_the_workers_value": "PASSED",
    "test_the_judges_own_environment_never_crosses": "PASSED",
    "test_names_of_the_workers_harness_keep_the_workers_values": "PASSED",
    "test_z_a_change_undone_is_undone_in_the_worker_and_sent_once": "PASSED",
}


def test_only_the_propertys_changes_reach_the_worker(tmp_path: Path) -> None:
    judge_env = {"PATCHJUDGE_SEED_KEY": "secret", "LIB_KEPT": "judge"}
    proc = run_judge(tmp_path, PROPERTIES, LIBRARY, environ=judge_env)
    assert outcomes(proc) == TESTS, proc.stdout[-6000:] + proc.stderr[-3000:]
