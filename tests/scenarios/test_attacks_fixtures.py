"""Attacks on fixture bytes: the lock at the base decides, whatever the patch relocks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.attack_helpers import attack, attack_lane, symlink
from tests.helpers import ORDER_JSON, fixture_digest

FIXTURE = "tests/fixtures/order.json"
FORGED = '{"order": 7, "lines": [{"sku": "a", "qty": 2}], "total": 5}\n'


def _relocked(files: dict[str, str]) -> str:
    lock = {"version": 1, "canonical_json": True, "files": {
        p: fixture_digest(p, c.encode()) for p, c in sorted(files.items())
    }}  # fmt: skip
    return json.dumps(lock, indent=2) + "\n"


def _identical_link(repo: Path) -> None:
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs/order.json").write_text(ORDER_JSON)
    symlink(repo, FIXTURE, "../../docs/order.json")


def _dir_for_file(repo: Path) -> None:
    (repo / FIXTURE).unlink()
    (repo / FIXTURE).mkdir()
    (repo / FIXTURE / "data.json").write_text(ORDER_JSON)


Case = tuple[dict[str, str | bytes | None], Callable[[Path], None] | None, tuple[str, ...]]

CASES: dict[str, Case] = {
    "rewritten bytes": ({FIXTURE: FORGED}, None, (f"fixtures: changed: {FIXTURE}",)),
    "relocked lock": (
        {FIXTURE: FORGED, "eval/fixtures.lock.json": _relocked({FIXTURE: FORGED})},
        None,
        (f"fixtures: changed: {FIXTURE}",),
    ),
    "unlocked new file": (
        {"tests/fixtures/extra.json": "{}\n"},
        None,
        ("fixtures: extra: tests/fixtures/extra.json (not in the lock)",),
    ),
    "deletion": ({FIXTURE: None}, None, (f"fixtures: missing: {FIXTURE}",)),
    "symlink to identical bytes": (
        {},
        _identical_link,
        (f"fixtures: symlink: {FIXTURE} (a fixture must be a file)",),
    ),
    "directory where a file was": ({}, _dir_for_file, (f"fixtures: missing: {FIXTURE}",)),
    "binary bytes for a json fixture": (
        {FIXTURE: b"\xff\xfe\x00garbage"},
        None,
        (f"fixtures: changed: {FIXTURE}",),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_attack_fails_the_fixtures_lane(tmp_path: Path, name: str) -> None:
    """Bytes against the base's lock: the fixtures lane's to see from git data alone, run
    on its own (issue 20). A fixtures fail is a reject (tests/unit/test_verdict.py); the
    whole gate over rewritten bytes is test_gate.py::test_fixture_bytes_rewritten."""
    files, step, fragments = CASES[name]
    judged = attack_lane(tmp_path, files, "fixtures", before_commit=step)
    assert judged.status == "fail", judged.explain()
    assert judged.says(*fragments), judged.explain()
    assert judged.result.code == 1, judged.explain()


def test_json_fixture_reserialised_is_accepted(tmp_path: Path) -> None:
    """Key order and white space are not drift under RFC 8785 (SPEC: fixtures)."""
    doc = json.loads(ORDER_JSON)
    reordered = json.dumps(dict(reversed(list(doc.items()))), indent=4) + "\n"
    assert reordered != ORDER_JSON
    judged = attack(tmp_path, {FIXTURE: reordered})
    assert judged.decision == "accept_for_review", judged.explain()
    assert judged.lane("fixtures")["status"] == "pass"
    assert judged.verdict["review"]["fixtures"] == "lock intact"
