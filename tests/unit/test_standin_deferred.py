"""Calls whose results nobody reads, sent with the next request (issues 17 and 20).

A test function's statement `t.insert(x)` waits in the judge (Worker.defer)
and goes with the next thing the worker is asked, or before the frame runs
anything else, in one SEQ round trip. Each case below runs the same file bare
(the library in process) and through a real worker: what the tests record,
their outcomes and their errors' type and message must be the same.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
import types
from pathlib import Path

import pytest

from patchjudge.boundary import standin
from tests.unit.test_standin import outcomes, run_judge
from tests.unit.test_standin_batching import recorded, run_bare

LIBRARY = """
LOG = []


class Tree:
    def __init__(self):
        self.items = []

    def insert(self, x, where=None):
        if x == "bad":
            raise ValueError(f"bad item after {len(self.items)}")
        if x == "stop":
            raise StopIteration
        self.items.append(x)
        LOG.append(x)

    def size(self):
        return len(self.items)


def note(x):
    LOG.append(f"note {x}")


def log():
    return list(LOG)


class Store:
    def __init__(self, data):
        self.data = data  # kept: a linked container out of process
        self.snaps = []

    def snap(self):
        self.snaps.append(sorted(self.data))
"""

OBSERVED = """
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import mylib


def record(name, obs):
    Path("obs").mkdir(exist_ok=True)
    Path("obs", name + ".json").write_text(json.dumps(obs))


def test_each_discarded_call_is_seen_by_the_next_request():
    t = mylib.Tree()
    for i in range(300):
        t.insert(i)
    mylib.note("after")
    t.insert(-1, where=(1, "x"))
    record("seen", [t.size(), mylib.log()[-4:]])


def test_an_error_inside_raises_is_raised_at_its_call():
    t = mylib.Tree()
    t.insert(1)
    with pytest.raises(ValueError, match="after 1"):
        t.insert("bad")
    t.insert(2)
    record("raises", t.size())


def test_a_discarded_error_stops_the_test_where_it_was_raised():
    t = mylib.Tree()
    t.insert(1)
    t.insert("bad")
    t.insert(2)
    record("after_bad", [t.size()])


def test_a_discarded_error_comes_before_a_later_raise():
    t = mylib.Tree()
    t.insert(1)
    t.insert("bad")
    raise KeyError("later")


def test_a_discarded_error_comes_before_a_later_local_call():
    t = mylib.Tree()
    t.insert("bad")
    record("local_call", [1])


def test_a_discarded_error_at_the_end_of_the_test():
    t = mylib.Tree()
    t.insert(1)
    t.insert("bad")


def test_a_call_sees_a_kept_container_as_it_was_when_called():
    d = {"a": 1}
    s = mylib.Store(d)
    s.snap()  # out of process d is linked: this call may not wait past a change to d
    d |= {"k": 2}  # an in-place operator: a store to a local, no call the profile sees
    s.snap()
    record("linked", s.snaps)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(0, 200)))
def test_a_property_fails_at_the_example_that_raised(xs):
    t = mylib.Tree()
    for x in xs:
        t.insert("bad" if x > 150 else x)
    assert t.size() == len(xs)
"""

# Out of process only: a StopIteration out of a call is a RuntimeError there (PEP 479's rule),
# kept or not; the counts are the judge's own.
OUT_ONLY = """
import mylib
from patchjudge.boundary import standin


def helper(t):
    t.insert("stop")


def counts(worker):
    return dict(worker.requests)  # a call of the judge's: the waiting calls are sent first


def diff(before, after):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def test_stop_sent_at_once():
    helper(mylib.Tree())


def test_stop_kept():
    t = mylib.Tree()
    t.insert("stop")


def test_kept_calls_go_in_one_round_trip_each_256():
    t = mylib.Tree()
    worker = standin._state.current()
    before = counts(worker)
    for i in range(300):
        t.insert(i)
    after = counts(worker)  # (a closure over `before` here: no call would wait)
    assert diff(before, after) == {"seq": 2}
    assert t.size() == 300


def test_no_call_waits_in_a_test_with_a_try():
    t = mylib.Tree()
    worker = standin._state.current()
    before = counts(worker)
    t.insert(1)
    t.insert(2)
    try:
        pass
    finally:
        pass
    assert diff(before, counts(worker)) == {"callmethod": 2}
"""


def _errors(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Test name -> the last error line (`E   Type: message`) of its failure's report."""
    found = {}
    for name, body in re.findall(
        r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} |\n={3,})", proc.stdout, re.S
    ):
        errors = re.findall(r"^E +(\w+(?:Error|Exception|Iteration)\b.*)$", body, re.M)
        found[name] = errors[-1] if errors else ""
    return found


def _falsifying(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return re.findall(r"^E +(xs=.*)$", proc.stdout, re.M)  # hypothesis' failing case


def test_discarded_calls_sent_late_observe_and_fail_as_bare(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    expected = {
        "test_each_discarded_call_is_seen_by_the_next_request": "PASSED",
        "test_an_error_inside_raises_is_raised_at_its_call": "PASSED",
        "test_a_discarded_error_stops_the_test_where_it_was_raised": "FAILED",
        "test_a_discarded_error_comes_before_a_later_raise": "FAILED",
        "test_a_discarded_error_comes_before_a_later_local_call": "FAILED",
        "test_a_discarded_error_at_the_end_of_the_test": "FAILED",
        "test_a_call_sees_a_kept_container_as_it_was_when_called": "PASSED",
        "test_a_property_fails_at_the_example_that_raised": "FAILED",
    }
    for proc in (bare, oop):
        assert outcomes(proc) == expected, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert recorded(tmp_path / "oop" / "judge") == recorded(tmp_path / "bare" / "judge")
    assert recorded(tmp_path / "bare" / "judge") == {
        "linked": [["a"], ["a", "k"]],
        "raises": 2,
        "seen": [301, [298, 299, "note after", -1]],
    }
    assert _errors(oop) == _errors(bare)
    assert set(_errors(bare).values()) == {
        "ValueError: bad item after 1",
        "ValueError: bad item after 0",
    }
    assert _falsifying(oop) == _falsifying(bare) == ["xs=[151],"]


def test_kept_calls_raise_as_calls_sent_at_once(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, OUT_ONLY, LIBRARY)
    assert outcomes(proc) == {
        "test_stop_sent_at_once": "FAILED",
        "test_stop_kept": "FAILED",
        "test_kept_calls_go_in_one_round_trip_each_256": "PASSED",
        "test_no_call_waits_in_a_test_with_a_try": "PASSED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]
    errors = _errors(proc)
    assert errors["test_stop_kept"] == errors["test_stop_sent_at_once"]
    assert "StopIteration out of a method call" in errors["test_stop_kept"]


def _code(source: str) -> types.CodeType:
    namespace: dict[str, object] = {}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    fn = namespace["f"]
    assert isinstance(fn, types.FunctionType)
    return fn.__code__


@pytest.mark.parametrize(
    ("source", "kept"),
    [
        ("def f(t):\n    t.insert(1)\n    t.insert(2)\n", 2),
        ("def f(t):\n    for x in range(3):\n        t.insert(x)\n", 1),
        ("def f(t):\n    y = t.insert(1)\n", 0),  # its result is read
        # the with's own `__exit__(None, None, None)` is one too (a handle's is never kept)
        ("def f(t, r):\n    t.insert(1)\n    with r():\n        t.insert(2)\n", 2),
        ("def f(t, r):\n    with r:\n        t.insert(2)\n", 0),  # entered with no call
        ("def f(t):\n    t.insert(1)\n    try:\n        pass\n    finally:\n        pass\n", 0),
        ("def f(t):\n    t.insert(1)\n    try:\n        pass\n    except E:\n        pass\n", 0),
        ("def f(t):\n    t.insert(1)\n    t.x = 1\n", 0),  # a store the caller could see
        ("def f(t, d):\n    t.insert(1)\n    d[0] = 1\n", 0),
        ("def f(t):\n    global G\n    t.insert(1)\n    G = 1\n", 0),
        ("def f(t):\n    t.insert(1)\n    return lambda: t\n", 0),  # a cell
        ("def f(t):\n    t.insert(1)\n    yield\n", 0),  # a generator
    ],
)
def test_which_calls_may_wait(source: str, kept: int) -> None:
    assert len(standin.discarded_calls(_code(source))) == kept
