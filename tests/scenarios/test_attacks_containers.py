"""A function of the judge's in a container the property hands the code (red team, session 13).

The worker changes a plain container the property passed (or that the code
kept) as the property's frame sees it in process: `wire.merge` wrote the
code's items into the judge's dict. The `setattr` rule (the judge's data,
never its functions) did not reach a container's items: the code replaced
the property's own check with a builtin that crosses as the judge's own
(`slice`: truthy for any two arguments) or with a function of its own, and
a `total` wrong where the visible tests do not look passed every property
(`undecided` only because the review saw its line's mutants live).
"""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import attack

CALC = """
KEPT = []


def register(checks):
    {register}


def keep(checks):
    KEPT.append(checks)


def annotate(checks):
    checks["seen"] = len(checks)
    checks["mine"] = lambda xs: len(xs)
    KEPT.append(checks)


def count(xs):
    return len(xs)


class Liar:
    def check(self, *args):
        return True


def total(xs):
{total}
"""

HONEST = CALC.format(register="pass", total="    return sum(xs)")
# Wrong for three items or more: the visible tests sum none and two.
HOSTILE = CALC.format(
    register='checks["a"] = slice',
    total=(
        "    for kept in KEPT:\n"
        '        if "b" in kept:\n'
        '            kept["b"] = lambda *a: True\n'
        '        if "d" in kept:\n'
        '            kept["d"] = Liar()\n'
        "    return sum(xs) + (len(xs) > 2)"
    ),
)

ORACLE = """
from hypothesis import given, strategies as st

import calc


class Oracle:
    def check(self, xs, got):
        return got == sum(xs)


@given(st.lists(st.integers(min_value=-1000, max_value=1000)))
def test_oracle(xs):
    checks = {"d": Oracle()}
    calc.keep(checks)
    got = calc.total(xs)
    assert checks["d"].check(xs, got)
"""

PROPERTY = """
from hypothesis import given, strategies as st

import calc


def right(xs, got):
    return got == {expected}


@given(st.lists(st.integers(min_value=-1000, max_value=1000)))
def test_{name}(xs):
    checks = {{"{key}": right}}
    calc.{call}(checks)
    got = calc.{under_test}(xs)
    assert checks["{key}"](xs, got)
{extra}
"""


def _property(name: str, key: str, call: str, under_test: str, extra: str = "") -> str:
    expected = "len(xs)" if under_test == "count" else "sum(xs)"
    return PROPERTY.format(
        name=name, key=key, call=call, under_test=under_test, expected=expected, extra=extra
    )


def test_the_code_cannot_replace_a_function_in_the_judges_container(tmp_path: Path) -> None:
    # One gate run, four property files: the builtin put in during the call (a changed
    # argument copied back), the code's own function put in later (a kept container's
    # link merged), an object of the code's for the property's own oracle object, and
    # the honest look-alike: the code adds data
    # and a function of its own beside the judge's function, and keeps the dict.
    honest_extra = '    assert checks["seen"] == 1 and checks["mine"](xs) == len(xs)\n'
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": HOSTILE},
        base={
            "src/calc/__init__.py": HONEST,
            "eval/properties/test_in_the_call.py": _property("in_the_call", "a", "register", "total"),
            "eval/properties/test_kept.py": _property("kept", "b", "keep", "total"),
            "eval/properties/test_oracle.py": ORACLE,
            "eval/properties/test_beside.py": _property("beside", "c", "annotate", "count", honest_extra),
        },
    )  # fmt: skip
    # On main: undecided, "the properties never exercised src/calc/__init__.py:..."; the
    # properties lane passed.
    assert judged.decision == "reject", judged.explain()
    reasons = judged.lane("properties")["reasons"]
    # The refusal ends the worker, as any break of the protocol does: the properties run
    # after it on that worker fail with its reason too (test_total.py's, here).
    for name, where in (
        ("in_the_call", "argument 0"),
        ("kept", "a kept container"),
        ("oracle", "a kept container"),
    ):
        said = f"{where}: replaced a function or object of the judge's at"
        assert [r for r in reasons if f"test_{name}" in r and said in r], judged.explain()
    # Run first (its file sorts first): the honest look-alike passed.
    assert not [r for r in reasons if "test_beside" in r], judged.explain()
