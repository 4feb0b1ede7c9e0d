"""The properties lane's pure parts: thin files and what counts as a passing run."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from patchjudge.config import PropertiesSettings
from patchjudge.lanes.properties import (
    TOOLS,
    is_test_file,
    judge_outcomes,
    needs_process,
    thin_reason,
)
from patchjudge.testrun import Outcome, TestRun

GOOD = b"""
from hypothesis import given, strategies as st
import math
from calc import total


@given(st.lists(st.integers(min_value=0)))
def test_never_negative(xs):
    # a comment does not count as a line
    result = total(xs)
    expected = sum(xs)
    assert result >= 0
"""


def test_a_main_pass_the_review_plugin_cut_at_timeout_s_is_a_timeout_alone() -> None:
    # review_phase.py ends the process at the lane's timeout_s (the process's own deadline
    # has the review's budget on top): one reason, as the deadline gives, not its debris.
    cut = _run({"p::a": "run"}, [], finished=False, review_phase={"main_seconds": 60.2})
    assert judge_outcomes(cut, SETTINGS)[0] == ["timed out after 60 s"]


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        (GOOD, None),
        (GOOD.replace(b"assert result >= 0", b"print(result)"), "no assert or raise"),
        (b"def test_x():\n    assert True\n", "2 non-comment lines (< 8)"),
        (b"# only\n# comments\n" * 10, "0 non-comment lines"),
        (b"def test_x(:\n", "does not parse"),
        (GOOD.replace(b"assert result >= 0", b"if result < 0:\n        raise ValueError"), None),
    ],
)
def test_thin_reason(source: bytes, fragment: str | None) -> None:
    reason = thin_reason("eval/properties/test_p.py", source)
    if fragment is None:
        assert reason is None
    else:
        assert reason is not None and fragment in reason


def test_is_test_file() -> None:
    assert is_test_file("eval/properties/test_a.py") and is_test_file("x/a_test.py")
    assert not is_test_file("eval/properties/conftest.py") and not is_test_file("test_a.txt")


SETTINGS = PropertiesSettings(("eval/properties",), 1, 10, 60)


def _run(collected: dict[str, str], outcomes: list[Outcome], **kw: object) -> TestRun:
    fields: dict[str, object] = dict(
        exitstatus=0,
        timed_out=False,
        started=True,
        finished=True,
        collected=collected,
        markers={},
        collect_errors={},
        outcomes=tuple(outcomes),
        garbled=0,
        hypothesis={"max_examples": 10},
    )
    fields.update(kw)
    return TestRun(**fields)  # type: ignore[arg-type]


def o(
    nodeid: str, outcome: str, when: str = "call", raw: str | None = None, xf: bool = False
) -> Outcome:
    return Outcome(nodeid, when, outcome, raw if raw is not None else outcome, xf, "", ())


@pytest.mark.parametrize(
    ("run", "fragment"),
    [
        (_run({"p::a": "run"}, [o("p::a", "passed", "setup"), o("p::a", "passed")]), None),
        (_run({}, []), "no property test ran"),
        (_run({"p::a": "run"}, [o("p::a", "passed", "setup")]), "property did not run: p::a"),
        (_run({"p::a": "run"}, [o("p::a", "failed")], exitstatus=1), "property failed: p::a"),
        (
            _run({"p::a": "run"}, [o("p::a", "failed", "setup")], exitstatus=1),
            "property failed in setup",
        ),
        (_run({"p::a": "run"}, [o("p::a", "skipped", "setup")]), "property skipped: p::a"),
        (_run({"p::a": "run"}, [o("p::a", "skipped", xf=True)]), "property xfailed: p::a"),
        (
            _run({"p::a": "run"}, [o("p::a", "passed", raw="failed")]),
            "outcome rewritten in-process",
        ),
        (_run({"p::a": "run"}, [o("p::a", "passed")], finished=False), "did not run to the end"),
        (_run({"p::a": "run"}, [o("p::a", "passed")], timed_out=True), "timed out after 60 s"),
        (_run({"p::a": "run"}, [o("p::a", "passed")], exitstatus=1), "pytest exited 1"),
        (_run({"p::a": "run"}, [o("p::a", "passed")], garbled=2), "foreign line"),
        (
            _run({"p::a": "run"}, [o("p::a", "passed")], collect_errors={"p": "E"}),
            "collection error: p",
        ),
        (
            _run({"p::a": "run"}, [o("p::a", "passed")], hypothesis={"max_examples": 1}),
            "max_examples is 1",
        ),
    ],
)
def test_judge_outcomes(run: TestRun, fragment: str | None) -> None:
    problems, _ = judge_outcomes(run, SETTINGS)
    if fragment is None:
        assert problems == []
    else:
        assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        (b"import mylib\n\ndef test_x():\n    assert mylib.f()\n", None),
        (b"import attr\n\n@attr.s\nclass P:\n    x = attr.ib()\n", "class P (line 4) decorated with attr.s"),
        (b"from attr import define\n\n@define(frozen=True)\nclass P:\n    pass\n",
         "decorated with define(frozen=True)"),
        (b"import mylib.base as b\n\nclass P(b.Base):\n    pass\n", "class P (line 3) subclasses b.Base"),
        (b"from mylib import Meta\n\nclass P(metaclass=Meta):\n    pass\n", "has the metaclass Meta"),
        (b"import mylib\n\ndef test_x():\n    class Local(mylib.Base):\n        pass\n",
         "class Local (line 4) subclasses mylib.Base"),
        (b"from mylib import Base\n\nclass P(Base[int]):\n    pass\n", "subclasses Base[int]"),
        (b"import weakref\n", "imports weakref (line 1)"),
        (b"from weakref import ref\n", "imports weakref"),
        # The standard library, the test tools and the judge's own helpers are not the code.
        (b"import dataclasses\n\n@dataclasses.dataclass\nclass P:\n    x: int = 0\n", None),
        (b"import abc\n\nclass P(abc.ABC):\n    pass\n", None),
        (b"from hypothesis.stateful import RuleBasedStateMachine as M\n\nclass P(M):\n    pass\n",
         None),
        (b"import pytest\n\n@pytest.mark.slow\nclass TestP:\n    pass\n", None),
        (b"from helpers import Base\n\nclass P(Base):\n    pass\n", None),
        (b"from . import Base\n\nclass P(Base):\n    pass\n", None),
        # A class, generator or coroutine function the file makes, handed to the code: it
        # would get a judge handle (cattrs's converters, expression's @effect.seq).
        (b"import mylib\n\nclass P:\n    pass\n\nx = mylib.register(P)\n",
         "class P (line 3) is handed to mylib.register (line 6), of the code under test"),
        (b"from enum import Enum\nfrom mylib import Converter\n\nclass E(Enum):\n    A = 0\n\n"
         b"def test_x():\n    assert Converter().structure(0, E) is E.A\n",
         "class E (line 4) is handed to Converter().structure (line 8)"),
        (b"import enum\n\ndef test_x(converter):\n    E = enum.Enum('E', 'A B')\n"
         b"    converter.register_hook(E, lambda v, t: v)\n",
         "class E (line 4) is handed to converter.register_hook (line 5)"),
        (b"import dataclasses, typing\n\n@dataclasses.dataclass\nclass P:\n    x: int = 0\n\n"
         b"def test_x(c):\n    c.structure([], typing.List[P])\n",
         "class P (line 4) is handed to c.structure (line 8)"),
        (b"import mylib\n\ndef test_x():\n    @mylib.seq[int]()\n    def fn():\n        yield 1\n\n"
         b"    assert list(fn()) == [1]\n",
         "generator function fn (line 5) is decorated with mylib.seq[int]() (line 4)"),
        (b"import mylib\n\nasync def work():\n    pass\n\ndef test_x():\n    mylib.start(work)\n",
         "coroutine function work (line 3) is handed to mylib.start (line 7)"),
        # Instances and members by value, plain functions, and the judge's own calls cross.
        (b"import dataclasses, mylib\n\n@dataclasses.dataclass\nclass P:\n    x: int = 0\n\n"
         b"def gen():\n    yield P()\n\ndef test_x(monkeypatch, data):\n    p = P(1)\n"
         b"    assert mylib.f(p) == mylib.f(P(1)) == mylib.g(P.x, lambda: P, [P(2)], key=len)\n"
         b"    assert isinstance(p, P) and issubclass(P, object) and dataclasses.fields(P)\n"
         b"    assert list(gen()) == [P()] and mylib.h(list(gen()), check)\n"
         b"    monkeypatch.setattr(P, 'x', 2)\n\n@mylib.deco\ndef check():\n    return P\n",
         None),
        (b"import pytest\nfrom hypothesis import given, strategies as st\nfrom helpers import make\n\n"
         b"class P:\n    pass\n\nclass T:\n    def test_x(self):\n        self.assertIs(make(P), P)\n\n"
         b"@pytest.mark.parametrize('c', [P])\n@given(st.builds(P), st.sampled_from([P]))\n"
         b"def test_y(c, p, q):\n    with pytest.raises(TypeError):\n        super(P, p)\n",
         None),
        (b"def test_x(:\n", None),
        # A strategy the code under test builds: hypothesis draws from it in its process.
        (b"from hypothesis import given\nfrom mylib.hypothesis import urls\n\n@given(urls())\n"
         b"def test_x(u):\n    pass\n", "draws from urls() (line 4), a strategy of the code"),
        (b"from hypothesis import given, strategies as st\nimport mylib\n\n"
         b"@given(st.lists(mylib.strategies.names().map(str)))\ndef test_x(xs):\n    pass\n",
         "draws from mylib.strategies.names().map(str) (line 4)"),
        (b"import hypothesis\nimport mylib\n\n@hypothesis.given(u=mylib.urls(idn=False))\n"
         b"def test_x(u):\n    pass\n", "draws from mylib.urls(idn=False)"),
        (b"from hypothesis import given, strategies as st\nfrom mylib import urls\n\n"
         b"@given(st.data())\ndef test_x(data):\n    data.draw(urls(max_size=0))\n",
         "draws from urls(max_size=0) (line 6)"),
        (b"import hypothesis.strategies as st\nfrom mylib import urls\n\n@st.composite\n"
         b"def pairs(draw):\n    return draw(st.tuples(urls(), urls()))\n", "draws from urls() (line 6)"),
        (b"from hypothesis import given\nimport mylib\n\nURLS = mylib.urls()\n\n@given(URLS)\n"
         b"def test_x(u):\n    pass\n", "draws from URLS (line 6)"),
        # Library values and callables hypothesis only holds or calls cross: not a strategy.
        (b"from hypothesis import given, strategies as st\nimport mylib\n\n"
         b"@given(st.builds(mylib.Thing, st.integers()), st.sampled_from(mylib.Code),"
         b" st.lists(st.just(mylib.ZERO)), st.integers().map(mylib.f))\ndef test_x(a, b, c, d):\n"
         b"    pass\n", None),
        (b"from hypothesis import given, strategies as st\nfrom helpers import urls\n\n"
         b"@given(urls())\ndef test_x(u):\n    pass\n", None),
        (b"import mylib\n\ndef test_x():\n    mylib.canvas().draw(mylib.Shape())\n", None),
        # The exact type of a library object against a class: out of process, the stand-in's.
        (b"def test_x(md_class):\n    c = md_class().copy()\n    assert type(c) is md_class\n",
         "compares type(c) with md_class (line 3)"),
        (b"import mylib\n\ndef test_x():\n    assert mylib.make().__class__ == mylib.Thing\n",
         "compares mylib.make().__class__ with mylib.Thing (line 4)"),
        (b"import mylib\n\ndef test_x():\n    assert mylib.Thing is not type(mylib.make())\n",
         "compares type(mylib.make()) with mylib.Thing"),
        # Two types compared, a builtin, a class of the file's, a constant's type: they hold.
        (b"import mylib\n\nclass Mine:\n    pass\n\ndef test_x(a, b):\n"
         b"    assert type(a) is type(b) and type(a) is not int and type(b) == Mine\n"
         b"    assert mylib.kinds()[0] is type(None) and type(a).__name__ == 'X'\n"
         b"    assert [type(x).__name__ for x in (a, b)] and {n: 1 for n in (a, b)}\n", None),
        # Types collected to be compared later (jsonpath-ng's node kinds of a parsed tree).
        (b"import mylib\n\ndef test_x(tree):\n    kinds = {type(n) for n in mylib.walk(tree)}\n",
         "collects type(n) (line 4)"),
        (b"import mylib\n\ndef test_x(ns):\n    assert {n: type(n) for n in ns}\n",
         "collects type(n) (line 4)"),
        # State of the whole process the code reads from its own (mpmath's random.seed).
        (b"import random\nimport mylib\n\ndef test_x():\n    random.seed(42)\n    mylib.rand()\n",
         "calls random.seed (line 5): state of the whole process"),
        (b"from decimal import getcontext\nimport mylib\n\ndef test_x():\n"
         b"    getcontext().prec = 50\n", "sets getcontext().prec (line 5)"),
        (b"import locale as l, mylib\n\ndef test_x():\n    l.setlocale(l.LC_ALL, 'C')\n",
         "calls l.setlocale (line 4)"),
        (b"from os import chdir\nimport mylib\n\ndef test_x(tmp_path):\n    chdir(tmp_path)\n",
         "calls chdir (line 5)"),
        # A stdlib module's attribute the code reads, patched in the judge's (ecc's draws).
        (b"import secrets\nimport mylib\n\ndef test_x(monkeypatch):\n"
         b"    monkeypatch.setattr(secrets, 'randbelow', lambda n: 0)\n    mylib.blind(3)\n",
         "patches secrets (line 5): state of the whole process"),
        (b"import mylib\n\ndef test_x(monkeypatch):\n"
         b"    monkeypatch.setattr('os.urandom', lambda n: bytes(n))\n", "patches 'os.urandom'"),
        (b"import mylib\nfrom helpers import fake\n\ndef test_x(monkeypatch):\n"
         b"    monkeypatch.setattr(fake, 'x', 1)\n    monkeypatch.setattr('helpers.x', 1)\n", None),
        # Its own generator, a module of the file's named alike, no library: nothing shared.
        (b"import random\nimport mylib\n\ndef test_x():\n    r = random.Random(4)\n"
         b"    r.seed(5)\n    mylib.f(r.random())\n", None),
        (b"import random\n\ndef test_x():\n    random.seed(42)\n", None),
        (b"import mylib\nfrom helpers import random\n\ndef test_x():\n    random.seed(1)\n", None),
        (b"import datetime, pathlib\nfrom decimal import Decimal\n\ndef test_x(a, b, c):\n"
         b"    assert type(a) is datetime.datetime and type(b) is pathlib.PosixPath\n"
         b"    assert c.__class__ == Decimal\n", None),
    ],
)  # fmt: skip
def test_needs_process(source: bytes, fragment: str | None) -> None:
    reason = needs_process(source, judge={"helpers", "conftest"})
    if fragment is None:
        assert reason is None
    else:
        assert reason is not None and fragment in reason, reason


def test_the_tools_are_the_judges() -> None:
    from patchjudge.boundary.standin import JUDGE_TOOLS

    assert TOOLS <= JUDGE_TOOLS


# --- the differential run (issue 18) ----------------------------------------------


def test_the_second_harness_runs_the_tests_that_ran_a_changed_line() -> None:
    from patchjudge import review
    from patchjudge.lanes import properties

    f = review.changed_file("src/m.py", b"def f():\n    return 1\n\ndef g():\n    return 2\n", {2})
    assert f is not None
    collected = ["eval/p/test_a.py::test_f", "eval/p/test_a.py::test_g", "eval/p/test_in.py::t"]
    executed = {
        "eval/p/test_a.py::test_f": {"src/m.py": [1, 2]},
        "eval/p/test_a.py::test_g": {"src/m.py": [4, 5]},
        "eval/p/test_in.py::t": {"src/m.py": [2]},
    }
    second = properties.second_run_nodeids
    assert second(executed, [f], collected, ["eval/p/test_in.py"]) == ["eval/p/test_a.py::test_f"]
    # A changed line run at import ran for every test; in-process files are not judged here.
    at_import = {"": {"src/m.py": [2]}}
    assert second(at_import, [f], collected, ["eval/p/test_in.py"]) == collected[:2]
    assert second({}, [f], collected, []) == []


def test_disagreements_name_the_second_outcome() -> None:
    from patchjudge.lanes import properties

    ids = ["t::a", "t::b", "t::c"]
    problems = ["property failed: t::b: assert [2, 1] == [1, 2]"]
    assert properties.disagreements(ids, ["t::a"], problems) == [
        ("t::b", "failed: property failed: t::b: assert [2, 1] == [1, 2]"),
        ("t::c", "failed: property failed: t::b: assert [2, 1] == [1, 2]"),
    ]
    assert properties.disagreements(ids, ["t::a", "t::b"], []) == [("t::c", "did not run")]
    assert properties.disagreements(ids, ids, []) == []


def test_the_in_process_tests_that_ran_a_changed_line_are_run_again() -> None:
    from patchjudge import review
    from patchjudge.lanes import properties

    f = review.changed_file("src/m.py", b"def f():\n    return 1\n", {2})
    assert f is not None
    collected = ["eval/p/test_a.py::t", "eval/p/test_in.py::t", "eval/p/test_in.py::u"]
    executed = {n: {"src/m.py": [2]} for n in collected[:2]}
    inside = properties.in_process_nodeids
    assert inside(executed, [f], collected, ["eval/p/test_in.py"]) == ["eval/p/test_in.py::t"]
    # A changed line run at import ran for every test: every in-process one runs again.
    at_import = {"": {"src/m.py": [2]}}
    assert inside(at_import, [f], collected, ["eval/p/test_in.py"]) == collected[1:]
    assert inside(executed, [f], collected, []) == []


def test_with_no_in_process_file_no_changed_file_is_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 20: the usual run has no in-process file; the differential read each changed
    # file's binding-only lines already, a whole-module pass not to be made twice.
    from patchjudge import review
    from patchjudge.lanes import properties

    def unwanted(f: review.ChangedFile) -> frozenset[int]:
        raise AssertionError(f"read again: {f.path}")

    monkeypatch.setattr(properties, "binding_only_lines", unwanted)
    f = review.changed_file("src/m.py", b"def f():\n    return 1\n", {1, 2})
    assert f is not None
    at_import = {"": {"src/m.py": [1]}, "eval/p/test_a.py::t": {"src/m.py": [2]}}
    assert properties.in_process_nodeids(at_import, [f], ["eval/p/test_a.py::t"], []) == []


@pytest.mark.parametrize(
    ("problems", "second"),
    [
        ([], "passed"),
        (["property failed: e/t.py::a: assert [2, 1] == [1, 2]"], "failed: property failed"),
        # The file needed the process: a crossing refusal is recorded as such, never "failed".
        (
            ["property failed: e/t.py::a: the worker refused: cannot cross to the code"],
            "cannot cross: property failed",
        ),
        (["collection error: e/t.py: TypeError: x"], "cannot cross: collection error"),
        (["property module not importable: e/t.py: y"], "cannot cross: property module"),
    ],
)
def test_each_second_outcome_says_passed_cannot_cross_or_failed(
    problems: list[str], second: str
) -> None:
    from patchjudge.lanes import properties

    passed = [] if problems else ["e/t.py::a"]
    [seen] = properties.second_outcomes(["e/t.py::a"], passed, problems)
    assert seen["nodeid"] == "e/t.py::a"
    assert seen["first"] == "passed"
    assert seen["second"].startswith(second), seen


_BASE = "def f(xs):\n    return sorted(xs)\n"
_HELPER = "\n\ndef helper(x=1, *, y: int = 2) -> str:\n    '''doc'''\n    # why\n    return 'h'\n"


@pytest.mark.parametrize(
    ("text", "changed", "inert"),
    [
        # A new function wholly the patch's, its header calling nothing: its def line binds only.
        (_BASE + _HELPER, range(3, 10), {5}),
        (_BASE + _HELPER.replace("def helper", "async def helper"), range(3, 10), {5}),
        # One unchanged line inside (its return): the function is not all the patch's.
        (_BASE + _HELPER, [3, 4, 5, 6, 7, 9], set()),
        # Evaluating the header runs code: a default that calls, an annotation that looks up.
        (_BASE + _HELPER.replace("x=1", "x=f([])"), range(3, 10), set()),
        (_BASE + _HELPER.replace("y: int", "y: f.x"), range(3, 10), set()),
        (_BASE + "\n@f\ndef helper():\n    return 1\n", range(3, 7), set()),
        # The name is used elsewhere (an alias, __all__, a rebinding): the binding matters.
        (_BASE + _HELPER + "h = helper\n", range(3, 11), set()),
        (_BASE + _HELPER + "__all__ = ['helper']\n", range(3, 11), set()),
        (_BASE + "\ndef f(xs):\n    return list(xs)\n", range(3, 6), set()),
        # A dunder Python may call unasked, a method, a class: never inert.
        (_BASE + "\ndef __getattr__(name):\n    return 1\n", range(3, 6), set()),
        (_BASE + "\nclass C:\n    def m(self):\n        return 1\n", range(3, 7), set()),
    ],
)
def test_a_def_that_only_binds_a_new_function_is_no_import_time_change(
    text: str, changed: Iterable[int], inert: set[int]
) -> None:
    from patchjudge import review
    from patchjudge.lanes import properties

    f = review.changed_file("src/m.py", text.encode(), changed)
    assert f is not None
    assert properties.binding_only_lines(f) == inert


def test_a_new_function_run_at_import_only_by_its_def_judges_only_its_callers_twice() -> None:
    from patchjudge import review
    from patchjudge.lanes import properties

    f = review.changed_file("src/m.py", (_BASE + _HELPER).encode(), range(3, 10))
    assert f is not None
    collected = ["eval/p/test_a.py::test_f", "eval/p/test_a.py::test_helper"]
    executed = {"": {"src/m.py": [1, 5]}, "eval/p/test_a.py::test_helper": {"src/m.py": [8]}}
    second = properties.second_run_nodeids
    assert second(executed, [f], collected, []) == ["eval/p/test_a.py::test_helper"]
    assert second({"": {"src/m.py": [1, 5]}}, [f], collected, []) == []
    # Its body run at import is the patch's code at import: every test again.
    assert second({"": {"src/m.py": [5, 8]}}, [f], collected, []) == collected
