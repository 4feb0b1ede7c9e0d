"""The lanes, registered explicitly: name -> run(Run) -> LaneReport."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

if TYPE_CHECKING:  # the lanes that collect import it (issue 20: verdict and fixtures do not)
    from patchjudge import testrun

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


def collection(
    run: Run, which: str, plan: testrun.Plan, scratch: Path
) -> tuple[testrun.TestRun, bool]:
    """`plan` (a collection) on a tree of `which`, or the one an earlier lane of this gate made.

    The second value says it was shared (issue 20: pathfilter and freeze both
    collected the head's suite). Keyed by the plan whole but its tree, which
    every lane makes anew from the same entries: a plan that differs in any
    setting (a seed, a plugin, the paths) collects again.
    """

    def compute() -> testrun.TestRun:
        from patchjudge import testrun  # the calling lane's module has loaded it

        scratch.mkdir(parents=True, exist_ok=True)
        return testrun.run(plan, scratch=scratch, environ=run.environ, box=run.box)

    if not plan.collect_only:
        raise AssertionError("only a collection is shared")
    key = ("collection", which, dataclasses.replace(plan, tree=Path()))
    value, shared = run.once(key, compute)
    return cast("testrun.TestRun", value), shared


ORDER = ("pathfilter", "fixtures", "freeze", "properties", "replay")


def load(name: str) -> LaneFn:
    """One lane's run function, importing that lane's module alone (issue 20).

    `patchjudge pathfilter` pays for pathfilter's imports, not for
    properties', review's and coverage's. Called before the lane runs any
    tested code, like every import of the judge's (see registry).
    """
    if name == "pathfilter":
        from patchjudge.lanes import pathfilter

        return pathfilter.run
    if name == "fixtures":
        from patchjudge.lanes import fixtures

        return fixtures.run
    if name == "freeze":
        from patchjudge.lanes import freeze

        return freeze.run
    if name == "properties":
        from patchjudge.lanes import properties

        return properties.run
    if name == "replay":
        from patchjudge.lanes import replay

        return replay.run
    raise AssertionError(f"unreachable: lane {name!r}")


def registry() -> dict[str, LaneFn]:
    """Lane name -> its run function, in the order the gate runs them.

    Every lane is imported here, before the first runs: a module imported
    after tested code ran unboxed could be one that code rewrote.
    """
    return {name: load(name) for name in ORDER}
