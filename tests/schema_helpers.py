"""Validate what patchjudge writes against the JSON Schemas it ships (src/patchjudge/schemas)."""

from __future__ import annotations

import functools
import importlib.resources
import json
from pathlib import Path
from typing import Any

import jsonschema

# name -> file in the package: what validate(doc, name) accepts.
SCHEMAS = {
    "lane_report": "lane_report.json",
    "verdict": "verdict.json",
    "receipt": "receipt.json",
    "flakes": "flakes.json",
}


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """The shipped schema, read the way an installed patchjudge reads it."""
    if name not in SCHEMAS:
        raise KeyError(f"no schema {name!r}; known: {', '.join(SCHEMAS)}")
    text = importlib.resources.files("patchjudge").joinpath("schemas", SCHEMAS[name]).read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


def validator(name: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(schema(name))


def problems(doc: Any, name: str) -> list[str]:
    """Every way `doc` breaks the schema, as 'path: message' lines (empty: valid)."""
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]


def validate(doc: Any, name: str) -> None:
    """Fail the test with every schema problem of `doc`; `name` is a key of SCHEMAS."""
    found = problems(doc, name)
    assert not found, f"not a valid {name}:\n" + "\n".join(found)


def validate_file(path: Path, name: str) -> dict[str, Any]:
    """Validate a JSON file the gate wrote and return it."""
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    validate(doc, name)
    return doc
