"""audit-judge's comparison of the registry and lock at base and head, as a table."""

from __future__ import annotations

import dataclasses
import datetime as dt

from patchjudge.commands.audit import compare_judge
from patchjudge.freezefile import FreezeRow


def _row(n: int, expires: str = "2026-12-08", fail: int = 3, runs: int = 12) -> FreezeRow:
    return FreezeRow(
        f"tests/t.py::test_{n}",
        "qa",
        "flaky",
        dt.date(2026, 11, 24),
        dt.date.fromisoformat(expires),
        fail,
        runs,
        ("eval/properties/p.py::test_p",),
    )


def _cmp(base: list[FreezeRow], head: list[FreezeRow], **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"changed_fixtures": (), "max_extensions": 3, **kw}
    return compare_judge(base, head, {}, {}, **args)  # type: ignore[arg-type]


def test_no_change_no_findings() -> None:
    f = _cmp([_row(1)], [_row(1)])
    assert f.flags == () and f.reviews == ()


def test_expiry_later_without_new_evidence_is_flagged() -> None:
    f = _cmp([_row(1)], [_row(1, "2026-12-10")])
    assert f.flags == (
        "expiry moved later without new evidence: tests/t.py::test_1 "
        "(2026-12-08 -> 2026-12-10; fail_count/runs still 3/12)",
    )


def test_expiry_later_with_new_evidence_is_for_review() -> None:
    f = _cmp([_row(1)], [_row(1, "2026-12-10", fail=5, runs=24)])
    assert f.flags == ()
    assert f.reviews == (
        "extended with new evidence: tests/t.py::test_1 (2026-12-08 -> 2026-12-10; 3/12 -> 5/24)",
    )


def test_expiry_earlier_is_fine() -> None:
    assert _cmp([_row(1)], [_row(1, "2026-12-02")]).flags == ()


def test_more_than_max_extensions_is_an_incident() -> None:
    base = [_row(i) for i in range(4)]
    head = [_row(i, "2026-12-09", fail=4, runs=13) for i in range(4)]
    assert _cmp(base, head[:3], max_extensions=3).flags == ()
    f = _cmp(base, head, max_extensions=3)
    assert f.flags == (
        "bulk extension is an incident: 4 rows extended in one change (max_extensions 3)",
    )
    assert _cmp(base, head, max_extensions=4).flags == ()


def test_a_removed_row_is_a_graduation_for_review() -> None:
    f = _cmp([_row(1), _row(2)], [_row(2)])
    assert f.flags == ()
    assert f.reviews == (
        "graduation: tests/t.py::test_1 unfrozen (evidence was 3/12); "
        "confirm it is fixed, not hidden",
    )


def test_a_new_row_is_for_review() -> None:
    assert _cmp([], [_row(1)]).reviews == ("newly frozen: tests/t.py::test_1",)


def test_lock_entries_must_change_with_their_fixture() -> None:
    base = {"f/a.json": "1", "f/b.json": "2", "f/c.json": "3"}
    head = {"f/a.json": "9", "f/b.json": "2", "f/d.json": "4"}
    f = compare_judge([], [], base, head, changed_fixtures={"f/a.json"}, max_extensions=3)
    assert f.flags == (
        "lock entry removed with no matching fixture change: f/c.json",
        "lock entry added with no matching fixture change: f/d.json",
    )
    assert f.reviews == ("lock entry changed with its fixture: f/a.json",)
    ok = compare_judge(
        [], [], base, head, changed_fixtures={"f/a.json", "f/c.json", "f/d.json"}, max_extensions=3
    )
    assert ok.flags == ()


def test_a_row_that_changes_nothing_but_the_reason_is_not_an_extension() -> None:
    assert _cmp([_row(1)], [dataclasses.replace(_row(1), reason="clearer")]).flags == ()
