"""issue 19: what a nox lane hands a later one (patchjudge.sharefile), read back only as written."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from pathlib import Path

from patchjudge import sharefile
from patchjudge.report import RunKey, Status
from patchjudge.testrun import TestRun

RUN = TestRun(0, False, True, True, {"tests/test_a.py::test_x": "run"}, {}, {}, (), 0)
THIS = RunKey("a" * 40, "b" * 40, "c" * 64, "d1")
KEY = ("suite_pass", Path("/venv/bin/python"), ("tests",))


def test_entries_read_back_as_written_with_the_digest_printed(tmp_path: Path) -> None:
    path = tmp_path / "s" / "pathfilter.pickle"
    digest = sharefile.write(path, THIS, {KEY: RUN, ("status",): Status.PASS})
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert sharefile.read([(path, digest)], THIS) == ({KEY: RUN, ("status",): Status.PASS}, [])


def test_a_file_of_another_run_is_refused(tmp_path: Path) -> None:
    # Keys hold only what the run does not fix: another head's pass must not be taken.
    path = tmp_path / "pathfilter.pickle"
    digest = sharefile.write(path, THIS, {KEY: RUN})
    assert digest is not None
    other = dataclasses.replace(THIS, head="e" * 40)
    found, refused = sharefile.read([(path, digest)], other)
    assert found == {}
    assert refused == [f"{path}: written for another run ({THIS})"]


def test_nothing_to_share_writes_no_file(tmp_path: Path) -> None:
    path = tmp_path / "none.pickle"
    assert sharefile.write(path, THIS, {}) is None
    assert sharefile.write(path, THIS, {KEY: lambda: None}) is None  # cannot be written: not shared
    assert not path.exists()


def test_bytes_that_are_not_the_lanes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pathfilter.pickle"
    digest = sharefile.write(path, THIS, {KEY: RUN})
    assert digest is not None
    forged = pickle.dumps([(KEY, RUN.__class__(1, False, True, True, {}, {}, {}, (), 0))])
    path.write_bytes(forged)
    found, refused = sharefile.read([(path, digest)], THIS)
    assert found == {}
    assert refused == [f"{path}: not the bytes its lane wrote (sha256 differs)"]
    missing = tmp_path / "gone.pickle"
    assert sharefile.read([(missing, digest)], THIS)[1] == [f"{missing}: No such file or directory"]


class Planted:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.getcwd, ())  # type: ignore[return-value]


def test_a_pickle_naming_anything_but_the_judges_records_is_refused_whatever_its_digest(
    tmp_path: Path,
) -> None:
    # Defence in depth: even bytes whose digest nox holds build only records.
    path = tmp_path / "planted.pickle"
    path.write_bytes(pickle.dumps((THIS, [(KEY, Planted())])))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    found, refused = sharefile.read([(path, digest)], THIS)
    assert found == {}
    assert refused == [f"{path}: unreadable (posix.getcwd is not one of the judge's records)"]


class PlantedJudgeCall:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        from patchjudge import hashing

        return (hashing.canonical_bytes, (b"x",))  # type: ignore[return-value]


def test_a_pickle_calling_a_function_of_the_judges_is_refused(tmp_path: Path) -> None:
    # Only the judge's classes are built: a function of its own would run with the file's args.
    path = tmp_path / "planted.pickle"
    path.write_bytes(pickle.dumps((THIS, [(KEY, PlantedJudgeCall())])))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    found, refused = sharefile.read([(path, digest)], THIS)
    assert found == {}
    assert refused == [
        f"{path}: unreadable (patchjudge.hashing.canonical_bytes is not one of the judge's records)"
    ]
