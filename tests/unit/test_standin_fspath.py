"""`os.fspath` of a worker PathLike through a real worker (issue 17).

The handle's `__fspath__` asks the worker's os.fspath, which calls the
object's own `__fspath__` and checks that it gave str or bytes: data, which
crosses as itself. `isinstance(h, os.PathLike)` is the worker's answer, since
judge side every handle has `__fspath__`.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
class Where:
    def __init__(self, p):
        self.p = p

    def __fspath__(self):
        return self.p


class Plain:
    pass
"""

PROPERTIES = """
import os
import pathlib

import pytest

import mylib


def test_fspath_is_the_objects_own():
    assert os.fspath(mylib.Where("data/x.txt")) == "data/x.txt"
    assert os.fspath(mylib.Where(b"raw")) == b"raw"


def test_a_worker_pathlike_opens_and_makes_paths(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("hi")
    where = mylib.Where(str(target))
    with open(where) as f:
        assert f.read() == "hi"
    assert pathlib.PurePosixPath(mylib.Where("a/b.py")).suffix == ".py"


def test_pathlike_is_the_workers_answer():
    assert isinstance(mylib.Where("a"), os.PathLike)
    assert not isinstance(mylib.Plain(), os.PathLike)


def test_no_fspath_raises_as_bare():
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not Plain"):
        os.fspath(mylib.Plain())


def test_an_fspath_that_gives_no_path_raises_as_bare():
    with pytest.raises(TypeError, match=r"Where.__fspath__\\(\\) to return str or bytes, not int"):
        os.fspath(mylib.Where(3))
"""


def test_fspath_of_a_worker_pathlike(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, LIBRARY)
    got = outcomes(proc)
    assert len(got) == 5 and set(got.values()) == {"PASSED"}, proc.stdout[-6000:]
