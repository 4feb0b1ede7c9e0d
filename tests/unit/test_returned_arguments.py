"""wire.returned_arguments: an argument handed back is named, so each side keeps its own object.

Both ends use it: the worker for a call's result, the judge for a callback's
(issue 17, natsort's `natsort_key(x, ..., lambda y: ("", y))[1] is x`).
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.boundary import wire


class Named:
    def __init__(self, key: Any) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"Named({self.key!r})"


def named(key: Any) -> Named:
    return Named(key)


def resolve(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What the other side rebuilds: each name back as the argument it names."""
    if isinstance(value, Named):
        return args[value.key] if isinstance(value.key, int) else kwargs[value.key]
    if type(value) in (tuple, list):
        return type(value)(resolve(v, args, kwargs) for v in value)
    if type(value) is dict:
        return {k: resolve(v, args, kwargs) for k, v in value.items()}
    return value


S = "a text long enough not to be interned " * 2
B = b"some bytes"
BIG = 10**30
TZ = datetime.timezone(datetime.timedelta(hours=2))
D = decimal.Decimal("1.5")


@pytest.mark.parametrize(
    ("result", "args", "kwargs", "expected"),
    [
        # The argument itself, as before.
        (S, (S,), {}, "Named(0)"),
        # Inside tuples, lists and dict values, at any of the first levels.
        ((S, 1), (S,), {}, "(Named(0), 1)"),
        (["", (B, [S])], (S, B), {}, "['', (Named(1), [Named(0)])]"),
        ({"k": S}, (), {"text": S}, "{'k': Named('text')}"),
        # An equal copy is not the argument: it crosses as data.
        (S[:10] + S[10:], (S,), {}, repr(S)),
        # Small ints, None and bools are the same object on both sides anyway.
        ((5, None, True), (5, None, True), {}, "(5, None, True)"),
        (BIG, (BIG,), {}, "Named(0)"),
        # A stdlib value crosses as a copy too: handed back, it is named (held-out round 8,
        # pytz-deprecation-shim's `upgrade_tzinfo(tz) is tz`).
        (TZ, (TZ,), {}, "Named(0)"),
        ([D], (), {"d": D}, "[Named('d')]"),
        # Not data: it crosses by reference already, never named.
        (object, (object,), {}, repr(object)),
        # Dict keys and set members keep their value (a name is no key).
        ({S: 1}, (S,), {}, repr({S: 1})),
        ({S}, (S,), {}, repr({S})),
    ],
)
def test_what_is_named(result: Any, args: Any, kwargs: Any, expected: str) -> None:
    assert repr(wire.returned_arguments(result, args, kwargs, named)) == expected


def test_the_result_itself_is_never_changed() -> None:
    inner = [S]
    result = (inner, {"k": S})
    wire.returned_arguments(result, (S,), {}, named)
    assert result == ([S], {"k": S}) and result[0] is inner and inner[0] is S


def test_past_the_scan_an_argument_crosses_as_a_copy() -> None:
    filler = [0] * wire.ARGUMENT_SCAN
    found = wire.returned_arguments((filler, [S]), (S,), {}, named)
    assert found[1] == [S] and found[0] is filler


leaves = st.one_of(st.text(min_size=2), st.binary(min_size=2), st.integers(), st.floats())


@given(st.lists(leaves, min_size=1, max_size=4), st.data())
def test_resolved_names_give_back_the_very_arguments(args: list[Any], data: st.DataObject) -> None:
    """Rebuilt on the other side, every name is the argument itself and the rest equal."""
    picks = st.sampled_from(args)
    shape = st.recursive(
        st.one_of(picks, leaves),
        lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner),
        max_leaves=8,
    )
    result = data.draw(shape)
    back = resolve(wire.returned_arguments(result, tuple(args), {}, named), tuple(args), {})
    assert repr(back) == repr(result)

    def same(a: Any, b: Any) -> None:
        if type(a) in (tuple, list):
            for x, y in zip(a, b, strict=True):
                same(x, y)
        elif any(a is arg for arg in args) and type(a) not in (int,):
            assert b is a

    same(result, back)
