"""standin.functions_replaced: the judge's functions and objects in a container the code changed."""

from __future__ import annotations

import datetime
from typing import Any, NamedTuple

import pytest

from patchjudge.boundary import standin
from patchjudge.boundary.standin import functions_replaced


def check(xs: list[int], got: int) -> bool:
    return got == sum(xs)


class Model:
    def step(self) -> int:
        return 1


class Point(NamedTuple):
    x: int
    y: int


MODEL = Model()
STEP = MODEL.step  # a bound method: the judge's container holds this very object


def code_function(*_: Any) -> bool:  # what the code put there (a handle, in a real run)
    return True


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ({"ok": check}, {"ok": slice}, "['ok']"),
        ({"ok": check}, {"ok": code_function}, "['ok']"),
        ({"ok": check}, {}, "['ok']"),
        ({"ok": check, "n": 1}, {"n": 1, "ok": None}, "['ok']"),
        ([check, 1], [code_function, 1], "[0]"),
        ([1, check], [1], "[1]"),
        ({"steps": [STEP]}, {"steps": [Model().step]}, "['steps'][0]"),
        ({"kind": int}, {"kind": str}, "['kind']"),
        ({"model": MODEL}, {"model": Model()}, "['model']"),  # the property's own object
        ({"at": datetime.UTC}, {"at": datetime.timezone(datetime.timedelta(0))}, None),
        ({"model": MODEL}, {"model": MODEL, "n": 2}, None),
        ({"when": datetime.date(2026, 1, 1)}, {"when": datetime.date(2027, 1, 1)}, None),  # data
        ({"part": slice(1, 2)}, {"part": slice(2, 3)}, None),  # a slice value is data
        ({"at": [datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)]}, {"at": []}, None),
        ([Point(1, 2)], [(1, 2)], None),  # a judge-side tuple subclass crosses as data
        ({"a": {"b": [check]}}, {"a": {"b": [len]}}, "['a']['b'][0]"),
        ({check, 1}, {1}, "{<function check"),
        # What the code may do: leave the judge's function as it is, change the data
        # beside it, add items of its own (functions too).
        ({"ok": check}, {"ok": check}, None),
        ({"steps": [STEP]}, {"steps": [STEP]}, None),
        ({"ok": check, "n": 1}, {"ok": check, "n": 2, "mine": code_function}, None),
        ([check], [check, code_function], None),
        # An in-place sort, reverse or shuffle of the property's own objects: every one is
        # still there, in another slot. A slot of the judge's taken by the code's is not.
        ([MODEL, STEP, 1], [1, STEP, MODEL], None),
        ([check, MODEL], [MODEL, check, code_function], None),
        ([check, MODEL], [code_function, MODEL, check], "[0]"),
        ([check, MODEL], [MODEL], "[0]"),
        ({check}, {check, code_function}, None),
        ({"a": [1]}, {"a": (1,)}, None),  # a type change of data: merge's own business
    ],
)
def test_which_changes_replace_a_function_of_the_judges(
    old: Any, new: Any, where: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This file stands for the judge's tree: its classes are the property's own.
    monkeypatch.setattr(standin, "_judge_class", lambda cls: cls.__module__ == __name__)
    found = functions_replaced(old, new)
    if where is None:
        assert found is None
    else:
        assert found is not None and found.startswith(where), found
