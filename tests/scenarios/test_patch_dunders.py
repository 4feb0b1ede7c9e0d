"""An outcome the patch's own __eq__ decided is not an accept (issue 18, "Comparisons the judge decides").

A plain object whose `__eq__` is always true crosses as a handle, so the
property's `==` is answered by the patch's code. The worker records which
dunders answered; a class the patch adds or changes among them holds the
verdict `undecided`, naming the class and the method. The same comparison
through a class the patch leaves alone is the base's behaviour: accepted.
"""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import attack, fast_ledger

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
    judged = attack(tmp_path, {"src/calc/__init__.py": cheat}, base=BASE)
    assert judged.decision == "reject", judged.explain()
    assert any("test_a_price_equals_itself_only" in r for r in judged.reasons)


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
