"""Counted stores and reads: `h[k] = v` and `h[i]` in a loop over a range, in batches (issues 17, 20).

`for i in range(n): hd[i] = i` keeps its stores and sends them as one SEQ per
256, the last time round's store sending the rest; `for i in range(n): assert
hd[i] == i` fetches the loop's coming reads in one GETITEMS (loops.py), and so
does `for i in hd.order: assert hd[i] == f"v{i}"` over a list of the code's
(the coming items of the judge's copy as the keys). Each
case runs the same file bare (the library in process) and through a real
worker: what the tests record, their outcomes, their errors and hypothesis'
failing example must be the same. The counts come from the judge's own counter,
and a worker that lies in a batch of reads fails closed.
"""

from __future__ import annotations

import ast
import dis
import re
import textwrap
import types
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import rewrite_asserts

from patchjudge.boundary import loops
from tests.unit.test_standin import outcomes, run_judge
from tests.unit.test_standin_batching import recorded, run_bare
from tests.unit.test_standin_counted import _errors

LIBRARY = """
import sys

LOG = []


class Table:
    \"\"\"A dict-like class of the code's: each store and read logged on the module.\"\"\"

    def __init__(self, bad=None, objects_every=0, stop_at=None, lie=None, on_set=None):
        self.data, self.bad, self.every, self.stop_at, self.lie = {}, bad, objects_every, stop_at, lie
        self.on_set, self.kept = on_set, None
        self.order = []  # the keys as first stored: a list of the code's (a held list)

    def keep(self, xs):
        self.kept = xs  # a judge list the code keeps: linked (protocol.py, "links")

    def __setitem__(self, key, value):
        LOG.append(f"set {key}")
        if self.kept is not None:
            self.kept.append(key)
        if self.on_set is not None:
            self.on_set(key)
        if key == self.bad:
            raise KeyError(f"bad {key}")
        if key not in self.data:
            self.order.append(key)
        self.data[key] = value

    def __getitem__(self, key):
        LOG.append(f"get {key}")
        if key == self.stop_at:
            raise StopIteration(key)
        if self.lie is not None:
            lie(sys._getframe(2))
        if self.every and key % self.every == self.every - 1:
            return Item(key)
        return self.data[key]

    def keys(self):
        return sorted(self.data, key=str)


class Item:
    def __init__(self, key):
        self.key = key

    def __eq__(self, other):
        LOG.append(f"eq {self.key} after {LOG[-1]}")
        return other is self

    __hash__ = None


def lie(batch):
    # The batch's own frame (worker.answer_batch), reached from inside as code that took
    # over the worker would: more items than the judge asked for.
    if "limit" in batch.f_locals:
        for _ in range(300):
            batch.f_locals["self"].send(("its", batch.f_locals["ident"], 0))


def steps(n, bad=None, objects_every=0, on_step=None):
    for k in range(n):
        LOG.append(f"step {k}")
        if on_step is not None:
            on_step(k)
        if k == bad:
            raise ValueError(f"at {k}")
        yield Item(k) if objects_every and k % objects_every == objects_every - 1 else k


def table(bad=None, objects_every=0, stop_at=None, lie=None, on_set=None):
    return Table(bad, objects_every, stop_at, lie, on_set)


SHARED = Table(bad=7)


def note(x):
    LOG.append(f"note {x}")


def log():
    return list(LOG)
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


def test_stores_then_reads():
    t = mylib.table()
    start = len(mylib.log())
    n = 300
    for i in range(n * 2):
        t[i] = i * 2
    for i in range(0, n * 2, 1):
        assert t[i] == i * 2, i
    record("stores_reads", [mylib.log()[start:], i])


def test_a_kept_list_the_stores_change():
    t = mylib.table()
    seen = []
    t.keep(seen)
    for i in range(300):
        t[i] = i
    record("kept", [len(seen), seen[:3], seen[-1]])


def test_keys_and_values_built_from_ints():
    t = mylib.table()
    k = 5
    for i in range(0, 30, 3):
        t[f"k{i}"] = (i + k, "x")
    record("built", [[key, t[key]] for key in t.keys()])


def test_a_store_that_raises_fails_at_its_item():
    t = mylib.SHARED
    for i in range(20):
        t[i] = i


def test_after_the_failed_stores():
    record("shared", [mylib.SHARED.keys(), mylib.log()[-8:]])


def test_stores_in_a_with_stop_where_bare_stops():
    t = mylib.table(bad=4)
    with pytest.raises(KeyError, match="bad 4"):
        for i in range(20):
            t[i] = i
    record("guarded_stores", [i, t.keys()])


def test_a_read_that_raises_is_raised_at_its_key():
    t = mylib.table()
    for i in range(8):
        t[i] = i
    start = len(mylib.log())
    with pytest.raises(KeyError):
        for i in range(20):
            v = t[i]
    record("read_raises", [i, v, mylib.log()[start:]])


def test_a_read_that_raises_stop_iteration():
    t = mylib.table(stop_at=3)
    for i in range(8):
        t[i] = i
    start = len(mylib.log())
    with pytest.raises((StopIteration, RuntimeError)) as info:
        for i in range(20):
            v = t[i]
    record("read_stops", [i, v, mylib.log()[start:]])


def test_the_code_objects_are_compared_where_they_come():
    t = mylib.table(objects_every=3)
    for i in range(9):
        t[i] = i
    start = len(mylib.log())
    for i in range(9):
        x = t[i]
        assert x == x
    record("objects", mylib.log()[start:])


def test_a_call_between_reads_keeps_them_one_at_a_time():
    t = mylib.table()
    for i in range(4):
        t[i] = i
    start = len(mylib.log())
    for i in range(4):
        assert t[i] == i
        mylib.note(i)
    record("interleaved", mylib.log()[start:])


def test_a_failing_read_loop_fails_at_its_item():
    t = mylib.table()
    for i in range(50):
        t[i] = i
    for i in range(50):
        assert t[i] < 5, f"item {i}"


def test_reads_over_a_list_of_the_codes():
    t = mylib.table()
    for i in range(300):
        t[i] = f"v{i}"
    for i in range(0, 40, 2):
        t[("p", i)] = i + 1
    t["s" * 2000] = None  # too long a key for a batch: read alone
    t["s"] = -1
    start = len(mylib.log())
    for i in t.order:
        v = t[i]
    got = mylib.log()[start:]
    record("over_list", [len(got), got[:2], got[-22:-2], len(got[-2]), got[-1], i, v])
    for i in t.order:
        if type(i) is int:
            assert t[i] == f"v{i}", i


def test_a_failing_loop_over_a_list_fails_at_its_item():
    t = mylib.table()
    for i in range(50):
        t[i] = f"v{i}"
    for i in t.order:
        assert t[i] != "v7", f"item {i}"


def test_a_read_over_a_list_that_raises_is_raised_at_its_key():
    t = mylib.table()
    for i in range(20):
        t[i] = i
    t.order.insert(9, "gone")  # the code's list, changed through the judge's copy
    for i in t.order:
        v = t[i]


def test_objects_over_a_list_are_compared_where_they_come():
    t = mylib.table(objects_every=3)
    for i in range(9):
        t[i] = i
    start = len(mylib.log())
    for i in t.order:
        x = t[i]
        assert x == x
    record("objects_over", mylib.log()[start:])


def test_a_comprehension_steps_to_its_end_as_bare():
    start = len(mylib.log())
    got = [x for x in mylib.steps(300) if x != 3]
    objects = [x for x in mylib.steps(9, objects_every=3) if x != 0]
    with pytest.raises(ValueError, match="at 5"):
        [x for x in mylib.steps(20, bad=5)]
    seen = []
    called = [x for x in mylib.steps(4, on_step=lambda k: seen.append((k, len(mylib.LOG))))]
    at = [n - seen[0][1] for _, n in seen]
    record("drained", [got[:4], len(got), len(objects), called, at, mylib.log()[start:]])


@settings(max_examples=100, database=None)
@given(st.integers(0, 60))
def test_a_property_fails_at_the_same_example(n):
    t = mylib.table(bad=17)
    for i in range(n):
        t[i] = i


def test_zz_a_judge_function_the_stores_call_back():
    # Last: from here on the worker holds a judge function.
    seen = []
    t = mylib.table(on_set=lambda key: seen.append((key, len(mylib.LOG))), bad=290)
    with pytest.raises(KeyError):
        for i in range(300):
            t[i] = -i
    seen.clear()
    for i in range(290):
        t[i] = ~i
    assert [t[i] for i in range(3)] == [-1, -2, -3]
    for i in range(0, 290, 1):
        assert t[i] == ~i
    for i in t.order:
        assert t[i] == ~i, i
    # Where each callback came in the library's log, from the first: one set each.
    at = [(key, n - seen[0][1]) for key, n in seen]
    record("callbacks", [at[:3], at[-1], len(at), i])
"""

# The judge's own counter, read by the property: round trips by kind.
COUNTED = """
import mylib
from patchjudge.boundary import standin


def diff(before, after):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def test_a_store_loop_is_one_seq_per_256():
    worker = standin._state.current()
    t = mylib.table()
    before = dict(worker.requests)
    for i in range(600):
        t[i] = i
    assert diff(before, worker.requests) == {"seq": 3}
    assert not worker.pending  # the last time round sent the rest


def test_a_read_loop_is_getitems_of_256():
    worker = standin._state.current()
    t = mylib.table()
    for i in range(600):
        t[i] = i
    before = dict(worker.requests)
    for i in range(600):
        assert t[i] == i, i
    assert diff(before, worker.requests) == {"getitems": 3}


def test_objects_end_a_batch_of_reads():
    worker = standin._state.current()
    t = mylib.table(objects_every=100)
    for i in range(300):
        t[i] = i
    before = dict(worker.requests)
    for i in range(300):
        v = t[i]
    assert diff(before, worker.requests) == {"getitems": 3}  # 0-99, 100-199, 200-299


def test_a_loop_over_a_list_of_the_codes_is_getitems_of_256():
    worker = standin._state.current()
    t = mylib.table()
    for i in range(600):
        t[i] = f"v{i}"
    before = dict(worker.requests)
    for i in t.order:
        assert t[i] == f"v{i}", i
    assert diff(before, worker.requests) == {"getattr": 1, "getitems": 3}


def test_a_long_key_ends_a_batch_over_a_list():
    worker = standin._state.current()
    t = mylib.table()
    for i in range(6):
        t[i] = i
    t["s" * 2000] = 0
    for i in range(6, 12):
        t[i] = i
    before = dict(worker.requests)
    for i in t.order:
        v = t[i]
    keys = list(t.order)
    for i in keys:
        v = t[i]  # the judge's own list, no copy of the code's: one at a time
    assert diff(before, worker.requests) == {"getattr": 2, "getitems": 2, "getitem": 14}


def test_a_comprehension_to_its_end_is_batches_of_256():
    worker = standin._state.current()
    before = dict(worker.requests)
    assert len([x for x in mylib.steps(600) if x != 3]) == 599
    assert len([x for x in mylib.steps(5) if x < 3]) == 3  # `<` can raise: one at a time
    assert diff(before, worker.requests) == {"callmethod": 2, "batch": 3, "next": 6}


def fill(t, n):
    for i in range(n):
        t[i] = i


def test_stores_elsewhere_go_one_at_a_time():
    worker = standin._state.current()
    t = mylib.table()
    before = dict(worker.requests)
    fill(t, 3)  # a helper's frame
    for i in range(3):
        t[i] = i / 2  # `/` can raise
    for i in range(3):
        t[i] = i
        mylib.note(i)  # a call between the stores
    k = 1.5
    for i in range(3):
        t[i] = k + i  # read as an int, but a float: not what the body's reading assumed
    assert diff(before, worker.requests) == {"setitem": 12, "callmethod": 3}


def test_a_linked_list_keeps_the_batches():
    worker = standin._state.current()
    t = mylib.table()
    seen = []
    t.keep(seen)
    before = dict(worker.requests)
    for i in range(300):
        t[i] = i
    assert seen[-1] == 299  # the stores' change to it came back with the SEQ's answer
    for i in range(300):
        assert t[i] == i
    assert diff(before, worker.requests) == {"seq": 2, "getitems": 2}


def test_a_worker_with_a_judge_function_batches_what_it_cannot_change():
    worker = standin._state.current()
    t = mylib.table()
    mylib.note(lambda: None)  # the worker now holds a judge function: a store could call it
    expected = [0, 1, 2]
    before = dict(worker.requests)
    for i in range(3):
        t[i] = i
    for i in range(len(expected)):
        t[i] = i  # len() of a list the function could change: one at a time
    for i in range(3):
        assert t[i] == i
    for i in range(3):
        assert t[i] == expected[i]  # a list the function could change: one at a time
    for i in t.order:
        assert t[i] == i  # a copy of the code's list that only the loop holds: batched
    keys = t.order
    for i in keys:
        assert t[i] == i  # a copy the property holds too, which the function could change
    assert [x for x in mylib.steps(3) if x != 1] == [0, 2]  # compares ints alone: batched
    assert diff(before, worker.requests) == {
        "seq": 1, "setitem": 3, "getitems": 2, "getitem": 6, "getattr": 2, "callmethod": 1, "batch": 1
    }  # fmt: skip
"""

LIAR = """
import mylib


def test_more_reads_than_asked():
    t = mylib.table(lie=True)
    for i in range(5):
        t[i] = i
    for i in range(5):
        assert t[i] == i
"""


def test_counted_stores_and_reads_observe_and_fail_as_bare(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    expected = {
        "test_stores_then_reads": "PASSED",
        "test_a_kept_list_the_stores_change": "PASSED",
        "test_keys_and_values_built_from_ints": "PASSED",
        "test_a_store_that_raises_fails_at_its_item": "FAILED",
        "test_after_the_failed_stores": "PASSED",
        "test_stores_in_a_with_stop_where_bare_stops": "PASSED",
        "test_a_read_that_raises_is_raised_at_its_key": "PASSED",
        "test_a_read_that_raises_stop_iteration": "PASSED",
        "test_the_code_objects_are_compared_where_they_come": "PASSED",
        "test_a_call_between_reads_keeps_them_one_at_a_time": "PASSED",
        "test_a_failing_read_loop_fails_at_its_item": "FAILED",
        "test_reads_over_a_list_of_the_codes": "PASSED",
        "test_a_failing_loop_over_a_list_fails_at_its_item": "FAILED",
        "test_a_read_over_a_list_that_raises_is_raised_at_its_key": "FAILED",
        "test_objects_over_a_list_are_compared_where_they_come": "PASSED",
        "test_a_comprehension_steps_to_its_end_as_bare": "PASSED",
        "test_a_property_fails_at_the_same_example": "FAILED",
        "test_zz_a_judge_function_the_stores_call_back": "PASSED",
    }
    for proc in (bare, oop):
        assert outcomes(proc) == expected, proc.stdout[-6000:] + proc.stderr[-3000:]
    got, want = recorded(tmp_path / "oop" / "judge"), recorded(tmp_path / "bare" / "judge")
    # StopIteration out of a read: bare lets it out, the boundary says where it came from
    # (PEP 479's rule, as for a read made alone); what was read before it is the same.
    assert got.pop("read_stops") == want.pop("read_stops") == [3, 2, [f"get {k}" for k in range(4)]]
    assert got == want
    # What the table pins, so that bare itself is the reference it should be.
    sets, gets = [f"set {i}" for i in range(600)], [f"get {i}" for i in range(600)]
    assert want["stores_reads"] == [sets + gets, 599]
    assert want["built"] == [[f"k{i}", [i + 5, "x"]] for i in sorted(range(0, 30, 3), key=str)]
    assert want["shared"] == [list(range(7)), [f"set {i}" for i in range(8)]]
    assert want["guarded_stores"] == [4, [0, 1, 2, 3]]
    assert want["read_raises"] == [8, 7, [f"get {k}" for k in range(9)]]
    assert want["objects"] == [
        *(f"get {i}" for i in range(3)),
        "eq 2 after get 2",
        *(f"get {i}" for i in range(3, 6)),
        "eq 5 after get 5",
        *(f"get {i}" for i in range(6, 9)),
        "eq 8 after get 8",
    ]
    assert want["kept"] == [300, [0, 1, 2], 299]
    assert want["callbacks"] == [[[0, 0], [1, 1], [2, 2]], [289, 289], 290, 289]
    assert want["interleaved"] == [f"{w} {i}" for i in range(4) for w in ("get", "note")]
    assert _errors(oop) == _errors(bare)
    assert _errors(bare)["test_a_store_that_raises_fails_at_its_item"] == "KeyError: 'bad 7'"
    assert _errors(bare)["test_a_failing_read_loop_fails_at_its_item"] == "AssertionError: item 5"
    over = _errors(bare)
    assert over["test_a_failing_loop_over_a_list_fails_at_its_item"] == "AssertionError: item 7"
    assert over["test_a_read_over_a_list_that_raises_is_raised_at_its_key"] == "KeyError: 'gone'"
    tuples = [f"get ('p', {i})" for i in range(0, 40, 2)]
    assert want["over_list"] == [322, ["get 0", "get 1"], tuples, 2004, "get s", "s", -1]
    assert want["objects_over"] == want["objects"]
    drained = [*(f"step {k}" for k in range(300)), *(f"step {k}" for k in range(3))]
    drained += ["eq 2 after step 2", *(f"step {k}" for k in range(3, 6)), "eq 5 after step 5"]
    drained += [*(f"step {k}" for k in range(6, 9)), "eq 8 after step 8"]
    drained += [*(f"step {k}" for k in range(6)), *(f"step {k}" for k in range(4))]
    assert want["drained"] == [[0, 1, 2, 4], 299, 8, [0, 1, 2, 3], [0, 1, 2, 3], drained]
    falsifying = [re.findall(r"^E +(n=.*)$", p.stdout, re.M) for p in (bare, oop)]
    assert falsifying[0] == falsifying[1] == ["n=18,"]


def test_counted_stores_and_reads_are_batches_and_the_rest_one_at_a_time(
    tmp_path: Path,
) -> None:
    # The liar first: the judge function the last counted test gives the worker would keep
    # its reads one at a time.
    proc = run_judge(tmp_path, {"test_a_liar.py": LIAR, "test_counted.py": COUNTED}, LIBRARY)
    assert outcomes(proc) == {
        "test_a_store_loop_is_one_seq_per_256": "PASSED",
        "test_a_read_loop_is_getitems_of_256": "PASSED",
        "test_objects_end_a_batch_of_reads": "PASSED",
        "test_stores_elsewhere_go_one_at_a_time": "PASSED",
        "test_a_linked_list_keeps_the_batches": "PASSED",
        "test_a_worker_with_a_judge_function_batches_what_it_cannot_change": "PASSED",
        "test_a_loop_over_a_list_of_the_codes_is_getitems_of_256": "PASSED",
        "test_a_long_key_ends_a_batch_over_a_list": "PASSED",
        "test_a_comprehension_to_its_end_is_batches_of_256": "PASSED",
        "test_more_reads_than_asked": "FAILED",
    }, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "broke the protocol: a batch larger than asked" in proc.stdout


# --- the bytecode table (loops.counted_sites) -------------------------------------------


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


def _kinds(source: str, rewrite: bool = False) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, target name, what is checked at run time) of each counted read or store."""
    found = []
    sites = {id(s): s for _, s in sorted(loops.counted_sites(_code(source, rewrite)).items())}
    for site in sites.values():
        if type(site) is loops.CountedRead:
            checked = site.reads + tuple(name for _, name in site.others)
            found.append(("read", site.target[1], checked))
        elif type(site) is loops.CountedStore:
            found.append(("store", site.target[1], site.ints))
    return found


@pytest.mark.parametrize(
    ("body", "sites"),
    [
        ("hd[i] = i", [("store", "hd", ())]),
        ("hd[i] = i * 2 + k", [("store", "hd", ("k",))]),
        ('hd[f"k{i}"] = (i, "x", None)', [("store", "hd", ())]),
        ("hd[-i] = ~i, not i", [("store", "hd", ())]),
        ('key = "p" + f"{i!r}"\n        hd[key] = -1', [("store", "hd", ())]),
        ("assert hd[i] == i", [("read", "hd", ())]),
        (
            "v = hd[i]\n        assert v == xs[i], i",
            [("read", "hd", ("xs",)), ("read", "xs", ("hd",))],
        ),
        ("total = hd[i] + k", [("read", "hd", ("k",))]),
        # one at a time: something in the body could raise, ask the worker or rebind
        ("hd[i] = i / 2", []),
        ("hd[i] = i // k", []),
        ("hd[i] = i % 3", []),
        ('hd[i] = f"{i:q}"', []),
        ('hd[i] = "a" * i', []),
        ('hd[i] = -"a"', []),
        ("hd[i] = g(i)", []),
        ("hd[i] = i\n        hd[i + 1] = i", []),
        ("hd[i] = i\n        hd = 0", []),
        ("hd[i] = xs[i]", []),
        ("hd.d[i] = i", []),
        ("hd[i] = i\n        i = 0", []),
        ("hd[i] = i\n        n = 0", []),
        ("hd[i] = i\n        k = str(i)", []),
        ('hd[i] = k\n        k = "s"', []),
        ("assert hd[i + 1] == i", []),
        ("assert hd[i] == i\n        hd[i] = 0", []),
        ("assert hd[i] == i\n        g(i)", []),
        ("v = hd[i]\n        hd = 0", []),
        ("assert hd[i] == next(it)", []),
    ],
)
def test_which_stores_and_reads_are_counted(
    body: str, sites: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    source = f"def f(hd, n, k, xs, it):\n    for i in range(n):\n        {body}\n"
    assert _kinds(source) == sites


@pytest.mark.parametrize(
    ("body", "sites"),
    [
        ('assert hd[i] == f"v{i}", i', [("read", "hd", ())]),
        ("v = hd[i]", [("read", "hd", ())]),
        ('assert hd[i] == k, f"{i!r}"', [("read", "hd", ("k",))]),
        ("assert hd[i] == xs[i]", [("read", "hd", ("xs",)), ("read", "xs", ("hd",))]),
        # one at a time: stores and `next` count by a range; a call, a rebinding
        ("hd[i] = i", []),
        ("assert next(it) == i", []),
        ("assert hd[i] == i\n        g(i)", []),
        ("v = hd[i]\n        hd = 0", []),
    ],
)
def test_which_reads_over_an_iterable_are_counted(
    body: str, sites: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    source = f"def f(hd, k, xs, it):\n    for i in hd.keys:\n        {body}\n"
    code = _code(source)
    assert _kinds(source) == sites
    get_iter = next(x.offset for x in dis.get_instructions(code) if x.opname == "GET_ITER")
    assert {s.over for s in loops.counted_sites(code).values()} <= {get_iter}


@pytest.mark.parametrize(
    ("body", "fails"),
    [
        ('assert hd[i] == f"v{i}"', True),
        ('v = hd[i]\n        w = f"{v!r}{i}"', False),
        ('v = hd[i]\n        w = f"{v:>4}"', True),  # a format spec can raise
    ],
)
def test_f_strings_in_a_counted_loop(body: str, fails: bool) -> None:
    for loop in ("range(n)", "xs"):
        code = _code(f"def f(hd, n, xs):\n    for i in {loop}:\n        {body}\n")
        (site,) = {id(s): s for s in loops.counted_sites(code).values()}.values()
        assert type(site) is loops.CountedRead and site.fails is fails
    code = _code('def f(t, n):\n    for i in range(n):\n        assert next(t) == f"{i}"\n')
    assert {type(s) for s in loops.counted_sites(code).values()} == {loops.CountedNext}


@pytest.mark.parametrize(
    ("source", "drained"),
    [
        ("[x for x in h]", True),
        ("[x for x in h if x != -1]", True),
        ("[x for x in h if x == 3 or x is None]", True),
        ("[(x, not x) for x in h if not x]", True),
        # one at a time: it can raise, call, read what it does not own, or stop early
        ("[x for x in h if x < 3]", False),
        ("{x for x in h}", False),
        ("[x for x in h if x != k]", False),
        ("[x for x in h if x != K]", False),
        ("[g(x) for x in h]", False),
        ("[x[0] for x in h]", False),
        ("[x for x in h for y in x]", False),
        ("(x for x in h)", False),
    ],
)
def test_which_comprehensions_are_drained(source: str, drained: bool) -> None:
    outer = _code(f"def f(h, k):\n    return {source}\n")
    (inner,) = (c for c in outer.co_consts if isinstance(c, types.CodeType))
    sites = list(loops.counted_sites(inner).values())
    assert [type(s) for s in sites] == ([loops.Drained] if drained else [])


def test_other_loops_store_and_read_one_at_a_time() -> None:
    assert _kinds("def f(hd, xs):\n    for i in xs:\n        hd[i] = i\n") == []
    assert _kinds("def f(hd, n):\n    return [hd[i] for i in range(n)]\n") == []
    assert _kinds("def f(hd, n):\n    while n:\n        hd[n] = n\n        n -= 1\n") == []
    guarded = "def f(hd, n):\n    try:\n        for i in range(n):\n            hd[i] = i\n    except E:\n        pass\n"
    assert {s.guarded for s in loops.counted_sites(_code(guarded)).values()} == {True}


def test_pytest_rewritten_asserts_over_reads_are_counted() -> None:
    source = "def f(hd, n):\n    for i in range(n):\n        assert hd[i] == i * 2, i\n"
    assert _kinds(source, rewrite=True) == [("read", "hd", ())]
    (site,) = set(loops.counted_sites(_code(source, rewrite=True)).values())
    assert type(site) is loops.CountedRead and site.fails and not site.guarded


def test_a_next_loop_reads_its_subscripts_as_data_as_before() -> None:
    code = _code("def f(t, n, xs):\n    for i in range(n):\n        assert next(t) == xs[i]\n")
    (site,) = {id(s): s for s in loops.counted_sites(code).values()}.values()
    assert type(site) is loops.CountedNext and site.reads == ("xs",) and site.fails


@pytest.mark.parametrize(
    ("source", "sealed"),
    [
        ("def f(hd, n):\n    for i in range(n):\n        hd[i] = i\n", True),
        ("def f(hd, n):\n    for i in range(n):\n        assert hd[i] == i\n", True),
        ("def f(hd, xs):\n    for i in range(len(xs)):\n        hd[i] = i\n", False),
        ("def f(n):\n    for i in range(n):\n        HD[i] = i\n", False),
        (
            "def f(hd, n, k):\n    def g():\n        return k\n    for i in range(n):\n"
            "        hd[i] = k\n",
            False,
        ),
        ("def f(n, xs):\n    for i in range(n):\n        assert HD[i] == xs[i]\n", False),
    ],
)
def test_a_loop_a_judge_function_could_change_is_not_sealed(source: str, sealed: bool) -> None:
    """While the worker holds a judge function, only a sealed loop is batched (standin)."""
    sites = {id(s): s for s in loops.counted_sites(_code(source)).values()}
    flags = {s.sealed for s in sites.values() if type(s) is not loops.CountedNext}
    assert flags == {sealed}
