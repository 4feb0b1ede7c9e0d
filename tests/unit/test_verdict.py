"""The decision table (SPEC: The verdict), row by row."""

from __future__ import annotations

import dataclasses

import pytest

from patchjudge.config import PropertiesSettings, ReviewSettings
from patchjudge.report import Decision, LaneReport, RunKey, Status
from patchjudge.verdict import ALL_LANES, Unreadable, decide

KEY = RunKey("b" * 40, "h" * 40, "l" * 64, "run-1")
SETTINGS = PropertiesSettings(("eval/properties",), 7, 9, 60)
P, F, NA, U = Status.PASS, Status.FAIL, Status.NOT_APPLICABLE, Status.UNDECIDED
# What a properties report says when it ran this run's seed and found nothing to hold (issue 18).
CLEAN = {"seed": 7, "unexercised": [], "probes": []}


def _details(name: str, **details: object) -> dict[str, object]:
    return {**CLEAN, **details} if name == "properties" else dict(details)


def reports(**statuses: Status) -> dict[str, LaneReport]:
    out = {}
    for name in ALL_LANES:
        status = statuses.get(name, P)
        reasons = ("why",) if status in (F, U) else ()
        out[name] = LaneReport(name, status, reasons, KEY, _details(name))
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
            "seed_source": "pinned",
            "max_examples": 9,
            "oracle": "in_process",
            "in_process": [],
            "changed_lines": f"not measured: {why} changed_lines",
            "mutants": f"not tried: {why} mutants",
            "unexercised": [],
            "probes": [],
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
    rs[lane] = LaneReport(lane, status, reasons, KEY, _details(lane, **details))
    return rs


def _sandboxed(**statuses: Status) -> dict[str, LaneReport | Unreadable | None]:
    rs: dict[str, LaneReport | Unreadable | None] = {}
    for name, r in reports(**statuses).items():
        rs[name] = LaneReport(name, r.status, r.reasons, KEY, _details(name, isolation="sandbox"))
    return rs


def test_isolation_is_sandbox_only_when_every_lane_says_so() -> None:
    assert decide(_sandboxed(), KEY, SETTINGS).review["isolation"] == "sandbox"
    for lane in ALL_LANES:
        rs = _sandboxed()
        rs[lane] = LaneReport(lane, P, (), KEY, _details(lane, isolation="process"))
        assert decide(rs, KEY, SETTINGS).review["isolation"] == "process", lane
        rs[lane] = LaneReport(lane, P, (), KEY, _details(lane))
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
        "seed_source": "pinned",
        "max_examples": 9,
        "oracle": "out_of_process",
        "in_process": ["eval/properties/test_mp.py"],
        "changed_lines": CHANGED,
        "mutants": MUTANTS,
        "unexercised": [],
        "probes": [],
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


# --- the seed and the review's findings (issue 18) ---------------------------

HELD = ReviewSettings()
REPORTED = ReviewSettings(unexercised="report", probes="report")
GAP = ["src/calc/core.py:12-14"]
PROBE = ["src/calc/core.py:3: reads the call stack (sys._getframe)"]
NEVER = "review: the properties never exercised src/calc/core.py:12-14"
PROBED = "review: probe of the judge at src/calc/core.py:3: reads the call stack (sys._getframe)"

DUNDER = "calc.Money.__eq__ (src/calc/core.py:4): eval/properties/test_m.py::test_eq"
RESTED = (
    f"review: a property's outcome rested on {DUNDER}, "
    "a method of a class the patch adds or changes"
)

TWICE = {"nodeid": "eval/properties/test_o.py::test_o", "first": "passed",
         "second": "failed: assert [2, 1] == [1, 2]"}  # fmt: skip
INSIDE_ONLY = (
    "review: eval/properties/test_o.py::test_o passed in process and failed out of it, "
    "where the base passes: assert [2, 1] == [1, 2]"
)

FINDINGS = [
    # (properties details over CLEAN, other lanes, [review], decision, reasons)
    ({}, {}, HELD, Decision.ACCEPT_FOR_REVIEW, ()),
    ({"unexercised": GAP}, {}, HELD, Decision.UNDECIDED, (NEVER,)),
    ({"unexercised": GAP}, {}, REPORTED, Decision.ACCEPT_FOR_REVIEW, ()),
    ({"probes": PROBE}, {}, HELD, Decision.UNDECIDED, (PROBED,)),
    ({"probes": PROBE}, {}, REPORTED, Decision.ACCEPT_FOR_REVIEW, ()),
    ({"probes": PROBE}, {}, ReviewSettings(probes="report"), Decision.ACCEPT_FOR_REVIEW, ()),
    ({"unexercised": GAP, "probes": PROBE}, {}, HELD, Decision.UNDECIDED, (NEVER, PROBED)),
    # The patch's own dunder decided an outcome: held whatever [review] says (issue 18).
    ({"patch_dunders": [DUNDER]}, {}, REPORTED, Decision.UNDECIDED, (RESTED,)),
    ({"patch_dunders": []}, {}, HELD, Decision.ACCEPT_FOR_REVIEW, ()),
    (
        {"patch_dunders": "calc.Money.__eq__"},
        {},
        HELD,
        Decision.UNDECIDED,
        ("review: the properties report's patch_dunders is malformed",),
    ),
    # An in-process test the patch made fail out of process (the base passes there): held
    # whatever [review] says; one that fails at base too is the file's, not the patch's.
    (
        {"differential": {"in_process": [TWICE | {"base": "passed"}]}},
        {},
        REPORTED,
        Decision.UNDECIDED,
        (INSIDE_ONLY,),
    ),
    (
        {"differential": {"in_process": [TWICE | {"base": "failed: assert 2 == 1"}]}},
        {},
        HELD,
        Decision.ACCEPT_FOR_REVIEW,
        (),
    ),
    ({"differential": {"in_process": [TWICE]}}, {}, HELD, Decision.ACCEPT_FOR_REVIEW, ()),
    # "cannot cross" is a label read from text the code can write (an exception's
    # message): where the base passes, it holds like any other failure.
    (
        {"differential": {"in_process": [TWICE | {"second": "cannot cross: x", "base": "passed"}]}},
        {},
        HELD,
        Decision.UNDECIDED,
        (
            "review: eval/properties/test_o.py::test_o passed in process and failed out of it, "
            "where the base passes: x",
        ),
    ),
    (
        {
            "differential": {
                "in_process": [TWICE | {"second": "cannot cross: x", "base": "cannot cross: x"}]
            }
        },
        {},
        HELD,
        Decision.ACCEPT_FOR_REVIEW,
        (),
    ),
    (
        {"differential": {"in_process": "all passed"}},
        {},
        HELD,
        Decision.UNDECIDED,
        ("review: the properties report's differential.in_process is malformed",),
    ),
    # Precedence (SPEC "The verdict"): a failed lane rejects, replay's undecided comes first.
    ({"unexercised": GAP}, {"freeze": F}, HELD, Decision.REJECT, ("freeze: why",)),
    ({"unexercised": GAP}, {"replay": F}, HELD, Decision.REJECT, ("replay: why",)),
    ({"probes": PROBE}, {"replay": U}, HELD, Decision.UNDECIDED, ("replay: why", PROBED)),
    ({}, {"replay": U}, HELD, Decision.UNDECIDED, ("replay: why",)),
    # Silence is no pass: a passing report that does not say holds the merge, whatever [review] says.
    (
        {"unexercised": None},
        {},
        REPORTED,
        Decision.UNDECIDED,
        ("review: the properties report does not say which changed lines were exercised",),
    ),
    (
        {"probes": ["no line"]},
        {},
        REPORTED,
        Decision.UNDECIDED,
        ("review: the properties report does not say whether the changed lines probe the judge",),
    ),
]


@pytest.mark.parametrize(("details", "lanes", "review", "decision", "why"), FINDINGS)
def test_the_reviews_findings_and_their_precedence(
    details: dict[str, object],
    lanes: dict[str, Status],
    review: ReviewSettings,
    decision: Decision,
    why: tuple[str, ...],
) -> None:
    rs = reports(**lanes)
    rs["properties"] = LaneReport("properties", P, (), KEY, _details("properties", **details))
    v = decide(rs, KEY, SETTINGS, review)
    assert (v.decision, v.reasons) == (decision, why)


def test_findings_stay_figures_of_the_review_in_report_mode() -> None:
    rs = _with("properties", unexercised=GAP, probes=PROBE)
    props = decide(rs, KEY, SETTINGS, REPORTED).review["properties"]
    assert (props["unexercised"], props["probes"]) == (GAP, PROBE)


def test_a_lane_that_did_not_pass_has_no_findings() -> None:
    rs = _with("properties", NA, ("no changed path forces properties",), unexercised=GAP)
    v = decide(rs, KEY, SETTINGS)
    assert v.decision is Decision.ACCEPT_FOR_REVIEW
    assert v.review["properties"]["unexercised"] == []


def test_many_ranges_are_cut_short_in_the_reason() -> None:
    gaps = [f"src/m.py:{n}" for n in range(1, 30, 2)]
    v = decide(_with("properties", unexercised=gaps), KEY, SETTINGS)
    assert v.reasons == (
        "review: the properties never exercised "
        + ", ".join(gaps[:10])
        + f" and {len(gaps) - 10} more ranges",
    )
    assert v.review["properties"]["unexercised"] == gaps


@pytest.mark.parametrize("seed", [8, None, "7", True])
def test_a_properties_report_of_another_seed_is_stale(seed: object) -> None:
    rs = _with("properties", seed=seed)
    v = decide(rs, KEY, SETTINGS)
    assert v.decision is Decision.REJECT
    assert v.reasons == (f"properties: stale report: seed {seed!r} is not this run's 7",)


def test_the_verdict_records_the_seed_and_where_it_came_from() -> None:
    keyed = dataclasses.replace(SETTINGS, seed=123, seed_source="key")
    v = decide(_with("properties", seed=123), KEY, keyed)
    assert v.decision is Decision.ACCEPT_FOR_REVIEW
    assert (v.review["properties"]["seed"], v.review["properties"]["seed_source"]) == (123, "key")


def _judges_copy(names: object, status: Status = P) -> dict[str, LaneReport]:
    rs = reports(pathfilter=status)
    rs["pathfilter"] = dataclasses.replace(rs["pathfilter"], details={"judges_copy": names})
    return rs


@pytest.mark.parametrize(
    ("names", "decision", "reasons"),
    [
        ([], Decision.ACCEPT_FOR_REVIEW, ()),
        (
            ["pytest"],
            Decision.UNDECIDED,
            (
                "review: the tree provides pytest, which the judge's pytest runs on: without"
                " --python its visible suite ran on the judge's copy, not the tree's; pass"
                " --python with the code's own venv (nox -s gate does)",
            ),
        ),
        (
            "pytest",
            Decision.UNDECIDED,
            ("review: the pathfilter report's judges_copy is malformed",),
        ),
    ],
)
def test_a_suite_that_ran_the_judges_copy_holds_the_merge(
    names: object, decision: Decision, reasons: tuple[str, ...]
) -> None:
    # issue 19: without --python a tree that is pytest passes its suite on the judge's pytest.
    v = decide(_judges_copy(names), KEY, SETTINGS)
    assert (v.decision, v.reasons) == (decision, reasons)


def test_a_judges_copy_does_not_soften_a_reject() -> None:
    v = decide(_judges_copy(["pytest"], F), KEY, SETTINGS)
    assert (v.decision, v.reasons) == (Decision.REJECT, ("pathfilter: why",))
