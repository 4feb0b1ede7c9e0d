"""A stdlib exception class the code raises is caught as the judge's own class (issue 17)."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import pytest

from patchjudge.boundary import standin


@pytest.mark.parametrize(
    ("module", "qualname", "expected"),
    [
        ("dataclasses", "FrozenInstanceError", dataclasses.FrozenInstanceError),
        ("json.decoder", "JSONDecodeError", json.JSONDecodeError),
        # Not its module's own name for the class (json re-exports it): not that class.
        ("json", "JSONDecodeError", None),
        # A builtin crosses by name already; a library's class is the worker's alone.
        ("builtins", "ValueError", None),
        ("mylib", "FrozenInstanceError", None),
        # No dotted path, no non-exception, no module hook.
        ("dataclasses", "FrozenInstanceError.__class__", None),
        ("dataclasses", "Field", None),
        ("dataclasses", "__getattr__", None),
        (None, "FrozenInstanceError", None),
    ],
)
def test_the_judges_own_stdlib_exception_class(module: Any, qualname: Any, expected: Any) -> None:
    assert standin._stdlib_exception(module, qualname) is expected


def test_nothing_is_imported_on_the_workers_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "wave", raising=False)
    assert standin._stdlib_exception("wave", "Error") is None
    assert "wave" not in sys.modules
