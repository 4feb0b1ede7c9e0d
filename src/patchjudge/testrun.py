"""pytest under the judge's settings alone, in a subprocess, results over a pipe.

Every lane that runs tests comes through here, so the isolation is written
once: the judge's own ini (-c), no plugin autoload, no PYTEST_ADDOPTS, no
cache, `python -s -P` in an environment built from nothing (no
sitecustomize, usercustomize or .pth from the tested tree, a fixed hash
seed), conftest.py only where the caller allows it, a scrubbed environment
and a deadline that kills the whole process group.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchjudge import charmap, failure, proc, runner
from patchjudge.boundary import protocol, sandbox

# What the tested code gets of the caller's environment: enough to run, no
# tokens, no CI variables, no path back to the user's checkout.
_PASS_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "TERM")
# Set in a run of the merge base's tree in the code's venv (Plan.base): pytest_plugin's.
BASE_TREE_ENV = "PATCHJUDGE_BASE_TREE"


def user_name(environ: Mapping[str, str]) -> str:
    """Who runs the tests, as a user's shell says: a missing USER tells the code it is judged."""
    name = environ.get("USER") or environ.get("LOGNAME")
    if name:
        return name
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid with no passwd entry (some containers)
        return "user"


_INI = """\
[pytest]
addopts =
console_output_style = classic
python_files = test_*.py *_test.py
python_classes = Test
python_functions = test
junit_family = xunit2
"""


@dataclass(frozen=True)
class Plan:
    tree: Path  # the scratch tree: rootdir and cwd
    args: tuple[str, ...]  # paths or node ids relative to tree
    conftest_roots: tuple[str, ...]  # conftest.py survives only under these
    pythonpath: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    seed: int | None = None
    max_examples: int | None = None
    timeout_s: float = 600
    collect_only: bool = False
    extra: tuple[str, ...] = ()
    # Tree-relative files whose executed lines the run reports (issue 14).
    coverage: tuple[str, ...] = ()
    # Further environment for the judge's process (the oracle's worker spec, issue 11).
    env: tuple[tuple[str, str], ...] = ()
    # The interpreter of the venv the code under test runs in; None: the judge's (issue 19).
    python: str | None = None
    # The tree is the merge base's: that venv's build of the project is the head's, which
    # the run must not see (worker.hide_own_build; red team, session 14).
    base: bool = False


@dataclass(frozen=True)
class Outcome:
    nodeid: str
    when: str
    outcome: str
    raw: str | None
    wasxfail: bool
    longrepr: str
    falsifying: tuple[str, ...]
    # Whether pytest called the test function (None: not a python function item).
    called: bool | None = None


@dataclass(frozen=True)
class TestRun:
    """What pytest did, as the judge's plugin saw it, and how it ended."""

    __test__ = False  # not a pytest test class, whatever the name says

    exitstatus: int
    timed_out: bool
    started: bool
    finished: bool
    collected: Mapping[str, str]  # node id -> run | skip | xfail | error
    markers: Mapping[str, tuple[str, ...]]
    collect_errors: Mapping[str, str]
    outcomes: tuple[Outcome, ...]
    garbled: int  # channel lines that were not the plugin's JSON
    hypothesis: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""
    # Files of the tested tree that stand where a judge or stdlib module is.
    shadowed: tuple[str, ...] = ()
    # Processes left running outside the run's process group (killed after it).
    escaped: int = 0
    # node id -> tree-relative path -> executed line numbers, for `Plan.coverage`.
    executed: Mapping[str, Mapping[str, tuple[int, ...]]] = field(default_factory=dict)
    # Why `executed` is not a measurement ("": it is), when Plan.coverage asked for one.
    coverage_error: str = ""
    # node id -> the code's own dunders its outcome used through a handle (issue 18).
    dunders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Round trips to the properties' workers by kind, summed over them: a figure (issue 20).
    requests: Mapping[str, int] = field(default_factory=dict)
    # The review's mutation phase in this run (review_phase.py, issue 20): mutant id -> fate,
    # the null mutants' fates, and the phase's own record ({} : no phase was asked for).
    mutants: Mapping[str, str] = field(default_factory=dict)
    null_mutants: tuple[str, ...] = ()
    review_phase: Mapping[str, Any] = field(default_factory=dict)
    # node id -> (operation, class the worker claims) the judge sent to the code's objects:
    # the judge's own record of what the code's dunders may have decided (issue 18).
    operations: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # (node id, phase) -> why the properties' worker could not answer there, as the judge's
    # stand-in recorded it (the "worker_failure" event, issue 17): data, never a test's text.
    worker_failures: Mapping[tuple[str, str], protocol.Incident] = field(default_factory=dict)
    # The differential's second harness, when it ran in this process after the main pass
    # (review_phase.py, issue 20): its own record, read as a run of its node ids alone; and
    # the node ids it could not judge there (a judge module kept a first-harness handle).
    second: TestRun | None = None
    second_stale: tuple[str, ...] = ()

    def tampering(self) -> list[str]:
        """Signs that something inside the process rewrote what pytest saw."""
        found = [
            f"outcome rewritten in-process: {o.nodeid} ({o.when}) was {o.raw}, reported {o.outcome}"
            for o in self.outcomes
            if o.raw is not None and o.raw != o.outcome and not _pytest_own(o)
        ]
        found += [
            f"passed without pytest calling its test function: {o.nodeid} (runner rewritten)"
            for o in self.outcomes
            if o.when == "call" and o.outcome == "passed" and o.called is False
        ]
        found += [f"the tested tree shadows a judge module: {path}" for path in self.shadowed]
        if self.escaped:
            found.append(
                f"{self.escaped} process(es) escaped the test run's process group (killed)"
            )
        if self.garbled:
            found.append(f"{self.garbled} foreign line(s) on the judge's result channel")
        return found

    def by_nodeid(self) -> dict[str, list[Outcome]]:
        grouped: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            grouped.setdefault(o.nodeid, []).append(o)
        return grouped


def _pytest_own(o: Outcome) -> bool:
    """Changes pytest itself makes after the innermost wrapper saw the report.

    The skipping plugin turns an xfail's failure into a skip (and sets
    wasxfail), and a strict xpass's pass into a failure; neither hides one.
    """
    return (o.wasxfail and o.raw == "failed" and o.outcome == "skipped") or (
        o.raw == "passed" and o.outcome == "failed"
    )


def prune_conftests(tree: Path, keep_under: Iterable[str]) -> list[str]:
    """Delete every conftest.py outside `keep_under`: in a scratch copy, never a checkout."""
    keep = [k.rstrip("/") for k in keep_under]
    removed = []
    for path in sorted(tree.rglob("conftest.py")):
        rel = path.relative_to(tree).as_posix()
        if not any(rel.startswith(k + "/") for k in keep):
            path.unlink()
            removed.append(rel)
    return removed


def build_env(plan: Plan, home: Path, environ: Mapping[str, str]) -> dict[str, str]:
    env = {k: environ[k] for k in _PASS_ENV if k in environ}
    user = user_name(environ)
    env.update(
        USER=user,
        LOGNAME=user,
        HOME=str(home),
        TMPDIR=str(home / "tmp"),
        PYTHONHASHSEED=proc.HASH_SEED,
        PYTHONDONTWRITEBYTECODE="1",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PATCHJUDGE_PYTHONPATH=os.pathsep.join(str(plan.tree / p) for p in plan.pythonpath),
        # hypothesis's storage is the judge's, not a .hypothesis/ the patch may commit.
        HYPOTHESIS_STORAGE_DIRECTORY=str(home / "hypothesis"),
    )
    if plan.base and plan.python:
        env[BASE_TREE_ENV] = "1"
    if plan.max_examples is not None:
        env["PATCHJUDGE_MAX_EXAMPLES"] = str(plan.max_examples)
    env.update(plan.env)
    if plan.coverage:
        env["PATCHJUDGE_COVERAGE"] = json.dumps(list(plan.coverage))
    return env


def build_argv(plan: Plan, ini: Path, python: str) -> list[str]:
    # Bytecode is not source (issue 10): never written, and a hash-based .pyc
    # is checked against its source even when it says "unchecked".
    argv = [
        python,
        *proc.ISOLATED_PYTHON,
        "-m",
        "pytest",
        "-c",
        str(ini),
        "--rootdir",
        str(plan.tree),
    ]
    argv += ["--confcutdir", str(plan.tree), "-p", "patchjudge.pytest_plugin"]
    argv += ["-p", "no:cacheprovider", "-p", "no:stepwise", "-q", "--tb=short", "--color=no"]
    if plan.seed is not None:
        argv += ["-p", "hypothesis.extra.pytestplugin", f"--hypothesis-seed={plan.seed}"]
        if plan.max_examples is not None:
            argv += ["--hypothesis-profile=patchjudge"]
    for plugin in plan.plugins:
        argv += ["-p", plugin]
    if plan.collect_only:
        argv.append("--collect-only")
    return [*argv, *plan.extra, "--", *plan.args]


def parse_channel(data: bytes) -> dict[str, Any]:
    """The judge's channel; the second harness's events (`SECOND` prefix) as `parsed["second"]`."""
    main: list[bytes] = []
    second: list[bytes] = []
    for line in data.split(b"\n"):
        (second if line.startswith(_SECOND_LINE) else main).append(line)
    parsed = _parse_events(b"\n".join(main))
    if second:
        text = b"\n".join(b'{"event": "' + line[len(_SECOND_LINE) :] for line in second)
        parsed["second"] = _parse_events(text)
    return parsed


# How emit (pytest_plugin.py) writes a second-harness event: json.dumps's first key.
_SECOND_LINE = b'{"event": "second:'


def _parse_events(data: bytes) -> dict[str, Any]:
    collected: dict[str, str] = {}
    markers: dict[str, tuple[str, ...]] = {}
    errors: dict[str, str] = {}
    outcomes: list[Outcome] = []
    executed: dict[str, dict[str, tuple[int, ...]]] = {}
    dunders: dict[str, tuple[str, ...]] = {}
    requests: dict[str, int] = {}
    operations: dict[str, tuple[tuple[str, str], ...]] = {}
    failures: dict[tuple[str, str], protocol.Incident] = {}
    parsed: dict[str, Any] = {"started": False, "finished": False, "garbled": 0}
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        try:
            rec = json.loads(line)
            event = rec["event"]
        except (ValueError, KeyError, TypeError):
            parsed["garbled"] += 1
            continue
        if event == "start":
            parsed["started"] = True
            parsed["shadowed"] = tuple(rec.get("shadowed") or ())
            parsed["shadowed_imported"] = frozenset(rec.get("shadowed_imported") or ())
            parsed["coverage_error"] = str(rec.get("coverage_error") or "")
        elif event == "collected":
            for item in rec["items"]:
                collected[item["nodeid"]] = item["state"]
                markers[item["nodeid"]] = tuple(item["markers"])
        elif event == "collect_error":
            errors[rec["nodeid"]] = rec["longrepr"]
        elif event == "report":
            outcomes.append(
                Outcome(
                    rec["nodeid"],
                    rec["when"],
                    rec["outcome"],
                    rec["raw"],
                    rec["wasxfail"],
                    rec["longrepr"],
                    tuple(rec["falsifying"]),
                    rec.get("called"),
                )
            )
        elif event == "executed":
            try:
                _add_executed(executed, rec)
            except (KeyError, TypeError, ValueError, AttributeError):
                parsed["garbled"] += 1
        elif event == "dunders":
            try:
                names = {*dunders.get(str(rec["nodeid"]), ()), *map(str, rec["names"])}
                dunders[str(rec["nodeid"])] = tuple(sorted(names))
            except (KeyError, TypeError):
                parsed["garbled"] += 1
        elif event == "requests":
            try:
                for kind, n in rec["counts"].items():
                    requests[str(kind)] = requests.get(str(kind), 0) + int(n)
            except (KeyError, TypeError, ValueError, AttributeError):
                parsed["garbled"] += 1
        elif event in ("mutant", "null_mutant", "review_phase"):
            _add_review(parsed, event, rec)
        elif event == "operations":
            try:
                ops = {(str(op), str(claim)) for op, claim in rec["ops"]}
                nodeid = str(rec["nodeid"])
                operations[nodeid] = tuple(sorted({*operations.get(nodeid, ()), *ops}))
            except (KeyError, TypeError, ValueError):
                parsed["garbled"] += 1
        elif event == "worker_failure":
            try:
                cause = protocol.Cause(rec["cause"])
                incident = protocol.Incident(cause, str(rec["worker"]), str(rec["detail"]))
                failures.setdefault((str(rec["nodeid"]), str(rec["when"])), incident)
            except (KeyError, TypeError, ValueError):
                parsed["garbled"] += 1
        elif event == "stale":
            try:
                stale = {*parsed.get("stale", ()), *map(str, rec["nodeids"])}
                parsed["stale"] = tuple(sorted(stale))
            except (KeyError, TypeError):
                parsed["garbled"] += 1
        elif event == "finish":
            parsed["finished"] = True
            parsed["finish_status"] = rec["exitstatus"]
            parsed["timed_out"] = rec.get("timed_out") is True
            parsed["hypothesis"] = rec.get("hypothesis") or {}
            parsed["coverage_error"] = str(
                rec.get("coverage_error") or parsed.get("coverage_error") or ""
            )
        else:
            parsed["garbled"] += 1
    parsed.update(
        collected=collected,
        markers=markers,
        collect_errors=errors,
        outcomes=outcomes,
        executed=executed,
        dunders=dunders,
        requests=requests,
        operations=operations,
        worker_failures=failures,
    )
    return parsed


def _add_review(parsed: dict[str, Any], event: str, rec: Mapping[str, Any]) -> None:
    if event == "mutant":
        parsed.setdefault("mutants", {})[str(rec.get("id"))] = str(rec.get("fate"))
    elif event == "null_mutant":
        parsed.setdefault("null_mutants", []).append(str(rec.get("fate")))
    else:
        parsed["review_phase"] = {k: v for k, v in rec.items() if k != "event"}


def _add_executed(into: dict[str, dict[str, tuple[int, ...]]], rec: Mapping[str, Any]) -> None:
    lines = into.setdefault(str(rec["nodeid"]), {})
    for path, numbers in rec["lines"].items():
        if not isinstance(path, str) or not all(type(n) is int for n in numbers):
            raise TypeError("executed lines are str -> [int]")
        lines[path] = tuple(sorted({*lines.get(path, ()), *numbers}))


def run(
    plan: Plan,
    *,
    scratch: Path,
    environ: Mapping[str, str] = os.environ,
    python: str = sys.executable,
    hypothesis_tables: Mapping[str, bytes] | None = None,
    box: sandbox.Boxer | None = None,
    on_channel: Callable[[bytes], None] | None = None,
) -> TestRun:
    """Run pytest on `plan.tree` (a scratch copy it may change) and read the pipe.

    With `box` (the run's `Run.box`), pytest runs in the sandbox it gives:
    writable are `scratch` (the tree, HOME, the JUnit XML a caller asks for)
    and nothing else; the judge's ini is read-only over it.
    """
    python = plan.python or python
    prune_conftests(plan.tree, plan.conftest_roots)
    home = scratch / "home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    charmap.install(home / "hypothesis", dict(hypothesis_tables or {}), python)
    # Not in `scratch` itself: that is an ancestor of the tests' TMPDIR, and a
    # pytest the tests start in a temp dir would take the judge's ini as its own.
    ini = scratch / "judge-ini" / "pytest.ini"
    ini.parent.mkdir(exist_ok=True)
    ini.write_text(_INI)
    env = build_env(plan, home, environ)
    if python != sys.executable:
        env["PYTHONPATH"] = str(judge_path(ini.parent, _runner_copies(plan)))
    boxed = box(plan.tree, home) if box is not None else None
    if boxed is not None:
        boxed = dataclasses.replace(
            boxed,
            writable=(*boxed.writable, scratch),
            readonly=(*boxed.readonly, ini.parent),
        )
    with sandbox.wrapped(boxed, build_argv(plan, ini, python)) as (argv, fds):
        result = proc.run(
            argv,
            cwd=plan.tree,
            env=env,
            timeout=plan.timeout_s,
            channel=True,
            pass_fds=fds,
            on_channel=on_channel,
        )
    parsed = parse_channel(result.channel)
    output = (result.stdout + result.stderr).decode("utf-8", "replace")
    second = parsed.get("second")
    return TestRun(
        exitstatus=result.returncode,
        timed_out=result.timed_out,
        started=parsed["started"],
        finished=parsed["finished"],
        collected=parsed["collected"],
        markers=parsed["markers"],
        collect_errors=parsed["collect_errors"],
        outcomes=tuple(parsed["outcomes"]),
        garbled=parsed["garbled"],
        hypothesis=parsed.get("hypothesis", {}),
        output=output[-20000:],
        shadowed=tuple(_relative(p, plan.tree) for p in _shadowing(plan, parsed)),
        escaped=result.escaped,
        executed=parsed["executed"],
        coverage_error=_coverage_error(plan, parsed),
        dunders=parsed["dunders"],
        requests=parsed["requests"],
        mutants=parsed.get("mutants", {}),
        null_mutants=tuple(parsed.get("null_mutants", ())),
        review_phase=parsed.get("review_phase", {}),
        operations=parsed["operations"],
        worker_failures=parsed["worker_failures"],
        second=None if second is None else second_run(second, result.timed_out),
        second_stale=() if second is None else tuple(second.get("stale", ())),
    )


def second_run(parsed: Mapping[str, Any], timed_out: bool) -> TestRun:
    """Pure: the second harness's events as a run of its own (its exit status its `finish`)."""
    return TestRun(
        exitstatus=int(parsed.get("finish_status", 1)),
        timed_out=timed_out or bool(parsed.get("timed_out")),
        started=parsed["started"],
        finished=parsed["finished"],
        collected=parsed["collected"],
        markers=parsed["markers"],
        collect_errors=parsed["collect_errors"],
        outcomes=tuple(parsed["outcomes"]),
        garbled=parsed["garbled"],
        hypothesis=parsed.get("hypothesis", {}),
        dunders=parsed["dunders"],
        requests=parsed["requests"],
        operations=parsed["operations"],
        worker_failures=parsed["worker_failures"],
    )


def judge_path(folder: Path, copies: Mapping[str, Path] | None = None) -> Path:
    """A directory holding the judge's package, for an interpreter of another venv.

    The code's venv has no patchjudge (its `[gate] install` may even be
    patchjudge): the judge's plugin comes from this directory, which holds a
    link to the judge's own package and, for a project that is one of the
    runner's dependencies, to the judge's copy of it (`runner.runner_copies`):
    pytest starts on those, the plugin then hands the name to the tree.
    """
    path = folder / "judge-path"
    path.mkdir(exist_ok=True)
    links = {"patchjudge": Path(__file__).resolve().parent, **(copies or {})}
    for target in links.values():
        link = path / target.name
        if not link.is_symlink():
            link.symlink_to(target, target_is_directory=target.is_dir())
    return path


def _runner_copies(plan: Plan) -> dict[str, Path]:
    listing: list[str] = []
    for entry in plan.pythonpath:
        try:
            listing += [p.name for p in (plan.tree / entry).iterdir()]
        except OSError:
            continue
    return runner.runner_copies(runner.top_level(listing), plan.tree)


def _shadowing(plan: Plan, parsed: Mapping[str, Any]) -> list[str]:
    """The tree's files that shadow a judge module, as a hazard to this run.

    In the judge's venv every one is: the tree is tested against the judge's
    copy, or replaces a module the judge imports later. In the code's own
    venv (--python) a module already imported when the tree joined sys.path
    is that venv's copy, the project's own build for a judge dependency: the
    tree's file cannot stand in for it. One not imported yet still could.
    """
    shadowed = list(parsed.get("shadowed", ()))
    if plan.python is None:
        return shadowed
    imported = parsed.get("shadowed_imported", frozenset())
    return [p for p in shadowed if p not in imported]


def _coverage_error(plan: Plan, parsed: Mapping[str, Any]) -> str:
    if not plan.coverage:
        return ""
    if parsed.get("coverage_error"):
        return str(parsed["coverage_error"])
    if parsed["started"] and "coverage_error" not in parsed:
        return "the judge's plugin did not say whether coverage.py started"
    return ""


def _relative(path: str, tree: Path) -> str:
    try:
        return Path(path).relative_to(tree).as_posix()
    except ValueError:
        return path


def merged(runs: Sequence[TestRun]) -> TestRun:
    """Several runs of one lane read as one: a failure or a silence in any is in the whole."""
    if len(runs) == 1:
        return runs[0]
    hypothesis: dict[str, Any] = {}
    for r in runs:  # the last one that says otherwise wins: a lowered profile must show
        if r.hypothesis and r.hypothesis != hypothesis:
            hypothesis = dict(r.hypothesis)
    executed: dict[str, dict[str, tuple[int, ...]]] = {}
    for r in runs:
        for nodeid, files in r.executed.items():
            for path, lines in files.items():
                into = executed.setdefault(nodeid, {})
                into[path] = tuple(sorted({*into.get(path, ()), *lines}))
    return TestRun(
        exitstatus=next((r.exitstatus for r in runs if r.exitstatus != 0), 0),
        timed_out=any(r.timed_out for r in runs),
        started=all(r.started for r in runs),
        finished=all(r.finished for r in runs),
        collected={k: v for r in runs for k, v in r.collected.items()},
        markers={k: v for r in runs for k, v in r.markers.items()},
        collect_errors={k: v for r in runs for k, v in r.collect_errors.items()},
        outcomes=tuple(o for r in runs for o in r.outcomes),
        garbled=sum(r.garbled for r in runs),
        hypothesis=hypothesis,
        output="\n".join(r.output for r in runs)[-20000:],
        shadowed=tuple(p for r in runs for p in r.shadowed),
        escaped=sum(r.escaped for r in runs),
        executed=executed,
        requests={
            k: sum(r.requests.get(k, 0) for r in runs)
            for k in sorted({*(k for r in runs for k in r.requests)})
        },
        # Each node id runs in one of the runs: the records do not overlap.
        dunders={k: v for r in runs for k, v in r.dunders.items()},
        operations={k: v for r in runs for k, v in r.operations.items()},
        worker_failures={k: v for r in runs for k, v in r.worker_failures.items()},
    )


def collection_error(nodeid: str, longrepr: str) -> str:
    """Pure: `collection error: FILE: <the exception's last line>` (issue 19)."""
    said = failure.last_line(longrepr)
    return f"collection error: {nodeid or '<session>'}" + (f": {said}" if said else "")


def run_problems(run: TestRun, timeout_s: float) -> list[str]:
    """Why a run cannot be believed at all, before any test is looked at."""
    if run.timed_out:
        return [f"timed out after {timeout_s:g} s"]
    problems = []
    if not run.started or not run.finished:
        tail = " / ".join(run.output.strip().splitlines()[-3:])
        problems.append(
            f"pytest did not run to the end under the judge's plugin "
            f"(exit {run.exitstatus}): {tail}"
        )
    problems += [collection_error(n, text) for n, text in run.collect_errors.items()]
    problems += run.tampering()
    return problems


def restricted(run: TestRun, files: Sequence[str], timeout_s: float) -> TestRun:
    """Pure: a run of more files read as a run of `files` alone, its main pass held to `timeout_s`.

    What was collected (and failed to collect) elsewhere is dropped: a run of
    `files` alone collects none of it. The outcomes stay whole, so a sign of
    tampering anywhere in the run is still one (`tampering`). A main pass
    that outlived `timeout_s` in a process given more (the review's phase
    after it) is a time-out, as it would have been alone.
    """
    wanted = set(files)

    def ours(nodeid: str) -> bool:
        return nodeid.split("::", 1)[0] in wanted

    late = float(run.review_phase.get("main_seconds", 0)) >= timeout_s
    return dataclasses.replace(
        run,
        timed_out=run.timed_out or late,
        collected={n: s for n, s in run.collected.items() if ours(n)},
        markers={n: m for n, m in run.markers.items() if ours(n)},
        collect_errors={n: t for n, t in run.collect_errors.items() if not n or ours(n)},
    )
