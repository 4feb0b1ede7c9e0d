"""properties: do the base's property tests hold against the head's code?"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from patchjudge import charmap, failure, review, review_run, testrun
from patchjudge.config import PropertiesSettings
from patchjudge.lanes import not_forced, report
from patchjudge.paths import under
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "properties"
MIN_LINES = 8


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def thin_reason(path: str, source: bytes) -> str | None:
    """Pure: why a property file cannot be a judge (SPEC: under 8 lines, no assert/raise)."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (SyntaxError, tokenize.TokenError, ValueError) as exc:
        return f"thin property file: {path} does not parse ({exc.__class__.__name__})"
    lines = {
        t.start[0]
        for t in tokens
        if t.type
        not in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.ENCODING,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        )
    }
    if len(lines) < MIN_LINES:
        return f"thin property file: {path} has {len(lines)} non-comment lines (< {MIN_LINES})"
    if not any(isinstance(node, ast.Assert | ast.Raise) for node in ast.walk(tree)):
        return f"thin property file: {path} has no assert or raise"
    return None


def judge_outcomes(
    run: testrun.TestRun, settings: PropertiesSettings
) -> tuple[list[str], dict[str, Any]]:
    """Pure: every collected property must have run and passed; silence fails."""
    problems = testrun.run_problems(run, settings.timeout_s)
    if run.timed_out:
        return problems, {}
    grouped = run.by_nodeid()
    passed, failed = [], []
    for nodeid in run.collected:
        outcomes = grouped.get(nodeid, [])
        bad = [o for o in outcomes if o.outcome == "failed"]
        skipped = [o for o in outcomes if o.outcome == "skipped"]
        if bad:
            falsifying = [f for o in bad for f in o.falsifying]
            problems.append(failure.reason(nodeid, bad[0].when, bad[0].longrepr, falsifying))
            failed.append(
                {
                    "nodeid": nodeid,
                    "falsifying": [f for o in bad for f in o.falsifying],
                    "longrepr": bad[0].longrepr[-2000:],
                }
            )
        elif skipped:
            kind = "xfailed" if any(o.wasxfail for o in skipped) else "skipped"
            problems.append(f"property {kind}: {nodeid} (only a passing property counts)")
        elif not any(o.when == "call" and o.outcome == "passed" for o in outcomes):
            problems.append(f"property did not run: {nodeid}")
        else:
            passed.append(nodeid)
    if not run.collected and not problems:
        problems.append("no property test ran")
    if run.exitstatus != 0 and not problems:
        problems.append(f"pytest exited {run.exitstatus} with no failing property to show for it")
    seen = run.hypothesis.get("max_examples")
    if seen is not None and seen != settings.max_examples:
        problems.append(
            f"hypothesis max_examples is {seen}, the ledger says {settings.max_examples}"
        )
    return problems, {"passed": passed, "failed": failed}


def thin_files(files: Mapping[str, bytes]) -> list[str]:
    return [r for path, src in sorted(files.items()) if (r := thin_reason(path, src))]


def property_files(run: Run) -> dict[str, bytes]:
    paths = run.ledger.properties.paths
    found = {}
    for e in run.base_entries:
        if e.kind == "blob" and under(e.path, paths) and is_test_file(e.path):
            found[e.path] = run.read_base(e.path) or b""
    return found


def run_properties(
    run: Run,
    args: Sequence[str] | None = None,
    *,
    edit: Callable[[Path], None] | None = None,
    coverage: Sequence[str] = (),
) -> testrun.TestRun:
    """The properties (or some of them) on head's code under the judge's settings.

    `edit` changes the materialized head tree before the run (a review
    mutant: the run then stops at the first failure, all a kill needs);
    `coverage` names tree-relative files whose executed lines the run
    reports per test (issue 14).
    """
    settings = run.ledger.properties
    with run.scratch() as scratch:
        tree = run.materialize(scratch / "tree")
        if edit is not None:
            edit(tree)
        plan = testrun.Plan(
            tree=tree,
            args=tuple(args) if args is not None else settings.paths,
            conftest_roots=settings.paths,
            pythonpath=run.ledger.gate.pythonpath,
            seed=settings.seed,
            max_examples=settings.max_examples,
            timeout_s=settings.timeout_s,
            extra=("-x",) if edit is not None else (),
            coverage=tuple(coverage),
        )
        return testrun.run(
            plan,
            scratch=scratch,
            environ=run.environ,
            hypothesis_tables=charmap.prefetched(),
            box=run.box,
        )


def run(run: Run) -> LaneReport:
    settings = run.ledger.properties
    details: dict[str, Any] = {"seed": settings.seed, "max_examples": settings.max_examples}
    if not run.forces(NAME):
        return not_forced(run, NAME, details)
    files = property_files(run)
    problems = thin_files(files)
    if not files:
        problems.append(f"no property test file under {', '.join(settings.paths)}")
    changed = review_run.changed_files(run)
    result = run_properties(run, coverage=[f.path for f in changed])
    outcome_problems, outcome_details = judge_outcomes(result, settings)
    problems += outcome_problems
    details.update(outcome_details, files=sorted(files), exitstatus=result.exitstatus)
    problems += _review(run, changed, result, problems, details)
    if problems:
        details["output_tail"] = result.output[-4000:]
    return report(run, NAME, Status.FAIL if problems else Status.PASS, problems, details)


def _review(
    run: Run,
    changed: Sequence[review.ChangedFile],
    result: testrun.TestRun,
    problems: Sequence[str],
    details: dict[str, Any],
) -> list[str]:
    """details["changed_lines"] and details["mutants"]; the threshold's reason, if any."""
    settings = run.ledger.properties
    executed = review.executed_lines(result.executed, changed)
    details["changed_lines"] = review.changed_lines(changed, executed)
    found = []
    if changed and result.coverage_error:
        # Not a zero: no figure at all, and the lane fails saying why.
        details["changed_lines"] = f"not measured: {result.coverage_error}"
        found.append(f"changed lines not measured: {result.coverage_error}")
    elif why := review.below_threshold(
        details["changed_lines"], settings.min_changed_lines_executed
    ):
        found.append(why)
    if problems or found:
        details["mutants"] = "not tried: the properties lane failed on the patch as it is"
    else:
        details["mutants"] = review_run.try_mutants(run, changed, result, run_properties)
    return found
