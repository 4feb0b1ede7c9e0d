"""freeze: is every frozen test a dated, owned, evidenced exception? (issue 3)"""

from __future__ import annotations

import tomllib

from patchjudge.lanes import report
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "freeze"


def run(run: Run) -> LaneReport:
    data = run.read_base(run.ledger.freeze.registry)
    rows = tomllib.loads(data.decode()).get("freeze", []) if data else []
    if not rows:
        return report(run, NAME, Status.PASS, [], {"frozen": []})
    # Until the audit lands, a registry with rows cannot be vouched for.
    return report(run, NAME, Status.FAIL, ["freeze audit not implemented"], {"frozen": []})
