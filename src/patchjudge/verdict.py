"""The decision: lane reports in, one verdict out. Pure; tested as tables."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from patchjudge import runner
from patchjudge.config import PropertiesSettings, ReviewSettings
from patchjudge.report import Decision, LaneOutcome, LaneReport, RunKey, Status, Verdict

# review.patch_dunders' words for a tree class's dunder that never reads its operand
# (redteam9): held whether or not the patch changed the class, so said as it is.
OPERAND_BLIND = "a method that never reads what it is compared with"

CORE_LANES = ("pathfilter", "fixtures", "freeze", "properties")
ALL_LANES = (*CORE_LANES, "replay")


@dataclass(frozen=True)
class Unreadable:
    """A report that could not be read; why, in a few words."""

    reason: str


def _stale(report: LaneReport, key: RunKey) -> str | None:
    for name in ("base", "head", "ledger_sha256"):
        got, want = getattr(report.key, name), getattr(key, name)
        if got != want:
            return f"stale report: {name} {got[:12]!r} is not this run's {want[:12]!r}"
    if key.run_id and report.key.run_id != key.run_id:
        return f"stale report: run {report.key.run_id!r} is not this run {key.run_id!r}"
    return None


def lane_outcome(name: str, report: LaneReport | Unreadable | None, key: RunKey) -> LaneOutcome:
    """What a lane counts as: silence, garbage or staleness is a failure."""
    if report is None:
        return LaneOutcome(Status.FAIL, ("report missing: the lane did not run",))
    if isinstance(report, Unreadable):
        return LaneOutcome(Status.FAIL, (f"report unreadable: {report.reason}",))
    if report.lane != name:
        return LaneOutcome(Status.FAIL, (f"report is for lane {report.lane!r}",))
    stale = _stale(report, key)
    if stale:
        return LaneOutcome(Status.FAIL, (stale,))
    if report.status is Status.UNDECIDED and name != "replay":
        return LaneOutcome(Status.FAIL, ("only replay may be undecided",))
    if report.status is Status.FAIL and not report.reasons:
        return LaneOutcome(Status.FAIL, ("failed without a reason",))
    return LaneOutcome(report.status, report.reasons)


def _review(
    reports: Mapping[str, LaneReport | Unreadable | None],
    lanes: Mapping[str, LaneOutcome],
    properties: PropertiesSettings,
) -> dict[str, Any]:
    fixtures = lanes["fixtures"]
    if fixtures.status is Status.FAIL:
        lock = fixtures.reasons[0]
    elif fixtures.status is Status.NOT_APPLICABLE:
        lock = "; ".join(fixtures.reasons) or "no fixtures"
    else:
        lock = "lock intact"
    freeze = reports.get("freeze")
    frozen = freeze.details.get("frozen", []) if isinstance(freeze, LaneReport) else []
    replay = reports.get("replay")
    receipt = replay.details.get("receipt_sha256") if isinstance(replay, LaneReport) else None
    if lanes["replay"].status is Status.PASS and isinstance(receipt, str):
        replay_review = receipt
    elif lanes["replay"].status is Status.NOT_APPLICABLE:
        replay_review = "not required"
    else:
        replay_review = "undecided"
    return {
        "isolation": _isolation(reports),
        **_isolation_fallback(reports),
        "properties": {
            "seed": properties.seed,
            "seed_source": properties.seed_source,
            "max_examples": properties.max_examples,
            **_properties_review(reports.get("properties"), lanes["properties"]),
        },
        "fixtures": lock,
        "freeze": [
            {"nodeid": row.get("nodeid"), "expires": row.get("expires")}
            for row in frozen
            if isinstance(row, dict)
        ],
        "replay": replay_review,
        "suite": _suite_review(freeze, lanes["freeze"]),
    }


def _suite_review(report: LaneReport | Unreadable | None, outcome: LaneOutcome) -> str:
    """What the visible suite did at head (issue 19), from a freeze report that counts."""
    current = (
        isinstance(report, LaneReport)
        and report.status is outcome.status
        and report.reasons == outcome.reasons
    )
    if not isinstance(report, LaneReport) or not current:
        return "not run: the freeze lane's report does not count for this run"
    return suite_summary(report.details.get("suite"))


def _isolation(reports: Mapping[str, LaneReport | Unreadable | None]) -> str:
    """ "sandbox" only when every lane says its code ran sandboxed; silence says process."""
    for name in ALL_LANES:
        report = reports.get(name)
        if not isinstance(report, LaneReport) or report.details.get("isolation") != "sandbox":
            return "process"
    return "sandbox"


def _isolation_fallback(reports: Mapping[str, LaneReport | Unreadable | None]) -> dict[str, str]:
    """Why `auto` ran a lane unboxed, as its report says: verdict.md shows it (issue 19)."""
    for name in ALL_LANES:
        report = reports.get(name)
        reason = (
            report.details.get("isolation_fallback") if isinstance(report, LaneReport) else None
        )
        if isinstance(reason, str) and reason:
            return {"isolation_fallback": reason}
    return {}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _strings(value: Any, shape: re.Pattern[str] | None = None) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, str) and v and (shape is None or shape.search(v)) for v in value
    )


# What schemas/verdict.json allows a line range and a survivor to look like.
_RANGE = re.compile(r":[0-9]+(-[0-9]+)?\Z")
_SURVIVOR = re.compile(r":[0-9]+: ")
_WHY_NONE = re.compile(r"(not tried|off): ")
_PROBE = re.compile(r":[0-9]+: ")
MAX_SHOWN = 10  # ranges or probes named in the verdict's reasons; verdict.json has all


def _changed_lines(value: Any) -> dict[str, Any] | str | None:
    if isinstance(value, str) and value.startswith("not measured: "):
        return value
    if not isinstance(value, dict) or set(value) != {"executed", "total", "unexecuted"}:
        return None
    ok = (
        _count(value["executed"])
        and _count(value["total"])
        and _strings(value["unexecuted"], _RANGE)
    )
    return dict(value) if ok and value["executed"] <= value["total"] else None


def _mutants(value: Any) -> dict[str, Any] | str | None:
    if isinstance(value, str) and _WHY_NONE.match(value):
        return value
    if not isinstance(value, dict) or set(value) != {"killed", "total", "not_tried", "survivors"}:
        return None
    counts = [value[k] for k in ("killed", "total", "not_tried")]
    if not all(_count(c) for c in counts) or not _strings(value["survivors"], _SURVIVOR):
        return None
    killed, total, not_tried = counts
    return dict(value) if killed + not_tried + len(value["survivors"]) == total else None


def _properties_review(
    report: LaneReport | Unreadable | None, outcome: LaneOutcome
) -> dict[str, Any]:
    """oracle, in_process, changed_lines, mutants from the properties report (docs/review.md).

    Figures only from a report that counts for this run and ran the
    properties; otherwise each field says, as a string, why there is none.
    """
    current = (
        isinstance(report, LaneReport)
        and report.status is outcome.status
        and report.reasons == outcome.reasons
    )
    details = report.details if isinstance(report, LaneReport) and current else {}
    oracle = details.get("oracle")
    in_process = details.get("in_process")
    fields: dict[str, Any] = {
        "oracle": oracle if oracle in ("out_of_process", "in_process") else "in_process",
        "in_process": list(in_process)
        if isinstance(in_process, list) and _strings(in_process)
        else [],
    }
    if outcome.status is Status.NOT_APPLICABLE or not current:
        why = outcome.reasons[0] if outcome.reasons else "the properties lane did not run"
        why = f"the properties lane did not run ({why})"
        return fields | {"changed_lines": f"not measured: {why}", "mutants": f"not tried: {why}"}
    changed = _changed_lines(details.get("changed_lines"))
    mutants = _mutants(details.get("mutants"))
    return fields | {
        "changed_lines": changed
        if changed is not None
        else "not measured: the properties report holds no changed_lines",
        "mutants": mutants
        if mutants is not None
        else "not tried: the properties report holds no mutants",
    }


def suite_summary(details: Any) -> str:
    """Pure: the freeze report's details.suite -> the verdict's review.suite line."""
    if isinstance(details, str) and details.startswith("not run: "):
        return details
    if not isinstance(details, dict):
        return "not run: the freeze report says nothing of the visible suite"
    counts = [details.get(k) for k in ("ran", "passed", "skipped")]
    failed, excused = details.get("failed"), details.get("excused")
    if not all(isinstance(c, int) and c >= 0 for c in counts) or not (
        isinstance(failed, list) and isinstance(excused, list)
    ):
        return "not run: the freeze report's details.suite is malformed"
    ran, passed, skipped = counts
    if failed:
        return f"failed: {len(failed)} of {ran}: " + ", ".join(map(str, failed))
    problems = details.get("problems")
    if isinstance(problems, list) and problems:
        return "failed: " + str(problems[0]).removeprefix("suite: ")
    parts = [f"{passed} passed"]
    parts += [f"{len(excused)} failed, excused (frozen or host-dependent)"] if excused else []
    parts += [f"{skipped} skipped"] if skipped else []
    return f"ran {ran}: " + ", ".join(parts)


def _seeded(report: LaneReport | Unreadable | None, outcome: LaneOutcome, seed: int) -> LaneOutcome:
    """A properties report that ran another seed than this run's is stale (issue 18).

    The seed is not in the run key: without the key the pinned seed is the
    run's, with it the derived one; a report made with the other counts as failed.
    """
    if not isinstance(report, LaneReport) or outcome.status is Status.FAIL:
        return outcome
    got = report.details.get("seed")
    if type(got) is not int or got != seed:
        return LaneOutcome(Status.FAIL, (f"stale report: seed {got!r} is not this run's {seed}",))
    return outcome


def _ranges_shown(ranges: Sequence[str]) -> str:
    shown = ", ".join(ranges[:MAX_SHOWN])
    more = len(ranges) - MAX_SHOWN
    return shown + (f" and {more} more ranges" if more > 0 else "")


def review_findings(
    report: LaneReport | Unreadable | None, outcome: LaneOutcome, review: ReviewSettings
) -> tuple[list[str], list[str], list[str]]:
    """(reasons that hold the merge, unexercised ranges, probe hits) from a passing properties lane.

    SPEC "The verdict" v3: a changed line no property exercised, or a
    changed line that probes the judge, makes the verdict undecided unless
    `[review]` says "report". A passing report that does not say is no pass.
    """
    if outcome.status is not Status.PASS or not isinstance(report, LaneReport):
        return [], [], []
    raw_unexercised: Any = report.details.get("unexercised")
    raw_probes: Any = report.details.get("probes")
    held: list[str] = []
    unexercised: list[str] = []
    probes: list[str] = []
    if _strings(raw_unexercised, _RANGE):
        unexercised = list(raw_unexercised)
    else:
        held.append("the properties report does not say which changed lines were exercised")
    if _strings(raw_probes, _PROBE):
        probes = list(raw_probes)
    else:
        held.append("the properties report does not say whether the changed lines probe the judge")
    # Issue 18: an outcome decided by the patch's own __eq__ (or another dunder) through
    # a handle is the patch grading itself. Absent (an older writer's report): none.
    raw_dunders: Any = report.details.get("patch_dunders", [])
    if not _strings(raw_dunders):
        held.append("the properties report's patch_dunders is malformed")
    else:
        held += [
            f"a property's outcome rested on {d}"
            + ("" if OPERAND_BLIND in d else ", a method of a class the patch adds or changes")
            for d in raw_dunders[:MAX_SHOWN]
        ]
    held += _in_process_disagreements(report.details.get("differential"))
    if unexercised and review.unexercised == "undecided":
        held.append(f"the properties never exercised {_ranges_shown(unexercised)}")
    if probes and review.probes == "undecided":
        held += [f"probe of the judge at {hit}" for hit in probes[:MAX_SHOWN]]
        if len(probes) > MAX_SHOWN:
            held.append(
                f"probe of the judge: {len(probes) - MAX_SHOWN} more (verdict.json has all)"
            )
    return held, unexercised, probes


def judges_copy_findings(report: LaneReport | Unreadable | None, outcome: LaneOutcome) -> list[str]:
    """Pure: a passing suite that ran the judge's copy of the code holds the merge (issue 19).

    Without --python, a tree that is pytest (or another module the runner
    keeps) is tested against the judge's copy: its suite passing says nothing
    of the patch. pathfilter records the names in `details.judges_copy`.
    """
    if outcome.status is not Status.PASS or not isinstance(report, LaneReport):
        return []
    names: Any = report.details.get("judges_copy", [])
    if not _strings(names):
        return ["the pathfilter report's judges_copy is malformed"]
    return [runner.judges_copy_reason(names)] if names else []


def _in_process_disagreements(differential: Any) -> list[str]:
    """Pure: in-process tests the patch made fail out of process (issue 18).

    A test of an in-process file that passed there, failed out of process and
    passes out of process on the base's code: the patch's code behaves one way
    where it can reach the oracle and another where it cannot. Absent (no
    in-process file, an older writer's report): none.
    """
    if differential is None:
        return []
    entries = differential.get("in_process", []) if isinstance(differential, dict) else None
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and all(isinstance(v, str) for v in e.values()) for e in entries
    ):
        return ["the properties report's differential.in_process is malformed"]
    found = [
        f"{e.get('nodeid')} passed in process and failed out of it, where the base passes: "
        f"{str(e.get('second', '')).split(': ', 1)[-1]}"
        for e in entries
        # Any outcome but a pass: "cannot cross" is a label read from text the code can
        # write, so the base's pass, not the label, says the difference is the patch's.
        if e.get("second", "passed") != "passed" and e.get("base") == "passed"
    ]
    return found[:MAX_SHOWN]


def decide(
    reports: Mapping[str, LaneReport | Unreadable | None],
    key: RunKey,
    properties: PropertiesSettings,
    review: ReviewSettings | None = None,
) -> Verdict:
    """AND-gate the lanes (SPEC: The verdict). Never averages; silence fails."""
    review = review or ReviewSettings()
    lanes = {name: lane_outcome(name, reports.get(name), key) for name in ALL_LANES}
    lanes["properties"] = _seeded(reports.get("properties"), lanes["properties"], properties.seed)
    held, unexercised, probes = review_findings(
        reports.get("properties"), lanes["properties"], review
    )
    held += judges_copy_findings(reports.get("pathfilter"), lanes["pathfilter"])
    failed = [n for n in ALL_LANES if lanes[n].status is Status.FAIL]
    reasons = tuple(f"{n}: {r}" for n in failed for r in lanes[n].reasons)
    replay = lanes["replay"].status
    if any(lanes[n].status is Status.FAIL for n in CORE_LANES) or replay is Status.FAIL:
        decision = Decision.REJECT
    elif replay is Status.UNDECIDED or held:
        # Replay first (SPEC order); the review's reasons are listed after it.
        decision = Decision.UNDECIDED
        reasons = tuple(
            f"replay: {r}" for r in lanes["replay"].reasons if replay is Status.UNDECIDED
        )
        reasons += tuple(f"review: {r}" for r in held)
    elif all(lanes[n].status in (Status.PASS, Status.NOT_APPLICABLE) for n in ALL_LANES):
        decision = Decision.ACCEPT_FOR_REVIEW
    else:
        raise AssertionError("unreachable")
    fields = _review(reports, lanes, properties)
    fields["properties"] |= {"unexercised": unexercised, "probes": probes}
    return Verdict(decision, key, lanes, reasons, fields)
