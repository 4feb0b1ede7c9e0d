"""One write a round trip: a handle's release rides with the next request (issue 17).

Each write to the worker's pipe wakes it; a release written on its own cost
the judge and its worker a wake-up and a switch each way besides the request's.
The release is the same message, read by the worker before the request.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
class Bag:
    def __init__(self):
        self.xs = []

    def add(self, x):
        self.xs.append(x)
        return len(self.xs)

    def __len__(self):
        return len(self.xs)
"""

PROPERTIES = """
import gc
import os

import mylib
from patchjudge.boundary import protocol, standin, wire


def test_a_release_rides_in_the_next_requests_write():
    worker = standin._state.current()
    kept = mylib.Bag()
    gone = mylib.Bag()
    del gone
    gc.collect()
    assert worker.released  # `gone`, and what its making left behind
    writes = []
    real = os.write

    def counting(fd, data):
        if fd == worker.fd_out:
            writes.append(bytes(data))
        return real(fd, data)

    os.write = counting
    try:
        got = kept.add(5)
    finally:
        os.write = real
    assert got == 1 and worker.released == []
    assert len(writes) == 1
    frames, rest = wire.split_frames(writes[0])
    assert rest == b"" and len(frames) == 2
    kinds = [wire.decode(f, lambda ref: ref)[0] for f in frames]
    assert kinds == [protocol.RELEASE, protocol.QUERY]


def writes_of(worker, body):
    writes = []
    real = os.write

    def counting(fd, data):
        if fd == worker.fd_out:
            writes.append(bytes(data))
        return real(fd, data)

    os.write = counting
    try:
        body()
    finally:
        os.write = real
    return [[wire.decode(f, lambda ref: ref)[2:4] for f in wire.split_frames(w)[0]] for w in writes]


def test_an_operations_claim_rides_in_the_operations_write(request):
    worker = standin._state.current()
    bag = mylib.Bag()
    bag.add(1)
    gc.collect()
    worker.released.clear()  # not this test's subject
    got = []
    # The class is asked once a handle, in the same write as the operation, and read first.
    assert writes_of(worker, lambda: got.append(len(bag))) == [[("op", "typename"), ("op", "len")]]
    assert writes_of(worker, lambda: got.append(len(bag))) == [[("op", "len")]]
    assert got == [1, 1]
    seen = standin._state.operations[request.node.nodeid]
    assert seen == {("len", "mylib.Bag")}


def test_a_failing_operation_keeps_its_claim(request):
    bag = mylib.Bag()
    try:
        bag < 3
    except TypeError as exc:
        assert "not supported" in str(exc)
    else:
        raise AssertionError("no TypeError")
    assert ("lt", "mylib.Bag") in standin._state.operations[request.node.nodeid]


def test_the_worker_still_answers_after_many_releases():
    bags = [mylib.Bag() for _ in range(50)]
    del bags
    gc.collect()
    kept = mylib.Bag()
    assert [kept.add(i) for i in range(3)] == [1, 2, 3]
"""


def test_a_release_and_the_next_request_are_one_write(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, LIBRARY)
    got = outcomes(proc)
    assert len(got) == 4 and set(got.values()) == {"PASSED"}, proc.stdout[-6000:]
