"""Run node ids N times, verified: pytest-repeat in one process, further runs where it fails.

Shared by the frozen reruns, `patchjudge flakes` and replay. The primary
source of outcomes is the judge's result channel (testrun): it carries the
exact node id (JUnit's classname/name mangling is lossy), it cannot be
rewritten by the tested code (the JUnit file's path is in sys.argv), and
it has the raw-vs-final tamper check. JUnit, written by pytest's own
junitxml plugin, is the independent cross-check: if the two disagree on
which cases ran or failed, the run is not believed.

pytest-repeat silently repeats nothing for unittest.TestCase tests (and a
`@pytest.mark.repeat(n)` marker changes the count for one test), so every
node id's runs are counted and those short of N run again in further plain
passes, one run each, never counted as more than they ran.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchjudge import junit, testrun
from patchjudge.boundary import sandbox

# pytest-repeat's id part: `test_x[3-12]` or, parametrised, `test_x[a-1-3-12]`.
_REPEAT_ID = re.compile(r"^(?P<base>.+?)(?:\[(?P<i>\d+)-(?P<n>\d+)\]|-(?P<j>\d+)-(?P<m>\d+)\])$")
# xdist pays a worker start-up per run; below this many test runs it loses
# (issue 3: a 4 s suite was 1.15x slower with -n 2, the 12x run 0.73x).
AUTO_XDIST_MIN_RUNS = 1000
# Long runs go in batches of whole test files, so progress shows: the first
# batch is small, later ones sized from its pace to take about BATCH_SECONDS.
# Each file is still collected once; a batch costs one pytest start-up.
FIRST_BATCH = 50
BATCH_SECONDS = 60.0

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Tally:
    fail: int
    runs: int


@dataclass(frozen=True)
class Spec:
    """What to run and how: the judge's settings for the visible suite."""

    nodeids: tuple[str, ...]  # plain node ids, known to be collected
    count: int
    workers: int = 0  # 0: no xdist
    conftest_roots: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    seed: int | None = None
    timeout_s: float = 600
    python: str | None = None  # the code's venv (--python); None: the judge's interpreter
    base: bool = False  # the tree is the merge base's (testrun.Plan.base)


@dataclass(frozen=True)
class Result:
    nodes: Mapping[str, Tally]
    problems: tuple[str, ...]  # why the counts cannot be believed
    passes: int
    duration_s: float


def plain_nodeid(reported: str, known: Collection[str], repeated: bool) -> str | None:
    """Pure: the collected node id a reported one stands for, or None.

    In a pytest-repeat pass an id that loses its `i-N` part and then names a
    collected test is that test; anything else (a unittest case, a test
    whose `repeat(1)` marker kept it plain) must itself be collected.
    """
    if repeated:
        match = _REPEAT_ID.match(reported)
        if match:
            base = match["base"]
            stripped = base if match["i"] is not None else base + "]"
            if stripped in known:
                return stripped
    return reported if reported in known else None


def tally_pass(
    outcomes: Iterable[testrun.Outcome], known: Collection[str], repeated: bool
) -> tuple[dict[str, Tally], list[str]]:
    """Pure: one pass's reports -> fail/runs per plain node id, and strangers.

    Each reported node id is one run (pytest-repeat gives every repetition
    its own id); it failed if any phase failed (setup, call or teardown).
    """
    failed: dict[str, bool] = {}
    for o in outcomes:
        failed[o.nodeid] = failed.get(o.nodeid, False) or o.outcome == "failed"
    nodes: dict[str, Tally] = {}
    strangers = []
    for reported, bad in failed.items():
        plain = plain_nodeid(reported, known, repeated)
        if plain is None:
            strangers.append(reported)
            continue
        old = nodes.get(plain, Tally(0, 0))
        nodes[plain] = Tally(old.fail + bad, old.runs + 1)
    return nodes, strangers


def ran_ids(outcomes: Iterable[testrun.Outcome], count: int) -> tuple[str, ...]:
    """Pure: the plain node ids a pass over whole files ran, in the order they first reported.

    With no list asked for, the pass's own reports say what it collected
    (under xdist the controller collects nothing): an id in pytest-repeat's
    `[i-N]` form stands for its plain id (N is a `repeat` marker's, or the
    count), any other for itself.
    """
    found: dict[str, None] = {}
    for nodeid in dict.fromkeys(o.nodeid for o in outcomes):  # each id once, not each report
        match = _REPEAT_ID.match(nodeid) if count > 1 else None
        if match:
            found.setdefault(match["base"] if match["i"] is not None else match["base"] + "]")
        else:
            found.setdefault(nodeid)
    return tuple(found)


def cross_check(outcomes: Iterable[testrun.Outcome], cases: Iterable[junit.Case]) -> list[str]:
    """Pure: the channel and JUnit must agree on which cases ran and which failed."""
    failed: dict[str, bool] = {}
    for o in outcomes:
        failed[o.nodeid] = failed.get(o.nodeid, False) or o.outcome == "failed"
    # Each node id mangled once, not once a report (three a test run: issue 20).
    channel: dict[tuple[str, str], bool] = {}
    for nodeid, bad in failed.items():
        key = junit.junit_key(nodeid)
        channel[key] = channel.get(key, False) or bad
    xml = junit.failed_keys(cases)
    problems = []
    for key in sorted(set(channel) | set(xml)):
        name = "::".join(key)
        if key not in xml:
            problems.append(f"JUnit is missing a case the channel reported: {name}")
        elif key not in channel:
            problems.append(f"JUnit has a case the channel never reported: {name}")
        elif channel[key] != xml[key]:
            problems.append(
                f"JUnit and the channel disagree on {name}: "
                f"{'failed' if xml[key] else 'passed'} vs {'failed' if channel[key] else 'passed'}"
            )
    return problems


def add(a: Mapping[str, Tally], b: Mapping[str, Tally]) -> dict[str, Tally]:
    """Pure: sum two tallies node id by node id (shards, further passes)."""
    out = dict(a)
    for nodeid, t in b.items():
        old = out.get(nodeid, Tally(0, 0))
        out[nodeid] = Tally(old.fail + t.fail, old.runs + t.runs)
    return out


def resolve_workers(setting: str | int, runs: int, cpus: int | None) -> int:
    """Pure: the xdist worker count; 'auto' uses xdist only where it gains."""
    if setting == "auto":
        n = cpus or 1
        return n if n > 1 and runs >= AUTO_XDIST_MIN_RUNS else 0
    return int(setting)


# What starting xdist's workers costs, in seconds of serial test time it must
# save first (issue 12: measured 1.2-1.6 s for -n 2 on a 2-core machine).
XDIST_START_S = 2.0
# What one test run costs beyond the duration JUnit gives it: pytest's and
# pytest-repeat's item handling, the judge's channel, the JUnit record
# (issue 12: toolz's 180 tests took 0.1-0.2 s by JUnit, ~0.6 s more by wall).
RUN_OVERHEAD_S = 0.002


def serial_seconds(test_seconds: float, tests: int, runs: int) -> float:
    """Pure: what `runs` more runs of `tests` tests would take serially, from one measured run."""
    return runs * (test_seconds + tests * RUN_OVERHEAD_S)


def workers_for(setting: str | int, serial_s: float, cpus: int | None) -> int:
    """Pure: the xdist worker count from measured test time; 'auto' uses xdist where it gains.

    `serial_s` is what the runs still to do would take one after another
    (the first pass's test durations times the runs left): n workers save
    `serial_s * (1 - 1/n)` and cost a start-up.
    """
    if setting != "auto":
        return int(setting)
    n = cpus or 1
    return n if n > 1 and serial_s * (1 - 1 / n) > XDIST_START_S else 0


def by_file(nodeids: Iterable[str]) -> list[list[str]]:
    """Pure: node ids grouped by test file, files in first-seen order."""
    groups: dict[str, list[str]] = {}
    for nodeid in nodeids:
        groups.setdefault(nodeid.split("::", 1)[0], []).append(nodeid)
    return list(groups.values())


def take(groups: Sequence[Sequence[str]], target: int) -> int:
    """Pure: how many whole file groups make a batch of about `target` node ids (>= 1)."""
    taken = size = 0
    for group in groups:
        if taken and size + len(group) > target:
            break
        taken += 1
        size += len(group)
    return taken


def next_target(done_ids: int, seconds: float) -> int:
    """Pure: the batch size that takes about BATCH_SECONDS at the pace seen so far."""
    if done_ids <= 0 or seconds <= 0:
        return FIRST_BATCH
    return max(1, int(BATCH_SECONDS * done_ids / seconds))


def files_of(nodeids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.split("::", 1)[0] for n in nodeids))


def _suite_plan(
    spec: Spec,
    tree: Path,
    args: Sequence[str],
    *,
    collect_only: bool = False,
    extra: tuple[str, ...] = (),
) -> testrun.Plan:
    """The visible suite under `spec`'s settings (its conftests, plugins, seed, deadline)."""
    return testrun.Plan(
        tree=tree,
        args=tuple(args),
        conftest_roots=spec.conftest_roots,
        pythonpath=spec.pythonpath,
        plugins=spec.plugins,
        seed=spec.seed,
        timeout_s=spec.timeout_s,
        collect_only=collect_only,
        extra=extra,
        python=spec.python,
        base=spec.base,
    )


def collect_plan(spec: Spec, tree: Path, args: Sequence[str]) -> testrun.Plan:
    """The plan `collect` runs."""
    return _suite_plan(spec, tree, args, collect_only=True)


def collect(
    tree: Path,
    args: Sequence[str],
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    *,
    box: sandbox.Boxer | None = None,
) -> testrun.TestRun:
    """Collect `args` once, plainly: the node ids that exist."""
    plan = collect_plan(spec, tree, args)
    scratch.mkdir(parents=True, exist_ok=True)
    return testrun.run(plan, scratch=scratch, environ=environ, box=box)


@dataclass(frozen=True)
class FirstPass:
    """Each test of `args` collected and run once, serially, in one pytest."""

    collected: testrun.TestRun
    nodes: Mapping[str, Tally]
    problems: tuple[str, ...]
    test_seconds: float  # the tests' own durations, JUnit's sum: the measured pace


def first_pass(
    tree: Path,
    args: Sequence[str],
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    *,
    box: sandbox.Boxer | None = None,
    tolerated: tuple[str, ...] = (),
) -> FirstPass:
    """Collect and run once in the same pytest: the node ids, run 1 of N, and its pace.

    The collection a separate `--collect-only` would cost comes with it, and
    the durations it measures decide xdist for the runs left (issue 12).
    A problem starting with one of `tolerated` is still returned, but the
    pass is tallied and cross-checked all the same (the freeze lane's suite
    run takes a tree that shadows a judge module: it is the code's process).
    """
    scratch.mkdir(parents=True, exist_ok=True)
    xml = scratch / "junit.xml"
    plan = _suite_plan(spec, tree, args, extra=("--junitxml", str(xml), "-o", "junit_logging=no"))
    result = testrun.run(plan, scratch=scratch, environ=environ, box=box)
    problems = testrun.run_problems(result, plan.timeout_s)
    if any(not p.startswith(tolerated) for p in problems):
        return FirstPass(result, {}, tuple(problems), 0.0)
    nodes, strangers = tally_pass(result.outcomes, set(result.collected), repeated=False)
    problems += [f"ran a node id that was not collected: {s}" for s in strangers]
    seconds = 0.0
    if not xml.is_file():
        problems.append("pytest wrote no JUnit XML")
    else:
        problems += cross_check(result.outcomes, junit.read_cases(xml))
        seconds = junit_seconds(xml)
    return FirstPass(result, nodes, tuple(problems), seconds)


def junit_seconds(path: Path) -> float:
    """The sum of the test cases' `time` attributes (setup, call and teardown)."""
    from xml.etree import ElementTree

    total = 0.0
    for _, elem in ElementTree.iterparse(path, events=("end",)):
        if elem.tag == "testcase":
            with contextlib.suppress(ValueError):
                total += max(0.0, float(elem.get("time", "0")))
            elem.clear()
    return total


# One line of progress at most this often in a run of one pytest (issue 20).
PROGRESS_S = 30.0
# How the judge's plugin writes a test run's last report (pytest_plugin.emit's json.dumps).
_TEARDOWN = b'"when": "teardown"'


class Watch:
    """Progress of one pytest from its channel as it comes: test runs finished so far.

    Counts teardown reports in the raw chunks (a marker split across two
    reads is missed: a progress line, never a figure) and says, at most every
    PROGRESS_S seconds, how many of `expected` are done. What is counted is
    the channel, read again whole once the run ends.
    """

    def __init__(
        self,
        say: Progress,
        expected: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.say, self.expected, self.clock = say, expected, clock
        self.started = self.last = clock()
        self.done = 0

    def __call__(self, data: bytes) -> None:
        self.done += data.count(_TEARDOWN)
        now = self.clock()
        if now - self.last < PROGRESS_S or not self.done:
            return
        self.last = now
        elapsed = now - self.started
        left = max(self.expected - self.done, 0) * elapsed / self.done
        self.say(f"{self.done}/{self.expected} test runs in {elapsed:.0f} s, ~{left:.0f} s left")


def _one_pass(
    tree: Path,
    nodeids: Sequence[str],
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    *,
    repeat: int,
    box: sandbox.Boxer | None,
) -> tuple[dict[str, Tally], list[str]]:
    _, nodes, problems = _pass(tree, nodeids, spec, scratch, environ, repeat=repeat, box=box)
    return nodes, problems


def once(
    tree: Path,
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str] = os.environ,
    *,
    box: sandbox.Boxer | None = None,
) -> tuple[testrun.TestRun, tuple[str, ...]]:
    """Every node id in `spec` run once in one pytest, verified as the reruns are.

    The visible suite at head (issue 19): the outcomes whole, for the
    failure text a reason quotes, and why they cannot be believed.
    """
    result, nodes, problems = _pass(tree, spec.nodeids, spec, scratch, environ, repeat=1, box=box)
    if not problems:
        problems += [f"node id did not run: {n}" for n in spec.nodeids if n not in nodes]
    return result, tuple(problems)


def select_pass(
    tree: Path,
    nodeids: Sequence[str],
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    *,
    box: sandbox.Boxer | None,
    files: Sequence[str],
) -> tuple[testrun.TestRun, dict[str, Tally], list[str]]:
    """`nodeids` run once where `files` collect them, in one pytest: no collection first.

    An id none of them defines is simply not collected (its state is absent);
    a file that does not collect stops the run ("collection error" problems).
    """
    return _pass(tree, nodeids, spec, scratch, environ, repeat=1, box=box, files=files)


def _pass(
    tree: Path,
    nodeids: Sequence[str] | None,
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    *,
    repeat: int,
    box: sandbox.Boxer | None,
    paths: Sequence[str] = (),
    files: Sequence[str] | None = None,
    watch: Callable[[bytes], None] | None = None,
) -> tuple[testrun.TestRun, dict[str, Tally], list[str]]:
    """One pytest over `nodeids`, or (None) over all of `paths`, its ids those it ran.

    With `files` (the existing files of `nodeids`), those are collected.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    xml = scratch / "junit.xml"
    plugins = [*spec.plugins, "patchjudge.select_plugin"]
    extra = ["--junitxml", str(xml), "-o", "junit_logging=no"]
    if nodeids is not None:
        select = scratch / "select.txt"
        select.write_text("".join(f"{n}\n" for n in nodeids), encoding="utf-8")
        extra = ["--patchjudge-select", str(select), *extra]
    if repeat > 1:
        plugins.append("pytest_repeat")
        extra += ["--count", str(repeat), "--patchjudge-repeat", str(repeat)]
    if spec.workers > 0:
        plugins.append("xdist")
        extra += ["-n", str(spec.workers)]
    args = files_of(nodeids) if nodeids is not None else tuple(paths)
    if files is not None:
        args = tuple(files)
    plan = dataclasses.replace(
        _suite_plan(spec, tree, args, extra=tuple(extra)),
        plugins=tuple(plugins),
        timeout_s=spec.timeout_s * max(repeat, 1),
    )
    result = testrun.run(plan, scratch=scratch, environ=environ, box=box, on_channel=watch)
    problems = testrun.run_problems(result, plan.timeout_s)
    if problems:
        return result, {}, problems
    known = set(nodeids) if nodeids is not None else set(ran_ids(result.outcomes, repeat))
    nodes, strangers = tally_pass(result.outcomes, known, repeated=repeat > 1)
    problems += [f"ran a node id that was not asked for: {s}" for s in strangers]
    if not xml.is_file():
        problems.append("pytest wrote no JUnit XML")
    else:
        problems += cross_check(result.outcomes, junit.read_cases(xml))
    return result, nodes, problems


def run(
    tree: Path,
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str] = os.environ,
    progress: Progress | None = None,
    *,
    box: sandbox.Boxer | None = None,
    seconds_per_run: float | None = None,
) -> Result:
    """Every node id in `spec` run `spec.count` times in `tree`, counted and verified.

    With `seconds_per_run` (a measured pace), the first batch is sized to
    take about BATCH_SECONDS too: a short suite runs in one pytest.
    """
    started = time.monotonic()
    say = progress or (lambda _: None)
    nodes: dict[str, Tally] = {}
    problems: list[str] = []
    passes = 0
    groups = by_file(spec.nodeids)
    total = len(spec.nodeids)
    done = 0
    target = total if total <= FIRST_BATCH else FIRST_BATCH
    if seconds_per_run is not None:
        per_id = seconds_per_run * spec.count / max(spec.workers, 1)
        target = total if per_id <= 0 else max(1, int(BATCH_SECONDS / per_id))
    while groups:
        n = take(groups, target)
        batch = [nodeid for group in groups[:n] for nodeid in group]
        groups = groups[n:]
        found, trouble = _one_pass(
            tree, batch, spec, scratch / f"pass{passes}", environ, repeat=spec.count, box=box
        )
        passes += 1
        nodes = add(nodes, found)
        problems += trouble
        if trouble:
            break
        done += len(batch)
        elapsed = time.monotonic() - started
        target = next_target(done, elapsed)
        if groups or passes > 1:
            left = elapsed * (total - done) / done
            say(f"{done}/{total} node ids x{spec.count} in {elapsed:.0f} s, ~{left:.0f} s left")
    if problems:
        return Result(nodes, tuple(problems), passes, time.monotonic() - started)
    return _top_up(
        tree, spec, scratch, environ, say, box=box, nodes=nodes, passes=passes, started=started
    )


def run_whole(
    tree: Path,
    paths: Sequence[str],
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str] = os.environ,
    *,
    progress: Progress | None = None,
    box: sandbox.Boxer | None = None,
    expected: int = 0,
) -> tuple[Result, tuple[str, ...]]:
    """Every test under `paths` run `spec.count` times in one pytest that collects them too.

    For a suite whose size is known from an earlier run (issue 20): no
    `--collect-only` first, and no batches (each cost a pytest and its xdist
    workers): progress comes from the channel as it fills, `expected` test
    runs. The node ids are those the session ran; what pytest-repeat did not
    repeat runs again, as in `run`.
    """
    started = time.monotonic()
    say = progress or (lambda _: None)
    watch = Watch(say, expected) if progress is not None else None
    _, nodes, problems = _pass(
        tree,
        None,
        spec,
        scratch / "pass0",
        environ,
        repeat=spec.count,
        box=box,
        paths=paths,
        watch=watch,
    )
    ids = tuple(nodes)
    if problems:
        return Result(nodes, tuple(problems), 1, time.monotonic() - started), ids
    spec = dataclasses.replace(spec, nodeids=ids)
    done = _top_up(
        tree, spec, scratch, environ, say, box=box, nodes=nodes, passes=1, started=started
    )
    return done, ids


def _top_up(
    tree: Path,
    spec: Spec,
    scratch: Path,
    environ: Mapping[str, str],
    say: Progress,
    *,
    box: sandbox.Boxer | None,
    nodes: dict[str, Tally],
    passes: int,
    started: float,
) -> Result:
    """What pytest-repeat did not repeat runs again, one run per pass."""
    problems: list[str] = []
    while True:
        short = [n for n in spec.nodeids if nodes.get(n, Tally(0, 0)).runs < spec.count]
        if not short:
            break
        say(f"{len(short)} node id(s) pytest-repeat did not repeat: further run {passes}")
        found, trouble = _one_pass(
            tree, short, spec, scratch / f"pass{passes}", environ, repeat=1, box=box
        )
        passes += 1
        problems += trouble
        stuck = [n for n in short if n not in found]
        problems += [f"node id did not run: {n}" for n in stuck]
        nodes = add(nodes, found)
        if trouble or stuck:
            break
    return Result(nodes, tuple(problems), passes, time.monotonic() - started)
