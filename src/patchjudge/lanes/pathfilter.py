"""pathfilter: did the patch touch the judge, change what nobody mapped, or hide tests?"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from patchjudge import testrun
from patchjudge.lanes import report
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "pathfilter"


def surface_problems(base: Mapping[str, str], head: Mapping[str, str]) -> list[str]:
    """Pure: a visible test collected at base must still run at head.

    A test that is gone, newly skipped or newly xfailed is a test the patch
    deleted. New tests are fine.
    """
    problems = []
    for nodeid, before in sorted(base.items()):
        after = head.get(nodeid)
        if after is None:
            problems.append(f"visible test gone: {nodeid}")
        elif before == "run" and after in ("skip", "xfail"):
            problems.append(
                f"visible test newly {'skipped' if after == 'skip' else 'xfailed'}: {nodeid}"
            )
        elif before == "run" and after != "run":
            problems.append(f"visible test no longer plain-runnable ({after}): {nodeid}")
    return problems


def collect_suite(run: Run, which: str, scratch: Path) -> tuple[testrun.TestRun, tuple[str, ...]]:
    """The visible suite collected at `which` (head or base), its own conftests loaded."""
    tree = run.materialize(scratch / "tree", which)
    paths = tuple(p for p in run.ledger.suite.paths if (tree / p).exists())
    if not paths:
        return testrun.TestRun(0, False, True, True, {}, {}, {}, (), 0), paths
    plan = testrun.Plan(
        tree=tree,
        args=paths,
        conftest_roots=run.ledger.suite.paths,
        pythonpath=run.ledger.gate.pythonpath,
        plugins=run.ledger.suite.plugins,
        timeout_s=run.ledger.suite.timeout_s,
        collect_only=True,
    )
    return testrun.run(plan, scratch=scratch, environ=run.environ, box=run.box), paths


def run(run: Run) -> LaneReport:
    problems = list(run.classification.problems)
    with run.scratch() as base_dir, run.scratch() as head_dir:
        base, base_paths = collect_suite(run, "base", base_dir)
        head, _ = collect_suite(run, "head", head_dir)
    timeout = run.ledger.suite.timeout_s
    # Collection errors at base are the base's own; anything else there means
    # the surface cannot be compared at all, which is no pass either.
    base_broken = [
        p for p in testrun.run_problems(base, timeout) if not p.startswith("collection error")
    ]
    problems += [f"visible suite at base: {p}" for p in base_broken]
    problems += [f"visible suite at head: {p}" for p in testrun.run_problems(head, timeout)]
    problems += surface_problems(base.collected, head.collected)
    details = {
        "changes": [
            {
                "status": c.status,
                "old": c.old_path,
                "new": c.new_path,
                "modes": [c.old_mode, c.new_mode],
            }
            for c in run.changes
        ],
        "mapped": dict(run.classification.mapped),
        "forced": sorted(run.classification.forced),
        "suite_paths": list(base_paths),
        "visible_tests": {"base": len(base.collected), "head": len(head.collected)},
    }
    status = Status.FAIL if problems else Status.PASS
    return report(run, NAME, status, list(dict.fromkeys(problems)), details)
