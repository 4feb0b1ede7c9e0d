"""Compiled code is not reviewable source: the pathfilter rule and the scratch-tree filter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import MapEntry
from patchjudge.paths import Change, classify, compiled_problem, is_bytecode


@pytest.mark.parametrize(
    ("path", "pythonpath", "compiled"),
    [
        ("src/calc.pyc", ("src",), True),
        ("calc.pyo", ("src",), True),
        ("src/__pycache__/calc.cpython-311.pyc", ("src",), True),
        ("src/__pycache__/notes.txt", ("src",), True),  # anything under __pycache__
        ("docs/__pycache__", ("src",), True),
        ("src/_speed.cpython-311-x86_64-linux-gnu.so", ("src",), True),
        ("src/pkg/_speed.pyd", ("src",), True),
        ("src/libfoo.so.1", ("src",), True),
        ("_speed.so", (".",), True),  # "." puts the whole tree on the path
        ("vendor/_speed.so", ("src",), False),  # not importable: data, mapped like any file
        ("src/calc.py", ("src",), False),
        ("src/pycache/calc.py", ("src",), False),
        ("src/calc.pyc.txt", ("src",), False),
        ("src/so/readme.md", ("src",), False),
        ("srcx/_speed.so", ("src",), False),
    ],
)
def test_compiled_problem(path: str, pythonpath: tuple[str, ...], compiled: bool) -> None:
    problem = compiled_problem(path, pythonpath)
    assert (problem is not None) is compiled
    if problem:
        assert problem.startswith(f"compiled code is not reviewable source: {path} (")


@given(st.lists(st.sampled_from(["src", "pkg", "__pycache__", "a.py", "b.pyc"]), min_size=1))
def test_bytecode_is_exactly_pyc_pyo_or_under_pycache(parts: list[str]) -> None:
    path = "/".join(parts)
    expected = "__pycache__" in parts or path.endswith((".pyc", ".pyo"))
    assert is_bytecode(path) is expected
    if expected:
        assert compiled_problem(path, ()) is not None


MAP = (MapEntry("**", frozenset({"properties"})),)


@pytest.mark.parametrize(
    ("change", "fails"),
    [
        (Change("A", "000000", "100644", None, "src/calc.pyc"), True),
        (Change("M", "100644", "100644", "src/calc.pyc", "src/calc.pyc"), True),
        (Change("R", "100644", "100644", "src/calc.txt", "src/calc.pyc"), True),
        (Change("C", "100644", "100644", "src/a.py", "src/__pycache__/a.cpython-311.pyc"), True),
        (Change("A", "000000", "100755", None, "src/_c.so"), True),
        # Removing bytecode, or renaming it away to source, is no compiled code added.
        (Change("D", "100644", "000000", "src/calc.pyc", None), False),
        (Change("R", "100644", "100644", "src/calc.pyc", "src/calc.py"), False),
        (Change("A", "000000", "100644", None, "src/calc.py"), False),
    ],
)
def test_pathfilter_fails_added_or_changed_compiled_code(change: Change, fails: bool) -> None:
    result = classify(
        [change],
        protected=(),
        map_entries=MAP,
        properties_paths=(),
        symlinks={},
        pythonpath=("src",),
    )
    said = [p for p in result.problems if p.startswith("compiled code")]
    assert bool(said) is fails
