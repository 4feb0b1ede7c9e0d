"""wire.py: every data value round-trips; anything else is refused or a reference; junk is an error."""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import wire

hashable = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4),
    max_leaves=8,
)
data = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(alphabet=st.characters(codec=None))
    | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(hashable, inner, max_size=4)
        | st.sets(hashable, max_size=4)
        | st.frozensets(hashable, max_size=4)
    ),
    max_leaves=20,
)


@given(data)
def test_data_round_trips(value: Any) -> None:
    assert wire.same(wire.decode(wire.encode(value)), value)


@given(data)
def test_frames_split_back_into_their_payloads(value: Any) -> None:
    payload = wire.encode(value)
    stream = wire.frame(payload) * 3
    found, rest = wire.split_frames(stream[:-1])
    assert found == [payload, payload] and rest == stream[2 * (len(payload) + 4) : -1]
    buffer = bytearray(stream)
    assert [wire.take_frame(buffer) for _ in range(3)] == [payload] * 3
    assert wire.take_frame(buffer) is None


@given(st.binary(max_size=64))
@settings(max_examples=500)
def test_junk_is_a_wire_error_or_a_value(junk: bytes) -> None:
    try:
        value = wire.decode(junk)
    except wire.WireError:
        return
    # What decodes is a value like any other (set order aside, its bytes are the same).
    assert wire.same(wire.decode(wire.encode(value)), value)


@given(data, st.data())
def test_a_cut_payload_is_refused_and_a_flipped_one_is_junk_or_a_value(
    value: Any, draw: st.DataObject
) -> None:
    payload = wire.encode(value)
    cut = draw.draw(st.integers(0, len(payload) - 1))
    with pytest.raises(wire.WireError):
        wire.decode(payload[:cut])
    flipped = bytearray(payload)
    at = draw.draw(st.integers(0, len(payload) - 1))
    flipped[at] ^= draw.draw(st.integers(1, 255))
    try:
        again = wire.decode(bytes(flipped))
    except wire.WireError:
        return
    assert wire.same(wire.decode(wire.encode(again)), again)


class Opaque:
    pass


def test_what_is_not_data_is_a_reference_the_caller_makes() -> None:
    thing = Opaque()
    refs: dict[int, Any] = {}

    def to_ref(obj: Any) -> wire.Ref:
        refs[id(obj)] = obj
        return wire.Ref(1, id(obj), ("meta", 1))

    payload = wire.encode([thing, {"k": thing}], to_ref)
    back = wire.decode(payload, lambda ref: refs[ref.id])
    assert back[0] is thing and back[1]["k"] is thing
    raw = wire.decode(payload)
    assert raw[0] == wire.Ref(1, id(thing), ("meta", 1))


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (Opaque(), "Opaque cannot cross as data"),
        ([1, object()], "object cannot cross as data"),
        (True.__class__, "type cannot cross as data"),
        (1 << (8 * wire.MAX_INT_BYTES), "int too large"),
        (MyList := type("MyList", (list,), {})(), "MyList cannot cross"),
    ],
)
def test_refused_without_a_reference_maker(value: Any, reason: str) -> None:
    with pytest.raises(wire.WireError, match=reason):
        wire.encode(value)


def test_set_members_and_dict_keys_are_never_references() -> None:
    with pytest.raises(wire.WireError, match="set member or dict key"):
        wire.encode({Opaque(): 1}, lambda o: wire.Ref(1, 1))
    with pytest.raises(wire.WireError, match="set member or dict key"):
        wire.decode(b"S" + struct.pack(">I", 1) + b"r" + struct.pack(">BQ", 1, 1) + b"N")
    with pytest.raises(wire.WireError, match="unhashable"):
        wire.decode(b"d" + struct.pack(">I", 1) + b"l" + struct.pack(">I", 0) + b"N")


def nested(depth: int) -> bytes:
    return b"l\x00\x00\x00\x01" * depth + b"N"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"", "ends inside"),
        (b"X", "unknown tag"),
        (b"NN", "stray byte"),
        (b"s\xff\xff\xff\xff", "exceeds the bytes left"),
        (b"l\x7f\xff\xff\xff", "exceeds the bytes left"),
        (b"s\x00\x00\x00\x01\xff", "not UTF-8"),
        (b"i\x00\x00\x00\x02\x00\x01", "shortest form"),
        (b"i\x00\x00\x00\x09\x00" + b"\x01" * 8, "shortest form"),
        (b"j\x00\x01", "ends inside"),
        (b"i\x00\x00\x00\x00", "int of 0 bytes"),
        (b"i\x00\x00\x10\x00" + b"\x01" * 4096, "int of 4096 bytes"),
        (b"S\x00\x00\x00\x02NN", "repeated member"),
        (b"d\x00\x00\x00\x02NNNN", "repeated key"),
        (nested(wire.MAX_DEPTH + 1), "nested deeper"),
        (b"r\x01" + b"\x00" * 8, "ends inside"),
    ],
)
def test_malformed_payloads_are_refused(payload: bytes, reason: str) -> None:
    with pytest.raises(wire.WireError, match=reason):
        wire.decode(payload)


def test_limits_hold_at_their_edges() -> None:
    assert wire.decode(nested(wire.MAX_DEPTH)) is not None
    with pytest.raises(wire.WireError, match="nested deeper"):
        wire.encode(eval("[" * (wire.MAX_DEPTH + 1) + "]" * (wire.MAX_DEPTH + 1)))
    with pytest.raises(wire.WireError, match="frame of"):
        wire.frame_length(struct.pack(">I", wire.MAX_FRAME + 1))
    with pytest.raises(wire.WireError, match="more than"):
        wire.encode([None] * (wire.MAX_ITEMS + 1))
    # A billion items announced in a short payload is refused before any is read.
    with pytest.raises(wire.WireError, match="exceeds the bytes left"):
        wire.decode(b"l" + struct.pack(">I", 10**9) + b"N" * 10)


def test_floats_keep_sign_nan_and_infinity() -> None:
    for f in (-0.0, math.inf, -math.inf, math.nan, 5e-324):
        assert wire.same(wire.decode(wire.encode(f)), f)
    assert not wire.same(0.0, -0.0) and not wire.same(1, True) and not wire.same([1], (1,))


def test_lone_surrogates_cross() -> None:
    assert wire.decode(wire.encode("\udcff")) == "\udcff"
