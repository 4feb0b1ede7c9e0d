"""Lane reports and the verdict as records, and their JSON form (SPEC: Reports)."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA = 1


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not_applicable"
    # Only the replay lane says this: required, and no valid receipt came back.
    UNDECIDED = "undecided"


class Decision(enum.Enum):
    REJECT = "reject"
    UNDECIDED = "undecided"
    ACCEPT_FOR_REVIEW = "accept_for_review"

    @property
    def exit_code(self) -> int:
        return {"reject": 1, "undecided": 3, "accept_for_review": 0}[self.value]


@dataclass(frozen=True)
class RunKey:
    """What a report must agree on to count for this run: anything else is stale."""

    base: str
    head: str
    ledger_sha256: str
    run_id: str = ""


@dataclass(frozen=True)
class LaneReport:
    lane: str
    status: Status
    reasons: tuple[str, ...]
    key: RunKey
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {Status.FAIL: 1, Status.UNDECIDED: 3}.get(self.status, 0)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "lane": self.lane,
            "status": self.status.value,
            "reasons": list(self.reasons),
            "base": self.key.base,
            "head": self.key.head,
            "ledger_sha256": self.key.ledger_sha256,
            "details": dict(self.details),
        }
        if self.key.run_id:
            doc["run_id"] = self.key.run_id
        return doc


class ReportError(ValueError):
    """A report file that is not a report: the lane counts as failed."""


def lane_report_from_json(doc: Any) -> LaneReport:
    if not isinstance(doc, dict):
        raise ReportError("not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ReportError(f"schema {doc.get('schema')!r}, expected {SCHEMA}")
    for name in ("lane", "status", "base", "head", "ledger_sha256"):
        if not isinstance(doc.get(name), str):
            raise ReportError(f"{name} missing or not a string")
    reasons = doc.get("reasons")
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise ReportError("reasons must be a list of strings")
    details = doc.get("details", {})
    if not isinstance(details, dict):
        raise ReportError("details must be an object")
    run_id = doc.get("run_id", "")
    if not isinstance(run_id, str):
        raise ReportError("run_id must be a string")
    try:
        status = Status(doc["status"])
    except ValueError:
        raise ReportError(f"unknown status {doc['status']!r}") from None
    key = RunKey(doc["base"], doc["head"], doc["ledger_sha256"], run_id)
    return LaneReport(doc["lane"], status, tuple(reasons), key, details)


@dataclass(frozen=True)
class LaneOutcome:
    """A lane as the verdict saw it: its status and reasons after the staleness checks."""

    status: Status
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    key: RunKey
    lanes: Mapping[str, LaneOutcome]
    reasons: tuple[str, ...]
    review: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "verdict": self.decision.value,
            "base": self.key.base,
            "head": self.key.head,
            "ledger_sha256": self.key.ledger_sha256,
            "lanes": {
                name: {"status": o.status.value, "reasons": list(o.reasons)}
                for name, o in self.lanes.items()
            },
            "reasons": list(self.reasons),
            "review": dict(self.review),
        }


def dumps(doc: Mapping[str, Any]) -> str:
    """Stable JSON for every file patchjudge writes: same inputs, same bytes."""
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
