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
    why = "the properties report holds no"
    assert review == {
        "isolation": "process",
        "properties": {
            "seed": 7,
            "max_examples": 9,
            "oracle": "in_process",
            "in_process": [],
            "changed_lines": f"not measured: {why} changed_lines",
            "mutants": f"not tried: {why} mutants",
        },
        "fixtures": "lock intact",
        "freeze": [{"nodeid": "t::a", "expires": "2026-12-08"}],
        "replay": "e" * 64,
        "suite": "not run: the freeze report says nothing of the visible suite",
    }
    assert decide(reports(replay=U), KEY, SETTINGS).review["replay"] == "undecided"
    failed = decide(reports(fixtures=F), KEY, SETTINGS).review
    assert failed["fixtures"] == "why"


# --- the review fields of v2 (issue 14; docs/review.md) ----------------------

CHANGED = {"executed": 1, "total": 2, "unexecuted": ["src/m.py:3"]}
MUTANTS = {"killed": 1, "total": 3, "not_tried": 1, "survivors": ["src/m.py:3: 0 -> 1"]}


def _with(lane: str, status: Status = P, reasons: tuple[str, ...] = (), **details: object) -> dict:  # type: ignore[type-arg]
    rs = reports()
    rs[lane] = LaneReport(lane, status, reasons, KEY, details)
    return rs


def _sandboxed(**statuses: Status) -> dict[str, LaneReport | Unreadable | None]:
    rs: dict[str, LaneReport | Unreadable | None] = {}
    for name, r in reports(**statuses).items():
        rs[name] = LaneReport(name, r.status, r.reasons, KEY, {"isolation": "sandbox"})
    return rs


def test_isolation_is_sandbox_only_when_every_lane_says_so() -> None:
    assert decide(_sandboxed(), KEY, SETTINGS).review["isolation"] == "sandbox"
    for lane in ALL_LANES:
        rs = _sandboxed()
        rs[lane] = LaneReport(lane, P, (), KEY, {"isolation": "process"})
        assert decide(rs, KEY, SETTINGS).review["isolation"] == "process", lane
        rs[lane] = LaneReport(lane, P, (), KEY, {})
        assert decide(rs, KEY, SETTINGS).review["isolation"] == "process", lane
        rs[lane] = None
        assert decide(rs, KEY, SETTINGS).review["isolation"] == "process", lane


def test_the_properties_figures_come_from_the_properties_report() -> None:
    rs = _with(
        "properties",
        oracle="out_of_process",
        in_process=["eval/properties/test_mp.py"],
        changed_lines=CHANGED,
        mutants=MUTANTS,
    )
    assert decide(rs, KEY, SETTINGS).review["properties"] == {
        "seed": 7,
        "max_examples": 9,
        "oracle": "out_of_process",
        "in_process": ["eval/properties/test_mp.py"],
        "changed_lines": CHANGED,
        "mutants": MUTANTS,
    }


def test_without_oracle_details_the_oracle_is_in_process() -> None:
    props = decide(_with("properties", changed_lines=CHANGED, mutants=MUTANTS), KEY, SETTINGS)
    assert props.review["properties"]["oracle"] == "in_process"
    assert props.review["properties"]["in_process"] == []


NO_FIGURES = [
    (
        _with("properties", NA, ("no changed path forces properties",)),
        "the properties lane did not run (no changed path forces properties)",
    ),
    ({**reports(), "properties": None}, "the properties lane did not run (report missing"),
    (
        {
            **reports(),
            "properties": LaneReport(
                "properties", P, (), RunKey("x" * 40, "h" * 40, "l" * 64, "run-1"),
                {"changed_lines": CHANGED, "mutants": MUTANTS},
            ),
        },
        "the properties lane did not run (stale report",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("rs", "why"), NO_FIGURES)
def test_no_figures_are_invented_when_the_lane_did_not_run(rs: dict, why: str) -> None:  # type: ignore[type-arg]
    props = decide(rs, KEY, SETTINGS).review["properties"]
    assert props["changed_lines"].startswith(f"not measured: {why}")
    assert props["mutants"].startswith(f"not tried: {why}")


@pytest.mark.parametrize(
    ("changed", "mutants"),
    [
        ({"executed": 3, "total": 2, "unexecuted": []}, {**MUTANTS, "total": 4}),
        ({"executed": 1, "total": 2}, {**MUTANTS, "survivors": ["no line number"]}),
        ({**CHANGED, "unexecuted": ["src/m.py"]}, "killed them all"),
        ({**CHANGED, "executed": True}, {**MUTANTS, "killed": -1}),
        ("9 of 12", None),
    ],
)
def test_malformed_figures_in_a_report_are_not_passed_on(changed: object, mutants: object) -> None:
    props = decide(
        _with("properties", changed_lines=changed, mutants=mutants), KEY, SETTINGS
    ).review["properties"]
    assert props["changed_lines"] == "not measured: the properties report holds no changed_lines"
    assert props["mutants"] == "not tried: the properties report holds no mutants"


def test_a_measurement_that_failed_is_passed_on_as_said() -> None:
    why = "not measured: coverage.py did not start: ImportError: no"
    rs = _with(
        "properties", F, ("changed lines " + why,), changed_lines=why, mutants="not tried: x"
    )
    assert decide(rs, KEY, SETTINGS).review["properties"]["changed_lines"] == why


def test_a_failed_properties_lane_keeps_its_figures_and_says_why_no_mutants() -> None:
    why = "not tried: the properties lane failed on the patch as it is"
    rs = _with("properties", F, ("property failed: x",), changed_lines=CHANGED, mutants=why)
    props = decide(rs, KEY, SETTINGS).review["properties"]
    assert props["changed_lines"] == CHANGED
    assert props["mutants"] == why
