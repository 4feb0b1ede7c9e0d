"""The lanes, registered explicitly: name -> run(Run) -> LaneReport."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

LaneFn = Callable[[Run], LaneReport]


def report(
    run: Run,
    lane: str,
    status: Status,
    reasons: Sequence[str] = (),
    details: Mapping[str, Any] | None = None,
) -> LaneReport:
    if status is Status.FAIL and not reasons:
        raise AssertionError(f"{lane}: a failure must say why")
    # Which boundary the lane's processes ran behind: the verdict reads it (issue 10).
    shown = {**dict(details or {}), "isolation": run.isolation}
    if run.isolation_fallback is not None:  # why it is "process", for the verdict (issue 19)
        shown["isolation_fallback"] = run.isolation_fallback
    return LaneReport(lane, status, tuple(reasons), run.key, shown)


def not_forced(run: Run, lane: str, details: Mapping[str, Any] | None = None) -> LaneReport:
    return report(run, lane, Status.NOT_APPLICABLE, [f"no changed path forces {lane}"], details)


def registry() -> dict[str, LaneFn]:
    """Lane name -> its run function, in the order the gate runs them."""
    from patchjudge.lanes import fixtures, freeze, pathfilter, properties, replay

    return {
        "pathfilter": pathfilter.run,
        "fixtures": fixtures.run,
        "freeze": freeze.run,
        "properties": properties.run,
        "replay": replay.run,
    }
