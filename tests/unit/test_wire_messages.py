"""The message shortcuts in wire.py against the general path they stand in for (issue 17).

`encode` and `decode` take a top-level tuple (every protocol message) with
its str/int/None members inline; these tests hold them to `_encode` and
`_Reader.value`: the same bytes, values, references made and errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge.boundary import wire
from tests.unit.test_wire import data


class Obj:
    """Not data: crosses as a reference when a maker is given."""


member = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(alphabet=st.characters(codec=None))
    | st.builds(Obj)
    | st.just(())  # a reply's `changed`, read inline
    | data
)
messages = st.lists(member, max_size=8).map(tuple)


def _general_encode(value: Any, to_ref: wire.ToRef | None) -> bytes:
    out: list[bytes] = []
    wire._encode(value, to_ref, out, 0, False, [wire.MAX_ITEMS])
    return b"".join(out)


def _general_decode(payload: bytes, from_ref: wire.FromRef | None) -> Any:
    reader = wire._Reader(payload, from_ref)
    value = reader.value(0, False)
    if reader.pos != len(payload):
        raise wire.WireError(f"{len(payload) - reader.pos} stray byte(s) after the value")
    return value


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except wire.WireError as exc:
        return "error", str(exc)


def _maker() -> tuple[list[Any], wire.ToRef]:
    seen: list[Any] = []

    def to_ref(obj: Any) -> wire.Ref | None:
        seen.append(obj)
        return wire.Ref(1, len(seen), "meta")

    return seen, to_ref


@given(messages)
def test_a_message_encodes_as_the_general_path_does(message: tuple[Any, ...]) -> None:
    fast_seen, fast_ref = _maker()
    slow_seen, slow_ref = _maker()
    assert _outcome(wire.encode, message, fast_ref) == _outcome(_general_encode, message, slow_ref)
    assert fast_seen == slow_seen  # the same references made, in the same order
    assert _outcome(wire.encode, message) == _outcome(_general_encode, message, None)


@given(messages)
def test_a_message_decodes_as_the_general_path_does(message: tuple[Any, ...]) -> None:
    payload = wire.encode(message, _maker()[1])
    fast, slow = wire.decode(payload, repr), _general_decode(payload, repr)
    assert wire.same(fast, slow)
    assert wire.same(wire.decode(payload), _general_decode(payload, None))


@settings(max_examples=300)
@given(messages, st.data())
def test_a_cut_or_flipped_message_is_refused_as_the_general_path_does(
    message: tuple[Any, ...], draw: st.DataObject
) -> None:
    payload = bytearray(wire.encode(message, _maker()[1]))
    if draw.draw(st.booleans()):
        del payload[draw.draw(st.integers(0, len(payload) - 1)) :]
    else:
        at = draw.draw(st.integers(0, len(payload) - 1))
        payload[at] = draw.draw(st.integers(0, 255))
    fast = _outcome(wire.decode, bytes(payload))
    slow = _outcome(_general_decode, bytes(payload), None)
    assert fast[0] == slow[0] and (fast[1] == slow[1] if fast[0] == "error" else True)
    if fast[0] == "ok":
        assert wire.same(fast[1], slow[1])


@given(st.binary(max_size=40))
def test_junk_after_a_tuple_tag_is_refused_as_the_general_path_does(junk: bytes) -> None:
    payload = b"t" + junk
    fast = _outcome(wire.decode, payload)
    slow = _outcome(_general_decode, payload, None)
    assert fast[0] == slow[0]
    if fast[0] == "error":
        assert fast[1] == slow[1]
    else:
        assert wire.same(fast[1], slow[1])


def test_the_item_limit_holds_in_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_ITEMS", 3)
    assert wire.decode(wire.encode(("a", 1))) == ("a", 1)
    for value in (("a", 1, None), (1, 2, 3), ([1], 2)):
        with pytest.raises(wire.WireError, match="more than 3 items"):
            wire.encode(value)
    payload = b"t\x00\x00\x00\x03" + b"j" + bytes(8) + b"s\x00\x00\x00\x00" + b"N"
    with pytest.raises(wire.WireError, match="more than 3 items"):
        wire.decode(payload)
    assert _outcome(wire.decode, payload) == _outcome(_general_decode, payload, None)
