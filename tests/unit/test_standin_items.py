"""A batch's items in few messages (issue 20): both ends of protocol.ITEMS, over real pipes.

The worker holds a batch's items and sends them together: before any other
message, past a frame's values or bytes, and once BATCH_FLUSH_S has passed
since it last wrote (a fake clock here: no test waits). The judge takes
several items a message and refuses what it did not ask for. What a property
sees through a real worker is test_standin_batching.py's and
test_standin_counted.py's tables; a step that hangs, test_standin.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.boundary import protocol, standin, wire, worker
from tests.unit import test_protocol
from tests.unit.test_protocol import _judge_end, _write
from tests.unit.test_wire import data

worker_end = test_protocol.worker_end  # the worker's end over real pipes, a fixture


def _frames(fd: int) -> list[Any]:
    """Every message the worker wrote so far, in order."""
    os.set_blocking(fd, False)
    buffer = bytearray()
    try:
        while chunk := os.read(fd, 1 << 20):
            buffer += chunk
    except BlockingIOError:
        pass
    out = []
    while (payload := wire.take_frame(buffer)) is not None:
        out.append(wire.decode(payload, lambda ref: ref))
    assert not buffer
    return out


def _kinds(frames: list[Any]) -> list[tuple[Any, ...]]:
    """Each message's kind and, for ITEMS, its items."""
    return [(m[0], *m[2:]) if m[0] == protocol.ITEMS else (m[0],) for m in frames]


def _batch(conn: Any, items: Any, limit: int = protocol.BATCH_ITEMS, plain: bool = False) -> None:
    conn.answer(7, protocol.BATCH, iter(items), limit, plain)


# --- the worker's end --------------------------------------------------------------------


def test_a_batch_is_one_items_message_and_its_end(worker_end: tuple[Any, int, int]) -> None:
    conn, _, from_worker = worker_end
    _batch(conn, range(10), limit=10)
    frames = _frames(from_worker)
    assert _kinds(frames) == [(protocol.ITEMS, *range(10)), (protocol.OK,)]
    assert frames[0][1] == frames[1][1] == 7
    _batch(conn, range(3), limit=2)  # as many as asked, then the end
    assert _kinds(_frames(from_worker)) == [(protocol.ITEMS, 0, 1), (protocol.OK,)]


def _failing(n: int, error: BaseException) -> Iterator[int]:
    yield from range(n)
    raise error


@pytest.mark.parametrize(
    ("items", "end"),
    [
        (_failing(3, ValueError("at 3")), (protocol.ERROR_BUILTIN, "ValueError", ("at 3",))),
        (iter(range(3)), (protocol.ERROR_BUILTIN, "StopIteration", ())),
        (_failing(0, KeyError("first")), (protocol.ERROR_BUILTIN, "KeyError", ("first",))),
    ],
)
def test_the_items_before_an_error_come_before_it(
    worker_end: tuple[Any, int, int], items: Iterator[int], end: tuple[Any, ...]
) -> None:
    conn, _, from_worker = worker_end
    _batch(conn, items)
    frames = _frames(from_worker)
    before = [(protocol.ITEMS, 0, 1, 2)] if end[1] != "KeyError" else []
    assert _kinds(frames) == [*before, (protocol.ERR,)]
    assert frames[-1][2][:3] == end


def test_an_item_that_cannot_cross_ends_the_batch_after_the_ones_before(
    worker_end: tuple[Any, int, int],
) -> None:
    conn, _, from_worker = worker_end
    conn.to_ref = lambda obj: None  # nothing is a handle here: a module cannot cross
    _batch(conn, [1, 2, os, 4])
    frames = _frames(from_worker)
    assert _kinds(frames) == [(protocol.ITEMS, 1, 2), (protocol.ERR,)]
    assert frames[-1][2][0] == protocol.ERROR_UNCROSSABLE


def test_a_callback_finds_the_judge_holding_every_item_before_it(
    worker_end: tuple[Any, int, int],
) -> None:
    conn, to_worker, from_worker = worker_end
    ask = worker.JudgeFunction(conn, 5)
    _write(to_worker, (protocol.OK, conn.next_id, "judged", ()))  # the judge's answer, ahead

    def steps() -> Iterator[Any]:
        yield 0
        yield 1
        yield ask(2)
        yield 3

    _batch(conn, steps(), limit=4)
    assert _kinds(_frames(from_worker)) == [
        (protocol.ITEMS, 0, 1),
        (protocol.CALLBACK,),
        (protocol.ITEMS, "judged", 3),
        (protocol.OK,),
    ]


def test_a_slow_step_sends_what_is_held_so_the_deadline_times_each_step(
    worker_end: tuple[Any, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, _, from_worker = worker_end
    now = [100.0]
    monkeypatch.setattr(worker, "_CLOCK", lambda: now[0])
    conn.written = now[0]

    def steps() -> Iterator[int]:
        for i in range(8):
            if i in (2, 5):  # these steps take past BATCH_FLUSH_S each
                now[0] += 2 * protocol.BATCH_FLUSH_S
            yield i

    _batch(conn, steps(), limit=8)
    assert _kinds(_frames(from_worker)) == [
        (protocol.ITEMS, 0, 1, 2),
        (protocol.ITEMS, 3, 4, 5),
        (protocol.ITEMS, 6, 7),
        (protocol.OK,),
    ]


def test_a_counted_batch_ends_after_an_item_that_is_not_data(
    worker_end: tuple[Any, int, int],
) -> None:
    conn, _, from_worker = worker_end
    _batch(conn, [1, (2, "x"), [3], 4], plain=True)
    assert _kinds(_frames(from_worker)) == [(protocol.ITEMS, 1, (2, "x"), [3]), (protocol.OK,)]


def test_items_are_sent_within_a_frames_values(
    worker_end: tuple[Any, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, _, from_worker = worker_end
    monkeypatch.setattr(wire, "MAX_ITEMS", 20)  # an item may hold 17 values with the head's 3
    lists = [[i] * 5 for i in range(5)]  # 6 values each: two a message
    _batch(conn, [*lists, [0] * 16, [0] * 17])
    frames = _frames(from_worker)  # each decoded under the same limit
    assert _kinds(frames) == [
        (protocol.ITEMS, *lists[:2]),
        (protocol.ITEMS, *lists[2:4]),
        (protocol.ITEMS, lists[4]),
        (protocol.ITEMS, [0] * 16),
        (protocol.ERR,),
    ]
    assert frames[-1][2][0] == protocol.ERROR_UNCROSSABLE
    assert "more than 20 items" in frames[-1][2][1]


def test_items_are_sent_within_a_frames_bytes(
    worker_end: tuple[Any, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, _, from_worker = worker_end
    monkeypatch.setattr(wire, "MAX_FRAME", 200)  # 136 bytes of items a message
    texts = ["x" * 40 for _ in range(7)]  # 45 bytes each: three a message
    _batch(conn, [*texts, "y" * 131, "z" * 132])
    frames = _frames(from_worker)
    assert _kinds(frames) == [
        (protocol.ITEMS, *texts[:3]),
        (protocol.ITEMS, *texts[3:6]),
        (protocol.ITEMS, texts[6]),
        (protocol.ITEMS, "y" * 131),
        (protocol.ERR,),
    ]
    assert "too large to cross" in frames[-1][2][1]


# --- the wire ---------------------------------------------------------------------------


@given(st.lists(data, max_size=6), st.integers(0, 2**40))
def test_members_encoded_alone_make_the_message_encoded_at_once(
    values: list[Any], ident: int
) -> None:
    members = [wire.encode_member(v, None, wire.MAX_ITEMS) for v in values]
    head = (protocol.ITEMS, ident)
    payload = wire.message_of(head, [m for m, _ in members])
    assert payload == wire.encode((*head, *values))
    assert wire.same(wire.decode(payload), (*head, *values))
    # Each member's count is the values the decoder counts for it.
    for value, (_, count) in zip(values, members, strict=True):
        with pytest.raises(wire.WireError, match="more than"):
            wire.encode_member(value, None, count - 1)


# --- the judge's end ----------------------------------------------------------------------


def _batch_frame(limit: int, plain: bool = False) -> standin._Frame:
    frame = standin._Frame(1, items=[])
    frame.limit, frame.plain = limit, plain
    return frame


def test_the_judge_takes_several_items_a_message(tmp_path: Path) -> None:
    end, to_judge, incidents = _judge_end(tmp_path)
    frame = _batch_frame(5)
    for message in (
        (protocol.ITEMS, 1, "a", [2]),
        (protocol.ITEMS, 1, 3),
        (protocol.OK, 1, None, ()),
    ):
        _write(to_judge, message)
    assert end._await(frame, None) is None
    assert frame.items == ["a", [2], 3] and incidents == []
    # A counted batch's last item may be an object; only an item after one is refused.
    frame = _batch_frame(5, plain=True)
    for message in ((protocol.ITEMS, 1, 1, (2, "x"), [3]), (protocol.OK, 1, None, ())):
        _write(to_judge, message)
    assert end._await(frame, None) is None and frame.items == [1, (2, "x"), [3]]
    os.close(to_judge)
    os.close(end.fd_in)


@pytest.mark.parametrize(
    ("limit", "plain", "messages", "said"),
    [
        (2, False, [(1, 1, 2, 3)], "a batch larger than asked"),
        (3, False, [(1, 1, 2), (1, 3, 4)], "a batch larger than asked"),
        (5, True, [(1, [1], 2)], "a counted batch went on past an item that is not data"),
        (5, True, [(1, 1, [2]), (1, 3)], "a counted batch went on past an item that is not data"),
        (5, False, [(2, 1)], "items for call 2, not asked"),
        (5, False, [(1,)], "a 'its' message of 2 fields"),
    ],
)
def test_the_judge_refuses_items_it_did_not_ask_for(
    tmp_path: Path, limit: int, plain: bool, messages: list[tuple[Any, ...]], said: str
) -> None:
    end, to_judge, incidents = _judge_end(tmp_path)
    for message in messages:
        _write(to_judge, (protocol.ITEMS, *message))
    with pytest.raises(standin.WorkerFailure, match=said):
        end._await(_batch_frame(limit, plain), None)
    assert len(incidents) == 1
    os.close(to_judge)
    os.close(end.fd_in)
