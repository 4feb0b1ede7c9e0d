"""An outcome the patch's own __eq__ decided is not an accept (issue 18, "Comparisons the judge decides").

A plain object whose `__eq__` is always true crosses as a handle, so the
property's `==` is answered by the patch's code. The worker records which
dunders answered; a class the patch adds or changes among them holds the
verdict `undecided`, naming the class and the method. The same comparison
through a class the patch leaves alone is the base's behaviour: accepted.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.attack_helpers import attack, attack_lane, fast_ledger

MONEY = """
def total(xs):
    return sum(xs)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents

    __hash__ = None


def price(cents):
    return Money(cents)
"""

MONEY_PROPERTY = """
from hypothesis import given, strategies as st

from calc import price, total


@given(st.integers(0, 100))
def test_a_price_equals_itself_only(cents):
    assert price(cents) == price(cents)
    assert not (price(cents) == price(cents + 1))


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert total(xs) >= 0
"""

# "report" keeps the untested-change rule out of it: this file is about the dunders.
LEDGER = fast_ledger() + '\n[review]\nunexercised = "report"\n'
BASE = {
    "src/calc/__init__.py": MONEY,
    "eval/properties/test_money.py": MONEY_PROPERTY,
    "eval/gate.toml": LEDGER,
}


def test_an_always_equal_money_is_never_accepted(tmp_path: Path) -> None:
    cheat = MONEY.replace(
        "return isinstance(other, Money) and self.cents == other.cents", "return True"
    )
    # The properties lane alone: its fail is a reject in any gate (tests/unit/test_verdict.py).
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": cheat}, "properties", base=BASE)
    assert judged.status == "fail", judged.explain()
    assert any("test_a_price_equals_itself_only" in r for r in judged.reasons)


# An always-equal object from outside the tree: no class of the patch's, no dunder named.
ANY_TOTAL = "from unittest.mock import ANY\n\n\ndef total(xs):\n    return ANY\n"
EQUAL_PROPERTY = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(-9, 9)))
def test_total_is_the_sum(xs):
    expected = sum(xs)
    assert total(xs) == expected


@given(st.integers(-9, 9))
def test_a_single_total(x):
    assert total([x]) == x
"""


def test_an_always_equal_object_the_patch_imports_is_never_accepted(tmp_path: Path) -> None:
    base = {"eval/properties/test_total.py": EQUAL_PROPERTY, "eval/gate.toml": LEDGER}
    judged = attack(tmp_path, {"src/calc/__init__.py": ANY_TOTAL}, base=base)
    assert judged.decision == "undecided", judged.explain()
    assert judged.says(
        "unittest.mock._ANY.__eq__ (a class of unittest.mock, imported at src/calc/__init__.py:1)"
    ), judged.explain()


def test_an_honest_change_to_the_class_is_held_by_its_own_eq(tmp_path: Path) -> None:
    # Honest, but the verdict rests on the patch's own comparison: a human looks.
    honest = MONEY.replace(
        "return isinstance(other, Money) and self.cents == other.cents",
        "return type(other) is Money and self.cents == other.cents",
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": honest}, base=BASE)
    assert judged.decision == "undecided", judged.explain()
    [reason] = [r for r in judged.reasons if "__eq__" in r]
    assert "calc.Money.__eq__ (src/calc/__init__.py:5)" in reason, reason
    assert "a method of a class the patch adds or changes" in reason


def test_a_change_elsewhere_leaves_the_bases_eq_deciding_and_is_accepted(
    tmp_path: Path,
) -> None:
    elsewhere = MONEY.replace("return sum(xs)", "return sum(x for x in xs)")
    judged = attack(tmp_path, {"src/calc/__init__.py": elsewhere}, base=BASE)
    assert judged.decision == "accept_for_review", judged.explain()


# Import-time code that blinds the worker's own record from inside its process: no dunder
# is noted, and every handle claims to be a function. Found by what the worker's operation
# table holds, not by a name, so it survives a renamed worker.
BLINDS_THE_RECORD = """
import gc as _gc

for _table in _gc.get_objects():
    if type(_table) is dict and "typename" in _table and "signature" in _table:
        # The worker's set of recorded operators is its protocol module's (issue 17); in
        # the visible suite's pytest the judge's plugin holds the worker's module unstarted.
        _protocol = _table["signature"].__globals__.get("protocol")
        if _protocol is not None:
            _protocol.DUNDER_OPS = frozenset()
            _table["typename"] = lambda obj: "builtins.function"
"""


def test_a_worker_that_hides_and_forges_its_dunder_record_is_still_undecided(
    tmp_path: Path,
) -> None:
    honest_looking = MONEY.replace(
        "return isinstance(other, Money) and self.cents == other.cents",
        "return type(other) is Money and self.cents == other.cents",
    )
    judged = attack(
        tmp_path, {"src/calc/__init__.py": BLINDS_THE_RECORD + honest_looking}, base=BASE
    )
    assert judged.decision == "undecided", judged.explain()
    [reason] = [r for r in judged.reasons if "__eq__" in r]
    # The judge's record: the operation it sent, held against the class the patch changed.
    assert "calc.Money.__eq__ (src/calc/__init__.py:" in reason, reason
    assert "test_a_price_equals_itself_only" in reason, reason
    lane = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert lane["details"]["dunders"] == {}, "the attack did blind the worker's record"
    ops = lane["details"]["operations"]
    assert ["eq", "builtins.function"] in next(v for k, v in ops.items() if "itself" in k)


def test_an_unchanged_tuple_subclass_with_its_own_eq_is_accepted(tmp_path: Path) -> None:
    # Honest look-alike: the class with an __eq__ is the base's; the patch changes a function.
    point = """
class Point(tuple):
    def __eq__(self, other):
        return tuple(self) == tuple(other)

    __hash__ = tuple.__hash__


def origin():
    return Point((0, 0))


def total(xs):
    return sum(xs)
"""
    prop = """
from hypothesis import given, strategies as st

from calc import origin, total


def test_the_origin_is_zero_zero():
    assert origin() == (0, 0)
    assert origin() != (0, 1)


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert total(xs) >= 0
"""
    base = {**BASE, "src/calc/__init__.py": point, "eval/properties/test_money.py": prop}
    patch = {"src/calc/__init__.py": point.replace("return sum(xs)", "return sum(x for x in xs)")}
    judged = attack(tmp_path, patch, base=base)
    assert judged.decision == "accept_for_review", judged.explain()


DOUBLING = """
def total(xs):
    return sum(xs)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents

    __hash__ = None


def price(cents):
    return Money(cents)


def double(m):
    return Money(m.cents * 2)
"""

DOUBLING_PROPERTY = """
from hypothesis import given, strategies as st

from calc import double, price, total


@given(st.integers(0, 100))
def test_double_doubles(cents):
    assert double(price(cents)) == price(2 * cents)


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert total(xs) >= 0
"""
DOUBLING_BASE = {
    **BASE,
    "src/calc/__init__.py": DOUBLING,
    "eval/properties/test_money.py": DOUBLING_PROPERTY,
}


def test_a_class_rebuilt_at_run_time_with_a_computed_eq_is_held(tmp_path: Path) -> None:
    # The class statement is the base's, the new Money is built by type() under the same
    # name (so the claim `calc.Money` is a class the head defines), and its __eq__'s name is
    # nowhere in the source: before, nothing held and the wrong double was accepted.
    cheat = DOUBLING.replace("m.cents * 2", "m.cents * 3") + (
        '\n\n_name = "__" + "eq" + "__"\n'
        'Money = type("Money", (Money,), {_name: lambda self, other: True})\n'
    )
    line = 1 + cheat.lstrip("\n").splitlines().index(
        'Money = type("Money", (Money,), {_name: lambda self, other: True})'
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": cheat}, base=DOUBLING_BASE)
    assert judged.decision == "undecided", judged.explain()
    [reason] = [r for r in judged.reasons if "at run time" in r]
    assert f"src/calc/__init__.py:{line}" in reason, reason
    assert "test_double_doubles" in reason, reason


def test_an_honest_type_of_an_object_on_a_changed_line_is_accepted(tmp_path: Path) -> None:
    # Honest look-alike: `type(m)` builds no class; the base's Money.__eq__ decides.
    honest = DOUBLING.replace("return Money(m.cents * 2)", "return type(m)(m.cents * 2)")
    judged = attack(tmp_path, {"src/calc/__init__.py": honest}, base=DOUBLING_BASE)
    assert judged.decision == "accept_for_review", judged.explain()
