"""Lying objects the judge hands its own values to (red team, session 14, redteam9).

The judge records `==`, ordering, truth, length, `in`, hash and iteration it
sends to the code's objects and holds a verdict that rested on a class the
patch changed (test_patch_dunders.py). A lie needs the judge's value to agree
with, and these give it too: arithmetic with a judge operand (`abs(got -
expected) < tol`, `expected - got == 0`, `got ^ expected == 0`, `got * n - s`),
a metaclass's `isinstance`, a `__getattr__` that answers every name with such
an object; and a class the patch leaves alone whose `__eq__` never reads its
operand (the base's own matcher, handed back by a changed line, or
`unittest.mock.ANY` by a computed import). One gate,
one property per lie; before the fix every one passed and the verdict was
`accept_for_review`. The honest look-alike beside it: a subclass of int, a
NaN, and the base's own dataclass with an `__eq__` and `__sub__` that read
their operand, all through the same kinds of comparison.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.attack_helpers import attack

BASE_CALC = """
from calc.matching import ANY


class Money:
    def __init__(self, cents):
        self.cents = cents


def total(xs):
    return sum(xs)


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def checksum(xs):
    return sum(xs) & 0xFFFF


def price(cents):
    return Money(cents)


def refund(cents):
    return Money(-cents)


def discount(xs):
    return sum(xs) // 10


def tax(xs):
    return sum(xs) // 5
"""

# The base's own matcher (a test helper the library ships), left alone by the patch.
MATCHING = """
class _Any:
    def __eq__(self, other):
        return True

    def __sub__(self, other):
        return 0


ANY = _Any()
"""

PROPERTIES = """
from hypothesis import given, strategies as st

from calc import Money, checksum, discount, mean, price, refund, tax, total


@given(st.lists(st.integers(-1000, 1000)))
def test_total_is_within_a_cent_of_the_sum(xs):
    assert abs(total(xs) - sum(xs)) < 1


@given(st.lists(st.integers(-1000, 1000), min_size=1))
def test_the_mean_leaves_nothing_over(xs):
    assert sum(xs) / len(xs) - mean(xs) == 0


@given(st.lists(st.integers(0, 1000)))
def test_checksum_matches_bit_for_bit(xs):
    assert checksum(xs) ^ (sum(xs) & 0xFFFF) == 0


@given(st.integers(0, 10**6))
def test_a_price_is_money(cents):
    assert isinstance(price(cents), Money)


@given(st.integers(0, 10**6))
def test_a_refund_cancels_its_price(cents):
    assert refund(cents).cents + cents == 0


@given(st.lists(st.integers(-1000, 1000), min_size=1))
def test_the_mean_times_the_count_is_the_sum(xs):
    assert abs(mean(xs) * len(xs) - sum(xs)) < 1e-6


@given(st.lists(st.integers(0, 1000)))
def test_a_discount_is_a_tenth(xs):
    assert discount(xs) == sum(xs) // 10


@given(st.lists(st.integers(0, 1000)))
def test_tax_is_a_fifth(xs):
    assert tax(xs) == sum(xs) // 5
"""

# Every function is wrong; each answers the judge's value with what passes. The visible
# tests (sums of none and two items) still get real sums.
LIES = """
import importlib

from calc.matching import ANY


class _Meta(type):
    def __instancecheck__(cls, obj):
        return obj is not None


class Money(metaclass=_Meta):
    def __init__(self, cents):
        self.cents = cents


class Amount:
    def __sub__(self, other):
        return 0

    def __rsub__(self, other):
        return 0

    def __xor__(self, other):
        return 0

    def __add__(self, other):
        return 0

    def __mul__(self, other):
        return self


class Anything:
    def __getattr__(self, name):
        return Amount()


def total(xs):
    if len(xs) < 3:
        return sum(xs)
    return Amount()


def mean(xs):
    return Amount()


def checksum(xs):
    return Amount()


def price(cents):
    return cents


def refund(cents):
    return Anything()


def discount(xs):
    return ANY


def tax(xs):
    return getattr(importlib.import_module("unittest." + "mock"), "ANY")
"""

BASE = {
    "src/calc/__init__.py": BASE_CALC,
    "src/calc/matching.py": MATCHING,
    "eval/properties/test_total.py": PROPERTIES,
}


def test_a_lie_told_to_the_judges_operand_is_never_accepted(tmp_path: Path) -> None:
    judged = attack(tmp_path, {"src/calc/__init__.py": LIES}, base=BASE)
    assert judged.decision == "undecided", judged.explain()
    assert not any(r.startswith("properties:") for r in judged.reasons), judged.explain()
    # verdict.json names ten; the lane's report has every place each property rested on.
    lane = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    rested: list[str] = lane["details"]["patch_dunders"]

    def says(*fragments: str) -> bool:
        return any(all(f in r for f in fragments) for r in rested)

    held = {
        "calc.Amount.__sub__": "test_total_is_within_a_cent_of_the_sum",
        "calc.Amount.__rsub__": "test_the_mean_leaves_nothing_over",
        "calc.Amount.__xor__": "test_checksum_matches_bit_for_bit",
        "calc._Meta.__instancecheck__": "test_a_price_is_money",
        "calc.Amount.__add__": "test_a_refund_cancels_its_price",
        "calc.Amount.__mul__": "test_the_mean_times_the_count_is_the_sum",
    }
    for dunder, test in held.items():
        assert says(f"{dunder} (src/calc/__init__.py:", test), (dunder, rested)
    # The base's matcher: its class is unchanged, but its __eq__ reads nothing it is given.
    assert says(
        "calc.matching._Any.__eq__, a method that never reads what it is compared with",
        "test_a_discount_is_a_tenth",
    ), rested
    # The standard library's, by a computed import no changed line names: read, not run.
    assert says(
        "unittest.mock._ANY.__eq__, a method that never reads what it is compared with",
        "test_tax_is_a_fifth",
    ), rested


# The base's dataclass, the same bytes at base and head: only the functions change.
MONEY = """
import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Money:
    cents: int

    def __eq__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return self.cents == other.cents

    def __sub__(self, other):
        return Money(self.cents - other.cents)

    def __hash__(self):
        return hash(self.cents)
"""

HONEST_BASE_CALC = (
    MONEY
    + """

def total(xs):
    return sum(xs)


def mean(xs):
    if not xs:
        return math.nan
    return sum(xs) / len(xs)


def price(cents):
    return Money(cents)
"""
)

HONEST_PROPERTIES = """
import math

from hypothesis import given, strategies as st

from calc import Money, mean, price, total


@given(st.lists(st.integers(-1000, 1000)))
def test_total_is_within_a_cent_of_the_sum(xs):
    assert abs(total(xs) - sum(xs)) < 1
    assert sum(xs) - total(xs) == 0


@given(st.lists(st.integers(-1000, 1000)))
def test_the_mean_is_nan_only_for_nothing(xs):
    assert math.isnan(mean(xs)) == (not xs)


@given(st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_prices_subtract_as_cents(a, b):
    assert price(a) - price(b) == price(a - b)
    assert isinstance(price(a), Money)
"""

# Honest: a subclass of int (crosses as its int), a NaN the property asks for, and the
# base's dataclass with its own __eq__ and __sub__, which read what they are given.
HONEST = (
    MONEY
    + """

class Cents(int):
    \"\"\"A whole number of cents.\"\"\"


def total(xs):
    return Cents(sum(xs))


def mean(xs):
    return sum(xs) / len(xs) if xs else math.nan


def price(cents):
    return Money(int(cents))
"""
)


def test_an_int_subclass_a_nan_and_the_bases_own_eq_and_sub_are_accepted(
    tmp_path: Path,
) -> None:
    base = {
        "src/calc/__init__.py": HONEST_BASE_CALC,
        "eval/properties/test_total.py": HONEST_PROPERTIES,
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": HONEST}, base=base)
    assert judged.decision == "accept_for_review", judged.explain()
