"""protocol.NEST: `f(g(x))` in one round trip; its shapes, pure, and what each end refuses."""

from __future__ import annotations

import os
import threading
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


@given(st.integers(2, protocol.NEST_DEPTH), st.lists(scalars, max_size=10), st.booleans())
def test_a_nests_answer_is_its_results_and_an_error_after_the_last(
    calls: int, results: list[Any], failed: bool
) -> None:
    error = (protocol.ERROR_BUILTIN, "ValueError", ("x",)) if failed else None
    expected = 1 <= len(results) < calls or (len(results) == calls and not failed)
    assert protocol.nest_answered(calls, (tuple(results), error)) is expected
    assert not protocol.nest_answered(calls, (tuple(results), "ValueError"))  # not described
    assert not protocol.nest_answered(calls, (list(results), None))
    assert not protocol.nest_answered(calls, (tuple(results), None, None))
    assert not protocol.nest_answered(calls, tuple(results))


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
    said = _read_all(from_worker, 2)
    assert said[0] == (protocol.OK, 1, ((3, "3", 1), None), ())
    # len(3) raised: the first result, then the error, and str is never called
    assert said[1][:2] == (protocol.OK, 2) and said[1][2][0] == (3,)
    assert said[1][2][1][:2] == (protocol.ERROR_BUILTIN, "TypeError")


def _read_all(fd: int, n: int) -> list[Any]:
    """The next `n` messages on `fd`, from one buffer (one read may hold several)."""
    buffer, said = bytearray(), []
    while len(said) < n:
        payload = wire.take_frame(buffer)
        if payload is None:
            buffer += os.read(fd, 1 << 20)
        else:
            said.append(wire.decode(payload))
    return said


def _serve(conn: Any, ended: list[BaseException]) -> None:
    try:
        conn.serve()
    except BaseException as exc:  # the worker's SystemExit, read by the test
        ended.append(exc)


def test_a_result_that_cannot_cross_stops_the_chain(worker_end: tuple[Any, int, int]) -> None:
    conn, to_worker, from_worker = worker_end
    big, past = protocol.NEST_BYTES + 10, wire.MAX_FRAME + 10
    nests = [
        # pow(2, 600_000) is past wire's largest int: uncrossable, an ERR as a CALL's
        ((pow, (2, 600_000), {}), (str,)),
        # bytes(past) cannot cross: the chain ends there as an error, len is never called
        ((abs, (-past,), {}), (bytes,), (len,)),
        # a result past NEST_BYTES ends the chain without one: the judge calls len alone
        ((abs, (-big,), {}), (bytes,), (len,)),
    ]
    for n, calls in enumerate(nests, 1):
        _write_builtins(to_worker, (protocol.QUERY, n, protocol.NEST, calls))
    _write(to_worker, (protocol.BYE,))
    ended: list[BaseException] = []
    # The answers pass a pipe's buffer: read while the worker writes.
    serving = threading.Thread(target=_serve, args=(conn, ended))
    serving.start()
    first, second, third = _read_all(from_worker, 3)
    serving.join()
    assert [type(e) for e in ended] == [SystemExit]
    assert first[:2] == (protocol.ERR, 1) and first[2][0] == protocol.ERROR_UNCROSSABLE
    assert second[:2] == (protocol.OK, 2) and second[2][0] == (past,)
    assert second[2][1][0] == protocol.ERROR_UNCROSSABLE
    assert third[:2] == (protocol.OK, 3) and third[2][1] is None
    assert third[2][0] == (big, bytes(big))


@pytest.mark.parametrize(
    "answer",
    [
        ((), None),  # no result at all
        ((1, 2), (protocol.ERROR_BUILTIN, "ValueError", ("x",))),  # all, and an error
        ((1, 2, 3), None),  # more than asked
        [(1, 2), None],
        None,
    ],
)
def test_the_judge_kills_a_worker_whose_nest_answer_is_not_one(tmp_path: Path, answer: Any) -> None:
    judge, to_judge, incidents = _judge_end(tmp_path)
    _write(to_judge, (protocol.OK, 1, answer, ()))
    frame = standin._Frame(1, nest=2)
    with pytest.raises(standin.WorkerFailure, match="a nested call's answer is not one"):
        judge._await(frame, None)
    assert len(incidents) == 1
    os.close(to_judge)
    os.close(judge.fd_in)


def test_the_judge_takes_a_nest_answer(tmp_path: Path) -> None:
    judge, to_judge, incidents = _judge_end(tmp_path)
    error = (protocol.ERROR_BUILTIN, "KeyError", ("k",))
    _write(to_judge, (protocol.OK, 1, ((3,), error), ()))
    results, raised = judge._await(standin._Frame(1, nest=2), None)
    assert results == (3,) and type(raised) is KeyError and raised.args == ("k",)
    assert incidents == []
    os.close(to_judge)
    os.close(judge.fd_in)
