"""protocol.NEST: `f(g(x))` in one round trip; its shapes, pure, and what each end refuses."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.boundary import protocol, standin, wire
from tests.unit import test_protocol
from tests.unit.test_protocol import _judge_end, _write

worker_end = test_protocol.worker_end  # the worker's end over real pipes, a fixture

# What a NEST's first call may carry: data and handles (here, references to them).
scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=6) | st.binary(max_size=6)
handles = st.integers(1, 10**6).map(lambda i: wire.Ref(protocol.HANDLE, i))
arguments = st.lists(scalars | handles, max_size=4).map(tuple)
keywords = st.dictionaries(st.text("abc", min_size=1, max_size=3), scalars, max_size=2)
nests = st.builds(
    lambda first, args, kwargs, outers: ((first, args, kwargs), *((o,) for o in outers)),
    handles,
    arguments,
    keywords,
    st.lists(handles, min_size=1, max_size=protocol.NEST_DEPTH - 1),
)


def _ref(obj: Any) -> wire.Ref | None:
    return obj if type(obj) is wire.Ref else None


def _unref(ref: wire.Ref) -> Any:
    return ref


@given(nests, st.integers(1, 10**9))
def test_a_nest_round_trips_and_is_one(calls: tuple[Any, ...], ident: int) -> None:
    message = (protocol.QUERY, ident, protocol.NEST, calls)
    back = wire.decode(wire.encode(message, _ref), _unref)
    assert back == message
    assert protocol.check(back, protocol.WORKER) == protocol.QUERY
    assert protocol.nest_ok(back[3])


@given(nests, st.data())
def test_a_malformed_nest_is_refused(calls: tuple[Any, ...], data: st.DataObject) -> None:
    first, *outers = calls
    broken = data.draw(
        st.sampled_from(
            [
                (first,),  # one call is no nest
                (first, *outers, *[outers[0]] * protocol.NEST_DEPTH),  # past the depth
                ((first[0], list(first[1]), first[2]), *outers),  # arguments not a tuple
                ((first[0], first[1], tuple(first[2].items())), *outers),  # keywords not a dict
                ((first[0], first[1]), *outers),  # a first call without keywords
                (first, *((o[0], ()) for o in outers)),  # a later call with arguments
                (first, *(o[0] for o in outers)),  # a later call not a tuple
                list(calls),
            ]
        )
    )
    assert not protocol.nest_ok(broken)


@given(st.integers(2, protocol.NEST_DEPTH), st.integers(0, 10), st.booleans())
def test_a_nests_answer_is_every_result_or_an_error_after_the_first(
    calls: int, items: int, failed: bool
) -> None:
    error = (protocol.ERROR_BUILTIN, "ValueError", ("x",)) if failed else None
    expected = (1 <= items < calls) if failed else items == calls
    assert protocol.nest_answered(calls, items, error) is expected
    assert not protocol.nest_answered(calls, items, "ValueError")  # an error is a description


# --- each end refuses a nest that is not one -----------------------------------------


def _write_builtins(fd: int, message: Any) -> None:
    """`message` with the builtins it names as BUILTIN references, as the judge sends them."""

    def ref(obj: Any) -> wire.Ref | None:
        name = protocol.builtin_name(obj)
        return None if name is None else wire.Ref(protocol.BUILTIN, 0, name)

    os.write(fd, wire.frame(wire.encode(message, ref)))


def test_the_worker_stops_at_a_malformed_nest(worker_end: tuple[Any, int, int]) -> None:
    conn, to_worker, _ = worker_end
    _write_builtins(to_worker, (protocol.QUERY, 1, protocol.NEST, ((len, ("ab",), {}),)))
    with pytest.raises(SystemExit) as ended:
        conn.serve()
    assert ended.value.code == "patchjudge worker: the judge sent a nest that is not one"


def test_the_worker_answers_a_nest_with_each_result_then_the_end(
    worker_end: tuple[Any, int, int],
) -> None:
    conn, to_worker, from_worker = worker_end
    # builtins cross by name: abs(-3) -> 3, then str(3), then len("3")
    calls = ((abs, (-3,), {}), (str,), (len,))
    _write_builtins(to_worker, (protocol.QUERY, 1, protocol.NEST, calls))
    _write_builtins(
        to_worker, (protocol.QUERY, 2, protocol.NEST, ((abs, (-3,), {}), (len,), (str,)))
    )
    _write(to_worker, (protocol.BYE,))
    with pytest.raises(SystemExit):
        conn.serve()
    os.set_blocking(from_worker, False)  # the worker has written all it will
    buffer = bytearray()
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(from_worker, 1 << 16):
            buffer += chunk
    said = []
    while (payload := wire.take_frame(buffer)) is not None:
        said.append(wire.decode(payload))
    assert len(said) == 6
    assert said[:4] == [(protocol.ITEM, 1, 3), (protocol.ITEM, 1, "3"), (protocol.ITEM, 1, 1),
                        (protocol.OK, 1, None, ())]  # fmt: skip
    # len(3) raised: the first result, then the error, and str is never called
    assert said[4] == (protocol.ITEM, 2, 3)
    assert said[5][:2] == (protocol.OK, 2) and said[5][2][:2] == (
        protocol.ERROR_BUILTIN,
        "TypeError",
    )


@pytest.mark.parametrize(
    ("items", "end", "said"),
    [
        ((), None, "a nested call's answer is not one"),  # no result at all
        ((1,), None, "a nested call's answer is not one"),  # fewer than asked, no error
        ((1, 2), (protocol.ERROR_BUILTIN, "ValueError", ("x",)), "not one"),  # all, and an error
        ((1, 2, 3), None, "a batch larger than asked"),  # more than asked
    ],
)
def test_the_judge_kills_a_worker_whose_nest_answer_is_not_one(
    tmp_path: Path, items: tuple[Any, ...], end: Any, said: str
) -> None:
    judge, to_judge, incidents = _judge_end(tmp_path)
    for item in items:
        _write(to_judge, (protocol.ITEM, 1, item))
    _write(to_judge, (protocol.OK, 1, end, ()))
    frame = standin._Frame(1, items=[], limit=2, nest=True)
    with pytest.raises(standin.WorkerFailure, match=said):
        judge._await(frame, None)
    assert len(incidents) == 1
    os.close(to_judge)
    os.close(judge.fd_in)


def test_the_judge_takes_a_nest_answer(tmp_path: Path) -> None:
    judge, to_judge, incidents = _judge_end(tmp_path)
    for message in (
        (protocol.ITEM, 1, 3),
        (protocol.OK, 1, (protocol.ERROR_BUILTIN, "KeyError", ("k",)), ()),
    ):
        _write(to_judge, message)
    frame = standin._Frame(1, items=[], limit=2, nest=True)
    error = judge._await(frame, None)
    assert frame.items == [3] and type(error) is KeyError and error.args == ("k",)
    assert incidents == []
    os.close(to_judge)
    os.close(judge.fd_in)
