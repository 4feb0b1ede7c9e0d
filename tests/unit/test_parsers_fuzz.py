"""Every judge file parser, fuzzed: a PatchjudgeError naming the file, never another exception."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from patchjudge.config import SCHEMA, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.freezefile import parse_registry
from patchjudge.hashing import parse_lock

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOURCE = "eval/judge-file (at merge base 0123456789ab)"

Parser = Callable[[bytes, str], object]
PARSERS: dict[str, Parser] = {
    "ledger": parse_ledger,
    "registry": parse_registry,
    "lock": parse_lock,
}


def _holds(parser: Parser, data: bytes) -> None:
    """The contract: a value, or one line that names the file."""
    try:
        parser(data, SOURCE)
    except PatchjudgeError as exc:
        line = exc.one_line()
        assert "\n" not in line
        assert exc.file == SOURCE, line
        assert line.startswith(SOURCE), line


# --- TOML text from values, written by hand: tomllib has no writer --------------

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
    st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
)
# One level of arrays is enough to hit every type check; deep nesting is the
# arbitrary-bytes test's @example. Flat strategies keep each example cheap.
_values = st.one_of(_scalars, st.lists(_scalars, max_size=3))


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def toml_doc(tables: dict[str, dict[str, Any]], arrays: dict[str, list[dict[str, Any]]]) -> bytes:
    lines = []
    for name, table in tables.items():
        lines.append(f"[{json.dumps(name, ensure_ascii=False)}]")
        lines += [
            f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in table.items()
        ]
    for name, rows in arrays.items():
        for row in rows:
            lines.append(f"[[{json.dumps(name, ensure_ascii=False)}]]")
            lines += [
                f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in row.items()
            ]
    return ("\n".join(lines) + "\n").encode()


def _near(keys: list[str]) -> st.SearchStrategy[str]:
    """Mostly the names the parser knows, sometimes another."""
    return st.one_of(st.sampled_from(keys), _text)


_ledger_tables = st.dictionaries(
    _near([*SCHEMA, "map"]),
    st.dictionaries(
        _near(sorted({k for section in SCHEMA.values() for k in section} | {"src/**", "**"})),
        st.one_of(_values, st.lists(st.sampled_from(["properties", "freeze", "nope"]))),
        max_size=4,
    ),
    max_size=4,
)
_ROW_KEYS = ["nodeid", "owner", "reason", "created", "expires", "fail_count", "runs",
             "required_properties"]  # fmt: skip
_registry_rows = st.dictionaries(
    _near(["freeze"]), st.lists(st.dictionaries(_near(_ROW_KEYS), _values, max_size=9), max_size=2),
    max_size=2,
)  # fmt: skip


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(data=st.binary(max_size=200))
@example(data=b"[" * 5_000)
@example(data=b"a = " + b"[" * 5_000)
@example(data=b"\xef\xbb\xbf[gate]\n")
@example(data=b"\xff\xfe")
def test_arbitrary_bytes(name: str, data: bytes) -> None:
    _holds(PARSERS[name], data)


@FUZZ
@given(tables=_ledger_tables)
def test_ledger_documents(tables: dict[str, dict[str, Any]]) -> None:
    _holds(parse_ledger, toml_doc(tables, {}))


@FUZZ
@given(tables=st.dictionaries(_text, st.dictionaries(_text, _values, max_size=3), max_size=2),
       rows=_registry_rows)  # fmt: skip
def test_registry_documents(
    tables: dict[str, dict[str, Any]], rows: dict[str, list[dict[str, Any]]]
) -> None:
    _holds(parse_registry, toml_doc(tables, rows))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_lock_docs = st.dictionaries(
    _near(["version", "canonical_json", "files"]),
    st.one_of(_json, st.dictionaries(_text, st.one_of(_json, st.just("a" * 64)), max_size=3)),
    max_size=4,
)


@FUZZ
@given(doc=st.one_of(_json, _lock_docs))
def test_lock_documents(doc: Any) -> None:
    _holds(parse_lock, json.dumps(doc).encode())


def test_valid_files_still_parse() -> None:
    """The fuzz contract is not met by rejecting everything."""
    from tests.helpers import LEDGER, example_files

    assert parse_ledger(LEDGER.encode(), SOURCE).gate.base == "main"
    lock = example_files()["eval/fixtures.lock.json"]
    assert isinstance(lock, str)
    assert parse_lock(lock.encode(), SOURCE).canonical_json is True
    row = (
        '[[freeze]]\nnodeid = "tests/t.py::t"\nowner = "qa"\nreason = "r"\n'
        "created = 2026-11-24\nexpires = 2026-12-08\nfail_count = 3\nruns = 12\n"
    )
    assert parse_registry(row.encode(), SOURCE)[0].owner == "qa"
