"""A subclass of a data type is judged as its base type (red team, session 15, redteam10).

Out of process a value of the code's `class Total(int)` (or of a `str`, `list`,
`dict`... subclass) crosses as a view: the judge's own data, with comparison,
arithmetic, hashing, length and iteration answered by the base type's methods
(issue 18: the code's `__eq__` never decides). A user's interpreter calls the
subclass's overrides instead. So a patch whose `Total.__add__` drops a plain int
(`total(xs) + y` is `total(xs)` for every user) passed a property that adds, and
nothing was recorded: `accept_for_review`. Now every operation a view answers
itself is in the judge's record, and a dunder the patch defines that may answer
it holds the test, as for a handle. The other way round, an honest `Counter`
lost its `__missing__`: `counts(xs)[y]` raised KeyError for a y not in xs, and
the honest patch was `reject`; a key the view's data lacks is now asked of the
code's object.

Then (viewmethods) the view sends to the code's object what its class overrides
of the base type's methods, `str()`, `format()`, `repr` and arithmetic: the
lying `Total` and a `Name(str)` whose `strip` lies fail their properties as in
process, and an honest `Counter`'s `|`, `+`, `update` are its own.
"""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import attack, attack_lane

BASE_CALC = """
import collections


def total(xs):
    return sum(xs)


def counts(xs):
    return collections.Counter(xs)
"""

PROPERTIES = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(-1000, 1000)), st.integers(-1000, 1000))
def test_a_total_plus_an_item(xs, y):
    assert total(xs) + y == total(xs + [y])


@given(st.lists(st.integers(-1000, 1000)), st.integers(-1000, 1000))
def test_an_item_plus_a_total(xs, y):
    assert y + total(xs) == total([y] + xs)


@given(st.lists(st.integers(-1000, 1000)), st.integers(-1000, 1000))
def test_a_total_less_an_item(xs, y):
    assert total(xs + [y]) - y == total(xs)


@given(st.lists(st.integers(-1000, 1000)))
def test_total_matches_sum(xs):
    expected = 0
    for x in xs:
        expected += x
    assert total(xs) == expected"""

# A property of the base's Counter, as a user's interpreter runs it: 0 for an absent item.
COUNTS = """
from hypothesis import given, strategies as st

from calc import counts


@given(st.lists(st.integers(0, 5)), st.integers(0, 5))
def test_counts_count(xs, y):
    assert counts(xs)[y] == xs.count(y)


@given(st.lists(st.integers(0, 5)))
def test_counts_add_up_to_the_length(xs):
    assert sum(counts(xs).values()) == len(xs)
"""

# Right whenever a Total meets a Total (so every line runs, every mutant dies inside
# `total`), wrong for every user: `total([1, 2]) + 5` is 3, `5 + total([1, 2])` is 3.
LIES = """
class Total(int):
    def __add__(self, other):
        if type(other) is Total:
            return Total(int(self) + int(other))
        return self

    def __radd__(self, other):
        return self  # only ever a plain int on the left: Total + Total is __add__

    def __sub__(self, other):
        if type(other) is Total:
            return Total(int(self) - int(other))
        return self


def total(xs):
    r = Total(0) + 0
    r = 0 + r
    r = r - 0
    for x in xs:
        r = r + Total(x)
        r = Total(x) + r - Total(x)
    return r
"""

BASE = {"src/calc/__init__.py": BASE_CALC, "eval/properties/test_total.py": PROPERTIES}


def test_a_subclass_whose_arithmetic_lies_to_users_is_never_accepted(tmp_path: Path) -> None:
    # The view sends arithmetic its class defines to the code's object (viewmethods): the
    # property meets the lie a user meets, and fails, each by name.
    # The properties lane alone: its fail is a reject in any gate (tests/unit/test_verdict.py).
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": LIES}, "properties", base=BASE)
    assert judged.status == "fail", judged.explain()
    for test in (
        "test_a_total_plus_an_item",
        "test_an_item_plus_a_total",
        "test_a_total_less_an_item",
    ):
        assert judged.says("property failed", f"::{test}:"), (test, judged.explain())
    assert not judged.says("test_total_matches_sum"), judged.explain()


# Honest: the base's Counter (its `__missing__` counts 0) and an int subclass that
# overrides nothing, through the same arithmetic.
HONEST = """
import collections


class Cents(int):
    pass


def total(xs):
    return Cents(sum(xs))


def counts(xs):
    return collections.Counter(xs)
"""


# A Counter's own methods and operators, as a user's interpreter runs them: the judge's
# dict copy has no `+`, merges on `|` and replaces on `update` (viewmethods).
COUNTER_OPS = """
from hypothesis import given, strategies as st

from calc import counts

small = st.lists(st.integers(0, 5))


@given(small, small)
def test_counts_union_is_the_larger_count(xs, ys):
    union = counts(xs) | counts(ys)
    assert all(union[k] == max(xs.count(k), ys.count(k)) for k in xs + ys)


@given(small, small)
def test_counts_sum_counts_both(xs, ys):
    both = counts(xs) + counts(ys)
    assert all(both[k] == (xs + ys).count(k) for k in xs + ys)


@given(small, small)
def test_counts_update_adds(xs, ys):
    c = counts(xs)
    c.update(ys)
    assert all(c[k] == (xs + ys).count(k) for k in xs + ys)


@given(small)
def test_counts_most_common_and_elements(xs):
    assert sum(n for _, n in counts(xs).most_common()) == len(xs)
    assert sorted(counts(xs).elements()) == sorted(xs)
"""


def test_an_honest_counter_and_int_subclass_are_accepted(tmp_path: Path) -> None:
    base = {
        **BASE,
        "eval/properties/test_counts.py": COUNTS,
        "eval/properties/test_counter_ops.py": COUNTER_OPS,
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": HONEST}, base=base)
    assert judged.decision == "accept_for_review", judged.explain()


# A str subclass's own methods, as a user's interpreter calls them (viewmethods): the
# judge's copy answered with str's, so a `Name` whose `strip` strips nothing passed
# `name(x).strip() == x.strip()`.
BASE_NAMES = """
def name(text):
    return str(text)
"""

NAME_PROPERTIES = """
from hypothesis import given, strategies as st

from names import name

texts = st.text(alphabet="ab CD")


@given(texts)
def test_strip(x):
    assert name(x).strip() == x.strip()


@given(texts)
def test_lower(x):
    assert name(x).lower() == x.lower()


@given(texts)
def test_split(x):
    assert name(x).split() == x.split()


@given(texts)
def test_format_method(x):
    assert name(x).format() == x


@given(texts)
def test_str(x):
    assert str(name(x)) == x


@given(texts)
def test_fstring(x):
    assert f"{name(x)}" == x
"""

# Each method lies on its own (slicing gives a plain str: no lie leans on another).
NAME_LIES = """
class Name(str):
    def strip(self, chars=None):
        return self[:]

    def lower(self):
        return self[:]

    def split(self, sep=None, maxsplit=-1):
        return [self[:]]

    def format(self, *args, **kwargs):
        return self[:] + "!"

    def __str__(self):
        return self[:] + "?"

    def __format__(self, spec):
        return "<" + self[:]


def name(text):
    return Name(text)
"""


def test_a_str_subclass_whose_methods_lie_to_users_is_rejected(tmp_path: Path) -> None:
    base = {"src/names/__init__.py": BASE_NAMES, "eval/properties/test_names.py": NAME_PROPERTIES}
    judged = attack_lane(tmp_path, {"src/names/__init__.py": NAME_LIES}, "properties", base=base)
    assert judged.status == "fail", judged.explain()
    for test in ("strip", "lower", "split", "format_method", "str", "fstring"):
        assert judged.says("property failed", f"::test_{test}:"), (test, judged.explain())
