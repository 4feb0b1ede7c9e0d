"""replay: did a trusted host run what the local lanes left undecided? (issue 4)"""

from __future__ import annotations

from patchjudge.lanes import report
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "replay"


def run(run: Run) -> LaneReport:
    if run.options.receipt is None:
        if run.ledger.replay.required:
            return report(run, NAME, Status.UNDECIDED, ["replay required and no receipt"])
        return report(run, NAME, Status.NOT_APPLICABLE, ["replay not required"])
    return report(run, NAME, Status.FAIL, ["receipt checking not implemented"])
