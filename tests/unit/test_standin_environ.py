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
from tests.attack_helpers import require_sandbox
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


# --- `[properties] data`: a declared file beside the properties (issue 17) -----------------

JUDGE = "/tmp/x/judge"
AMS = f"{JUDGE}/eval/properties/tzif/Amsterdam.tzif"


@pytest.mark.parametrize(
    ("name", "value", "crosses"),
    [
        ("TZ", AMS, True),
        ("TZ", f":{AMS}", True),  # POSIX: a TZ starting with ':' names a file
        ("LIB_PATH", f"/usr/share/zoneinfo:{AMS}", True),
        # Anything else of the judge's tree, alone or beside a declared file.
        ("TZ", f"{JUDGE}/eval/properties/test_tz.py", False),
        ("LIB_PATH", f"{AMS}:{JUDGE}/eval/properties", False),
        ("TZ", f"{AMS}.golden", False),  # a name the declared one is a prefix of
        ("TZ", f"file={AMS}", False),  # naming it inside a longer word: not that path
    ],
)
def test_a_value_naming_a_declared_data_file_crosses_and_only_that(
    name: str, value: str, crosses: bool
) -> None:
    assert standin.environ_crosses(name, value, (JUDGE,), (AMS,)) is crosses
    assert not standin.environ_crosses(name, value, (JUDGE,))  # none declared: none crosses
    now = {**BASE, name: value}
    assert environ_changes(BASE, now, (JUDGE,), (AMS,)) == (((name, value),) if crosses else ())


DATA_LIBRARY = """
import os
import time


def env(name):
    return os.environ.get(name)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        return type(exc).__name__


def append(path):
    try:
        with open(path, "ab") as f:
            f.write(b"x")
    except OSError as exc:
        return type(exc).__name__
    return "written"


def offset():
    return time.localtime(0).tm_gmtoff
"""

DATA_PROPERTIES = """
import pathlib

import mylib

HERE = pathlib.Path(__file__).parent
ZONE = str(HERE / "tzif" / "Plus5.tzif")


def test_a_declared_data_file_is_the_codes_to_read_at_its_path(monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    assert mylib.env("TZ") == ZONE
    assert mylib.read(ZONE) == pathlib.Path(ZONE).read_bytes()
    assert mylib.offset() == 5 * 3600  # the C library read it too (the worker's tzset)
    assert mylib.append(ZONE) == "OSError"  # read-only: EROFS in the box


def test_an_undeclared_file_beside_it_stays_hidden(monkeypatch):
    golden = str(HERE / "golden" / "expected.json")
    monkeypatch.setenv("LIB_FILE", golden)
    assert mylib.env("LIB_FILE") is None
    for path in (golden, __file__, str(HERE / "tzif" / "Other.tzif")):
        assert mylib.read(path) == "FileNotFoundError", path
"""

# A TZif v1 file of one zone, UTC+5 with no transitions: a 44-byte header (its counts: one
# type, four characters of abbreviations), the type and its name.
PLUS5 = b"TZif" + bytes(16) + (0).to_bytes(4, "big") * 4 + (1).to_bytes(4, "big")
PLUS5 += (4).to_bytes(4, "big") + (5 * 3600).to_bytes(4, "big") + b"\0\0" + b"P5X\0"


def test_a_declared_data_file_is_bound_in_the_workers_box_and_nothing_else(
    tmp_path: Path,
) -> None:
    require_sandbox()
    # The lane's copy (lanes/properties.DataCopy), bound at the file's path in the judge's
    # tree; the judge's own copy stays writable by the judge and out of the worker's box.
    copy = tmp_path / "copy" / "tzif" / "Plus5.tzif"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(PLUS5)
    at = tmp_path / "judge" / "tzif" / "Plus5.tzif"
    (tmp_path / "home").mkdir()
    box = {
        "tree": str(tmp_path / "tree"),
        "home": str(tmp_path / "home"),
        "data_from": [str(copy)],
        "data_at": [str(at)],
    }
    files: dict[str, str | bytes] = {
        "test_props.py": DATA_PROPERTIES,
        "tzif/Plus5.tzif": PLUS5,
        "tzif/Other.tzif": PLUS5,
        "golden/expected.json": "{}",
    }
    proc = run_judge(
        tmp_path, files, DATA_LIBRARY, spec_more={"box": box, "data": ["tzif/Plus5.tzif"]}
    )
    assert outcomes(proc) == {
        "test_a_declared_data_file_is_the_codes_to_read_at_its_path": "PASSED",
        "test_an_undeclared_file_beside_it_stays_hidden": "PASSED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]
