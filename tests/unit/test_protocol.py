"""protocol.py: one table of what crosses; both ends follow it and refuse what it lacks (issue 17)."""

from __future__ import annotations

import ast
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import failure
from patchjudge.boundary import protocol, standin, wire, worker
from patchjudge.boundary.protocol import JUDGE, WORKER

BOUNDARY = Path(protocol.__file__).parent

# One well-formed example of each kind, as its sender builds it.
EXAMPLES: dict[str, tuple[Any, ...]] = {
    protocol.QUERY: (protocol.QUERY, 1, protocol.OP, "len", [1, 2], ()),
    protocol.RELEASE: (protocol.RELEASE, ((3, 1),)),
    protocol.BYE: (protocol.BYE,),
    protocol.SYNC: (protocol.SYNC, ((1, [1, 2]), (2, None))),
    protocol.SEEDS: (protocol.SEEDS, ((1, 0), (2, 4294967295))),
    protocol.ENVIRON: (protocol.ENVIRON, (("LIB_MODE", None), ("TZ", "UTC"))),
    protocol.OK: (protocol.OK, 1, {"a": [1]}, ()),
    protocol.ERR: (protocol.ERR, 1, (protocol.ERROR_BUILTIN, "ValueError", ("x",))),
    protocol.ITEMS: (protocol.ITEMS, 1, 7, "eight", (9,)),
    protocol.CALLBACK: (protocol.CALLBACK, 2, 5, (1,), {"k": 2}),
    protocol.JUDGE_OP: (protocol.JUDGE_OP, 2, 5, "len", ()),
    protocol.JUDGE_METHOD: (protocol.JUDGE_METHOD, 2, 5, "read", (1,), {}),
    protocol.WARN: (protocol.WARN, 3, DeprecationWarning, "old", "lib", "/t/lib.py", 4),
}


def test_every_kind_has_an_example() -> None:
    assert set(EXAMPLES) == set(protocol.MESSAGES)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_every_kind_round_trips_and_is_accepted_only_where_it_is_received(kind: str) -> None:
    message = wire.decode(wire.encode(EXAMPLES[kind]))
    assert message == EXAMPLES[kind]
    for end in (JUDGE, WORKER):
        if kind in protocol.received_by(end):
            assert protocol.check(message, end) == kind
        else:
            with pytest.raises(protocol.ProtocolError, match="message of"):
                protocol.check(message, end)


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("ok", "sent str, not a message"),
        ((), "sent tuple, not a message"),
        ((3, 1), "sent tuple, not a message"),
        (("hello", 1), "a 'hello' message of 2 fields"),
        (("ok", 1, 2), "a 'ok' message of 3 fields"),
        (("ok", 1, 2, (), 4), "a 'ok' message of 5 fields"),
        (("err", "1", ("builtin",)), "sent a 'err' message with no call id"),
        (("q", 1), "a 'q' message of 2 fields"),
        (("bye", 1), "a 'bye' message of 2 fields"),
    ],
)
def test_a_message_outside_the_table_is_refused(message: Any, said: str) -> None:
    for end in (JUDGE, WORKER):
        with pytest.raises(protocol.ProtocolError) as raised:
            protocol.check(message, end)
        if message and type(message) is tuple and message[0] in protocol.received_by(end):
            assert str(raised.value) == said


def test_each_end_handles_exactly_the_kinds_it_may_receive() -> None:
    conn = _connection(-1, -1)
    assert {*conn.handlers, protocol.OK, protocol.ERR} == protocol.received_by(WORKER)
    assert set(standin._ANSWERS) == protocol.received_by(JUDGE)


def test_each_end_answers_exactly_the_declared_requests_and_operations() -> None:
    conn = _connection(-1, -1)
    # CALL, CALL_METHOD, BATCH, SEQ, NEST and GETITEMS are answered by `answer` itself
    # (changed arguments, items, calls in order).
    answered = {protocol.CALL, protocol.CALL_METHOD, protocol.BATCH, protocol.SEQ, protocol.NEST,
                protocol.GETITEMS}  # fmt: skip
    assert {*conn.requests, *answered} == protocol.REQUESTS
    assert set(worker.OPS) == protocol.OPERATORS
    assert set(standin.JUDGE_OPS) == protocol.JUDGE_OPERATIONS
    assert set(protocol.JUDGE_CAPABILITIES) - {"call"} <= protocol.JUDGE_OPERATIONS


def _sent_operators(source: str) -> set[str]:
    """The operator names standin.py passes to `_op(...)` and to an OP request, as literals."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        # A query built whole, (QUERY, id, OP, "name", ...): claims ride with an operation.
        if isinstance(node, ast.Tuple):
            for op, name in itertools.pairwise(node.elts):
                if (
                    isinstance(op, ast.Attribute)
                    and op.attr == "OP"
                    and isinstance(name, ast.Constant)
                ):
                    found.add(name.value)
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        first = node.args[0]
        if name == "_op" and isinstance(first, ast.Constant):
            found.add(first.value)
        is_op = (isinstance(first, ast.Attribute) and first.attr == "OP") or (
            isinstance(first, ast.Constant) and first.value == protocol.OP
        )
        if is_op and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            found.add(node.args[1].value)
    return found


def test_every_operator_the_judge_sends_is_declared() -> None:
    sent = _sent_operators((BOUNDARY / "standin.py").read_text())
    assert {"len", "repr", "next", "typename", "copy", "getitem"} <= sent
    assert sent <= protocol.OPERATORS, sent - protocol.OPERATORS


# --- the worker's end, in this process over real pipes ------------------------------


def _connection(fd_in: int, fd_out: int) -> Any:
    worker.wire, worker.protocol = wire, protocol
    return worker.Connection(fd_in, fd_out, None)


@pytest.fixture
def worker_end() -> Iterator[tuple[Any, int, int]]:
    """A worker Connection reading `to_worker` and writing `from_worker`."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    yield _connection(to_r, from_w), to_w, from_r
    for fd in (to_r, to_w, from_r, from_w):
        os.close(fd)


def _write(fd: int, message: Any) -> None:
    os.write(fd, wire.frame(wire.encode(message)))


def _read(fd: int) -> Any:
    buffer = bytearray()
    while (payload := wire.take_frame(buffer)) is None:
        buffer += os.read(fd, 1 << 16)
    return wire.decode(payload)


def test_the_worker_answers_a_declared_operation(worker_end: tuple[Any, int, int]) -> None:
    conn, to_worker, from_worker = worker_end
    _write(to_worker, EXAMPLES[protocol.QUERY])
    _write(to_worker, (protocol.BYE,))
    with pytest.raises(SystemExit) as ended:
        conn.serve()
    assert ended.value.code == 0
    assert _read(from_worker) == (protocol.OK, 1, 2, ())


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ((protocol.QUERY, 1, "frobnicate", 1), "no request 'frobnicate'"),
        ((protocol.QUERY, 1, protocol.OP, "frobnicate", 1, ()), "no operation 'frobnicate'"),
    ],
)
def test_the_worker_refuses_an_undeclared_request(
    worker_end: tuple[Any, int, int], query: tuple[Any, ...], said: str
) -> None:
    conn, to_worker, from_worker = worker_end
    _write(to_worker, query)
    _write(to_worker, (protocol.BYE,))
    with pytest.raises(SystemExit):
        conn.serve()
    assert _read(from_worker) == (protocol.ERR, 1, (protocol.ERROR_BUILTIN, "LookupError", (said,)))


@pytest.mark.parametrize(
    "message", [("hello", 1), (protocol.ITEMS, 1, 2), (protocol.CALLBACK, 1, 2, (), {}), "q"]
)
def test_the_worker_stops_at_a_message_it_may_not_receive(
    worker_end: tuple[Any, int, int], message: Any
) -> None:
    conn, to_worker, _ = worker_end
    _write(to_worker, message)
    with pytest.raises(SystemExit) as ended:
        conn.serve()
    assert "patchjudge worker: the judge " in str(ended.value.code)


# --- the judge's end ------------------------------------------------------------------


def _judge_end(tmp_path: Path) -> tuple[standin.Worker, int, list[str]]:
    spec = protocol.WorkerSpec("python3", str(tmp_path), str(tmp_path), ("mylib",))
    incidents: list[str] = []
    end = standin.Worker(spec, "test_x.py", incidents)
    end.fd_in, to_judge = os.pipe()
    return end, to_judge, incidents


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (("hello", 1), "broke the protocol: a 'hello' message of 2 fields"),
        ((protocol.QUERY, 1, "len"), "broke the protocol: a 'q' message of 3 fields"),
        ((protocol.BYE,), "broke the protocol: a 'bye' message of 1 fields"),
        ((protocol.OK, 1, 2), "broke the protocol: a 'ok' message of 3 fields"),
        ((protocol.OK, 9, 2, ()), "broke the protocol: forged a reply to call 9, not asked"),
        ([1, 2], "broke the protocol: sent list, not a message"),
        ((protocol.ITEMS, 1, 2), "broke the protocol: items for a call that is not a batch"),
        ((protocol.ITEMS, 1), "broke the protocol: a 'its' message of 2 fields"),
    ],
)
def test_the_judge_kills_a_worker_that_sends_what_the_table_lacks(
    tmp_path: Path, message: Any, said: str
) -> None:
    end, to_judge, incidents = _judge_end(tmp_path)
    _write(to_judge, message)
    with pytest.raises(standin.WorkerFailure, match=said):
        end._await(standin._Frame(1), None)
    assert [failure.worker_text(*i) for i in incidents] == [f"the worker for test_x.py {said}"]
    os.close(to_judge)
    os.close(end.fd_in)


def test_the_judge_takes_a_declared_reply(tmp_path: Path) -> None:
    end, to_judge, incidents = _judge_end(tmp_path)
    _write(to_judge, (protocol.OK, 1, [1, 2], ()))
    assert end._await(standin._Frame(1), None) == [1, 2]
    assert incidents == []
    os.close(to_judge)
    os.close(end.fd_in)


@pytest.mark.parametrize(
    ("op", "args"), [("frobnicate", ()), (protocol.OP, ("frobnicate", 1, ())), ("", ())]
)
def test_the_judge_never_sends_an_undeclared_request(
    tmp_path: Path, op: str, args: tuple[Any, ...]
) -> None:
    end, to_judge, _ = _judge_end(tmp_path)
    with pytest.raises(protocol.ProtocolError, match="in the protocol"):
        end.request(op, *args)
    assert end.proc is None  # refused before any worker started
    os.close(to_judge)
    os.close(end.fd_in)


# --- the worker spec --------------------------------------------------------------------

names = st.lists(st.text(max_size=8), max_size=3).map(tuple)
specs = st.builds(
    protocol.WorkerSpec,
    python=st.text(max_size=8),
    tree=st.text(max_size=8),
    home=st.text(max_size=8),
    names=names,
    pythonpath=names,
    coverage=names,
    box=st.none()
    | names.flatmap(
        lambda data: st.builds(
            protocol.BoxSpec, st.text(max_size=8), st.text(), names, st.just(data), st.just(data)
        )
    ),
    call_timeout_s=st.floats(min_value=0, max_value=1e6),
    shape=st.sampled_from(protocol.SHAPES),
    base=st.booleans(),
    data=names,
)


@given(specs)
def test_a_worker_spec_round_trips(spec: protocol.WorkerSpec) -> None:
    assert protocol.decode_spec(protocol.encode_spec(spec)) == spec


def test_a_spec_with_only_the_required_keys_takes_the_declared_defaults() -> None:
    doc = {"python": "py", "tree": "t", "home": "h", "names": ["mylib"]}
    assert protocol.decode_spec(json.dumps(doc)) == protocol.WorkerSpec("py", "t", "h", ("mylib",))


REQUIRED = {"python": "py", "tree": "t", "home": "h", "names": ["m"]}


@pytest.mark.parametrize(
    ("doc", "said"),
    [
        ({k: v for k, v in REQUIRED.items() if k != "home"}, "the worker spec lacks ['home']"),
        ({**REQUIRED, "isolation": "process"}, "the worker spec has unknown keys ['isolation']"),
        ({**REQUIRED, "box": {"tree": "t"}}, "the worker spec's box lacks ['home']"),
        ({**REQUIRED, "box": {"tree": "t", "home": "h", "rw": []}}, "box has unknown keys"),
        ({**REQUIRED, "names": "mylib"}, "the worker spec's names is not a list of strings"),
        ({**REQUIRED, "tree": 3}, "the worker spec's tree is int, not a string"),
        ({**REQUIRED, "call_timeout_s": "10"}, "call_timeout_s is '10', not a number"),
        ({**REQUIRED, "shape": "thread"}, "the worker spec's shape is 'thread'"),
        ({**REQUIRED, "base": "yes"}, "the worker spec's base is str, not true or false"),
        (
            {**REQUIRED, "box": {"tree": "t", "home": "h", "data_from": ["/c"], "data_at": []}},
            "data_from and data_at of other lengths",
        ),
        ({**REQUIRED, "data": "tzif/A"}, "the worker spec's data is not a list of strings"),
        ([], "the worker spec is list, not an object"),
    ],
)
def test_a_spec_that_is_not_the_record_is_refused(doc: Any, said: str) -> None:
    with pytest.raises(protocol.SpecError, match=said.replace("[", r"\[").replace("]", r"\]")):
        protocol.decode_spec(json.dumps(doc))


def test_a_spec_that_is_not_json_is_refused() -> None:
    with pytest.raises(protocol.SpecError, match="PATCHJUDGE_ORACLE is not JSON"):
        protocol.decode_spec("{")
