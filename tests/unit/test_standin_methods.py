"""`handle.name(...)` in one round trip where getattr + call were two (issue 20).

A stateful machine calls its model's methods on every rule: the judge reads the
caller's bytecode and, where the attribute is only called (a LOAD_METHOD whose
arguments are plain loads), asks the worker for both at once. Everything else
reads the attribute first, as before; the outcomes are the same either way.
"""

from __future__ import annotations

import types
from pathlib import Path

from patchjudge.boundary import standin
from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
class Bag:
    def __init__(self):
        self.xs = []

    def add(self, x):
        self.xs.append(x)
        return len(self.xs)

    def same(self, x):
        return x

    def fill(self, into, n):
        into.extend(range(n))

    def size(self):
        return len(self.xs)

    def div(self, n):
        return 1 / n

    @staticmethod
    def twice(x):
        return 2 * x


def twice(x):
    return 2 * x


answer = 42
"""

PROPERTIES = """
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

import mylib
from mylib import Bag
from patchjudge.boundary import standin


def asked(body):
    worker = standin._state.current()
    before = dict(worker.requests)
    body()
    return {k: n - before.get(k, 0) for k, n in worker.requests.items() if n != before.get(k, 0)}


def test_a_method_called_at_once_is_one_round_trip():
    b = mylib.Bag()
    assert asked(lambda: b.add(3)) == {"callmethod": 1}
    assert b.size() == 1 and b.xs == [3]


# CPython compiles `lib.f(x)` with LOAD_ATTR, not LOAD_METHOD, when an import bound `lib`.
def test_a_function_of_an_imported_module_is_one_round_trip():
    assert asked(lambda: mylib.twice(4)) == {"callmethod": 1}
    xs = [4]
    assert asked(lambda: list(mylib.twice(xs))) == {"callmethod": 1}
    assert asked(lambda: Bag.twice(5)) == {"callmethod": 1}
    assert mylib.twice(x=3) == 6


def test_a_failed_assert_shows_the_modules_function_as_bare():
    x = 2

    def body():
        assert mylib.twice(x) == 4

    assert asked(body) == {"callmethod": 1}
    with pytest.raises(AssertionError) as failed:
        assert mylib.twice(x) == 5
    assert "<function twice at " in str(failed.value)


def test_an_imported_modules_attribute_not_called_at_once_is_read():
    xs = [1, 2]
    assert asked(lambda: mylib.twice(len(xs))) == {"getattr": 1, "call": 1}
    assert asked(lambda: mylib.answer) == {"getattr": 1}


def test_a_missing_function_of_an_imported_module_raises_as_the_read_did():
    with pytest.raises(AttributeError) as read:
        getattr(mylib, "nope")
    with pytest.raises(AttributeError) as called:
        mylib.nope(1)
    assert str(called.value) == str(read.value)
    with pytest.raises(TypeError, match="'int' object is not callable"):
        mylib.answer(1)


def test_a_method_read_first_is_read_then_called():
    b = mylib.Bag()

    def body():
        add = b.add
        assert add(4) == 1

    assert asked(body) == {"getattr": 1, "call": 1}


def test_code_between_the_read_and_the_call_keeps_them_apart():
    b = mylib.Bag()
    xs = [1, 2]
    assert asked(lambda: b.add(len(xs))) == {"getattr": 1, "call": 1}


def test_a_missing_method_raises_as_the_read_did():
    b = mylib.Bag()
    with pytest.raises(AttributeError) as read:
        getattr(b, "nope")
    with pytest.raises(AttributeError) as called:
        b.nope(1)
    assert str(called.value) == str(read.value)


def test_an_attribute_that_is_no_callable_raises_as_before():
    b = mylib.Bag()
    with pytest.raises(TypeError, match="'list' object is not callable"):
        b.xs(1)


def test_an_argument_returned_is_the_judges_own_and_changes_come_back():
    b = mylib.Bag()
    xs = [1]
    assert b.same(xs) is xs
    ys = []
    b.fill(ys, 3)
    assert ys == [0, 1, 2]


# pytest's rewritten assert stores `b.size` in a temporary, then calls it (issue 17).
def test_an_asserted_method_call_is_one_round_trip():
    b = mylib.Bag()
    b.add(1)

    def body():
        assert b.size() == 1

    assert asked(body) == {"callmethod": 1}


def test_a_failed_assert_shows_the_method_it_stored_as_bare():
    b = mylib.Bag()
    with pytest.raises(AssertionError) as failed:
        assert b.size() == 5
    # The explanation's repr of the temporary is the worker's bound method, as bare.
    assert "bound method Bag.size of <mylib.Bag object" in str(failed.value)


def test_a_stored_method_raises_what_the_call_or_the_read_raised():
    b = mylib.Bag()
    with pytest.raises(ZeroDivisionError):
        assert b.div(0)
    with pytest.raises(AttributeError) as read:
        getattr(b, "nope")
    with pytest.raises(AttributeError) as called:
        assert b.nope()
    assert str(called.value) == str(read.value)


def test_a_stored_method_returns_the_argument_and_copies_changes_back():
    b = mylib.Bag()
    xs = [1]
    assert b.same(xs) is xs
    ys = []
    assert b.fill(ys, 3) is None
    assert ys == [0, 1, 2]


STEPS = []


class Machine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.bag = Bag()  # one `call` a run: the rules' calls are what is counted
        self.n = 0

    # Outside the asserts: pytest rewrites an assert's `a.f(x)` into a read, then a call.
    @rule(x=st.integers())
    def add(self, x):
        STEPS.append(1)
        self.n += 1
        got = self.bag.add(x)
        assert got == self.n

    @rule()
    def size(self):
        STEPS.append(1)
        got = self.bag.size()
        assert got == self.n


def run_machine():
    STEPS.clear()
    run_state_machine_as_test(
        Machine, settings=settings(max_examples=5, stateful_step_count=10, database=None,
                                   derandomize=True)
    )


def test_a_stateful_machine_asks_one_round_trip_a_rule():
    fused = asked(run_machine)
    steps = len(STEPS)
    original = standin.method_call
    standin.method_call = lambda frame, name: False
    try:
        apart = asked(run_machine)
    finally:
        standin.method_call = original
    # One method call a rule: one round trip for it, where there were two.
    assert fused["callmethod"] == steps and "callmethod" not in apart
    assert apart["getattr"] >= len(STEPS) and apart["call"] >= len(STEPS)
    print("FIGURE trips/step", sum(fused.values()) / steps, sum(apart.values()) / len(STEPS))
"""


def test_method_calls_are_fused_with_the_same_outcomes(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, LIBRARY)
    got = outcomes(proc)
    assert len(got) == 15 and set(got.values()) == {"PASSED"}, proc.stdout[-6000:]


def _code(source: str) -> types.CodeType:
    found = compile(source, "<t>", "exec").co_consts[0]
    assert isinstance(found, types.CodeType)
    return found


def test_only_a_read_that_is_called_before_any_code_runs_is_fused() -> None:
    def names(source: str) -> list[str]:
        return sorted(standin.method_calls(_code(source)).values())

    assert names("def f(h, x, y):\n    h.a(x, k=y)\n    h.b()\n") == ["a", "b"]
    assert names("def f(h, x):\n    g = h.a\n    g(x)\n") == []
    assert names("def f(h, x):\n    h.a(len(x))\n") == []
    assert names("def f(h, x):\n    h.a(x.y)\n") == []
    assert names("def f(h, x):\n    h.a(*x)\n") == []


def test_an_imported_names_attribute_is_fused_only_where_it_is_the_callee() -> None:
    def names(source: str) -> list[str]:
        code = next(
            c for c in compile(source, "<t>", "exec").co_consts if isinstance(c, types.CodeType)
        )
        return sorted(standin.method_calls(code).values())

    # `lib` bound by an import: LOAD_ATTR, a NULL under it (global or local).
    assert names("import lib\ndef f(x, y):\n    lib.a(x, k=y)\n    lib.b()\n") == ["a", "b"]
    assert names("def f(x):\n    import lib\n    lib.a(x)\n") == ["a"]
    assert names("import lib\ndef f(x):\n    list(lib.a(x))\n") == ["a"]
    # Passed, not called; read alone; code run between the read and the call.
    assert names("import lib\ndef f(x):\n    g(lib.a, x)\n") == []
    assert names("import lib\ndef f(x):\n    return (lib.a, x)\n") == []
    assert names("import lib\ndef f(x):\n    lib.a(len(x))\n") == []
    assert names("import lib\ndef f(x):\n    lib.a(x.y)\n") == []
    assert names("import lib\ndef f(x):\n    lib.a(*x)\n") == []


def _rewritten(source: str) -> types.CodeType:
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    tree = ast.parse(source)
    rewrite_asserts(tree, source.encode())
    found = next(c for c in compile(tree, "<t>", "exec").co_consts if isinstance(c, types.CodeType))
    return found


def test_only_a_rewritten_asserts_temporary_called_at_once_is_stored() -> None:
    def names(source: str, rewrite: bool = True) -> list[str]:
        code = _rewritten(source) if rewrite else _code(source)
        return sorted(standin.stored_method_calls(code).values())

    assert names("def f(h, x):\n    assert h.a(x) == h.b(k=x)\n") == ["a", "b"]
    # A temporary of the source's own is not pytest's: read, then called.
    assert names("def f(h, x):\n    g = h.a\n    g(x)\n", rewrite=False) == []
    # An attribute that is not called, or an argument that runs code first, is read alone.
    assert names("def f(h, x):\n    assert h.a == x\n") == []
    assert names("def f(h, x):\n    assert h.a(len(x))\n") == []
    assert names("def f(h, x):\n    assert h.a(x.y)\n") == []
