"""docs/ledger.md and docs/decision-table.md say what the code does, row by row."""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from patchjudge.config import LEDGER, SCHEMA, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.report import Decision, LaneReport, RunKey, Status
from patchjudge.verdict import ALL_LANES, CORE_LANES, Unreadable, decide, lane_outcome
from tests.docs_helpers import (
    BAD,
    KIND,
    LEDGER_DOC,
    MAP,
    MEANING,
    generated_part,
    ledger_reference,
    tables,
    unquote,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
KEY = RunKey("a" * 40, "b" * 40, "c" * 64, "run-1")
PROPS = parse_ledger(MAP.encode()).properties


# --- docs/ledger.md ----------------------------------------------------------


def test_the_ledger_reference_is_generated_from_config_schema() -> None:
    doc = LEDGER_DOC.read_text(encoding="utf-8")
    assert generated_part(doc) == ledger_reference(), (
        "docs/ledger.md disagrees with config.SCHEMA: run `python -m tests.docs_helpers`"
    )


def test_every_key_and_kind_is_described() -> None:
    keys = {f"{section}.{key}" for section, keys in SCHEMA.items() for key in keys}
    assert set(MEANING) == keys
    kinds = {kind for keys in SCHEMA.values() for kind, _ in keys.values()}
    assert kinds <= set(KIND)
    assert kinds <= set(BAD)


def _key_tables() -> dict[str, list[dict[str, str]]]:
    doc = LEDGER_DOC.read_text(encoding="utf-8")
    return {
        unquote(heading).strip("[]"): rows
        for heading, rows in tables(doc)
        if unquote(heading).startswith("[")
    }


def test_the_ledger_tables_hold_every_key_with_the_default_the_parser_gives() -> None:
    found = _key_tables()
    assert list(found) == list(SCHEMA)
    ledger = parse_ledger(MAP.encode())
    for section, rows in found.items():
        assert [unquote(r["key"]) for r in rows] == list(SCHEMA[section])
        for row in rows:
            key = unquote(row["key"])
            shown = tomllib.loads(f"v = {unquote(row['default'])}")["v"]
            value = getattr(getattr(ledger, section), key)
            assert (list(value) if isinstance(value, tuple) else value) == shown, (section, key)


def test_each_bad_value_in_the_doc_gives_the_error_the_doc_shows() -> None:
    for section, rows in _key_tables().items():
        for row in rows:
            bad, said = row["a bad value and what patchjudge says"].split(" → ")
            with pytest.raises(PatchjudgeError) as info:
                parse_ledger(f"{MAP}[{section}]\n{unquote(bad)}\n".encode(), LEDGER)
            assert info.value.one_line() == unquote(said)


# --- docs/decision-table.md --------------------------------------------------


def _decision_tables() -> dict[str, list[dict[str, str]]]:
    return dict(tables((DOCS / "decision-table.md").read_text(encoding="utf-8")))


def _report(lane: str, status: Status, reasons: tuple[str, ...] = ("why",)) -> LaneReport:
    # A properties report of this run's seed with nothing for the review to hold (issue 18).
    details = {"seed": PROPS.seed, "unexercised": [], "probes": []} if lane == "properties" else {}
    return LaneReport(lane, status, reasons, KEY, details)


def _stale(**changes: str) -> LaneReport:
    key = RunKey(**{**KEY.__dict__, **changes})
    return LaneReport("fixtures", Status.PASS, (), key)


# case -> (lane, report): the rows of "How a lane's report counts".
CASES: dict[str, tuple[str, Callable[[], LaneReport | Unreadable | None]]] = {
    "missing": ("fixtures", lambda: None),
    "unreadable": ("fixtures", lambda: Unreadable("fixtures.json: not JSON")),
    "other-lane": ("fixtures", lambda: _report("properties", Status.PASS, ())),
    "stale-base": ("fixtures", lambda: _stale(base="d" * 40)),
    "stale-head": ("fixtures", lambda: _stale(head="d" * 40)),
    "stale-ledger": ("fixtures", lambda: _stale(ledger_sha256="d" * 64)),
    "stale-run": ("fixtures", lambda: _stale(run_id="run-0")),
    "undecided-core": ("properties", lambda: _report("properties", Status.UNDECIDED)),
    "fail-no-reason": ("freeze", lambda: _report("freeze", Status.FAIL, ())),
    "pass": ("pathfilter", lambda: _report("pathfilter", Status.PASS, ())),
    "fail": ("pathfilter", lambda: _report("pathfilter", Status.FAIL)),
    "not-applicable": ("replay", lambda: _report("replay", Status.NOT_APPLICABLE)),
    "undecided-replay": ("replay", lambda: _report("replay", Status.UNDECIDED)),
}


def test_how_a_report_counts_matches_lane_outcome() -> None:
    rows = _decision_tables()["How a lane's report counts"]
    assert [unquote(r["case"]) for r in rows] == list(CASES)
    for row in rows:
        lane, build = CASES[unquote(row["case"])]
        assert lane_outcome(lane, build(), KEY).status.value == row["counts as"], row


CELL = {"pass": Status.PASS, "fail": Status.FAIL, "n/a": Status.NOT_APPLICABLE}
CELL["undecided"] = Status.UNDECIDED


def _matches(cell: str, status: Status) -> bool:
    if cell == "any":
        return True
    return status in {CELL[word.strip()] for word in cell.split(",")}


def test_the_verdict_table_is_decide() -> None:
    rows = _decision_tables()["The verdict"]
    assert [list(r)[:-1] for r in rows] == [list(ALL_LANES)] * len(rows)
    core = (Status.PASS, Status.FAIL, Status.NOT_APPLICABLE)
    used = set()
    # Every combination of what the lanes can count as (only replay may be undecided).
    for combo in itertools.product(*[core] * len(CORE_LANES), (*core, Status.UNDECIDED)):
        statuses = dict(zip(ALL_LANES, combo, strict=True))
        first = next(
            (
                i
                for i, row in enumerate(rows)
                if all(_matches(row[lane], statuses[lane]) for lane in ALL_LANES)
            ),
            None,
        )
        assert first is not None, f"no row of the table covers {statuses}"
        used.add(first)
        reports = {
            lane: _report(lane, s, ("why",) if s in (Status.FAIL, Status.UNDECIDED) else ())
            for lane, s in statuses.items()
        }
        got = decide(reports, KEY, PROPS).decision.value
        assert got == rows[first]["verdict"], (statuses, rows[first])
    assert used == set(range(len(rows))), "a row no combination reaches"


def test_what_the_verdict_says_matches_the_code() -> None:
    rows = {r["verdict"]: r for r in _decision_tables()["What the verdict says"]}
    assert set(rows) == {d.value for d in Decision}
    for decision in Decision:
        assert int(rows[decision.value]["exit code"]) == decision.exit_code
    reject = decide(
        {
            **{lane: _report(lane, Status.PASS, ()) for lane in ALL_LANES},
            "fixtures": _report("fixtures", Status.FAIL, ("a", "b")),
            "freeze": _report("freeze", Status.FAIL, ("c",)),
        },
        KEY,
        PROPS,
    )
    assert reject.reasons == ("fixtures: a", "fixtures: b", "freeze: c")
    undecided = decide(
        {
            **{lane: _report(lane, Status.PASS, ()) for lane in ALL_LANES},
            "replay": _report("replay", Status.UNDECIDED, ("no receipt",)),
        },
        KEY,
        PROPS,
    )
    assert undecided.reasons == ("replay: no receipt",)
    accept = decide({lane: _report(lane, Status.PASS, ()) for lane in ALL_LANES}, KEY, PROPS)
    assert accept.reasons == ()
    assert rows["accept_for_review"]["reasons"] == "none"


RECEIPT = "e" * 64
_SUITE_RAN = {"ran": 4, "passed": 3, "failed": [], "excused": ["t.py::a"], "skipped": 0}
# case -> (the lane's report, what the review field must show)
REVIEW_CASES: dict[str, tuple[LaneReport, str]] = {
    "fixtures-pass": (_report("fixtures", Status.PASS, ()), "lock intact"),
    "fixtures-fail": (_report("fixtures", Status.FAIL, ("changed: a", "changed: b")), "changed: a"),
    "fixtures-not-applicable": (
        _report("fixtures", Status.NOT_APPLICABLE, ("no fixture files", "an empty lock")),
        "no fixture files; an empty lock",
    ),
    "replay-receipt": (
        LaneReport("replay", Status.PASS, (), KEY, {"receipt_sha256": RECEIPT}),
        RECEIPT,
    ),
    "replay-pass-no-receipt": (_report("replay", Status.PASS, ()), "undecided"),
    "replay-not-applicable": (_report("replay", Status.NOT_APPLICABLE), "not required"),
    "replay-fail": (
        LaneReport("replay", Status.FAIL, ("bad slice",), KEY, {"receipt_sha256": RECEIPT}),
        "undecided",
    ),
    "replay-undecided": (_report("replay", Status.UNDECIDED), "undecided"),
    # review.suite is read from the freeze lane's details.suite (issue 19).
    "suite-ran": (
        LaneReport("freeze", Status.PASS, (), KEY, {"suite": _SUITE_RAN}),
        "ran 4: 3 passed, 1 failed, excused (frozen or host-dependent)",
    ),
    "suite-failed": (
        LaneReport(
            "freeze",
            Status.FAIL,
            ("suite: 1 failed: t.py::b",),
            KEY,
            {"suite": {**_SUITE_RAN, "failed": ["t.py::b"], "excused": []}},
        ),
        "failed: 1 of 4: t.py::b",
    ),
    "suite-off": (
        LaneReport("freeze", Status.PASS, (), KEY, {"suite": "not run: [suite] run = false"}),
        "not run: [suite] run = false",
    ),
    "suite-silent": (
        _report("freeze", Status.PASS, ()),
        "not run: the freeze report says nothing of the visible suite",
    ),
}


def test_the_review_fields_table_matches_decide() -> None:
    rows = _decision_tables()["The review fields"]
    assert [unquote(r["case"]) for r in rows] == list(REVIEW_CASES)
    for row in rows:
        report, shows = REVIEW_CASES[unquote(row["case"])]
        reports = {lane: _report(lane, Status.PASS, ()) for lane in ALL_LANES}
        reports[report.lane] = report
        verdict = decide(reports, KEY, PROPS)
        field = "suite" if row["case"].startswith("`suite-") else report.lane
        assert row["field"] == field
        assert verdict.review[field] == shows, row
        if row["shows"].startswith("`"):  # a literal in the doc is the literal the code gives
            assert unquote(row["shows"]) == shows, row
    assert {k: verdict.review["properties"][k] for k in ("seed", "max_examples")} == {
        "seed": PROPS.seed,
        "max_examples": PROPS.max_examples,
    }


# --- docs/reports.md, docs/environments.md -----------------------------------


def test_the_reports_page_lists_every_shipped_schema() -> None:
    from tests.schema_helpers import SCHEMAS

    (rows,) = [r for h, r in tables((DOCS / "reports.md").read_text()) if h == "JSON Schemas"]
    assert sorted(unquote(r["schema"]) for r in rows) == sorted(SCHEMAS.values())


def test_the_environments_page_names_every_constraints_file() -> None:
    text = (DOCS / "environments.md").read_text()
    constraints = DOCS.parent / "constraints"
    for path in sorted([*constraints.glob("*.in"), *constraints.glob("*.txt")]):
        assert f" {path.name} " in text or f" {path.name}\n" in text, path.name
