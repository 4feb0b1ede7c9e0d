"""Attacks on what crosses the boundary as data, through the real CLI (issue 18), each with an
honest look-alike that must still be accepted.

The property's comparisons are the judge's: a list subclass crosses as its
list data read through `list`, so its `__eq__` and `__iter__` decide
nothing; an exception is the builtin only if it is the builtin class; an
interrupt from the code fails the property even where it is caught.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.attack_helpers import attack, attack_lane, fast_ledger

PROPS = "eval/properties/test_data.py"

BASE_CALC = """
def total(xs):
    return sum(xs)


def evens(xs):
    return [x for x in xs if x % 2 == 0]


def parse(text):
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


def pair(a, b):
    return (a, b)
"""

PROPERTY = """
import pytest
from hypothesis import assume, given, strategies as st

from calc import evens, pair, parse, total


@given(st.lists(st.integers()))
def test_evens(xs):
    assert evens(xs) == [x for x in xs if x % 2 == 0]


@given(st.text(max_size=5))
def test_parse_refuses_what_is_not_digits(text):
    assume(not text.isdigit())
    with pytest.raises(ValueError):
        parse(text)


@given(st.integers(), st.integers())
def test_pair(a, b):
    assert pair(a, b) == (a, b)


def test_total_of_text_raises():
    with pytest.raises(Exception):
        total(["a", 1])
"""

BASE = {"src/calc/__init__.py": BASE_CALC, PROPS: PROPERTY}

PADDED_LIST = (
    BASE_CALC
    + """

class Rows(list):
    # Compares equal to anything, and iterates without the padding it holds.
    def __eq__(self, other):
        return True

    def __iter__(self):
        return (x for x in list.__iter__(self) if x != "pad")


def evens(xs):
    return Rows([*(x for x in xs if x % 2 == 0), "pad"])
"""
)

NAMED_LIKE_VALUE_ERROR = (
    BASE_CALC
    + """

NotTheBuiltin = type("ValueError", (Exception,), {"__module__": "builtins"})


def parse(text):
    if not text.isdigit():
        raise NotTheBuiltin(text)
    return int(text)
"""
)

INTERRUPT_AS_ERROR = (
    BASE_CALC
    + """

def total(xs):
    if not all(isinstance(x, int) for x in xs):
        raise KeyboardInterrupt
    return sum(xs)
"""
)

HONEST = (
    BASE_CALC
    + """
from collections import namedtuple


class Pair(namedtuple("Pair", "a b")):
    def __eq__(self, other):
        return tuple(self) == tuple(other)

    __hash__ = tuple.__hash__


class ParseError(ValueError):
    pass


def pair(a, b):
    return Pair(a, b)


def parse(text):
    if not text.isdigit():
        raise ParseError(text)
    return int(text)
"""
)

ATTACKS = {
    "list subclass equal to anything": (PADDED_LIST, f"{PROPS}::test_evens"),
    "class named builtins.ValueError": (
        NAMED_LIKE_VALUE_ERROR,
        f"{PROPS}::test_parse_refuses_what_is_not_digits",
    ),
    "interrupt caught as Exception": (
        INTERRUPT_AS_ERROR,
        f"{PROPS}::test_total_of_text_raises: the worker for {PROPS}: "
        "the code under test raised KeyboardInterrupt (an interrupt fails the property)",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_is_rejected(tmp_path: Path, name: str) -> None:
    code, reason = ATTACKS[name]
    # The properties lane alone (issue 20): its fail is a reject in any gate
    # (tests/unit/test_verdict.py); the honest look-alike below is a whole gate.
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": code}, "properties", base=BASE)
    assert judged.status == "fail", judged.explain()
    assert judged.says("properties: property failed:", reason), judged.explain()


def test_an_honest_namedtuple_and_builtin_subclass_pass_and_an_own_eq_is_held(
    tmp_path: Path,
) -> None:
    # The judge compares a tuple subclass as a tuple, so the class's own methods never
    # run: with the default the untested-change rule holds it (undecided, naming them).
    ledger = fast_ledger() + '\n[review]\nunexercised = "report"\n'
    base = {**BASE, "eval/gate.toml": ledger}
    judged = attack(tmp_path, {"src/calc/__init__.py": HONEST}, base=base)
    # Every property passes; Pair compares judge side as a tuple, so no dunder of the
    # code decided anything in the worker's record.
    assert judged.lane("properties")["status"] == "pass", judged.explain()
    assert properties_details(judged)["dunders"] == {}
    # A user's interpreter would call Pair.__eq__, which the patch defines: the judge's
    # own record of the view's `==` holds the test for a human (redteam10), as it holds
    # a handle's `==` of a class the patch changes. Nothing else holds it.
    assert judged.decision == "undecided", judged.explain()
    assert len(judged.reasons) == 1, judged.explain()
    assert judged.says("review: a property's outcome rested on calc.Pair.__eq__"), judged.explain()


MONEY_CALC = (
    BASE_CALC
    + """

class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents

    __hash__ = None


def price(cents):
    return Money(cents)
"""
)

MONEY_PROPERTY = """
from hypothesis import given, strategies as st

from calc import price


@given(st.integers(0, 100))
def test_price_is_its_cents(cents):
    assert price(cents) == price(cents)


@given(st.integers(0, 100))
def test_cents_are_data(cents):
    assert price(cents).cents == cents
"""


def properties_details(judged: Any) -> dict[str, Any]:
    return dict(
        json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())["details"]
    )


def test_the_lane_records_which_outcomes_the_codes_dunders_decided(tmp_path: Path) -> None:
    money = "eval/properties/test_money.py"
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": MONEY_CALC},
        base={**BASE, money: MONEY_PROPERTY},
    )
    dunders = properties_details(judged)["dunders"]
    # The comparison went through the code's Money.__eq__; reading .cents is data.
    assert dunders == {f"{money}::test_price_is_its_cents": ["calc.Money.__eq__"]}, dunders
