"""Nested calls, `f(g(x))`, asked of the worker in one round trip (issue 17).

btclib's `assert decompress_amount(compress_amount(i)) == i`, 280,000 times,
was two round trips each. The inner call's result goes straight to the
outer call where the judge runs nothing between them (boundary/nesting.py),
so the worker makes both (protocol.NEST). The same file bare and through a
real worker records the same and fails the same; the outer call gets the
inner call's own object, as bare; the counts are the judge's own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchjudge.boundary import nesting
from tests.unit.test_standin import outcomes, run_judge
from tests.unit.test_standin_batching import recorded, run_bare

LIBRARY = """
LOG = []
MADE = []


def ser(i):
    LOG.append(f"ser {i}")
    if i < 0:
        raise ValueError(f"negative: {i}")
    return i.to_bytes(8, "little")


def par(b):
    LOG.append(f"par {len(b)}")
    if len(b) != 8:
        raise ValueError(f"short: {len(b)}")
    return int.from_bytes(b, "little")


def bad(b):
    LOG.append("bad")
    return int.from_bytes(b, "little") + 1


def make():
    made = [1, 2]
    MADE.append(made)
    return made


def mine(x):
    return x is MADE[-1]


def done(x):
    raise StopIteration(x)


class Box:
    def __init__(self, v):
        self.v = v


def box(v):
    return Box(v)


def unbox(b):
    return b.v


def log():
    out = LOG[:]
    LOG.clear()
    return out
"""

OBSERVED = """
import json
import os

import pytest

import mylib
from mylib import bad, box, done, make, mine, par, ser, unbox


def record(name, obs):
    os.makedirs("obs", exist_ok=True)
    with open(f"obs/{name}.json", "w") as f:
        json.dump(obs, f)


def test_plain_and_rewritten():
    mylib.log()
    k = 3
    got = [par(ser(i)) for i in range(5)]
    x = par(ser(k * 7))
    for i in range(4):
        assert par(ser(i + 1)) == i + 1
    record("plain", [got, x, mylib.log()])


def test_a_chain_and_the_code_s_own_objects():
    mylib.log()
    chained = unbox(box(par(ser(9))))
    record("chain", [chained, mine(make()), mylib.log()])


def test_errors_at_their_calls():
    mylib.log()
    with pytest.raises(ValueError, match="negative: -1"):
        par(ser(-1))
    with pytest.raises(ValueError, match="short: 1"):
        par(mylib.log())
    record("errors", mylib.log())


def test_the_assert_shows_the_inner_result():
    assert bad(ser(5)) == 5


def test_an_error_of_the_outer_call_in_an_assert():
    assert par(mylib.log()) == 0
"""

# The judge's own counter, read by the property: round trips by kind.
COUNTED = """
import io

import mylib
from mylib import box, done, par, ser, unbox
from patchjudge.boundary import standin


def diff(before, after):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def test_a_nest_is_one_round_trip():
    worker = standin._state.current()
    logged = mylib.log()  # a call whose result is kept: made now, not with the next request
    before = dict(worker.requests)
    for i in range(10):
        assert par(ser(i)) == i
    y = unbox(box(par(ser(3))))
    assert diff(before, worker.requests) == {"nest": 11}


def test_a_stop_out_of_a_nest_is_a_stop_out_of_a_call():
    worker = standin._state.current()
    raised = []
    for nested in (True, False):
        before = dict(worker.requests)
        try:
            if nested:
                done(ser(2))
            else:
                x = ser(2)
                done(x)
        except RuntimeError as exc:
            raised.append((str(exc), type(exc.__cause__).__name__))
        kinds = diff(before, worker.requests)
        assert kinds == ({"nest": 1} if nested else {"call": 2}), kinds
    assert raised[0] == raised[1] == ("the code under test raised StopIteration out of a call", "StopIteration")


def test_what_is_not_nested():
    worker = standin._state.current()
    logged = mylib.log()  # a call whose result is kept: made now, not with the next request
    before = dict(worker.requests)
    xs = [1]
    assert par(io.BytesIO(ser(2)).read()) == 2  # the judge's code between
    assert par(ser(3) if xs else ser(4)) == 3  # a branch among the arguments
    assert par(ser(*xs)) == 1  # unpacked arguments
    got = diff(before, worker.requests)
    assert got == {"call": 6}, got
"""


def _errors(stdout: str) -> dict[str, str]:
    """Test name -> its failure's `E` lines."""
    found = {}
    for name, body in re.findall(
        r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} |\n={3,})", stdout, re.S
    ):
        found[name] = "\n".join(re.findall(r"^E +(.*)$", body, re.M))
    return found


def test_nested_calls_through_a_worker_observe_and_fail_as_bare(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    expected = {
        "test_plain_and_rewritten": "PASSED",
        "test_a_chain_and_the_code_s_own_objects": "PASSED",
        "test_errors_at_their_calls": "PASSED",
        "test_the_assert_shows_the_inner_result": "FAILED",
        "test_an_error_of_the_outer_call_in_an_assert": "FAILED",
    }
    for proc in (bare, oop):
        assert outcomes(proc) == expected, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert recorded(tmp_path / "oop" / "judge") == recorded(tmp_path / "bare" / "judge")
    # What the table pins, so that bare itself is the reference it should be: the order
    # of the calls, the outer call given the inner one's own list (`mine`).
    calls = [f"ser {i}" if j == 0 else "par 8" for i in range(5) for j in (0, 1)]
    assert recorded(tmp_path / "bare" / "judge") == {
        "plain": [
            [0, 1, 2, 3, 4],
            21,
            [*calls, "ser 21", "par 8", *(e for i in range(1, 5) for e in (f"ser {i}", "par 8"))],
        ],
        "chain": [9, True, ["ser 9", "par 8"]],
        "errors": ["par 1"],
    }
    errors = _errors(oop.stdout)
    assert errors == _errors(bare.stdout)
    assert (
        "where b'\\x05\\x00\\x00\\x00\\x00\\x00\\x00\\x00' = ser(5)"
        in errors["test_the_assert_shows_the_inner_result"]
    )
    assert errors["test_an_error_of_the_outer_call_in_an_assert"].endswith("ValueError: short: 2")


def test_a_nest_is_one_round_trip_and_only_where_nothing_runs_between(
    tmp_path: Path,
) -> None:
    proc = run_judge(tmp_path, {"test_counted.py": COUNTED}, LIBRARY)
    assert outcomes(proc) == {
        "test_a_nest_is_one_round_trip": "PASSED",
        "test_a_stop_out_of_a_nest_is_a_stop_out_of_a_call": "PASSED",
        "test_what_is_not_nested": "PASSED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]


def _table(source: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """The nests of `source`'s function `t` as the inner callee's name -> outer names."""
    namespace: dict[str, object] = {}
    exec(compile(source, "<t>", "exec"), namespace)
    code = namespace["t"].__code__  # type: ignore[attr-defined]
    return {
        f"{site.inner[1]}{'+late' if site.late else ''}{list(site.scalars) or ''}": site.outers
        for site in nesting.nested_calls(code).values()
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def t(x):\n    return f(g(x))", {"g": (("global", "f"),)}),
        ("def t(x):\n    return h(f(g(x)))", {"g": (("global", "f"), ("global", "h"))}),
        ("def t(x, f):\n    return f(g(x, 1))", {"g": (("fast", "f"),)}),
        ("def t(x, k):\n    return f(g(x * k))", {"g['k', 'x']": (("global", "f"),)}),
        ("def t(x):\n    return f(g(x * K))", {}),  # an operator on a global
        ("def t(x):\n    return f(g(x.y))", {}),  # an attribute read runs code
        ("def t(x):\n    return f(g(x=x))", {}),  # keywords
        ("def t(x):\n    return f(g(x), 1)", {}),  # not the only argument
        ("def t(x):\n    return m.f(g(x))", {}),  # a method's attribute read
        ("def t(x):\n    return f(g(h(x)))", {"h": (("global", "g"), ("global", "f"))}),
        ("def t(x):\n    return f(g(x)[0])", {}),
        # pytest's rewrite: the temporary stored, then the outer callee loaded, then called.
        ("def t(x):\n    _ = 0\n    v = g(x)\n    return f(v)", {}),  # a name of the source
    ],
)
def test_which_calls_are_nested(source: str, expected: dict[str, object]) -> None:
    assert _table(source) == expected


def test_pytests_rewrite_is_nested_late() -> None:
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    source = "def t(i):\n    assert f(g(i)) == i\n    assert f(g(i * 2)) == i\n"
    tree = ast.parse(source)
    rewrite_asserts(tree, source.encode(), "t.py", None)
    namespace: dict[str, object] = {}
    exec(compile(tree, "<t>", "exec"), namespace)
    sites = nesting.nested_calls(namespace["t"].__code__)  # type: ignore[attr-defined]
    assert [(s.inner, s.outers, s.late) for s in sites.values()] == [
        (("global", "g"), (("global", "f"),), True),
        (("global", "g"), (("global", "f"),), True),
    ]
