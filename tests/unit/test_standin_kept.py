"""Containers the code keeps stay the property's, both ways (issue 17, session 11).

A plain list, dict, set or bytearray the property hands the code crosses as
data: the worker decodes a copy. When the call leaves that copy referenced (the
code kept it), the two are linked (protocol.py, "links"): a change either side
makes afterwards reaches the other with the next request, in the request's own
write (a SYNC) and in the reply (`changed`), never as a round trip of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from patchjudge.boundary import protocol, standin, wire
from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
keep = []


class Store:
    def __init__(self, data):
        self.data = data

    def get(self, *path):
        node = self.data
        for key in path:
            node = node[key]
        return node

    def size(self):
        return len(self.data)

    def push(self, x):
        self.data.append(x)

    def trim(self, n):
        del self.data[:n]

    def put(self, key, value):
        self.data[key] = value


class Frame:
    def __init__(self):
        self.flags = set()

    def has(self, flag):
        return flag in self.flags


def length(xs):
    return len(xs)


def same(xs):
    return xs


def walk(xs):
    yield from xs


def keep_inner(d):
    keep.append(d["inner"])


def inner_size():
    return len(keep[-1])


def kept_count():
    return len(keep)


def sort_in_place(xs):
    xs.sort()


def items(d):
    for k, v in d.items():
        yield k, v


def pairs(xs):
    return zip(range(len(xs)), xs)  # dpath's make_walkable of a tuple: an iterator keeps it


def get(node, *path):
    for key in path:
        node = node[key]
    return node


class Lines(list):
    def render(self):
        return "|".join(self)


def extend(xs, more):
    xs.extend(more)
"""

PROPERTIES = """
import os

from hypothesis import given, strategies as st

import mylib
from patchjudge.boundary import protocol, standin, wire


def worker():
    return standin._state.current()


def test_a_kept_dict_list_and_set_see_the_properties_changes():
    d, xs = {}, []
    store, listed = mylib.Store(d), mylib.Store(xs)
    d["k"] = 1
    xs.append(3)
    assert store.get("k") == 1 and listed.size() == 1 and listed.get(0) == 3
    del d["k"]
    xs.clear()
    assert store.size() == 0 and listed.size() == 0
    f = mylib.Frame()
    flags = {"END_STREAM"}
    f.flags = flags  # a SETATTR's value is kept too
    flags.add("PADDED")
    assert f.has("PADDED")


def test_a_nested_container_changed_inside_is_seen():
    outer = {"a": {}, "b": [1]}
    inner = outer["a"]
    store = mylib.Store(outer)
    outer["a"]["x"] = 2
    inner["y"] = 3
    outer["b"].append(4)
    assert store.get("a", "x") == 2 and store.get("a", "y") == 3 and store.get("b", 1) == 4


def test_the_librarys_change_to_a_kept_container_comes_back_in_place():
    xs = [{"n": 1}]
    first = xs[0]
    store = mylib.Store(xs)
    store.push({"n": 2})
    assert xs == [{"n": 1}, {"n": 2}] and xs[0] is first  # merged, not replaced
    buffer = bytearray(b"abcdef")
    reader = mylib.Store(buffer)
    reader.trim(2)
    assert buffer == b"cdef" and reader.size() == 4
    d = {}
    mylib.Store(d).put("k", [1])  # the store is gone at once: its copy is still sent back
    assert d == {"k": [1]}


def test_a_part_kept_alone_is_linked_through_its_argument():
    d = {"inner": []}
    mylib.keep_inner(d)
    d["inner"].append(1)
    assert mylib.inner_size() == 1


def test_a_generator_keeps_its_argument():
    xs = [1, 2]
    it = mylib.walk(xs)
    xs.append(3)
    assert list(it) == [1, 2, 3]


def test_a_call_that_keeps_nothing_links_nothing_and_costs_no_round_trip():
    w = worker()
    before = dict(w.requests)
    xs = [3, 1, 2]
    assert mylib.length(xs) == 3 and mylib.same(xs) is xs
    mylib.sort_in_place(xs)
    assert xs == [1, 2, 3]
    assert not w.links
    spent = {k: v - before.get(k, 0) for k, v in w.requests.items() if v != before.get(k, 0)}
    assert spent == {"callmethod": 3}  # the stand-in module's functions, read and called


def test_a_link_is_one_write_and_no_round_trip():
    w = worker()
    d = {}
    store = mylib.Store(d)
    assert len(w.links) >= 1
    writes = []
    real = os.write

    def counting(fd, data):
        if fd == w.fd_out:
            writes.append(bytes(data))
        return real(fd, data)

    d["k"] = 5
    before = dict(w.requests)
    os.write = counting
    try:
        got = store.get("k")  # one request (callmethod): not an assert's getattr, then call
    finally:
        os.write = real
    assert got == 5
    assert len(writes) == 1, [
        [wire.decode(f, lambda ref: ref)[:4] for f in wire.split_frames(w)[0]] for w in writes
    ]
    frames, rest = wire.split_frames(writes[0])
    kinds = [wire.decode(f, lambda ref: ref)[0] for f in frames]
    assert rest == b"" and kinds[-2:] == [protocol.SYNC, protocol.QUERY], kinds
    assert sum(w.requests.values()) - sum(before.values()) == 1


def test_links_end_when_either_side_lets_go():
    w = worker()
    xs = []
    store = mylib.Store(xs)
    linked = set(w.links)
    assert linked
    del store
    import gc

    gc.collect()
    mylib.length([])  # the release and this call: the worker lets its copy go
    mylib.length([])
    assert not (set(w.links) & linked)
    ys = []
    mylib.Store(ys)  # the store is the worker's only until the next call releases it
    del ys
    mylib.length([])
    mylib.length([])
    assert not w.links


@given(st.lists(st.integers(), max_size=4))
def test_a_drawn_list_the_library_keeps_and_changes_is_not_overwritten(xs):
    drawn = list(xs)
    store = mylib.Store(xs)
    store.push(99)
    assert xs == drawn  # what hypothesis drew is never overwritten (issue 18)
    xs.append(7)
    assert store.get(-1) == 7 and store.size() == len(drawn) + 1  # the judge's state wins


def test_parts_of_the_propertys_data_come_back_as_themselves():
    node = {"a": [-6, "word", 10**20], "b": {"c": 2.5}, "d": (1, [2])}
    for k, v in mylib.items(node):  # a generator over the linked copy, stepped
        assert node[k] is v
    assert all(node[k] is v for k, v in list(mylib.items(node)))  # drained: a batch
    assert mylib.get(node, "a", 0) is node["a"][0] and mylib.get(node, "a") is node["a"]
    assert mylib.get(node, "b", "c") is node["b"]["c"] and mylib.get(node, "d") is node["d"]
    d = {}
    store = mylib.Store(d)
    assert store.data is d  # the linked copy, read as an attribute: the property's own
    d["x"] = [1]
    assert store.get("x") is d["x"]
    assert mylib.get([[1, 2]], 0) == [1, 2]  # a temporary's part: equal data, as it was
    t = (-6, "word", [1])
    for k, v in mylib.pairs(t):  # a tuple kept by an iterator: linked for identity alone
        assert t[k] is v
    assert mylib.get(t, 2) is t[2] and mylib.get({"t": t}, "t", 0) is t[0]

    class Mine:
        pass

    mine = Mine()
    assert mylib.get([mine, (mine, 1)], 0) is mine  # a judge object is a reference already
    assert mylib.get([mine, (mine, 1)], 1)[0] is mine


def test_a_library_list_subclass_changed_by_the_library_is_refreshed():
    lines = mylib.Lines()
    lines.append("a")
    mylib.extend(lines, ["b"])
    assert lines == ["a", "b"] and lines.render() == "a|b"
"""


def test_kept_containers_are_kept_in_step(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, LIBRARY)
    got = outcomes(proc)
    assert len(got) == 11 and set(got.values()) == {"PASSED"}, (
        proc.stdout[-8000:] + proc.stderr[-3000:]
    )


def test_a_key_of_the_workers_without_its_hash_is_refused_by_the_judge() -> None:
    """A worker that sends a key in the judge's form (wire `k`, no hash) is refused by the
    judge's decoder: it would otherwise hash its handle, a round trip, while decoding
    (session 10's left item). The worker's form is decoded with its hash."""
    spec = protocol.WorkerSpec(python=sys.executable, tree="/nonexistent", home="/nonexistent",
                               names=())  # fmt: skip
    judge = standin.Worker(spec, "forged", [])  # never started: its decoder alone
    forged = wire.encode({Symbol("x"): 1}, lambda o: wire.Ref(protocol.HANDLE, 7))
    with pytest.raises(wire.WireError, match="a key of the worker's without its hash"):
        wire.decode(forged, judge._from_ref)
    honest = wire.encode({Symbol("x"): 1}, lambda o: wire.Ref(protocol.HANDLE, 7, local=True))
    got = wire.decode(honest, judge._from_ref)
    assert judge.hashes == {7: hash("x")} and len(got) == 1


class Symbol:
    def __init__(self, label: str) -> None:
        self.label = label

    def __hash__(self) -> int:
        return hash(self.label)


HOSTILE = """
import gc


def _forge(changed):
    # The worker's own end of the wire, found as code in it can find it (issue 18): its
    # reply to this call carries `changed` instead of what the worker computed.
    conn = next(o for o in gc.get_objects() if hasattr(o, "fd_out") and hasattr(o, "table"))
    real = conn.send

    def once(message):
        del conn.send
        real((*message[:3], changed))

    conn.send = once


def changes_a_link_never_made(xs):
    _forge(((None, 777, [1, 2]),))


def links_twice(xs):
    _forge(((0, xs, 5), (0, xs, 5)))


def links_a_number(n):
    _forge(((0, [n], 6),))


def links_what_is_not_a_container(s):
    _forge(((0, s, 8),))
"""

# Each result is kept (`_ = ...`): a discarded call would wait and go in a SEQ
# (Worker.defer), whose reply the forger above does not shape.
HOSTILE_FILES = {
    "test_never_made.py": """
import mylib


def test_a_link_never_made():
    _ = mylib.changes_a_link_never_made([1])
""",
    "test_twice.py": """
import mylib


def test_linked_twice():
    _ = mylib.links_twice([1])
""",
    "test_number.py": """
import mylib
from patchjudge.boundary import standin


def test_a_link_claimed_for_a_number_is_refused_and_let_go():
    w = standin._state.current()
    _ = mylib.links_a_number(3)  # the worker's word about a number: the judge links nothing
    _ = mylib.links_what_is_not_a_container("text")
    # 6 went in the SYNC of the next request (the stand-in module's read of the name).
    assert w.links == {} and w.unlinks == [8]
    assert mylib.links_a_number.__name__ == "links_a_number" and w.unlinks == []
""",
}


def test_a_worker_that_lies_about_links_fails_the_property_or_is_ignored(tmp_path: Path) -> None:
    """A link the judge never made, or made twice, is a protocol violation; a claim for
    what is not the judge's own plain container links nothing (the judge sends no data)."""
    proc = run_judge(tmp_path, HOSTILE_FILES, HOSTILE)
    got = outcomes(proc)
    assert got == {
        "test_a_link_never_made": "FAILED",
        "test_linked_twice": "FAILED",
        "test_a_link_claimed_for_a_number_is_refused_and_let_go": "PASSED",
    }, proc.stdout[-6000:]
    assert "broke the protocol: changed link 777, never made" in proc.stdout
    assert "broke the protocol: linked a container as 5 twice" in proc.stdout
