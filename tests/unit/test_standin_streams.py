"""A judge stream read and written by the code under test: one round trip a method call (issue 17).

btclib reads the property's `BytesIO` a byte at a time where it lies; each
`stream.read(n)` on the worker's proxy was a JUDGE_OP getattr, then a CALLBACK
of the bound method it returned. It is one JUDGE_METHOD now (protocol.py).
The same file bare and through a real worker records the same and fails the
same; the counts are the judge's own; the worker may still only read the
stream's methods, and an object never given still kills it.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.unit.test_standin import outcomes, run_judge
from tests.unit.test_standin_batching import recorded, run_bare

LIBRARY = """
import io


def octets_stream(data):
    return data if isinstance(data, io.BytesIO) else io.BytesIO(bytes(data))


def var_bytes(data):
    stream = octets_stream(data)
    n = stream.read(1)[0]
    out = stream.read(n)
    if len(out) != n:
        raise ValueError(f"short: {len(out)} of {n}")
    return out


def guarded_read(stream):
    try:
        return stream.read(1)
    except ValueError as exc:
        return f"ValueError: {exc}"


def keyword_read(stream):
    try:
        return stream.read(size=1)
    except TypeError as exc:
        return f"TypeError: {exc}"


def swallowing_read(stream):
    try:
        return stream.read()
    except Exception as exc:
        return f"{type(exc).__name__}"


def write_all(stream, parts):
    return [stream.write(p) for p in parts] + [stream.tell()]


def lines(stream):
    return [stream.readline() for _ in range(3)]


def forge_method(obj, name, ident=None):
    conn = object.__getattribute__(obj, "_conn")
    given = object.__getattribute__(obj, "_id")
    try:
        return conn.judge_method(given if ident is None else ident, name, (), {})
    except AttributeError as exc:
        return f"AttributeError: {exc}"
"""

OBSERVED = """
import io
import json
import os

import pytest

import mylib


def record(name, obs):
    os.makedirs("obs", exist_ok=True)
    with open(f"obs/{name}.json", "w") as f:
        json.dump(obs, f)


def text(b):
    return b.decode("latin-1")


def test_reads_where_the_stream_is():
    stream = io.BytesIO(b"\\x03abcdef")
    got = mylib.var_bytes(stream)
    record("in_place", [text(got), stream.tell(), text(stream.read()), text(mylib.var_bytes(b"\\x01q"))])


def test_a_subclass_of_the_propertys_counts_the_reads():
    reads = []

    class Recording(io.BytesIO):
        def read(self, size=-1):
            reads.append(size)
            return super().read(size)

    stream = Recording(b"\\x02xyz")
    record("recording", [text(mylib.var_bytes(stream)), reads, text(stream.read())])


def test_a_closed_stream_raises_in_the_library():
    stream = io.BytesIO(b"ab")
    stream.close()
    record("closed", mylib.guarded_read(stream))


def test_a_keyword_the_method_refuses():
    record("keyword", mylib.keyword_read(io.BytesIO(b"ab")))


def test_an_error_of_the_propertys_read_reaches_the_property():
    class Broken(io.BytesIO):
        def read(self, size=-1):
            raise KeyError(f"broken read of {size}")

    with pytest.raises(KeyError, match="broken read of 1"):
        mylib.var_bytes(Broken(b"x"))
    record("broken", "raised")


def test_writes_and_lines():
    out = io.BytesIO()
    told = mylib.write_all(out, [b"a", b"bc"])
    record("writes", [told, text(out.getvalue()), mylib.lines(io.StringIO("a\\nb\\n"))])


def test_a_short_stream_fails_in_the_library():
    mylib.var_bytes(io.BytesIO(b"\\x05ab"))
"""

# The judge's own counter, read by the property: round trips by kind.
COUNTED = {
    "test_counted.py": """
import io

import mylib
from patchjudge.boundary import standin


def diff(before, after):
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def test_a_read_is_one_round_trip():
    worker = standin._state.current()
    mylib.var_bytes(b"\\x01a")
    stream = io.BytesIO(b"\\x03abcdef")
    before = dict(worker.requests)
    assert mylib.var_bytes(stream) == b"abc"
    got = diff(before, worker.requests)
    assert got["callback"] == 2, got  # read(1), read(3): the getattr and the call at once


def test_only_the_streams_methods_are_read():
    said = mylib.forge_method(io.BytesIO(b"x"), "__class__")
    assert said == "AttributeError: '__class__': not a public attribute of the judge's object"


def test_an_assert_in_the_propertys_read_is_a_verdict():
    class Strict(io.BytesIO):
        def read(self, size=-1):
            assert size >= 0, "an unbounded read"
            return super().read(size)

    mylib.swallowing_read(Strict(b"ab"))
""",
    "test_forged.py": """
import io

import mylib


def test_an_object_never_given_kills_the_worker():
    try:
        mylib.forge_method(io.BytesIO(b"x"), "read", ident=10**6)
    except Exception:
        pass
""",
}


def _errors(stdout: str) -> dict[str, str]:
    """Test name -> the last error line (`E   Type: message`) of its failure's report."""
    found = {}
    for name, body in re.findall(
        r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} |\n={3,})", stdout, re.S
    ):
        errors = re.findall(r"^E +(\w+(?:Error|Exception)\b.*)$", body, re.M)
        found[name] = errors[-1] if errors else ""
    return found


def test_a_judge_stream_through_a_worker_observes_and_fails_as_bare(tmp_path: Path) -> None:
    bare = run_bare(tmp_path / "bare", OBSERVED, LIBRARY)
    oop = run_judge(tmp_path / "oop", OBSERVED, LIBRARY)
    expected = {
        "test_reads_where_the_stream_is": "PASSED",
        "test_a_subclass_of_the_propertys_counts_the_reads": "PASSED",
        "test_a_closed_stream_raises_in_the_library": "PASSED",
        "test_a_keyword_the_method_refuses": "PASSED",
        "test_an_error_of_the_propertys_read_reaches_the_property": "PASSED",
        "test_writes_and_lines": "PASSED",
        "test_a_short_stream_fails_in_the_library": "FAILED",
    }
    for proc in (bare, oop):
        assert outcomes(proc) == expected, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert recorded(tmp_path / "oop" / "judge") == recorded(tmp_path / "bare" / "judge")
    # What the table pins, so that bare itself is the reference it should be.
    assert recorded(tmp_path / "bare" / "judge") == {
        "in_place": ["abc", 4, "def", "q"],
        "recording": ["xy", [1, 2, -1], "z"],
        "closed": "ValueError: I/O operation on closed file.",
        "keyword": "TypeError: BytesIO.read() takes no keyword arguments",
        "broken": "raised",
        "writes": [[1, 2, 3], "abc", ["a\n", "b\n", ""]],
    }
    assert _errors(oop.stdout) == _errors(bare.stdout)
    assert _errors(bare.stdout) == {
        "test_a_short_stream_fails_in_the_library": "ValueError: short: 2 of 5"
    }


def test_a_stream_method_is_one_round_trip_and_the_guards_hold(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, COUNTED, LIBRARY)
    text = proc.stdout
    assert outcomes(proc) == {
        "test_a_read_is_one_round_trip": "PASSED",
        "test_only_the_streams_methods_are_read": "PASSED",
        "test_an_assert_in_the_propertys_read_is_a_verdict": "FAILED",
        "test_an_object_never_given_kills_the_worker": "FAILED",
    }, text[-6000:] + proc.stderr[-3000:]
    assert "did not return what the judge's function" in text, text[-6000:]
    assert "broke the protocol: asked for judge object 1000000, not given" in text
