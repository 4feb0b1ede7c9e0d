"""Fewer round trips, same observations: iteration of worker iterators (issue 20).

Each case is a property that records what it saw; the same file runs bare
(the library imported in process) and through a real worker, and the
records must be equal. The counts are read from the judge's own counter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from patchjudge import testrun
from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
import functools
import itertools

LOG = []


def gen(n, fail_at=None):
    for i in range(n):
        LOG.append(f"step {i}")
        if i == fail_at:
            raise ValueError(f"at {i}")
        yield i


def log():
    return list(LOG)


def note(x):
    LOG.append(f"note {x}")


def mapped(f, xs):
    for x in xs:
        LOG.append(f"map {x}")
        yield f(x)


def take(n, it):
    LOG.append("take")
    return list(itertools.islice(it, n))


def chunked(xs, n):
    return iter(functools.partial(take, n, iter(xs)), [])


class Bag:
    def __init__(self, xs):
        self.xs = list(xs)

    def __iter__(self):
        LOG.append("iter")
        return iter(self.xs)

    def add(self, x):
        self.xs.append(x)

    def each(self):
        for x in self.xs:
            LOG.append(f"each {x}")
            yield x


def bag(xs):
    return Bag(xs)


def same(it):
    LOG.append("same")
    return it


def boom():
    raise KeyError("no iterator")


class Temp:
    def __del__(self):
        LOG.append("del")


def _logged(i):
    LOG.append(f"s{i}")
    return i


def steps(ts):
    return map(_logged, range(2))  # holds none of `ts`: freed when the call returns
"""

# Each test records its observations: bare and out of process must record the same.
OBSERVED = """
import json
from pathlib import Path

import mylib


def record(name, obs):
    Path("obs").mkdir(exist_ok=True)
    Path("obs", name + ".json").write_text(json.dumps(obs))


def test_interleaved_with_other_calls():
    g = mylib.gen(5)
    obs = [next(g), mylib.log(), next(g)]
    mylib.note("x")
    obs += [next(g), mylib.log()]
    record("interleaved", obs)


def test_drained_then_read():
    record("drained", [list(mylib.gen(4)), mylib.log()])


def test_stopped_early():
    g = mylib.gen(10)
    obs = [next(g), next(g), mylib.log()]
    for x in g:
        if x == 4:
            break
    record("early", [*obs, mylib.log()])


def test_drain_raises_at_its_item():
    out = []
    try:
        out.extend(mylib.gen(6, fail_at=3))
    except ValueError as exc:
        out.append(str(exc))
    record("raises_drained", [out, mylib.log()])


def test_next_raises_at_its_item():
    g = mylib.gen(6, fail_at=2)
    obs = [next(g), next(g)]
    try:
        next(g)
    except ValueError as exc:
        obs.append(str(exc))
    obs.append(next(g, "done"))
    record("raises_next", [obs, mylib.log()])


def test_callbacks_keep_their_order():
    seen = []

    def double(x):
        seen.append(x)
        return 2 * x

    it = mylib.mapped(double, [1, 2, 3])
    obs = [next(it), list(seen), list(it), list(seen), next(it, "done")]
    record("callbacks", [obs, mylib.log()])


def test_judge_verdict_ends_a_drain_where_it_was_raised():
    seen = []

    def small(x):
        seen.append(x)
        assert x < 2
        return x

    try:
        tuple(mylib.mapped(small, [0, 1, 2, 3]))
    except AssertionError:
        seen.append("assert")
    record("verdict", [seen, mylib.log()])


def test_consumers_that_drain():
    obs = [
        tuple(mylib.gen(3)), sorted(mylib.gen(3), reverse=True), [*mylib.gen(2)],
        "".join(map(str, mylib.gen(3))), list(bytes(mylib.gen(3))), max(mylib.gen(3)),
        list(mylib.chunked([1, 2, 3, 4, 5], 2)), list(iter(mylib.bag([7, 8]))),
    ]
    record("consumers", [obs, mylib.log()])


def test_container_changed_between_steps():
    b = mylib.bag([1, 2])
    it = iter(b)
    obs = [next(it)]
    b.add(3)
    obs += [list(it), mylib.log()]
    record("changed", obs)


def test_drained_on_the_calls_reply():
    import sys
    from mylib import gen

    def line():  # the property's own line in the traceback of what was raised
        tb = sys.exc_info()[2]
        return tb.tb_lineno - tb.tb_frame.f_code.co_firstlineno

    obs = [list(gen(4)), tuple(gen(0)), sorted(gen(3)), len(list(gen(300))), mylib.log()[-3:]]
    for fail_at in (3, 0):
        try:
            list(
                gen(6, fail_at=fail_at)
            )
        except ValueError as exc:
            obs += [str(exc), line(), mylib.log()[-2:]]
    try:
        list(mylib.boom())
    except KeyError as exc:
        obs += [str(exc), line()]
    seen = []

    def double(x):
        seen.append([x, mylib.log()[-1]])
        return 2 * x

    obs += [list(mylib.mapped(double, [1, 2, 3])), seen, mylib.log()[-6:]]
    b = mylib.bag([5, 6])
    obs += [list(b.each()), list(mylib.log()), list(mylib.bag([7])), mylib.log()[-2:]]
    g = gen(4)
    obs += [next(g), list(mylib.same(g)), mylib.log()[-4:]]
    # An object of the code's that only the call held: its finalizer runs before the steps.
    obs += [list(mylib.steps([mylib.Temp()])), mylib.log()[-3:]]
    assert list(gen(3)) == [0, 1, 2]
    record("on_call", obs)


def test_iter_and_len_of_an_iterator():
    g = mylib.gen(2)
    obs = [iter(g) is g]
    try:
        len(g)
    except TypeError as exc:
        obs.append(str(exc))
    record("iter_len", obs)
"""


def run_bare(tmp_path: Path, properties: str, library: str) -> subprocess.CompletedProcess[str]:
    """The same property file with the library imported in process: the reference."""
    judge, src = tmp_path / "judge", tmp_path / "tree" / "src"
    (src / "mylib").mkdir(parents=True)
    (src / "mylib" / "__init__.py").write_text(library)
    judge.mkdir()
    (judge / "test_props.py").write_text(textwrap.dedent(properties))
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(src)}
    return subprocess.run(
        [sys.executable, "-B", "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q",
         "-o", "addopts=", "-c", os.devnull, "--rootdir", str(judge), "test_props.py"],
        cwd=judge, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def recorded(judge: Path) -> dict[str, object]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((judge / "obs").glob("*.json"))}


def test_iteration_through_a_worker_observes_what_bare_does(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    for proc in (bare, oop):
        got = outcomes(proc)
        assert len(got) == 11 and set(got.values()) == {"PASSED"}, proc.stdout[-6000:]
    expected = recorded(tmp_path / "bare" / "judge")
    assert len(expected) == 11
    assert recorded(tmp_path / "oop" / "judge") == expected
    # What the table pins, so that bare itself is the reference it should be.
    # (the library's log is the module's, kept across the tests: its tail is each test's)
    out, log = expected["raises_drained"]  # type: ignore[misc]
    assert out == [0, 1, 2, "at 3"] and log[-5:] == ["step 4", *(f"step {i}" for i in range(4))]
    assert expected["early"][-1][-6:] == ["step 3", *(f"step {i}" for i in range(5))]  # type: ignore[index]
    assert expected["changed"][:2] == [1, [2, 3]]
    on_call = expected["on_call"]
    assert on_call[5:8] == ["at 3", 11, ["step 2", "step 3"]]  # type: ignore[index]
    assert on_call[8:11] == ["at 0", 11, ["step 3", "step 0"]]  # type: ignore[index]
    assert on_call[11:13] == ["'no iterator'", 17] and on_call[15][-1] == "map 3"  # type: ignore[index]
    assert on_call[-2:] == [[0, 1], ["del", "s0", "s1"]]


# The judge's own counter, read by the property: round trips by kind.
COUNTED = """
import operator

import pytest
import mylib
from patchjudge.boundary import standin


def asked(body):
    worker = standin._state.current()
    before = dict(worker.requests)
    body()
    return {k: n - before.get(k, 0) for k, n in worker.requests.items() if n != before.get(k, 0)}


def test_list_of_an_iterator_asks_no_len_and_fetches_ahead():
    g = mylib.gen(10)
    assert asked(lambda: list(g)) == {"batch": 1}
    assert asked(lambda: list(g)) == {"batch": 1}  # exhausted: the StopIteration comes back


def test_a_long_drain_is_bounded_batches():
    # The first 256 items come with the call's reply (drained_calls), the rest in batches.
    assert asked(lambda: list(mylib.gen(600))) == {"callmethod": 1, "batch": 2}


def test_a_calls_result_into_list_is_drained_on_its_reply():
    gen = mylib.gen
    assert asked(lambda: list(gen(3))) == {"call": 1}
    assert asked(lambda: tuple(mylib.gen(3))) == {"callmethod": 1}
    assert asked(lambda: sorted(gen(0))) == {"call": 1}

    def in_assert():
        assert list(gen(3)) == [0, 1, 2]

    assert asked(in_assert) == {"call": 1}
    b = mylib.bag([1, 2])
    assert asked(lambda: list(b.each())) == {"callmethod": 1}
    # Not an iterator: as before. A keyword, or an iterator the judge had: a batch after.
    assert asked(lambda: list(mylib.log())) == {"callmethod": 1}
    assert asked(lambda: sorted(gen(3), reverse=True)) == {"call": 1, "batch": 1}
    g = gen(4)
    assert next(g) == 0
    assert asked(lambda: list(mylib.same(g))) == {"callmethod": 1, "batch": 1}
    assert list(g) == []
    # What the call's return releases (an argument of the code's, a temporary receiver):
    # its finalizer runs at the next request, so the steps come in a batch after it.
    held, three = [b], [3]
    assert asked(lambda: list(mylib.steps(held))) == {"callmethod": 1, "batch": 1}
    assert asked(lambda: list(mylib.bag(three).each())) == {"callmethod": 2, "batch": 1}


def test_a_rebound_name_is_not_drained():
    global sorted

    def sorted(it):  # the property's own `sorted`: it takes one item
        return next(it)

    try:
        assert asked(lambda: sorted(mylib.gen(5))) == {"callmethod": 1, "next": 1}
        assert mylib.log()[-1] == "step 0"
    finally:
        del sorted


def test_iter_and_len_of_an_iterator_are_answered_here():
    g = mylib.gen(3)

    def body():
        assert iter(g) is g
        with pytest.raises(TypeError, match="object of type 'generator' has no len"):
            len(g)
    assert asked(body) == {}


def test_a_loop_steps_one_next_at_a_time():
    g = mylib.gen(3)
    assert asked(lambda: [x for x in g if x < 5]) == {"next": 4}  # `<` can raise
    # Stepped to its end with nothing but data in between: batched (loops.Drained).
    assert asked(lambda: [x for x in mylib.gen(3)]) == {"callmethod": 1, "batch": 1}


def test_anything_else_asked_ends_the_drain():
    g = mylib.gen(3)

    def body():
        operator.length_hint(g)  # the word of a consumer that drains...
        mylib.note("x")  # ...broken: another call comes first
        assert next(g) == 0

    assert asked(body) == {"callmethod": 1, "next": 1}
    assert list(g) == [1, 2]


def test_an_iterable_of_the_code_is_asked_for_its_iterator():
    b = mylib.bag([1, 2])
    # Its `len` is asked, as bare asks it; the list iterator it returns is drained: list()
    # took it, then asked the bag for the hint (issue 17: dateutil's rrules). `typename`: the
    # judge asks once which class a handle whose dunder it uses claims (issue 18).
    assert asked(lambda: list(b)) == {"iter": 1, "len": 1, "batch": 1, "typename": 1}
    # A loop over the bag asks no hint: one `next` a step, as before; a comprehension
    # that steps it to its end comparing nothing drains it (loops.Drained).
    assert asked(lambda: [x for x in b if x < 5]) == {"iter": 1, "next": 3}
    assert asked(lambda: [x for x in b]) == {"iter": 1, "batch": 1}
    # Anything between the iterator and the hint keeps the steps one at a time.
    it = iter(b)
    mylib.note("between")
    assert asked(lambda: operator.length_hint(b)) == {"len": 1} and next(it) == 1
"""


def test_round_trips_are_counted_and_fewer(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, COUNTED, LIBRARY)
    got = outcomes(proc)
    assert len(got) == 8 and set(got.values()) == {"PASSED"}, proc.stdout[-6000:]


# Two property modules: one worker serves both, as one process serves both bare.
SHARED = {
    "test_a.py": """
import mylib
from patchjudge.boundary import standin


def test_a_notes():
    mylib.note("from a")
    assert standin._state.started == 1
""",
    "test_b.py": """
import mylib
from patchjudge.boundary import standin


def test_b_sees_the_library_state_a_left():
    assert "note from a" in mylib.log()
    assert standin._state.started == 1
""",
}


def test_one_worker_serves_every_property_module(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, SHARED, LIBRARY)
    got = outcomes(proc)
    assert got == {"test_a_notes": "PASSED", "test_b_sees_the_library_state_a_left": "PASSED"}, (
        proc.stdout[-6000:]
    )


@pytest.mark.parametrize(
    ("lines", "requests", "garbled"),
    [
        ([{"counts": {"call": 2, "batch": 1}}], {"call": 2, "batch": 1}, 0),
        ([{"counts": {"call": 2}}, {"counts": {"call": 3, "next": 1}}], {"call": 5, "next": 1}, 0),
        ([{"counts": {"call": "many"}}], {}, 1),
        ([{"counts": ["call"]}], {}, 1),
        ([{}], {}, 1),
    ],
)
def test_the_channel_sums_the_workers_round_trips(
    lines: list[dict[str, object]], requests: dict[str, int], garbled: int
) -> None:
    data = "".join(json.dumps({"event": "requests", **line}) + "\n" for line in lines)
    parsed = testrun.parse_channel(data.encode())
    assert (parsed["requests"], parsed["garbled"]) == (requests, garbled)


FLOODS = """
import sys


def flood():
    # The batch's own frame: its connection and the call it answers, reached from inside.
    batch = sys._getframe(1)
    conn, ident = batch.f_locals["self"], batch.f_locals["ident"]
    for _ in range(300):
        conn.send(("its", ident, 0))
    yield 1


def honest():
    yield from range(300)
"""

FLOODED = """
import mylib


def test_a_forged_flood_of_items_kills_the_worker():
    assert len(list(mylib.flood())) > 256


def test_three_hundred_honest_items():
    assert list(mylib.honest()) == list(range(300))
"""


def test_a_batch_larger_than_asked_breaks_the_protocol(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, FLOODED, FLOODS)
    got = outcomes(proc)
    assert got["test_a_forged_flood_of_items_kills_the_worker"] == "FAILED", proc.stdout[-4000:]
    assert "broke the protocol: a batch larger than asked" in proc.stdout
    # The worker that broke it is replaced for the next module only: this one's stays failed,
    # so the honest look-alike runs in a file of its own.


def test_an_honest_batch_of_as_many_items_is_accepted(tmp_path: Path) -> None:
    honest = FLOODED.split("def test_a_forged", 1)[0] + FLOODED.split("> 256\n", 1)[1]
    proc = run_judge(tmp_path, honest, FLOODS)
    assert outcomes(proc) == {"test_three_hundred_honest_items": "PASSED"}, proc.stdout[-4000:]


# Forgeries of a drain (protocol.DRAIN), reaching the call's own frame in the worker as FLOODS
# does: each module's worker breaks and is replaced for the next module.
FORGERIES = """
import sys


def _answering():
    frame = sys._getframe(2)
    return frame.f_locals["self"], frame.f_locals["ident"]


def unasked():
    # The call's OK, then items for it: the judge asked no drain.
    conn, ident = _answering()
    conn.send(("ok", ident, iter([1]), ()))
    conn.send(("its", ident, 1))
    return 0


KEPT = []


def make():
    KEPT.append(iter([1, 2]))
    return KEPT[0]


def not_new():
    # Said drained, of an iterator the judge already had.
    conn, ident = _answering()
    conn.send(("ok", ident, (KEPT[0], True), ()))
    conn.send(("its", ident, 1))
    return KEPT[0]
"""

FORGED = {
    "test_unasked.py": """
import mylib


def test_items_after_a_call_that_asked_no_drain():
    first = mylib.unasked()  # kept, not a discarded call sent later
    assert mylib.unasked() == first
""",
    "test_not_new.py": """
import mylib


def test_a_drain_of_an_iterator_the_judge_had():
    it = mylib.make()
    got = list(mylib.not_new())
    assert got == [1, 2] and it
""",
}


def test_forged_drains_break_the_protocol(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, FORGED, FORGERIES)
    got = outcomes(proc)
    assert set(got.values()) == {"FAILED"} and len(got) == 2, proc.stdout[-4000:]
    assert "broke the protocol: items for a call that is not a batch" in proc.stdout
    assert "broke the protocol: drained a result that is no new iterator" in proc.stdout


@pytest.mark.parametrize(
    ("source", "drained"),
    [
        ("list(f(x))", "list"),
        ("tuple(f(x))", "tuple"),
        ("sorted(f(x))", "sorted"),
        ("list(f(x), )", "list"),  # the same bytecode
        ("list(f(x, key=3))", "list"),  # the call's own keyword
        ("list(lib.f(x))", "list"),
        ("list(obj.m(x))", "list"),
        ("list(f(g(x)))", "list"),  # f's call, the outer one
        ("list(f([y for y in x]))", "list"),
        ("[list(f(x))]", "list"),
        ("sorted(f(x), key=len)", None),  # a keyword of sorted's: not taken
        ("set(f(x))", None),  # hashes each item before the next step
        ("max(f(x))", None),
        ("list(f(x)[0])", None),  # the call's result is not the argument
        ("list(f(x) if x else ())", None),  # a jump
        ("list(x.y)", None),
        ("y = f(x); list(y)", None),  # the result is kept: code may run before list()
    ],
)
def test_which_calls_are_drained_on_their_reply(source: str, drained: str | None) -> None:
    from patchjudge.boundary import standin

    code = compile(f"def t(f, g, x, lib, obj):\n    {source}\n", "<t>", "exec")
    fn = next(c for c in code.co_consts if hasattr(c, "co_code"))
    found = standin.drained_calls(fn)
    assert list(found.values()) == ([drained] if drained else [])
    calls = [i.offset for i in __import__("dis").get_instructions(fn) if i.opname == "CALL"]
    assert all(offset in calls for offset in found)


def test_a_local_list_is_not_the_builtin() -> None:
    from patchjudge.boundary import standin

    def local(f: object, list: object) -> None:
        list(f())  # type: ignore[operator]

    assert standin.drained_calls(local.__code__) == {}


def test_a_rewritten_asserts_temporary_is_drained() -> None:
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    from patchjudge.boundary import standin

    source = "def t(f, x):\n    assert list(f(x)) == x\n    assert tuple(f(x)[0]) == x\n"
    tree = ast.parse(source)
    rewrite_asserts(tree, source.encode())
    code = compile(tree, "<t>", "exec")
    fn = next(c for c in code.co_consts if hasattr(c, "co_code"))
    assert list(standin.drained_calls(fn).values()) == ["list"]
