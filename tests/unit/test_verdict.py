"""The decision table (SPEC: The verdict), row by row."""

from __future__ import annotations

import pytest

from patchjudge.config import PropertiesSettings
from patchjudge.report import Decision, LaneReport, RunKey, Status
from patchjudge.verdict import ALL_LANES, Unreadable, decide

KEY = RunKey("b" * 40, "h" * 40, "l" * 64, "run-1")
SETTINGS = PropertiesSettings(("eval/properties",), 7, 9, 60)
P, F, NA, U = Status.PASS, Status.FAIL, Status.NOT_APPLICABLE, Status.UNDECIDED


def reports(**statuses: Status) -> dict[str, LaneReport]:
    out = {}
    for name in ALL_LANES:
        status = statuses.get(name, P)
        reasons = ("why",) if status in (F, U) else ()
        out[name] = LaneReport(name, status, reasons, KEY, {})
    return out


TABLE = [
    ({}, Decision.ACCEPT_FOR_REVIEW),
    ({"properties": NA, "replay": NA}, Decision.ACCEPT_FOR_REVIEW),
    ({"pathfilter": F}, Decision.REJECT),
    ({"fixtures": F}, Decision.REJECT),
    ({"freeze": F}, Decision.REJECT),
    ({"properties": F}, Decision.REJECT),
    ({"replay": F}, Decision.REJECT),
    ({"replay": U}, Decision.UNDECIDED),
    ({"properties": F, "replay": U}, Decision.REJECT),
    ({"fixtures": U}, Decision.REJECT),  # only replay may be undecided
]


@pytest.mark.parametrize(("statuses", "decision"), TABLE)
def test_decision_table(statuses: dict[str, Status], decision: Decision) -> None:
    assert decide(reports(**statuses), KEY, SETTINGS).decision is decision


@pytest.mark.parametrize("lane", ALL_LANES)
def test_silence_is_not_a_pass(lane: str) -> None:
    rs: dict[str, LaneReport | Unreadable | None] = dict(reports())
    rs[lane] = None
    v = decide(rs, KEY, SETTINGS)
    assert v.decision is Decision.REJECT
    assert v.reasons == (f"{lane}: report missing: the lane did not run",)
    rs[lane] = Unreadable("not JSON")
    assert decide(rs, KEY, SETTINGS).reasons == (f"{lane}: report unreadable: not JSON",)


@pytest.mark.parametrize(
    ("field", "value", "word"),
    [
        ("base", "x" * 40, "base"),
        ("head", "y" * 40, "head"),
        ("ledger_sha256", "z" * 64, "ledger_sha256"),
        ("run_id", "run-0", "run"),
    ],
)
def test_a_stale_report_fails_its_lane(field: str, value: str, word: str) -> None:
    rs = reports()
    old = rs["properties"]
    stale_key = RunKey(**{**KEY.__dict__, field: value})
    rs["properties"] = LaneReport("properties", P, (), stale_key, {})
    v = decide(rs, KEY, SETTINGS)
    assert v.decision is Decision.REJECT
    assert v.reasons[0].startswith(f"properties: stale report: {word}")
    assert old.status is P


def test_a_report_for_another_lane_fails() -> None:
    rs = reports()
    rs["fixtures"] = LaneReport("pathfilter", P, (), KEY, {})
    assert decide(rs, KEY, SETTINGS).lanes["fixtures"].status is F


def test_a_failure_without_reason_still_says_why() -> None:
    rs = reports()
    rs["fixtures"] = LaneReport("fixtures", F, (), KEY, {})
    assert decide(rs, KEY, SETTINGS).reasons == ("fixtures: failed without a reason",)


def test_review_fields() -> None:
    rs = reports(replay=P)
    rs["freeze"] = LaneReport(
        "freeze", P, (), KEY, {"frozen": [{"nodeid": "t::a", "expires": "2026-12-08", "x": 1}]}
    )
    rs["replay"] = LaneReport("replay", P, (), KEY, {"receipt_sha256": "e" * 64})
    review = decide(rs, KEY, SETTINGS).review
    assert review == {
        "properties": {"seed": 7, "max_examples": 9},
        "fixtures": "lock intact",
        "freeze": [{"nodeid": "t::a", "expires": "2026-12-08"}],
        "replay": "e" * 64,
    }
    assert decide(reports(replay=U), KEY, SETTINGS).review["replay"] == "undecided"
    failed = decide(reports(fixtures=F), KEY, SETTINGS).review
    assert failed["fixtures"] == "why"
