"""Counted loops: `next(it)` calls whose number is known, answered in batches (issue 20).

`[next(tree) for _ in range(n)]` and `for i in range(n): assert next(p) == ...`
make a number of `next` calls the judge can read from the frame before the
first, with nothing between them that can observe the code (loops.py). Each
case runs the same file bare (the library in process) and through a real
worker: what the tests record, their outcomes, their errors and hypothesis'
failing example must be the same. A worker that lies in a batch fails closed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import textwrap
import types
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import rewrite_asserts

from patchjudge.boundary import loops
from tests.unit.test_standin import outcomes, run_judge
from tests.unit.test_standin_batching import recorded, run_bare

LIBRARY = """
import sys

LOG = []


class Ticker:
    \"\"\"An iterator of the code's: each step counted on the object and logged.\"\"\"

    def __init__(self, fail_at=None, objects_every=0, lie=None):
        self.steps, self.fail_at, self.every, self.lie = 0, fail_at, objects_every, lie

    def __iter__(self):
        return self

    def __next__(self):
        n = self.steps
        self.steps += 1
        LOG.append(f"step {n}")
        if n == self.fail_at:
            raise ValueError(f"at {n}")
        if self.lie is not None:
            lie(self.lie, sys._getframe(1))
        if self.every and n % self.every == self.every - 1:
            return Item(self, n)
        return n


class Item:
    def __init__(self, owner, n):
        self.owner, self.n = owner, n

    def __eq__(self, other):
        LOG.append(f"eq {self.n} after {self.owner.steps} steps")
        return other is self

    __hash__ = None


def lie(how, batch):
    # The batch's own frame (worker.answer_batch): its connection and call id, reached
    # from inside, as code that took over the worker would.
    if "limit" not in batch.f_locals:  # a step asked alone, not in a batch
        return
    conn, ident = batch.f_locals["self"], batch.f_locals["ident"]
    if how == "more":
        for _ in range(10):
            conn.send(("its", ident, 0))
    elif how == "past":
        conn.send(("its", ident, Item(None, -1)))
    elif how == "after":
        conn.reply_error(ident, ValueError("forged"))


def ticker(fail_at=None, objects_every=0, lie=None):
    return Ticker(fail_at, objects_every, lie)


SHARED = Ticker()


def note(x):
    LOG.append(f"note {x}")


def log():
    return list(LOG)
"""

# Each test records what it saw: bare and out of process must record the same.
OBSERVED = """
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import mylib


def record(name, obs):
    Path("obs").mkdir(exist_ok=True)
    Path("obs", name + ".json").write_text(json.dumps(obs))


def test_a_comprehension_takes_exactly_its_count():
    t = mylib.ticker()
    xs = [next(t) for _ in range(300)]
    ys = [next(t) for _ in range(0, 10, 3)]
    record("comprehension", [xs[-1], ys, t.steps])


def test_a_loop_with_an_assert_takes_exactly_its_count():
    t = mylib.ticker()
    n = 100
    for i in range(n * 3):
        assert next(t) == i, i
    record("loop", [t.steps])


def test_two_steps_a_round_beside_a_judge_iterator():
    t = mylib.ticker()
    pattern = itertools.cycle([1, 3])
    expected = list(range(40))
    for i in range(1, len(expected), 2):
        assert next(t) + next(pattern) == next(t) + (i % 4 == 3) * 2, i
    record("pairs", [t.steps])


def test_an_error_part_way_is_raised_at_its_item():
    t = mylib.ticker(fail_at=7)
    start = len(mylib.log())
    with pytest.raises(ValueError, match="at 7"):
        [next(t) for _ in range(20)]
    record("raises", [t.steps, mylib.log()[start:]])


def test_the_code_objects_are_compared_where_they_come():
    t = mylib.ticker(objects_every=3)
    start = len(mylib.log())
    for i in range(9):
        x = next(t)
        assert x == x
    record("objects", mylib.log()[start:])


def test_a_call_between_steps_keeps_them_one_at_a_time():
    t = mylib.ticker()
    start = len(mylib.log())
    for i in range(4):
        assert next(t) == i
        mylib.note(i)
    record("interleaved", mylib.log()[start:])


def test_a_loop_left_by_break():
    t = mylib.ticker()
    for i in range(50):
        if next(t) == 3:
            break
    record("break", [t.steps])


def helper(t):
    for i in range(50):
        assert next(t) < 5


def test_a_helper_whose_loop_fails_is_caught():
    t = mylib.ticker()
    with pytest.raises(AssertionError):
        helper(t)
    record("helper", [t.steps])


def test_a_failing_loop_inside_a_with():
    t = mylib.ticker()
    with pytest.raises(AssertionError):
        for i in range(50):
            assert next(t) < 5
    record("guarded", [t.steps])


def test_a_failing_loop_fails_at_its_item():
    t = mylib.ticker()
    for i in range(50):
        assert next(t) < 5, f"item {i}"


@pytest.mark.xfail(strict=True)
def test_an_xfail_loop():
    s = mylib.SHARED
    for i in range(50):
        assert next(s) < 5


def test_after_the_xfail():
    record("shared", [mylib.SHARED.steps])


@settings(max_examples=100, database=None)
@given(st.integers(0, 60))
def test_a_property_fails_at_the_same_example(n):
    t = mylib.ticker()
    for i in range(n):
        assert next(t) != 17, i
"""

# The judge's own counter: round trips by kind.
COUNTED = """
import pytest

import mylib
from patchjudge.boundary import standin


def diff(before, after):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def test_a_comprehension_is_batches():
    worker = standin._state.current()
    t = mylib.ticker()
    before = dict(worker.requests)
    xs = [next(t) for _ in range(300)]
    assert diff(before, worker.requests) == {"batch": 2}


def test_a_loop_in_the_test_is_batches():
    worker = standin._state.current()
    t = mylib.ticker()
    before = dict(worker.requests)
    for i in range(600):
        assert next(t) == i, i
    assert diff(before, worker.requests) == {"batch": 3}


def test_objects_end_a_batch():
    worker = standin._state.current()
    t = mylib.ticker(objects_every=100)
    before = dict(worker.requests)
    xs = [next(t) for _ in range(300)]
    assert diff(before, worker.requests) == {"batch": 3}  # 0-99, 100-199, 200-299


def test_a_loop_over_a_list_steps_one_at_a_time():
    worker = standin._state.current()
    t = mylib.ticker()
    weights = [1, 2, 3]
    before = dict(worker.requests)
    for _ in weights:
        next(t)
    assert diff(before, worker.requests) == {"next": 3}


SEEN = {}


@pytest.mark.xfail(strict=True)
def test_an_xfail_loop_steps_one_at_a_time():
    worker = standin._state.current()
    t = mylib.ticker()
    before = dict(worker.requests)
    for i in range(3):
        assert next(t) == i
    SEEN["xfail"] = diff(before, worker.requests)
    assert False


def test_the_xfail_loop_stepped_one_at_a_time():
    assert SEEN == {"xfail": {"next": 3}}


def test_a_sentinel_the_worker_holds_keeps_the_batches():
    worker = standin._state.current()
    t = mylib.ticker()
    mylib.note(object())  # a parametrize value passed on (priority's): no judge code
    before = dict(worker.requests)
    xs = [next(t) for _ in range(3)]
    assert diff(before, worker.requests) == {"batch": 1}


def test_a_worker_with_a_judge_function_steps_one_at_a_time():
    worker = standin._state.current()
    t = mylib.ticker()
    mylib.note(lambda: None)  # the worker now holds a judge function: a step could call it
    before = dict(worker.requests)
    xs = [next(t) for _ in range(3)]
    assert diff(before, worker.requests) == {"next": 3}
"""

LIARS = {
    "test_more.py": """
import mylib


def test_more_items_than_asked():
    t = mylib.ticker(lie="more")
    assert [next(t) for _ in range(5)] == [0, 1, 2, 3, 4]
""",
    "test_past.py": """
import mylib


def test_items_past_an_object():
    t = mylib.ticker(lie="past")
    assert [next(t) for _ in range(5)]
""",
    "test_after.py": """
import pytest
import mylib


def test_items_after_an_error():
    t = mylib.ticker(lie="after")
    with pytest.raises(ValueError, match="forged"):
        [next(t) for _ in range(5)]
    mylib.note("after")
""",
    "test_zhonest.py": """
import mylib


def test_an_honest_counted_batch():
    t = mylib.ticker()
    assert [next(t) for _ in range(5)] == [0, 1, 2, 3, 4]
""",
}


def _errors(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Test name -> the last error line (`E   Type: message`) of its failure's report."""
    found = {}
    for name, body in re.findall(
        r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} |\n={3,})", proc.stdout, re.S
    ):
        errors = re.findall(r"^E +(\w+(?:Error|Exception|Iteration)\b.*)$", body, re.M)
        found[name] = errors[-1] if errors else ""
    return found


def test_counted_loops_observe_and_fail_as_bare(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    expected = {
        "test_a_comprehension_takes_exactly_its_count": "PASSED",
        "test_a_loop_with_an_assert_takes_exactly_its_count": "PASSED",
        "test_two_steps_a_round_beside_a_judge_iterator": "PASSED",
        "test_an_error_part_way_is_raised_at_its_item": "PASSED",
        "test_the_code_objects_are_compared_where_they_come": "PASSED",
        "test_a_call_between_steps_keeps_them_one_at_a_time": "PASSED",
        "test_a_loop_left_by_break": "PASSED",
        "test_a_helper_whose_loop_fails_is_caught": "PASSED",
        "test_a_failing_loop_inside_a_with": "PASSED",
        "test_a_failing_loop_fails_at_its_item": "FAILED",
        "test_after_the_xfail": "PASSED",
        "test_a_property_fails_at_the_same_example": "FAILED",
    }
    for proc in (bare, oop):
        assert outcomes(proc) == expected, proc.stdout[-6000:] + proc.stderr[-3000:]
        assert "1 xfailed" in proc.stdout
    assert recorded(tmp_path / "oop" / "judge") == recorded(tmp_path / "bare" / "judge")
    # What the table pins, so that bare itself is the reference it should be.
    assert recorded(tmp_path / "bare" / "judge") == {
        "comprehension": [299, [300, 301, 302, 303], 304],
        "loop": [300],
        "pairs": [40],
        "raises": [8, [f"step {i}" for i in range(8)]],
        "objects": [
            *(f"step {i}" for i in range(3)),
            "eq 2 after 3 steps",
            *(f"step {i}" for i in range(3, 6)),
            "eq 5 after 6 steps",
            *(f"step {i}" for i in range(6, 9)),
            "eq 8 after 9 steps",
        ],
        "interleaved": [f"{w} {i}" for i in range(4) for w in ("step", "note")],
        "break": [4],
        "helper": [6],
        "guarded": [6],
        "shared": [6],
    }
    assert _errors(oop) == _errors(bare)
    assert _errors(bare)["test_a_failing_loop_fails_at_its_item"] == "AssertionError: item 5"
    falsifying = [re.findall(r"^E +(n=.*)$", p.stdout, re.M) for p in (bare, oop)]
    assert falsifying[0] == falsifying[1] == ["n=18,"]


def test_counted_loops_are_batches_and_the_rest_one_at_a_time(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, COUNTED, LIBRARY)
    assert outcomes(proc) == {
        "test_a_comprehension_is_batches": "PASSED",
        "test_a_loop_in_the_test_is_batches": "PASSED",
        "test_objects_end_a_batch": "PASSED",
        "test_a_loop_over_a_list_steps_one_at_a_time": "PASSED",
        "test_the_xfail_loop_stepped_one_at_a_time": "PASSED",
        "test_a_sentinel_the_worker_holds_keeps_the_batches": "PASSED",
        "test_a_worker_with_a_judge_function_steps_one_at_a_time": "PASSED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "1 xfailed" in proc.stdout


def test_a_worker_that_lies_in_a_counted_batch_fails_closed(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, LIARS, LIBRARY)
    assert outcomes(proc) == {
        "test_more_items_than_asked": "FAILED",
        "test_items_past_an_object": "FAILED",
        "test_items_after_an_error": "FAILED",
        "test_an_honest_counted_batch": "PASSED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]
    sections = dict(
        re.findall(r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} |\n={3,})", proc.stdout, re.S)
    )
    assert "broke the protocol: a batch larger than asked" in sections["test_more_items_than_asked"]
    assert "past an item that is not data" in sections["test_items_past_an_object"]
    assert "broke the protocol: items for a call" in sections["test_items_after_an_error"]


# --- the bytecode table (loops.counted_nexts) ---------------------------------------------


def _code(source: str, rewrite: bool = False) -> types.CodeType:
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    if rewrite:
        rewrite_asserts(tree, text.encode(), "<case>", None)
    namespace: dict[str, object] = {}
    exec(compile(tree, "<case>", "exec"), namespace)
    fn = namespace["f"]
    assert isinstance(fn, types.FunctionType)
    return fn.__code__


def _sites(code: types.CodeType) -> list[tuple[str, bool, int, bool, bool]]:
    """(target name, comprehension, per iteration, fails, guarded) of every counted next,
    in `code` and the comprehensions it makes."""
    sites = {id(s): s for _, s in sorted(loops.counted_nexts(code).items())}
    found = [
        (s.target[1], s.comprehension, s.per_iteration, s.fails, s.guarded) for s in sites.values()
    ]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _sites(const)
    return found


@pytest.mark.parametrize(
    ("source", "sites"),
    [
        ("def f(t, n):\n    return [next(t) for _ in range(n)]\n", [("t", True, 1, False, False)]),
        ("def f(t, n):\n    return {next(t) for _ in range(n)}\n", [("t", True, 1, False, False)]),
        (
            "def f(t, n):\n    for _ in range(n):\n        next(t)\n",
            [("t", False, 1, False, False)],
        ),
        (
            "def f(t, xs):\n    for i in range(1, len(xs) * 2, 3):\n        assert next(t) == i\n",
            [("t", False, 1, True, False)],
        ),
        (
            "def f(t, n):\n    for i in range(n):\n        assert next(t) < next(t), i\n",
            [("t", False, 2, True, False), ("t", False, 2, True, False)],
        ),
        (
            "def f(t, n):\n    try:\n        for i in range(n):\n            next(t)\n"
            "    except E:\n        pass\n",
            [("t", False, 1, False, True)],
        ),
        # one at a time: the count is not known, or something between steps could observe
        ("def f(t, xs):\n    for _ in xs:\n        next(t)\n", []),
        ("def f(t, n):\n    return list(next(t) for _ in range(n))\n", []),  # a generator
        ("def f(t, n):\n    for i in range(n):\n        g(next(t))\n", []),  # another call
        ("def f(t, n):\n    for i in range(n):\n        if next(t):\n            break\n", []),
        ("def f(t, n):\n    for i in range(n):\n        t.x = next(t)\n", []),
        ("def f(t, n):\n    for i in range(n):\n        next(t)\n        i = 0\n", []),
        ("def f(t, n):\n    for i in range(n):\n        next(t)\n        n = 0\n", []),
        ("def f(t, n):\n    for i in range(g(n)):\n        next(t)\n", []),
        ("def f(t, n):\n    for i in range(n):\n        next(t.it)\n", []),
        # the inner loop is counted, from where it is each time round the outer one
        (
            "def f(t, n):\n    for i in range(n):\n        for j in range(n):\n            next(t)\n",
            [("t", False, 1, False, False)],
        ),
        ("def f(t, n):\n    for i in range(n):\n        yield next(t)\n", []),
    ],
)
def test_which_loops_are_counted(
    source: str, sites: list[tuple[str, bool, int, bool, bool]]
) -> None:
    assert _sites(_code(source)) == sites


def test_pytest_rewritten_asserts_are_counted() -> None:
    code = _code(
        "import itertools\n"
        "def f(p, n):\n    pattern = itertools.cycle([1])\n"
        "    for i in range(n * 20):\n        assert next(p) == next(pattern), i\n",
        rewrite=True,
    )
    found = loops.counted_nexts(code)
    assert {(s.target, s.fails, s.others) for s in found.values()} == {
        (("fast", "p"), True, (("fast", "pattern"),)),
        (("fast", "pattern"), True, (("fast", "p"),)),
    }
