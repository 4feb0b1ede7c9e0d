"""Judge handles and callbacks through the real CLI (issues 17 and 18).

The honest patch is judged with every property file below and accepted:
judge iterators, instances of the property's classes, checking keys, a copy
sorted in place, and a file that must run in process (found from its AST).
Each attack keeps one of those properties green without the defence: it
swallows the judge's assert, hands the judge's key a lying object, or
truncates the list hypothesis drew. Its base holds that property alone, so
the defence is the only thing that can reject it.
"""

from __future__ import annotations

import pytest

from tests.attack_helpers import attack, attack_lane, fast_ledger

LIB = """
REGISTRY = {}


def total(xs):
    return sum(xs)


def sort_by(xs, key):
    return sorted(xs, key=key)


def first_of(it):
    return next(iter(it))


def dedupe(xs):
    return list(dict.fromkeys(xs))


def sort_in_place(xs):
    xs.sort()


def register(cls):
    REGISTRY[cls.__name__] = cls
    return cls


class Bag:
    def __len__(self):
        return 0


def evens(xs):
    for x in xs:
        if x % 2 == 0:
            yield x
"""

HANDLES = """
from hypothesis import given, strategies as st

from calc import evens, first_of, sort_by, sort_in_place


class Item:
    def __init__(self, n):
        self.n = n

    def __lt__(self, other):
        return self.n < other.n


@given(st.lists(st.integers(), min_size=1))
def test_first_of_an_iterator(xs):
    assert first_of(iter(xs)) == xs[0]


@given(st.lists(st.integers()))
def test_sort_by_the_propertys_own_objects(xs):
    assert [i.n for i in sort_by([Item(x) for x in xs], key=lambda i: i)] == sorted(xs)


@given(st.lists(st.integers()))
def test_a_generator_drained_by_list(xs):
    assert list(evens(xs)) == [x for x in xs if x % 2 == 0]


@given(st.lists(st.integers()))
def test_sort_in_place_on_a_copy(xs):
    ys = list(xs)
    sort_in_place(ys)
    assert ys == sorted(xs)
"""

CHECKING_KEY = """
from hypothesis import given, strategies as st

from calc import sort_by


@given(st.lists(st.integers()))
def test_the_key_checks_each_item(xs):
    def key(x):
        assert x in xs, "the key is given the items"
        return -x

    assert sort_by(xs, key) == sorted(xs, reverse=True)
"""

SEEN_KEY = """
from hypothesis import given, strategies as st

from calc import sort_by


@given(st.lists(st.integers()))
def test_the_key_sees_every_item(xs):
    seen = []
    out = sort_by(xs, lambda x: seen.append(x) or 0)
    # The items come back in order: a stable sort calls the key once each.
    assert seen == xs
    assert out == xs
"""

DEDUPE = """
from hypothesis import given, strategies as st

from calc import dedupe


@given(st.lists(st.integers()))
def test_dedupe_keeps_each_value_once(xs):
    out = dedupe(xs)
    # Every value drawn is there, once.
    assert sorted(out) == sorted(set(xs))
    assert len(out) == len(set(out))
    for x in xs:
        assert x in out
"""

# The same property drawing interactively (st.data()): its draws are protected too.
DEDUPE_DATA = """
from hypothesis import given, strategies as st

from calc import dedupe


@given(st.data())
def test_dedupe_keeps_each_value_drawn_once(data):
    xs = data.draw(st.lists(st.integers()))
    out = dedupe(xs)
    assert sorted(out) == sorted(set(xs))
    for x in xs:
        assert x in out
"""

REGISTERED = """
import calc


@calc.register
class Plugin:
    name = "plugin"


def test_a_registered_class_is_the_class_itself():
    found = calc.REGISTRY["Plugin"]
    assert found is Plugin
    assert calc.REGISTRY["Plugin"].name == "plugin"
"""

UNCOLLECTABLE = """
import collections.abc

import calc

# A name the code does not have: the import fails at collection, so only this file errors.
from calc import no_such_name  # noqa: E402

SIZED = issubclass(type(no_such_name), collections.abc.Sized)


def test_a_bag_is_sized():
    bag = calc.Bag()
    assert SIZED
    assert len(bag) == 0
"""

PROPS = "eval/properties"

SWALLOWS_THE_ASSERT = LIB.replace(
    "def sort_by(xs, key):\n    return sorted(xs, key=key)",
    "def sort_by(xs, key):\n    try:\n        key(None)\n    except AssertionError:\n"
    "        pass\n    return sorted(xs, key=key)",
)

LYING_KEYS = LIB.replace(
    "def sort_by(xs, key):\n    return sorted(xs, key=key)",
    """class Liar:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def sort_by(xs, key):
    for _ in xs:
        key(Liar())
    return list(xs)""",
)

TRUNCATES = LIB.replace(
    "def dedupe(xs):\n    return list(dict.fromkeys(xs))",
    "def dedupe(xs):\n    xs.clear()\n    return []",
)

ATTACKS = {
    "swallows the judge's assert": (
        SWALLOWS_THE_ASSERT,
        {f"{PROPS}/test_key.py": CHECKING_KEY},
        (
            f"{PROPS}/test_key.py::test_the_key_checks_each_item",
            "did not return what the judge's function "
            "test_the_key_checks_each_item.<locals>.key raised: AssertionError",
        ),
    ),
    "hands the key lying objects": (
        LYING_KEYS,
        {f"{PROPS}/test_key.py": SEEN_KEY},
        (
            f"{PROPS}/test_key.py::test_the_key_sees_every_item",
            "the judge's functions get data only",
        ),
    ),
    "truncates the drawn list": (
        TRUNCATES,
        {f"{PROPS}/test_dedupe.py": DEDUPE},
        (f"property failed: {PROPS}/test_dedupe.py::test_dedupe_keeps_each_value_once",),
    ),
    "truncates a list drawn with st.data()": (
        TRUNCATES,
        {f"{PROPS}/test_dedupe_data.py": DEDUPE_DATA},
        (f"property failed: {PROPS}/test_dedupe_data.py::test_dedupe_keeps_each_value_drawn_once",),
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_is_rejected_by_the_boundary(tmp_path, name) -> None:  # type: ignore[no-untyped-def]
    code, properties, fragments = ATTACKS[name]
    # The properties lane alone (issue 20): its fail is a reject in any gate
    # (tests/unit/test_verdict.py); the honest look-alikes below are a whole gate.
    judged = attack_lane(
        tmp_path,
        {"src/calc/__init__.py": code},
        "properties",
        base={"src/calc/__init__.py": LIB, **properties},
    )
    assert judged.status == "fail", judged.explain()
    assert judged.says(*fragments), judged.explain()


def test_the_honest_look_alikes_are_accepted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = {
        "src/calc/__init__.py": LIB,
        f"{PROPS}/test_handles.py": HANDLES,
        f"{PROPS}/test_key.py": CHECKING_KEY + SEEN_KEY.split("from calc import sort_by\n", 1)[1],
        f"{PROPS}/test_dedupe.py": DEDUPE,
        f"{PROPS}/test_dedupe_data.py": DEDUPE_DATA,
        f"{PROPS}/test_registered.py": REGISTERED,
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": LIB + "\n# patched\n"}, base=base)
    assert judged.decision == "accept_for_review", judged.explain()
    props = judged.result.report(judged.repo, "properties")
    # The decorator of the code under test on a class of the file's: in process, from its AST.
    assert judged.verdict["review"]["properties"]["in_process"] == [f"{PROPS}/test_registered.py"]
    assert props["details"]["in_process_why"] == {
        f"{PROPS}/test_registered.py": "class Plugin (line 5) decorated with calc.register, "
        "of the code under test"
    }
    assert len(props["details"]["passed"]) == 11, props
    # Issue 20: list() of a generator handle asks no `len` or `iter` and fetches ahead (its
    # first batch with the call's reply, standin.drained_calls: no `batch` request left).
    requests = props["details"]["requests"]
    assert not {"len", "iter", "next"} & set(requests), requests


def test_a_file_that_cannot_be_collected_does_not_sink_the_others(tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = {"src/calc/__init__.py": LIB, f"{PROPS}/test_sized.py": UNCOLLECTABLE}
    judged = attack(tmp_path, {"src/calc/__init__.py": LIB + "\n# patched\n"}, base=base)
    assert judged.decision == "reject", judged.explain()
    assert judged.says(f"properties: collection error: {PROPS}/test_sized.py"), judged.explain()
    assert not judged.says("did not run"), judged.explain()
    passed = judged.result.report(judged.repo, "properties")["details"]["passed"]
    assert passed == [
        f"{PROPS}/test_total.py::test_total_never_negative",
        f"{PROPS}/test_total.py::test_total_matches_sum",
    ], judged.explain()


SLOW_IMPORT = (
    """
import time

# A library whose import builds a table: longer than the old fixed 10 s, within timeout_s.
time.sleep(11)
"""
    + LIB
)


ONE_PROPERTY = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(min_value=0, max_value=9)))
def test_total_matches_a_loop(xs):
    expected = 0
    for x in xs:
        expected += x
    assert total(xs) == expected
"""


@pytest.mark.long
def test_a_slow_first_call_is_bounded_by_the_lanes_timeout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The sleep's mutants survive (dropping it changes no result): this test is about
    # the deadline, so the untested-change rule only reports.
    # Every process that imports calc pays the 11 s, so as few as the point needs: one
    # property (one worker), no mutants (each is a worker), a visible suite that does
    # not import calc. The 60 s lane deadline leaves a loaded machine ~45 s of slack.
    ledger = fast_ledger(timeout=60).replace("review_mutants = 2", "review_mutants = 0")
    ledger += '\n[review]\nunexercised = "report"\n'
    base = {
        "src/calc/__init__.py": LIB,
        "eval/gate.toml": ledger,
        "eval/properties/test_total.py": ONE_PROPERTY,
        "tests/test_calc.py": "def test_nothing():\n    assert True\n",
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": SLOW_IMPORT}, base=base)
    assert not judged.says("call deadline"), judged.explain()
    assert judged.decision == "accept_for_review", judged.explain()
