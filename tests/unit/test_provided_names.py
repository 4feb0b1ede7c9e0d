"""Which of the head's top-level names the judge's process imports as stand-ins."""

from __future__ import annotations

import pytest

from patchjudge.lanes.properties import imported_names, provided_names

LISTING = [("calc", True), ("json.py", False), ("token.py", False), ("README.md", False)]


@pytest.mark.parametrize(
    ("judge", "imported", "expected"),
    [
        # A stdlib-named module stays the judge's unless a property imports it.
        (set(), set(), ["calc"]),
        (set(), {"json"}, ["calc", "json"]),
        (set(), {"json", "token"}, ["calc", "json", "token"]),
        # Names the judge's own tree provides are never the head's.
        ({"calc"}, {"json"}, ["json"]),
    ],
)
def test_provided_names(judge: set[str], imported: set[str], expected: list[str]) -> None:
    assert provided_names(LISTING, judge, imported) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"import json\n", {"json"}),
        (b"import os.path, calc.sub as s\n", {"os", "calc"}),
        (b"from token import NAME\nfrom . import local\n", {"token"}),
        (b"def f(:\n", set()),
        (b"x = 'import json'\n", set()),
    ],
)
def test_imported_names(source: bytes, expected: set[str]) -> None:
    assert imported_names([source]) == expected
