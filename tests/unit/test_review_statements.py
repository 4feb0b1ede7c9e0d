"""review.statements over the changed code objects only: the same figures as over the whole file.

Issue 20: coverage.py's parser ran over a whole changed module (5,000 lines
of more-itertools for a one-line change). It now reads only the top-level
statements from the first changed line to the last; what the review counts
(changed statements, their first lines, the runs `fold` makes) must not move.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import patchjudge
from patchjudge import review

# Real modules of every shape: decorators, docstrings, multi-line statements, futures.
SOURCES = {
    p.name: p.read_text()
    for p in sorted(Path(patchjudge.__file__).parent.glob("*.py"))
    if p.name in ("review.py", "testrun.py", "paths.py", "config.py", "hashing.py")
}
SOURCES["inspect.py"] = Path(inspect.__file__).read_text()
SOURCES["shapes.py"] = textwrap.dedent(
    '''
    "Docstring."
    from __future__ import annotations

    x = 1; y = 2
    "not a docstring: a statement"

    @decorator(
        arg,
    )
    def f(a: int,
          b: "str") -> None:
        """Its own docstring."""
        return (a +
                b)

    class C:
        "doc"
        z = [
            1,
            2,
        ]
        if z:
            pass
        else:
            z = None

    while False:
        pass
    w = 3
    '''
).lstrip()


@functools.cache
def _whole(name: str) -> review.Statements | None:
    return review.statements(SOURCES[name])


def _same(name: str, changed: frozenset[int]) -> None:
    text = SOURCES[name]
    whole = _whole(name)
    part = review.statements(text, changed)
    assert whole is not None and part is not None
    f_whole = review.ChangedFile(name, text, "utf-8", changed, whole)
    f_part = review.ChangedFile(name, text, "utf-8", changed, part)
    counted = f_whole.lines
    assert f_part.lines == counted
    for n in range(1, text.count("\n") + 2):
        if n in changed or whole.of(n) in counted:
            assert f_part.statement_of(n) == f_whole.statement_of(n), n
    lines = sorted(counted)
    for wanted in (lines, lines[::2], lines[1::3]):
        assert review.fold(wanted, f_part.all_statements) == review.fold(
            wanted, f_whole.all_statements
        )


@settings(max_examples=25)
@given(data=st.data(), name=st.sampled_from(sorted(SOURCES)))
def test_the_changed_statements_are_those_of_the_whole_file(data: st.DataObject, name: str) -> None:
    count = SOURCES[name].count("\n") + 1
    # A patch's hunks, near each other as most are (far apart: the shapes below).
    start = data.draw(st.integers(1, count))
    near = st.integers(start, min(count, start + 60))
    changed = data.draw(st.frozensets(near, min_size=1, max_size=6))
    _same(name, changed)


@pytest.mark.parametrize("line", range(1, SOURCES["shapes.py"].count("\n") + 1))
def test_every_line_of_every_shape(line: int) -> None:
    _same("shapes.py", frozenset({line}))
    _same("shapes.py", frozenset({line, SOURCES["shapes.py"].count("\n")}))


def test_a_one_line_change_reads_one_code_object() -> None:
    text = SOURCES["inspect.py"]
    tree = ast.parse(text)
    target = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "getfile")
    kept = review.analysed_lines(tree, frozenset({target.lineno + 2}))
    assert kept is not None
    body = {n.lineno for n in tree.body} & kept
    # The function, plus the module docstring and futures that decide how it compiles.
    assert target.lineno in body and len(body) <= 2
    assert len(kept) < text.count("\n") / 50


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    pass\n\nreturn 1\n",  # the parser refuses it; ast.parse does not
        "def f(:\n    pass\n",
        "x = 1\nnonlocal x\n",
    ],
)
def test_a_file_python_will_not_compile_is_unparsable_whatever_changed(source: str) -> None:
    assert review.statements(source) is None
    assert review.statements(source, frozenset({1})) is None


def test_a_string_that_would_become_the_docstring_reads_the_whole_file() -> None:
    text = "x = 1\n'not a docstring'\ny = 2\n"
    tree = ast.parse(text)
    assert review.analysed_lines(tree, frozenset({2})) is None
    _ = SOURCES.setdefault("late_string.py", text)
    _same("late_string.py", frozenset({2}))
