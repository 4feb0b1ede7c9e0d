"""eval/flakes.freeze.toml -> FreezeRow records; a malformed row names its index and node id."""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass
from typing import Any

from patchjudge.errors import PatchjudgeError


@dataclass(frozen=True)
class FreezeRow:
    nodeid: str
    owner: str
    reason: str
    created: dt.date
    expires: dt.date
    fail_count: int
    runs: int
    required_properties: tuple[str, ...]


_FIELDS: dict[str, str] = {
    "nodeid": "str",
    "owner": "str",
    "reason": "str",
    "created": "date",
    "expires": "date",
    "fail_count": "int",
    "runs": "int",
    "required_properties": "strs",
}


def _check(kind: str, value: Any) -> str | None:
    if kind == "str":
        return None if isinstance(value, str) else "must be a string"
    if kind == "date":
        # TOML dates are dt.date; a datetime is a date subclass but not a plain day.
        ok = isinstance(value, dt.date) and not isinstance(value, dt.datetime)
        return None if ok else "must be a TOML date like 2026-12-08"
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if ok else "must be a whole number >= 0"
    if kind == "strs":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "must be a list of property node ids"
    raise AssertionError(f"unreachable: {kind}")


def parse_registry(data: bytes, source: str) -> tuple[FreezeRow, ...]:
    """Pure: registry bytes -> rows. Shape errors here; the rules are the freeze audit's."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PatchjudgeError(f"not UTF-8 (byte {exc.start})", file=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise PatchjudgeError(f"not valid TOML: {exc}", file=source) from None
    except RecursionError:  # tomllib recurses once per nested array or table
        raise PatchjudgeError("nested too deeply to be a registry", file=source) from None
    unknown = [k for k in doc if k != "freeze"]
    if unknown:
        raise PatchjudgeError(
            "unknown table", file=source, key=unknown[0], fix="rows are [[freeze]]"
        )
    raw_rows = doc.get("freeze", [])
    if not isinstance(raw_rows, list):
        raise PatchjudgeError("must be an array of tables", file=source, key="[[freeze]]")
    rows = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_rows):
        if not isinstance(raw, dict):
            raise PatchjudgeError("must be a table", file=source, key=f"freeze[{i}]")
        label = f"freeze[{i}] ({raw.get('nodeid', '?')})"
        for key in raw:
            if key not in _FIELDS:
                raise PatchjudgeError(
                    f"unknown key {key!r}",
                    file=source,
                    key=label,
                    fix=f"known: {', '.join(_FIELDS)}",
                )
        for key, kind in _FIELDS.items():
            if key not in raw:
                if key == "required_properties":
                    continue  # the audit says why an empty list fails
                raise PatchjudgeError(f"{key} missing", file=source, key=label)
            problem = _check(kind, raw[key])
            if problem:
                raise PatchjudgeError(f"{key} {problem}", file=source, key=label)
        if raw["nodeid"] in seen:
            raise PatchjudgeError("node id frozen twice", file=source, key=label)
        seen.add(raw["nodeid"])
        rows.append(
            FreezeRow(
                nodeid=raw["nodeid"],
                owner=raw["owner"],
                reason=raw["reason"],
                created=raw["created"],
                expires=raw["expires"],
                fail_count=raw["fail_count"],
                runs=raw["runs"],
                required_properties=tuple(raw.get("required_properties", [])),
            )
        )
    return tuple(rows)
