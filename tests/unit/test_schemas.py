"""The shipped JSON Schemas: well-formed, true to SPEC's examples, and true to the code."""

from __future__ import annotations

import copy
import importlib.resources
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import PropertiesSettings
from patchjudge.errors import PatchjudgeError
from patchjudge.replay import HOST_KEYS, Receipt, parse_receipt
from patchjudge.report import LaneReport, RunKey, Status
from patchjudge.verdict import ALL_LANES, Unreadable, decide
from tests.schema_helpers import SCHEMAS, problems, schema, validate

A, B = "a" * 40, "b" * 40
SHA = "c" * 64
CLOCK = "tests/test_clock.py::test_timestamp_order"

# SPEC.md's examples, with its <sha> placeholders filled in.
SPEC_LANE_REPORT = {
    "schema": 1, "lane": "fixtures", "status": "fail",
    "reasons": ["changed: tests/fixtures/order_total.json"],
    "base": A, "head": B, "ledger_sha256": SHA, "details": {},
}  # fmt: skip
SPEC_VERDICT = {
    "schema": 1, "verdict": "reject", "base": A, "head": B, "ledger_sha256": SHA,
    "lanes": {
        "pathfilter": {"status": "pass", "reasons": []},
        "fixtures": {"status": "fail", "reasons": ["changed: tests/fixtures/order_total.json"]},
        "freeze": {"status": "pass", "reasons": []},
        "properties": {"status": "pass", "reasons": []},
        "replay": {"status": "not_applicable", "reasons": ["replay not required"]},
    },
    "reasons": ["fixtures: changed: tests/fixtures/order_total.json"],
    "review": {
        "isolation": "sandbox",
        "properties": {"seed": 20260924, "max_examples": 200,
                       "oracle": "out_of_process", "in_process": [],
                       "changed_lines": {"executed": 9, "total": 12,
                                         "unexecuted": ["mylib/core.py:120-122"]},
                       "mutants": {"killed": 5, "total": 7, "not_tried": 0,
                                   "survivors": ["mylib/core.py:121: < -> <="]}},
        "fixtures": "changed: tests/fixtures/order_total.json",
        "freeze": [{"nodeid": CLOCK, "expires": "2026-12-08"}],
        "replay": "undecided",
        # Not in SPEC v3's example: what the visible suite did at head (issue 19).
        "suite": "ran 12: 12 passed",
    },
}  # fmt: skip
SPEC_FLAKES = {
    "schema": 1, "head": B, "count": 12, "shard": "1/1", "seed": 20260924,
    "host": {"python": "3.11.7", "platform": "linux-x86_64", "cpus": 2, "pins_sha256": SHA},
    "nodes": {"tests/test_clock.py::test_timestamp_order": {"fail": 3, "runs": 12}},
    "candidates": ["tests/test_clock.py::test_timestamp_order"],
}  # fmt: skip
# v2 takes the receipt as `replay run` builds it (SPEC: "A replay receipt").
SPEC_RECEIPT = {
    "schema": 1, "seed": 20260924, "head": B, "slice_sha256": SHA,
    "failed_nodeids": [], "skipped_by_freeze": ["tests/test_clock.py::test_timestamp_order"],
    "passed_nodeids": [], "host_role": "trusted-ci",
    "host": {"python": "3.11.7", "platform": "linux-x86_64", "pins_sha256": SHA},
    "problems": [],
}  # fmt: skip
EXAMPLES = {
    "lane_report": SPEC_LANE_REPORT,
    "verdict": SPEC_VERDICT,
    "flakes": SPEC_FLAKES,
    "receipt": SPEC_RECEIPT,
}


def test_every_shipped_schema_is_a_valid_draft_2020_12_schema() -> None:
    shipped = {
        p.name
        for p in importlib.resources.files("patchjudge").joinpath("schemas").iterdir()
        if p.name.endswith(".json")
    }
    assert shipped == set(SCHEMAS.values())
    for name in SCHEMAS:
        jsonschema.Draft202012Validator.check_schema(schema(name))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_spec_examples_are_valid(name: str) -> None:
    validate(EXAMPLES[name], name)


def test_merged_flakes_shards_are_valid() -> None:
    validate({**SPEC_FLAKES, "shard": "1+2/2"}, "flakes")


def _without(doc: dict[str, Any], *path: str | int) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    target = doc
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]
    return doc


def _with(doc: dict[str, Any], value: Any, *path: str | int) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return doc


# (schema, broken document, why it must not validate)
BROKEN = [
    (
        "lane_report",
        _without(SPEC_LANE_REPORT, "ledger_sha256"),
        "no ledger digest: cannot be keyed",
    ),
    ("lane_report", _with(SPEC_LANE_REPORT, 2, "schema"), "a future schema"),
    ("lane_report", _with(SPEC_LANE_REPORT, "ok", "status"), "a status nobody decides on"),
    ("lane_report", _with(SPEC_LANE_REPORT, [], "reasons"), "a failure without a reason"),
    ("lane_report", _with(SPEC_LANE_REPORT, [""], "reasons"), "an empty reason"),
    ("lane_report", _with(SPEC_LANE_REPORT, "flakes", "lane"), "flakes never gates"),
    ("lane_report", _with(SPEC_LANE_REPORT, "undecided", "status"), "only replay is undecided"),
    ("lane_report", _with(SPEC_LANE_REPORT, "HEAD", "head"), "a ref, not a commit"),
    ("lane_report", _with(SPEC_LANE_REPORT, True, "verdict"), "an unknown key"),
    ("lane_report", _with(SPEC_LANE_REPORT, [], "details"), "details is an object"),
    ("verdict", _with(SPEC_VERDICT, "accept", "verdict"), "not one of the three verdicts"),
    ("verdict", _with(SPEC_VERDICT, [], "reasons"), "a reject without a reason"),
    ("verdict", _with(SPEC_VERDICT, "accept_for_review", "verdict"), "accepted with a failed lane"),
    ("verdict", _without(SPEC_VERDICT, "lanes", "replay"), "a lane left out"),
    (
        "verdict",
        _with(SPEC_VERDICT, {"status": "pass", "reasons": []}, "lanes", "flakes"),
        "a sixth lane",
    ),
    (
        "verdict",
        _with(SPEC_VERDICT, "undecided", "lanes", "freeze", "status"),
        "core lanes are never undecided",
    ),
    ("verdict", _with(SPEC_VERDICT, "undecided", "verdict"), "undecided while replay is not"),
    ("verdict", _without(SPEC_VERDICT, "review", "properties"), "a review field left out"),
    (
        "verdict",
        _with(SPEC_VERDICT, "12/08/2026", "review", "freeze", 0, "expires"),
        "not an ISO date",
    ),
    (
        "verdict",
        _with(SPEC_VERDICT, "passed", "review", "replay"),
        "neither a receipt hash nor undecided",
    ),
    ("verdict", _with(SPEC_VERDICT, "bwrap", "review", "isolation"), "an unknown isolation"),
    (
        "verdict",
        _without(SPEC_VERDICT, "review", "properties", "mutants"),
        "the mutants left out",
    ),
    (
        "verdict",
        _with(SPEC_VERDICT, "9 of 12", "review", "properties", "changed_lines"),
        "changed lines neither figures nor 'not measured: ...'",
    ),
    (
        "verdict",
        _with(
            SPEC_VERDICT, ["mylib/core.py"], "review", "properties", "changed_lines", "unexecuted"
        ),
        "a range without lines",
    ),
    (
        "verdict",
        _with(SPEC_VERDICT, ["< -> <="], "review", "properties", "mutants", "survivors"),
        "a survivor without its place",
    ),
    ("verdict", _without(SPEC_VERDICT, "review", "suite"), "silent on the visible suite"),
    ("verdict", _with(SPEC_VERDICT, "passed", "review", "suite"), "the suite neither ran nor not"),
    ("flakes", _without(SPEC_FLAKES, "host", "pins_sha256"), "a host without its pins"),
    ("flakes", _with(SPEC_FLAKES, "1", "shard"), "a shard is I/N"),
    ("flakes", _with(SPEC_FLAKES, {"fail": 3}, "nodes", CLOCK), "fail without runs"),
    ("flakes", _with(SPEC_FLAKES, 0, "count"), "no runs at all"),
    ("receipt", _without(SPEC_RECEIPT, "slice_sha256"), "no slice digest: nothing to check"),
    ("receipt", _with(SPEC_RECEIPT, "abc", "slice_sha256"), "not a SHA-256"),
    ("receipt", _with(SPEC_RECEIPT, ["x", "x"], "failed_nodeids"), "a node id twice"),
    ("receipt", _with(SPEC_RECEIPT, ["a\nb"], "skipped_by_freeze"), "a node id holding a newline"),
    ("receipt", _with(SPEC_RECEIPT, "", "host_role"), "no host role"),
    ("receipt", _with(SPEC_RECEIPT, "yes", "trusted"), "an unknown key"),
    ("receipt", _without(SPEC_RECEIPT, "host"), "no host: a receipt from nowhere"),
    ("receipt", _with(SPEC_RECEIPT, "x", "host", "cpus"), "a host key the parser refuses"),
    ("receipt", _with(SPEC_RECEIPT, 3, "host", "python"), "host values are strings"),
    ("receipt", _with(SPEC_RECEIPT, ["t", "t"], "problems"), "a problem twice"),
    ("receipt", _with(SPEC_RECEIPT, 2, "schema"), "a future receipt"),
    ("receipt", _without(SPEC_RECEIPT, "passed_nodeids"), "what passed left out"),
    ("receipt", _with(SPEC_RECEIPT, "   ", "host_role"), "a blank host role"),
]


@pytest.mark.parametrize(("name", "doc", "why"), BROKEN, ids=[row[2] for row in BROKEN])
def test_broken_documents_are_refused(name: str, doc: dict[str, Any], why: str) -> None:
    assert problems(doc, name), why


def test_validate_names_every_problem() -> None:
    broken = _with(_without(SPEC_RECEIPT, "seed"), "x", "head")
    with pytest.raises(AssertionError) as info:
        validate(broken, "receipt")
    assert "head:" in str(info.value)
    assert "'seed' is a required property" in str(info.value)
    with pytest.raises(KeyError, match="known: lane_report"):
        schema("receipts")


# --- the code writes what the schemas describe ------------------------------

KEY = RunKey(A, B, SHA, "run-1")
PROPS = PropertiesSettings(paths=("eval/properties",), seed=7, max_examples=50, timeout_s=60)
reasons_st = st.lists(st.text(min_size=1, max_size=20), max_size=3)
status_st = st.sampled_from(list(Status))
key_st = st.sampled_from(
    [KEY, RunKey(A, A, SHA, "run-1"), RunKey(A, B, "d" * 64, "run-1"), RunKey(A, B, SHA, "old")]
)
frozen_st = st.lists(
    st.fixed_dictionaries(
        {"nodeid": st.text(min_size=1, max_size=30), "expires": st.dates().map(str)}
    ),
    max_size=2,
)


# What the properties lane may report for review, well formed or not (issue 14).
review_details_st = st.fixed_dictionaries(
    {},
    optional={
        "seed": st.sampled_from([7, 8, None]),
        "unexercised": st.lists(st.sampled_from(["src/m.py:3", "src/m.py:4-9", "nope"]), max_size=3)
        | st.none(),
        "probes": st.lists(st.sampled_from(["src/m.py:3: reads /proc", "nope"]), max_size=3),
        "oracle": st.sampled_from(["out_of_process", "in_process", "elsewhere"]),
        "in_process": st.lists(st.text(max_size=10), max_size=2),
        "changed_lines": st.one_of(
            st.fixed_dictionaries(
                {
                    "executed": st.integers(-1, 5),
                    "total": st.integers(0, 5),
                    "unexecuted": st.lists(
                        st.builds(lambda p, a: f"{p}:{a}", st.text(max_size=8), st.integers(1, 9))
                        | st.text(max_size=8),
                        max_size=3,
                    ),
                }
            ),
            st.text(max_size=10),
        ),
        "mutants": st.one_of(
            st.fixed_dictionaries(
                {
                    "killed": st.integers(0, 3),
                    "total": st.integers(0, 6),
                    "not_tried": st.integers(0, 3),
                    "survivors": st.lists(
                        st.builds(lambda t: f"src/m.py:1: {t}", st.text(min_size=1, max_size=8))
                        | st.text(max_size=8),
                        max_size=3,
                    ),
                }
            ),
            st.sampled_from(["off: [properties] review_mutants = 0", "not tried: x", "", "no"]),
        ),
    },
)


@st.composite
def lane_reports(draw: st.DrawFn, lane: str) -> LaneReport:
    status = draw(status_st)
    reasons = draw(reasons_st)
    if status is Status.FAIL and not reasons:
        reasons = ["it failed"]
    details: dict[str, Any] = {}
    if lane == "freeze":
        details["frozen"] = draw(frozen_st)
    if lane == "replay" and draw(st.booleans()):
        details["receipt_sha256"] = "e" * 64
    if lane == "properties" and draw(st.booleans()):
        details.update(draw(review_details_st))
    if draw(st.booleans()):
        details["isolation"] = draw(st.sampled_from(["sandbox", "process"]))
    name = draw(st.sampled_from([lane, lane, "pathfilter"]))
    return LaneReport(name, status, tuple(reasons), draw(key_st), details)


def any_report(lane: str) -> st.SearchStrategy[LaneReport | Unreadable | None]:
    return st.one_of(
        st.none(), st.builds(Unreadable, st.text(min_size=1, max_size=10)), lane_reports(lane)
    )


@given(st.fixed_dictionaries({lane: any_report(lane) for lane in ALL_LANES}))
def test_every_verdict_decide_can_give_is_valid(
    reports: dict[str, LaneReport | Unreadable | None],
) -> None:
    doc = decide(reports, KEY, PROPS).to_json()
    validate(json.loads(json.dumps(doc)), "verdict")


@given(st.sampled_from(ALL_LANES).flatmap(lane_reports))
def test_every_lane_report_the_gate_writes_is_valid(report: LaneReport) -> None:
    if report.status is Status.UNDECIDED and report.lane != "replay":
        # The lanes cannot write this (only replay is undecided); the schema says so.
        assert problems(report.to_json(), "lane_report")
        return
    validate(json.loads(json.dumps(report.to_json())), "lane_report")


# --- the receipt schema and the receipt parser agree -----------------------------


def test_the_spec_receipt_parses_and_round_trips() -> None:
    receipt = parse_receipt(json.dumps(SPEC_RECEIPT).encode(), "receipt.json")
    assert receipt.to_json() == SPEC_RECEIPT


# The schema is stricter here than the parser, which leaves it to the check: a
# node id holding a newline is on no line of any slice.
SCHEMA_ONLY = {"a node id holding a newline"}
PARSER_REFUSES = [row for row in BROKEN if row[0] == "receipt" and row[2] not in SCHEMA_ONLY]


@pytest.mark.parametrize(
    "doc", [row[1] for row in PARSER_REFUSES], ids=[row[2] for row in PARSER_REFUSES]
)
def test_a_receipt_the_schema_refuses_the_parser_refuses(doc: dict[str, Any]) -> None:
    with pytest.raises(PatchjudgeError):
        parse_receipt(json.dumps(doc).encode(), "receipt.json")


nodeids_st = st.lists(
    st.text(min_size=1, max_size=20).filter(lambda t: "\n" not in t), unique=True, max_size=3
)


@given(
    st.builds(
        Receipt,
        seed=st.integers(min_value=0, max_value=2**32),
        head=st.sampled_from([A, B]),
        slice_sha256=st.just(SHA),
        failed_nodeids=nodeids_st.map(tuple),
        skipped_by_freeze=nodeids_st.map(tuple),
        passed_nodeids=nodeids_st.map(tuple),
        host_role=st.sampled_from(["trusted-ci", "gitlab"]),
        host=st.fixed_dictionaries({k: st.text(max_size=8) for k in HOST_KEYS}),
        problems=st.lists(st.text(max_size=20), unique=True, max_size=2).map(tuple),
    )
)
def test_every_receipt_replay_run_can_build_is_valid(receipt: Receipt) -> None:
    doc = json.loads(json.dumps(receipt.to_json()))
    validate(doc, "receipt")
    assert parse_receipt(json.dumps(doc).encode(), "receipt.json") == receipt
