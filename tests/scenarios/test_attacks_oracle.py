"""Attacks on the oracle's boundary, through the real CLI: the code under test runs in a worker.

The first three broke v1 (issue 11): with pytest and the judge's plugin in
the tested process, import-time code could rewrite the reporting, the
strategies, or notice hypothesis. Out of process the worker has none of the
judge to touch; the rest attack the wire itself. Each patch is also wrong
(it breaks `total` or the function the property checks), so an accept
would mean the attack switched the oracle off.
"""

from __future__ import annotations

import pytest

from tests.attack_helpers import attack, attack_lane, fast_ledger

# How code in the worker finds its own end of the wire: by what the connection holds (its
# class's name is drawn per run, issue 18).
CONN = """
import gc, os, sys


def _conn():
    return next(o for o in gc.get_objects() if hasattr(o, "fd_out") and hasattr(o, "table"))
"""

REPORTING_REPLACED = """
import os, sys

_plugin = sys.modules.get("patchjudge.pytest_plugin")
if _plugin is not None:
    _plugin.emit = lambda *a, **k: None
os._exit(0)


def total(xs):
    return -1
"""

STRATEGIES_REBOUND = """
import hypothesis.strategies as st

st.lists = lambda *a, **k: st.just([])
st.integers = lambda *a, **k: st.just(0)


def total(xs):
    return sum(xs) if not xs else -1
"""

ONLY_UNDER_HYPOTHESIS = """
import sys


def total(xs):
    return sum(xs) if "hypothesis" in sys.modules else -1
"""

KEYS_PROPERTY = """
from hypothesis import given, strategies as st

from calc import apply, evens


@given(st.lists(st.integers()))
def test_apply_maps_each_item(xs):
    assert apply(lambda x: x + 1, xs) == [x + 1 for x in xs]


@given(st.lists(st.integers()))
def test_evens_are_the_even_items(xs):
    assert list(evens(xs)) == [x for x in xs if x % 2 == 0]
"""

KEYS_CALC = """
def total(xs):
    return sum(xs)


def apply(f, xs):
    return [f(x) for x in xs]


def evens(xs):
    return (x for x in xs if x % 2 == 0)
"""

KEYS_BASE = {"src/calc/__init__.py": KEYS_CALC, "eval/properties/test_keys.py": KEYS_PROPERTY}

WALKS_JUDGE_FUNCTION = (
    KEYS_CALC
    + """

def apply(f, xs):
    # A judge function is an id the worker may ask the judge to call; try the others.
    conn, given = f.__dict__["_conn"], f.__dict__["_id"]
    for guess in range(1, 50):
        if guess != given:
            conn.callback(guess, (), {})
    return [-1 for x in xs]
"""
)

ENDLESS = (
    KEYS_CALC
    + """

import itertools


def evens(xs):
    return itertools.count()
"""
)

JUNK_ON_THE_WIRE = (
    CONN
    + """

def total(xs):
    os.write(_conn().fd_out, b"\\x00\\x00\\x00\\x03XYZ")
    return sum(xs)
"""
)

HUGE_FRAME = (
    CONN
    + """

def total(xs):
    os.write(_conn().fd_out, b"\\x7f\\xff\\xff\\xff" + b"\\x00" * 64)
    return sum(xs)
"""
)

DEEPLY_NESTED = """
def total(xs):
    value = sum(xs)
    for _ in range(500):
        value = [value]
    return value
"""

SLEEPS = """
import time


def total(xs):
    # On the properties' inputs only: the visible suite (total([]), total([1, 2]))
    # passes, so the gate does not also wait out the suite's deadline (30 s).
    if len(xs) > 2:
        time.sleep(60)
    return sum(xs)
"""

FORGED_REPLY = (
    CONN
    + """

def total(xs):
    _conn().send(("ok", 10**6, 0, ()))
    return -1
"""
)

TOTAL = "eval/properties/test_total.py"
KEYS = "eval/properties/test_keys.py"

CASES = {
    "reporting replaced, exit 0": (
        {"src/calc/__init__.py": REPORTING_REPLACED},
        None,
        f"properties: property module not importable: {TOTAL}: "
        f"the worker for {TOTAL} crashed (exit 0)",
    ),
    "strategies rebound": (
        {"src/calc/__init__.py": STRATEGIES_REBOUND},
        None,
        f"properties: property failed: {TOTAL}::test_total_never_negative: assert -1 >= 0; "
        "Failing test case",
    ),
    "behaves only under hypothesis": (
        {"src/calc/__init__.py": ONLY_UNDER_HYPOTHESIS},
        None,
        f"properties: property failed: {TOTAL}::test_total_never_negative: assert -1 >= 0; "
        "Failing test case",
    ),
    "walks a judge function": (
        {"src/calc/__init__.py": WALKS_JUDGE_FUNCTION},
        KEYS_BASE,
        f"properties: property failed: {KEYS}::test_apply_maps_each_item: the worker for "
        f"{KEYS} broke the protocol: asked to call judge function 1, not given",
    ),
    "malformed data": (
        {"src/calc/__init__.py": JUNK_ON_THE_WIRE},
        None,
        f"the worker for {TOTAL} sent malformed data: unknown tag b'X' at byte 0",
    ),
    "huge frame": (
        {"src/calc/__init__.py": HUGE_FRAME},
        None,
        f"the worker for {TOTAL} sent malformed data: frame of 2147483647 bytes announced",
    ),
    "deeply nested value": (
        {"src/calc/__init__.py": DEEPLY_NESTED},
        None,
        f"the worker for {TOTAL} returned a value that cannot cross: "
        "WireError: value nested deeper than 64",
    ),
    "sleeps past the deadline": (
        {"src/calc/__init__.py": SLEEPS},
        # The deadline is the lane's timeout_s unless the ledger names one (issue 17).
        {
            "eval/gate.toml": fast_ledger().replace(
                "review_mutants", "call_timeout_s = 5\nreview_mutants"
            )
        },
        f"the worker for {TOTAL} did not answer within the 5 s call deadline",
    ),
    "forged reply": (
        {"src/calc/__init__.py": FORGED_REPLY},
        None,
        f"the worker for {TOTAL} broke the protocol: forged a reply to call 1000000, not asked",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_attack_is_rejected_with_its_reason(tmp_path, name) -> None:  # type: ignore[no-untyped-def]
    patch, base, reason = CASES[name]
    # Each reason is the properties lane's: that lane alone (issue 20), whose fail is a
    # reject in any gate (tests/unit/test_verdict.py); the two tests below run whole gates.
    judged = attack_lane(tmp_path, patch, "properties", base=base)
    assert judged.status == "fail", judged.explain()
    assert judged.says(reason), judged.explain()


def test_a_never_ending_iterator_ends_at_the_lane_deadline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Whatever the load, the lane ends at its deadline: a shorter one costs less wall, the
    # same reason. Until then judge and worker spin on round trips, two cores' worth: 5 s,
    # not 10, as the resource attacks' deadline.
    ledger = fast_ledger(timeout=5)
    judged = attack(
        tmp_path, {"src/calc/__init__.py": ENDLESS}, base={**KEYS_BASE, "eval/gate.toml": ledger}
    )
    assert judged.decision == "reject", judged.explain()
    assert judged.says("properties: timed out after 5 s"), judged.explain()


FORGING_CONFTEST = """
import pytest


def pytest_collection_modifyitems(session, config, items):
    # The head deleted test_two; put an item with its node id back.
    if not any(i.name == "test_two" for i in items):
        items.append(pytest.Function.from_parent(items[0].parent, name="test_two",
                                                 callobj=lambda: None))
"""

VISIBLE_WITHOUT_TWO = """
from calc import total


def test_empty():
    assert total([]) == 0
"""


def test_a_forged_collection_cannot_hide_a_deleted_test(tmp_path) -> None:  # type: ignore[no-untyped-def]
    judged = attack(
        tmp_path, {"tests/test_calc.py": VISIBLE_WITHOUT_TWO, "tests/conftest.py": FORGING_CONFTEST}
    )
    assert judged.decision == "reject", judged.explain()
    assert judged.says(
        "pathfilter: visible test deleted from source but still collected: "
        "tests/test_calc.py::test_two"
    ), judged.explain()
