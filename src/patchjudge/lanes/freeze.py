"""freeze: is every frozen test a dated, owned, evidenced exception that leaves properties on?"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from patchjudge import basecache, cache, failure, repeat, testrun
from patchjudge.config import Ledger
from patchjudge.freezefile import FreezeRow, parse_registry
from patchjudge.lanes import collection, report, suitepass
from patchjudge.lanes.pathfilter import defined_at
from patchjudge.paths import any_match, under
from patchjudge.replay import nodeid_matches
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "freeze"
# Failing visible tests a reason names; the details list them all.
SUITE_SHOWN = 5
# The visible suite is the tree's own code in its own process: a tree whose
# module is named like one of the judge's (src/inspect.py) is no attack on
# it; pathfilter's collection drops the same refusal (issue 11). The JUnit
# cross-check and the outcome-rewrite checks stay.
SHADOWING = "the tested tree shadows a judge module"


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def audit(
    rows: Sequence[FreezeRow], ledger: Ledger, today: dt.date, property_nodeids: Collection[str]
) -> list[str]:
    """Pure: every rule a registry row breaks, one line each, naming the row."""
    settings = ledger.freeze
    props = ledger.properties.paths
    judge = ledger.judge_paths()
    problems = []
    for i, row in enumerate(rows):
        label = f"freeze[{i}] {row.nodeid}"

        def bad(text: str, label: str = label) -> None:
            problems.append(f"{label}: {text}")

        if row.expires < today:
            bad(f"expired on {row.expires.isoformat()} (today is {today.isoformat()})")
        if not row.owner.strip():
            bad("no owner")
        if not row.reason.strip():
            bad("no reason")
        if row.fail_count < settings.min_fail_count:
            bad(
                f"fail_count {row.fail_count} < min_fail_count {settings.min_fail_count}: "
                "not enough evidence of flakiness"
            )
        if row.runs < row.fail_count:
            bad(f"runs {row.runs} < fail_count {row.fail_count}")
        age = (row.expires - row.created).days
        if age > settings.max_age_days:
            bad(f"expires {age} days after created (max_age_days {settings.max_age_days})")
        if age < 0:
            bad("expires before it was created")
        path = _file(row.nodeid)
        if under(path, props):
            bad("a property test may not be frozen")
        elif path == "eval" or path.startswith("eval/") or any_match(judge, path):
            bad(f"a judge path may not be frozen ({path})")
        if not row.required_properties:
            bad("required_properties is empty: a freeze must leave a property on")
        for prop in row.required_properties:
            if not under(_file(prop), props):
                bad(f"required property {prop} is not under {', '.join(props)}")
            elif prop not in property_nodeids:
                bad(f"required property {prop} does not exist")
    return problems


def property_failures(result: testrun.TestRun, required: Iterable[str]) -> list[str]:
    """Pure: each required property that exists must have passed in this run."""
    grouped = result.by_nodeid()
    problems = []
    for prop in sorted(set(required)):
        if prop not in result.collected:
            continue  # the audit names it as missing
        outcomes = grouped.get(prop, [])
        if any(o.outcome == "failed" for o in outcomes):
            problems.append(f"required property failed: {prop}")
        elif not any(o.when == "call" and o.outcome == "passed" for o in outcomes):
            problems.append(f"required property did not pass: {prop}")
    return problems


def rerun_verdicts(
    rows: Sequence[FreezeRow],
    collected: Collection[str],
    tallies: Mapping[str, repeat.Tally],
    reruns: int,
) -> tuple[list[str], list[str]]:
    """Pure: (problems, skipped_by_freeze) from the frozen reruns under the patch."""
    problems, skipped = [], []
    for row in rows:
        if row.nodeid not in collected:
            problems.append(f"frozen node id no longer exists: {row.nodeid}")
            continue
        tally = tallies.get(row.nodeid)
        if tally is None or tally.runs < reruns:
            ran = 0 if tally is None else tally.runs
            problems.append(f"frozen test ran {ran} of {reruns} reruns: {row.nodeid}")
        elif tally.fail == 0:
            problems.append(
                f"frozen test turned green: {row.nodeid}: 0/{tally.runs} failed, registry "
                f"evidence {row.fail_count}/{row.runs}; only a human graduates it"
            )
        else:
            skipped.append(row.nodeid)
    return problems, skipped


def failure_line(o: testrun.Outcome) -> str:
    """Pure: `nodeid (in setup) — <what it raised>`: a failing visible test as a reason names it."""
    where = "" if o.when == "call" else f" (in {o.when})"
    line = failure.assertion(o.longrepr)
    return f"{o.nodeid}{where}" + (f" — {line}" if line else "")


def first_failures(outcomes: Iterable[testrun.Outcome]) -> dict[str, testrun.Outcome]:
    """Pure: each node id's first failed phase (setup, call or teardown)."""
    first: dict[str, testrun.Outcome] = {}
    for o in outcomes:
        if o.outcome == "failed":
            first.setdefault(o.nodeid, o)
    return first


def suite_verdict(
    collected: Sequence[str],
    outcomes: Iterable[testrun.Outcome],
    frozen: Collection[str],
    base_tests: int,
) -> tuple[list[str], dict[str, Any]]:
    """Pure: the visible suite's one run at head -> (problems, what ran).

    A test fails if any phase failed (setup, call or teardown); a frozen
    node id's failure is excused (the reruns judge it). A suite that
    collected nothing where the base defines tests ran nothing: no pass.
    """
    outcomes = tuple(outcomes)
    first = first_failures(outcomes)
    passed = {o.nodeid for o in outcomes if o.when == "call" and o.outcome == "passed"}
    failing = [n for n in collected if n in first]
    failed = [n for n in failing if n not in frozen]
    npassed = sum(1 for n in collected if n in passed and n not in first)
    ran: dict[str, Any] = {
        "ran": len(collected),
        "passed": npassed,
        "failed": failed,
        "excused": [n for n in failing if n in frozen],
        "skipped": len(collected) - npassed - len(failing),
    }
    problems = []
    if not collected and base_tests:
        problems.append(f"suite: collected nothing at head; the base defines {base_tests} test(s)")
    if failed:
        named = [failure_line(first[nodeid]) for nodeid in failed[:SUITE_SHOWN]]
        more = len(failed) - SUITE_SHOWN
        tail = f"; and {more} more (freeze.json details.suite has all)" if more > 0 else ""
        problems.append(f"suite: {len(failed)} failed: {'; '.join(named)}{tail}")
    ran["problems"] = problems
    return problems, ran


def skipped_at_run(states: Mapping[str, str], outcomes: Iterable[testrun.Outcome]) -> list[str]:
    """Pure: tests collected plainly runnable that skipped (or xfailed) once running, none failing.

    A skip mark shows at collection (pathfilter compares those); a skip the
    test's own run raises (a conftest hook, a fixture, the code under test
    raising pytest's Skipped) shows only here.
    """
    skipped, failed = set(), set()
    for o in outcomes:
        if o.outcome == "skipped":
            skipped.add(o.nodeid)
        elif o.outcome == "failed":
            failed.add(o.nodeid)
    return [n for n, state in states.items() if state == "run" and n in skipped - failed]


def ran_at(outcomes: Iterable[testrun.Outcome]) -> set[str]:
    """Pure: node ids whose test function ran to a pass or a failure (not a skip)."""
    return {o.nodeid for o in outcomes if o.when == "call" and o.outcome in ("passed", "failed")}


def newly_skipped(head_skipped: Sequence[str], base_ran: Collection[str]) -> list[str]:
    """Pure: a test that ran at base and skips once running at head: the patch switched it off."""
    gone = [n for n in head_skipped if n in base_ran]
    if not gone:
        return []
    shown = "; ".join(gone[:SUITE_SHOWN])
    more = len(gone) - SUITE_SHOWN
    tail = f"; and {more} more" if more > 0 else ""
    return [f"suite: {len(gone)} newly skipped at run time (they ran at base): {shown}{tail}"]


def _base_tests(run: Run) -> int:
    """How many tests the base's suite files define, read from git objects (no code runs)."""
    paths = run.ledger.suite.paths
    files = [
        e.path for e in run.base_entries if under(e.path, paths) and suitepass.is_test_file(e.path)
    ]
    return len(defined_at(run, run.merge_base, files))


def _visible_suite(
    run: Run, frozen: Collection[str], shown: dict[str, str], cached: dict[str, str]
) -> tuple[list[str], dict[str, Any] | str]:
    """The visible suite once at head, in the sandbox, with the frozen reruns' isolation.

    `shown` gets what came from an earlier lane of the gate (details.shared),
    `cached` what came from the judge's cache (details.cache).
    """
    ledger = run.ledger
    if not ledger.suite.run:
        return [], "not run: [suite] run = false"
    if not suitepass.planned(run):
        return [], "not run: no changed path forces freeze or properties"
    with run.scratch() as scratch:
        tree = scratch / "tree"
        # pathfilter's pass, taken without a tree of this lane's own (suitepass.earlier_pass).
        handed = suitepass.earlier_pass(run) if suitepass.serial(run) else None
        if handed is not None and handed[1]:
            spec, paths = handed[0], handed[1]
        else:
            handed = None
            run.materialize(tree)
            spec, paths = suitepass.spec_for(run, tree)
        collected: tuple[str, ...] = ()
        states: Mapping[str, str] = {}
        outcomes: tuple[testrun.Outcome, ...] = ()
        trouble: list[str] = []
        one_pytest = bool(paths) and suitepass.serial(run)
        if one_pytest:
            # Collected and run in one pytest, as bare `pytest tests` is (issue 20): the
            # separate collection cost a pytest start and a second collection of the suite.
            # In a gate, pathfilter may have run it already, for its collection of head.
            if handed is not None:
                first, shared = handed[2], True
            else:
                first, shared = suitepass.head_pass(run, tree, spec, paths, scratch / "run")
            if shared:
                shown["suite_run"] = "pathfilter's"
            trouble += [p for p in first.problems if not p.startswith(SHADOWING)]
            states = first.collected.collected
            collected = tuple(states)
            if not trouble:
                trouble += [f"node id did not run: {n}" for n in collected if n not in first.nodes]
            outcomes = first.collected.outcomes
        elif paths:
            plan = repeat.collect_plan(spec, tree, paths)
            found, shared = collection(run, "head", plan, scratch / "collect")
            if shared:
                shown["suite_collection"] = "pathfilter's"
            trouble += _believed(found, spec.timeout_s)
            states = found.collected
            collected = tuple(states)
        if collected and not trouble and not one_pytest:
            workers = repeat.resolve_workers(ledger.flakes.workers, len(collected), os.cpu_count())
            spec = dataclasses.replace(spec, nodeids=collected, workers=workers)
            result, believed = repeat.once(tree, spec, scratch / "run", run.environ, box=run.box)
            trouble += [p for p in believed if not p.startswith(SHADOWING)]
            outcomes = result.outcomes
        skipped = [] if trouble else skipped_at_run(states, outcomes)
        base_ran, base_trouble = _ran_at_base(run, spec, skipped, scratch / "base", cached)
        trouble += [f"the same tests at base: {p}" for p in base_trouble]
    if trouble:
        said = [f"suite: {p}" for p in trouble]
        empty = {"ran": 0, "passed": 0, "failed": [], "excused": [], "skipped": 0}
        return said, {**empty, "problems": said}
    # Read only when nothing was collected: one `git show` a base test file.
    base_tests = 0 if collected else _base_tests(run)
    # Host-dependent tests (`[replay] nodeids`, the ledger's globs) are the
    # replay lane's to decide on the trusted host, not this one's.
    hosted = {n for n in collected if any(nodeid_matches(g, n) for g in ledger.replay.nodeids)}
    problems, ran = suite_verdict(collected, outcomes, {*frozen, *hosted}, base_tests)
    problems += newly_skipped(skipped, base_ran)
    return problems, {**ran, "problems": problems}


def _believed(found: testrun.TestRun, timeout_s: float) -> list[str]:
    return [p for p in testrun.run_problems(found, timeout_s) if not p.startswith(SHADOWING)]


def _ran_at_base(
    run: Run, spec: repeat.Spec, nodeids: Sequence[str], scratch: Path, cached: dict[str, str]
) -> tuple[set[str], list[str]]:
    """Which of `nodeids` (skipped at head, running) ran at base: paid only when some skipped.

    One pytest over their base files, the ids selected in it (issue 20: a
    collection first cost a second pytest): an id the base lacks is not
    collected there, so it did not run. Where a base file does not collect,
    the collection first (`_ran_at_base_collected`) decides as before. Boxed,
    the answer is kept in the judge's cache by everything the base run can
    depend on (basecache.ran_key); `cached` says hit, miss or off.
    """
    if not nodeids:
        return set(), []
    # The merge base's tree: the code venv's build of the project is not its (Plan.base).
    spec = dataclasses.replace(spec, workers=0, base=True)
    directory = cache.placement(run.environ, run.repo, run.isolation)
    if directory is None:
        cached["base_ran"] = "off"
        return _ran_at_base_run(run, spec, nodeids, scratch)
    # The base is the same commit run after run (as its collection, basecache).
    key = basecache.ran_key(
        entries=run.base_entries,
        ledger_sha256=run.ledger.sha256,
        settings=dataclasses.asdict(dataclasses.replace(spec, nodeids=())),
        nodeids=nodeids,
        judge=basecache.judge_digest(),
        interpreter=basecache.interpreter(
            run.code,
            basecache.shadowed(run.base_entries, run.ledger.gate.pythonpath),
            basecache.covered(run.base_entries, run.ledger.gate.pythonpath),
        ),
        environ=run.environ,
    )
    kept = basecache.decode_ran(cache.read(directory, basecache.RAN_KIND, key))
    if kept is not None:
        cached["base_ran"] = "hit"
        return {n for n in nodeids if n in kept}, []
    cached["base_ran"] = "miss"
    ran, trouble = _ran_at_base_run(run, spec, nodeids, scratch)
    # A run with any doubt (timed out, tampering, a collection error) may not happen again.
    if not trouble:
        cache.write(directory, basecache.RAN_KIND, key, basecache.encode_ran(ran))
    return ran, trouble


def _ran_at_base_run(
    run: Run, spec: repeat.Spec, nodeids: Sequence[str], scratch: Path
) -> tuple[set[str], list[str]]:
    tree = run.materialize(scratch / "tree", "base")
    files = [f for f in repeat.files_of(nodeids) if (tree / f).is_file()]
    if not files:
        return set(), []
    result, nodes, problems = repeat.select_pass(
        tree, nodeids, spec, scratch / "run", run.environ, box=run.box, files=files
    )
    if any(p.startswith("collection error") for p in problems):
        return _ran_at_base_collected(run, spec, nodeids, files, scratch=scratch / "again")
    trouble = [p for p in problems if not p.startswith(SHADOWING)]
    present = [n for n in nodeids if result.collected.get(n) == "run"]
    if not trouble:
        trouble += [f"node id did not run: {n}" for n in present if n not in nodes]
    if trouble:
        return set(), trouble
    return ran_at(o for o in result.outcomes if o.nodeid in present), []


def _ran_at_base_collected(
    run: Run,
    spec: repeat.Spec,
    nodeids: Sequence[str],
    files: Sequence[str],
    *,
    scratch: Path,
) -> tuple[set[str], list[str]]:
    tree = run.materialize(scratch / "tree", "base")
    found = repeat.collect(tree, files, spec, scratch / "collect", run.environ, box=run.box)
    # A base file that does not collect ran nothing there: its tests are not "newly" skipped.
    trouble = [p for p in _believed(found, spec.timeout_s) if not p.startswith("collection error")]
    present = tuple(n for n in nodeids if found.collected.get(n) == "run")
    if trouble or not present:
        return set(), trouble
    spec = dataclasses.replace(spec, nodeids=present, workers=0)
    result, believed = repeat.once(tree, spec, scratch / "run", run.environ, box=run.box)
    return ran_at(result.outcomes), [p for p in believed if not p.startswith(SHADOWING)]


def _frozen_reruns(
    run: Run, rows: Sequence[FreezeRow]
) -> tuple[list[str], list[str], dict[str, repeat.Tally]]:
    ledger = run.ledger
    with run.scratch() as scratch:
        tree = run.materialize(scratch / "tree")
        spec = repeat.Spec(
            nodeids=(),
            count=ledger.freeze.reruns,
            conftest_roots=ledger.suite.paths,
            pythonpath=ledger.gate.pythonpath,
            plugins=ledger.suite.plugins,
            seed=ledger.properties.seed,
            timeout_s=ledger.suite.timeout_s,
            python=run.code.python,
        )
        files = [f for f in repeat.files_of(r.nodeid for r in rows) if (tree / f).is_file()]
        collected: dict[str, str] = {}
        problems: list[str] = []
        if files:
            found = repeat.collect(tree, files, spec, scratch / "collect", run.environ, box=run.box)
            problems += [f"frozen reruns: {p}" for p in testrun.run_problems(found, spec.timeout_s)]
            collected = dict(found.collected)
        present = tuple(r.nodeid for r in rows if r.nodeid in collected)
        tallies: dict[str, repeat.Tally] = {}
        if present and not problems:
            workers = repeat.resolve_workers(
                ledger.flakes.workers, len(present) * spec.count, os.cpu_count()
            )
            spec = dataclasses.replace(spec, nodeids=present, workers=workers)
            result = repeat.run(tree, spec, scratch / "reruns", run.environ, box=run.box)
            problems += [f"frozen reruns: {p}" for p in result.problems]
            tallies = dict(result.nodes)
        verdicts, skipped = rerun_verdicts(rows, collected, tallies, spec.count)
        if not problems:
            problems += verdicts
        return problems, skipped, tallies


def _properties_runner() -> Callable[[Run, Sequence[str]], tuple[testrun.TestRun, bool]]:
    from patchjudge.lanes.properties import required_run

    return required_run


def run(run: Run) -> LaneReport:
    ledger = run.ledger
    source = f"{ledger.freeze.registry} (at merge base {run.merge_base[:12]})"
    data = run.read_base(ledger.freeze.registry)
    rows = parse_registry(data, source) if data is not None else ()
    details: dict[str, Any] = {
        "registry": ledger.freeze.registry,
        "today": run.today.isoformat(),
        "frozen": [
            {
                "nodeid": r.nodeid,
                "expires": r.expires.isoformat(),
                "owner": r.owner,
                "evidence": f"{r.fail_count}/{r.runs}",
                "required_properties": list(r.required_properties),
            }
            for r in rows
        ],
    }
    # properties (and review, coverage) only when a row requires a property, and
    # imported before the visible suite runs: no judge module after tested code.
    run_properties = _properties_runner() if any(r.required_properties for r in rows) else None
    # What came from an earlier lane of this gate (workspace.Shared), said where it did.
    shared: dict[str, str] = {}
    cached: dict[str, str] = {}
    suite_problems, details["suite"] = _visible_suite(run, {r.nodeid for r in rows}, shared, cached)
    if shared:
        details["shared"] = shared
    if cached:
        details["cache"] = cached
    if not rows:
        status = Status.FAIL if suite_problems else Status.PASS
        return report(run, NAME, status, suite_problems, details)
    required = sorted({p for r in rows for p in r.required_properties})
    props = ledger.properties.paths
    prop_files = [f for f in repeat.files_of(required) if under(f, props) and run.read_base(f)]
    problems: list[str] = []
    collected: Collection[str] = ()
    if prop_files and run_properties is not None:
        # The files whole: a node id that does not exist would stop pytest ("not found").
        result, whole = run_properties(run, prop_files)
        if whole:
            shared["required_properties"] = "the properties lane's run"
            details["shared"] = shared
        problems += [
            f"required properties: {p}"
            for p in testrun.run_problems(result, ledger.properties.timeout_s)
        ]
        collected = result.collected
        problems += property_failures(result, required)
    problems = audit(rows, ledger, run.today, collected) + problems
    if run.forces(NAME):
        rerun_problems, skipped, tallies = _frozen_reruns(run, rows)
        problems += rerun_problems
        details["reruns"] = ledger.freeze.reruns
        details["skipped_by_freeze"] = skipped
        details["rerun_results"] = {
            n: {"fail": t.fail, "runs": t.runs} for n, t in sorted(tallies.items())
        }
    else:
        details["reruns"] = "not forced: no changed path forces the frozen reruns"
    problems += suite_problems
    status = Status.FAIL if problems else Status.PASS
    return report(run, NAME, status, problems, details)
