"""verdict.json and verdict.md byte for byte against golden files (tests/golden/).

The golden files are fixtures of patchjudge's own judge: eval/fixtures.lock.json
locks them, so a patch that changes what users see must change them, and is
rejected for it. PATCHJUDGE_REGOLD=1 rewrites them (then run `patchjudge lock`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchjudge import render
from patchjudge.config import PropertiesSettings
from patchjudge.report import LaneReport, RunKey, Status, dumps
from patchjudge.verdict import decide

GOLDEN = Path(__file__).parent.parent / "golden"
KEY = RunKey("a" * 40, "b" * 40, "c" * 64)
SETTINGS = PropertiesSettings(("eval/properties",), 20260924, 200, 600)


def _lane(name: str, status: Status, *reasons: str, **details: object) -> LaneReport:
    if name == "properties":  # this run's seed, nothing for the review to hold (issue 18)
        details = {"seed": SETTINGS.seed, "unexercised": [], "probes": [], **details}
    return LaneReport(name, status, reasons, KEY, details)


def _sandboxed(name: str, status: Status, *reasons: str, **details: object) -> LaneReport:
    return _lane(name, status, *reasons, isolation="sandbox", **details)


FROZEN = [{"nodeid": "tests/test_clock.py::test_timestamp_order", "expires": "2026-12-08"}]
# The freeze lane's details.suite (issue 19): what the visible suite did at head.
SUITE_RAN = {"ran": 12, "passed": 12, "failed": [], "excused": [], "skipped": 0, "problems": []}
SUITE_EXCUSED = {
    "ran": 12,
    "passed": 10,
    "failed": [],
    "excused": ["tests/test_clock.py::test_timestamp_order"],
    "skipped": 1,
    "problems": [],
}
# SPEC verdict.json's review.properties figures, as the properties lane reports them.
SPEC_REVIEW = {
    "oracle": "out_of_process",
    "in_process": [],
    "changed_lines": {"executed": 9, "total": 12, "unexecuted": ["mylib/core.py:120-122"]},
    "mutants": {
        "killed": 5,
        "total": 7,
        "not_tried": 0,
        "survivors": ["mylib/core.py:121: < -> >=", "mylib/core.py:130: dropped: n += 1"],
    },
    # v3 (issue 18): what the review holds; a reject already, so shown, not a reason.
    "unexercised": ["mylib/core.py:120-122", "mylib/core.py:130"],
    "probes": ["mylib/core.py:131: reads the call stack (sys._getframe)"],
}
NO_PYTHON_CHANGE = {
    "changed_lines": {"executed": 0, "total": 0, "unexecuted": []},
    "mutants": {"killed": 0, "total": 0, "not_tried": 0, "survivors": []},
}
OUT_OF_TIME = {
    "oracle": "in_process",
    "in_process": ["eval/properties/test_monkeypatch.py"],
    "changed_lines": {
        "executed": 3,
        "total": 5,
        "unexecuted": ["src/calc/__init__.py:7", "src/calc/__init__.py:9"],
    },
    "mutants": {
        "killed": 2,
        "total": 6,
        "not_tried": 3,
        "survivors": ["src/calc/__init__.py:3: 0 -> 1"],
    },
}
CASES = {
    "reject": {
        "pathfilter": _sandboxed("pathfilter", Status.PASS),
        "fixtures": _sandboxed("fixtures", Status.FAIL, "changed: tests/fixtures/order_total.json"),
        "freeze": _sandboxed("freeze", Status.PASS, frozen=FROZEN, suite=SUITE_RAN),
        "properties": _sandboxed("properties", Status.PASS, **SPEC_REVIEW),
        "replay": _sandboxed("replay", Status.NOT_APPLICABLE, "replay not required"),
    },
    "undecided": {
        "pathfilter": _lane("pathfilter", Status.PASS),
        "fixtures": _lane("fixtures", Status.PASS),
        "freeze": _lane("freeze", Status.PASS, frozen=FROZEN, suite=SUITE_EXCUSED),
        "properties": _lane("properties", Status.PASS, **NO_PYTHON_CHANGE),
        "replay": _lane("replay", Status.UNDECIDED, "replay required and no receipt"),
    },
    "accept": {
        "pathfilter": _lane("pathfilter", Status.PASS),
        "fixtures": _lane("fixtures", Status.PASS),
        "freeze": _lane("freeze", Status.PASS, frozen=[], suite="not run: [suite] run = false"),
        "properties": _lane(
            "properties", Status.NOT_APPLICABLE, "no changed path forces properties"
        ),
        "replay": _lane("replay", Status.PASS, receipt_sha256="d" * 64),
    },
    "missing-lane": {
        "pathfilter": _sandboxed("pathfilter", Status.PASS),
        "fixtures": _sandboxed("fixtures", Status.PASS),
        "properties": _sandboxed("properties", Status.PASS, **OUT_OF_TIME),
        "replay": _lane("replay", Status.NOT_APPLICABLE, "replay not required"),
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_verdict_files_match_golden(case: str) -> None:
    verdict = decide(CASES[case], KEY, SETTINGS)
    outputs = {f"{case}.json": dumps(verdict.to_json()), f"{case}.md": render.markdown(verdict)}
    for name, text in outputs.items():
        path = GOLDEN / name
        if os.environ.get("PATCHJUDGE_REGOLD"):
            path.write_text(text)
        assert path.read_text() == text, f"{name} differs from the golden file"


def test_lane_report_matches_golden() -> None:
    report = CASES["reject"]["fixtures"]
    text = dumps(report.to_json())
    path = GOLDEN / "lane-report.json"
    if os.environ.get("PATCHJUDGE_REGOLD"):
        path.write_text(text)
    assert path.read_text() == text
