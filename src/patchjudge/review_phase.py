"""The review's mutation phase, in the judge's pytest after the main pass (issue 20).

First, when the plan names one, the differential's second harness (issue 18):
the tests that ran a changed line run again, same seed, in a worker of the
other shape (a script by path serving from a thread, no coverage) over a tree
and home of its own, their events under pytest_plugin.SECOND (`_differential`).

Loaded with `-p patchjudge.review_phase` next to `patchjudge.boundary.standin` when
the gate writes a plan to $PATCHJUDGE_REVIEW. After every property ran, the
chosen mutants (review.choose on what the main pass executed) are compiled
into each changed file's schema (review.site, protocol.schema_tree: each
behind a switch the judge sets in a fresh worker before it imports anything),
which every mutant's worker compiles from the text the judge hands it at its
start: the file on disk stays the original.
The property files are collected again against that worker and only the
node ids that ran the mutant's line are run, without shrink or explain: only
killed or survived is read. Null mutants (sites that change nothing) run among them
in a secret order: a patch that fails its properties whenever it is being
mutated kills one, and the gate voids the kills. Each fate goes to the
gate's channel as a `mutant` event.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from patchjudge import pytest_plugin, review
from patchjudge.boundary import protocol, standin

PLAN_ENV = "PATCHJUDGE_REVIEW"
# One null mutant per this many mutants tried, and at least one.
MUTANTS_PER_NULL = 6
_SESSION = "<session>"

_plan_path = os.environ.pop(PLAN_ENV, None)
_started = time.monotonic()
_main_done = threading.Event()


def _cut_main() -> None:
    """The main pass is still running at the lane's timeout_s: end the process as its deadline
    would, saying so. The process's own deadline carries the review's budget on top, so without
    this a hang would cost both (issue 20)."""
    if _main_done.is_set():
        return
    pytest_plugin.emit("review_phase", main_seconds=time.monotonic() - _started, ran=False)
    os.kill(os.getpid(), signal.SIGKILL)


def _watch_main(plan_path: str) -> None:
    try:
        main_s = float(json.loads(Path(plan_path).read_text(encoding="utf-8"))["main_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return  # no bound here: the process's own deadline still holds
    timer = threading.Timer(main_s, _cut_main)
    timer.daemon = True
    timer.start()


if _plan_path is not None:
    _watch_main(_plan_path)


class _CutOff(Exception):
    """The mutant cannot be run here (the budget ran out, no module): not tried, never killed."""


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    result = yield
    _main_done.set()
    state = standin._state
    if _plan_path is None or state is None:
        return result
    main_seconds = time.monotonic() - _started
    # The run's one worker holds the main pass's coverage until it closes: the choice needs it.
    state.close(standin.RUN)
    if session.testsfailed or session.shouldfail or session.shouldstop:
        pytest_plugin.emit("review_phase", main_seconds=main_seconds, ran=False)
        return result
    try:
        plan = json.loads(Path(_plan_path).read_text(encoding="utf-8"))
        # Its own failure leaves no whole second record: the lane judges those node ids in
        # a pytest of their own, and the mutants still run here.
        with contextlib.suppress(Exception):
            _differential(session, state, plan)
        _phase(session, state, plan)
    except Exception as exc:  # the phase's own failure: the gate runs the mutants the old way
        error = f"{type(exc).__name__}: {exc}"
        pytest_plugin.emit("review_phase", main_seconds=main_seconds, ran=False, error=error)
        return result
    pytest_plugin.emit("review_phase", main_seconds=main_seconds, ran=True)
    return result


def changed_files(plan: dict[str, Any]) -> list[review.ChangedFile]:
    """The plan's changed files, with the statements the gate read (issue 20: read once)."""
    files = []
    for f in plan["files"]:
        changed = frozenset(f["changed"])
        if "statements" not in f:  # a plan without them: read here, as before
            stmts = review.statements(f["text"], changed)
        elif f["statements"] is None:  # the file does not parse
            stmts = None
        else:
            said = f["statements"]
            stmts = review.Statements(
                frozenset(said["lines"]), {int(k): int(v) for k, v in said["first"]}
            )
        files.append(review.ChangedFile(f["path"], f["text"], f["encoding"], changed, stmts))
    return files


def mutable_ran(
    plan: dict[str, Any],
    files: Sequence[review.ChangedFile],
    index: dict[tuple[str, int], frozenset[str]],
) -> bool:
    """Whether a property ran a statement some mutant of the changed lines edits.

    From the statements the gate listed in the plan (`mutable`, issue 20): the
    module is not parsed or walked here unless a mutant has a runner. A plan
    without them: the candidates, as before. A wrong list only skips the phase
    or runs it for nothing: the gate runs any mutant the phase did not name.
    """
    said = [f.get("mutable") for f in plan["files"]]
    if all(isinstance(s, list) for s in said):
        return any(
            index.get((f["path"], int(n)))
            for f, s in zip(plan["files"], said, strict=True)
            for n in s
        )
    return any(index.get((m.path, m.statement)) for f in files for m in review.candidates(f))


def second_nodeids(
    executed: dict[str, dict[str, tuple[int, ...]]],
    files: Sequence[review.ChangedFile],
    inert: dict[str, list[int]],
    collected: Sequence[str],
) -> list[str]:
    """Pure: the node ids that ran a changed line (lanes/properties.second_run_nodeids's rule,
    every property file out of process); a line run at import ("") that binds: not a hit.

    One run at import otherwise ran for every test: all of them (`_differential` then
    checks that no judge file but these modules asked the code for anything at import).
    """
    lines = {f.path: set(f.changed) for f in files}

    def hits(nodeid: str, path: str, ran: Sequence[int]) -> bool:
        wanted = lines.get(path, set()) - (set(inert.get(path, ())) if nodeid == "" else set())
        return bool(wanted & set(ran))

    hit = {n for n, d in executed.items() if any(hits(n, p, r) for p, r in d.items())}
    return sorted(n for n in collected if n in hit or "" in hit)


def replayable(
    executed: dict[str, dict[str, tuple[int, ...]]],
    files: Sequence[review.ChangedFile],
    *,
    inert: dict[str, list[int]],
    askers: set[str],
    nodeids: Sequence[str],
    items: dict[str, pytest.Item],
) -> bool:
    """Whether this process can replay what the second harness must see again.

    A changed line that ran at import ("") ran for the main pass when the code
    was imported, or when a judge file called it. The property modules are
    imported again here (and the code, in the new worker); a conftest or a
    helper is not, so what one computed from the code then is the first
    harness's: a pytest of its own replays it (the lane runs one, as before).
    """
    if not second_nodeids({"": executed.get("", {})}, files, inert, [""]):
        return True
    modules = {os.path.realpath(items[n].path) for n in nodeids}
    return not (askers - modules)


def _differential(session: pytest.Session, state: standin._State, plan: dict[str, Any]) -> None:
    """The second harness, here: what it could not judge, the lane runs in a pytest of its own.

    Every worker started so far is retired: a handle of one a judge module kept
    from import (a conftest's `from calc import total`) refuses, and the test
    that used it is handed back (`stale`) instead of failing for the judge's
    reuse of its process. The main pass's counts and session state are as they were after.
    """
    said = plan.get("differential")
    if not said:
        return
    executed = {n: {p: tuple(sorted(v)) for p, v in d.items()} for n, d in state.executed.items()}
    items = {item.nodeid: item for item in session.items}
    files = changed_files(plan)
    nodeids = second_nodeids(executed, files, said["inert"], list(items))
    if not nodeids or not replayable(
        executed, files, inert=said["inert"], askers=state.askers, nodeids=nodeids, items=items
    ):
        return
    spec = protocol.decode_spec(said["spec"])
    counts = (session.testsfailed, session.shouldfail, session.shouldstop)
    first, tokens = state.spec, state.tokens
    retired = [w for w in standin._started if not w.retired]
    for worker in retired:
        worker.retired = True
    # Its workers are the second's (a failed one's replacement too); its node ids' names too.
    state.spec, state.tokens = spec, {}
    deadline = time.monotonic() + float(said["budget_s"])
    try:
        # Everything the second worker reports at its close is the second record's too.
        with pytest_plugin.second_record():
            try:
                pytest_plugin.emit("start", hypothesis=pytest_plugin._hypothesis_profile())
                stale, timed_out = _second_pass(session, items, nodeids, deadline)
                state.close(standin.RUN)
                pytest_plugin.emit("stale", nodeids=stale)
                pytest_plugin.emit(
                    "finish",
                    exitstatus=int(session.testsfailed != counts[0]),
                    hypothesis=pytest_plugin._hypothesis_profile(),
                    timed_out=timed_out,
                )
            finally:
                state.close(standin.RUN)
    finally:
        state.spec, state.tokens = first, tokens
        for worker in retired:
            worker.retired = False
        session.testsfailed, session.shouldfail, session.shouldstop = counts


def _second_pass(
    session: pytest.Session, items: dict[str, pytest.Item], nodeids: Sequence[str], deadline: float
) -> tuple[list[str], bool]:
    """Each module of `nodeids` collected again and those run, as a pytest of them would."""
    by_module: dict[Path, list[str]] = {}
    for nodeid in nodeids:
        by_module.setdefault(items[nodeid].path, []).append(nodeid)
    stale: list[str] = []
    found: dict[str, pytest.Item] = {}
    fresh: list[tuple[str, pytest.Item]] = []
    saved: dict[str, Any] = {}
    try:
        for _, ids in sorted(by_module.items()):
            module = items[ids[0]].getparent(pytest.Module)
            name = getattr(module.obj, "__name__", None) if module is not None else None
            if module is None or not name:
                stale += ids  # not a module's test: the lane's own pytest runs it
                continue
            saved[name] = sys.modules.pop(name, None)
            seen = standin.STALE[0]
            again = pytest.Module.from_parent(module.parent, path=module.path)
            found = {i.nodeid: i for i in session.genitems(again)}
            if standin.STALE[0] > seen:
                stale += ids
                continue
            fresh += [(n, found[n]) for n in ids if n in found]
        pytest_plugin.emit(
            "collected",
            items=[
                {
                    "nodeid": n,
                    "state": pytest_plugin._state(item),
                    "markers": sorted({m.name for m in item.iter_markers()}),
                }
                for n, item in fresh
            ],
        )
        for nodeid, item in fresh:
            if time.monotonic() >= deadline:
                return stale, True
            seen = standin.STALE[0]
            pytest_plugin._called.discard(nodeid)  # the main pass's call is not this one's
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            if standin.STALE[0] > seen:
                stale.append(nodeid)
        return stale, False
    finally:
        for name, module in saved.items():
            sys.modules.pop(name, None)
            if module is not None:
                sys.modules[name] = module


def _phase(session: pytest.Session, state: standin._State, plan: dict[str, Any]) -> None:
    if int(plan["limit"]) == 0:
        return  # the plan was for the differential alone: [properties] review_mutants = 0
    files = changed_files(plan)
    executed = {n: {p: tuple(sorted(v)) for p, v in d.items()} for n, d in state.executed.items()}
    index = review.node_index(executed, files)
    if not mutable_ran(plan, files, index):
        # No property ran a mutable changed statement: no mutant has a runner, so none
        # would run (the tasks below would be empty). Skips choosing and the mutants'
        # parse checks, a whole-module parse each (issue 20).
        return
    items = {item.nodeid: item for item in session.items}
    chosen = review.choose(
        files,
        plan["seed"],
        plan["limit"],
        executed=lambda m: bool(index.get((m.path, m.statement))),
    )
    tasks = [(m, review.runners(m, index, items)) for m, _ in chosen]
    tasks = [(m, r) for m, r in tasks if r]
    if not tasks:
        return
    # Secret, not seeded: the seed is in the ledger the patch can read (fates do not depend on it).
    rng = secrets.SystemRandom()
    texts = {f.path: f.text for f in files}
    nulls = [
        (review.null_of(m, texts[m.path]), r)
        for m, r in _null_spans(rng, files, index, items, 1 + len(tasks) // MUTANTS_PER_NULL)
    ]
    every = tasks + nulls
    switch = _name(rng, texts.values())
    tokens = _tokens(rng, len(every))
    schemata, legacy = _schemata(every, tokens, switch, texts)
    order = [i for i in range(len(every)) if i not in legacy]
    rng.shuffle(order)
    _without_shrinking()
    deadline = time.monotonic() + float(plan["budget_s"])
    fates = dict.fromkeys(legacy, "legacy")
    for n, i in enumerate(order):
        m, runners = every[i]
        fates[i] = _fate(
            session,
            state,
            items,
            runners,
            schemata=schemata,
            switch=switch,
            token=tokens[i],
            deadline=deadline,
            n=n,
        )
    for i, (m, _) in enumerate(every):
        if review.is_null(m):
            pytest_plugin.emit("null_mutant", fate=fates[i])
        else:
            pytest_plugin.emit("mutant", id=m.id, fate=fates[i])


def _null_spans(
    rng: secrets.SystemRandom,
    files: Sequence[review.ChangedFile],
    index: dict[tuple[str, int], frozenset[str]],
    items: dict[str, pytest.Item],
    count: int,
) -> list[tuple[review.Mutant, tuple[str, ...]]]:
    """Spans for the null mutants: of any candidate a property runs, respellable ones first.

    A null mutant spelled as the original is the one a patch comparing a
    site's branches spots; a comparison respelled (`b > a`) is not.
    """
    texts = {f.path: f.text for f in files}
    # Any candidate a property runs (the chosen ones among them): never none while a mutant runs.
    found = [
        (m, r)
        for f in files
        for m in review.candidates(f)
        if (r := review.runners(m, index, items))
    ]
    respelled = [t for t in found if review.respellable(t[0], texts[t[0].path])]
    rest = [t for t in found if t not in respelled]
    rng.shuffle(respelled)
    rng.shuffle(rest)
    # Only spans a site can hold: a null mutant run the per-mutant way would void an honest
    # patch's kills for want of a run.
    spans: list[tuple[review.Mutant, tuple[str, ...]]] = []
    for m, runners in respelled + rest:
        if len(spans) == count:
            break
        text = texts[m.path]
        if review.site(text, review.null_of(m, text), _name(rng, [text]), "0") is not None:
            spans.append((m, runners))
    return spans


def _without_shrinking() -> None:
    """Re-imported property modules take a profile without shrink and explain: a kill is a kill."""
    from hypothesis import Phase, settings

    settings.register_profile(
        "patchjudge-mutants",
        parent=settings.default,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
    )
    settings.load_profile("patchjudge-mutants")


def _name(rng: secrets.SystemRandom, texts: Any) -> str:
    """A switch name no changed file spells (review.site refuses one that does)."""
    while True:
        name = "_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
        if not any(name in t for t in texts):
            return name


def _schemata(
    every: Sequence[tuple[review.Mutant, tuple[str, ...]]],
    tokens: Sequence[str],
    switch: str,
    texts: dict[str, str],
) -> tuple[tuple[protocol.Schema, ...], set[int]]:
    """Each changed file's schema as every mutant's worker compiles it, and the mutants
    none can hold (run the per-mutant way: `legacy`)."""
    schemata: list[protocol.Schema] = []
    legacy: set[int] = set()
    for path in sorted({m.path for m, _ in every}):
        mine = [i for i, (m, _) in enumerate(every) if m.path == path]
        sites = {i: review.site(texts[path], every[i][0], switch, tokens[i]) for i in mine}
        legacy |= {i for i, s in sites.items() if s is None}
        held = [s for s in sites.values() if s is not None]
        if not review.schema(path, texts[path], switch, held):
            legacy |= set(mine)
        elif held:
            schemata.append((path, texts[path], switch, tuple(held)))
    return tuple(schemata), legacy


def _tokens(rng: secrets.SystemRandom, count: int) -> list[str]:
    found: set[str] = set()
    while len(found) < count:
        found.add("".join(rng.choice("0123456789abcdef") for _ in range(12)))
    return rng.sample(sorted(found), count)


def _fate(
    session: pytest.Session,
    state: standin._State,
    items: dict[str, pytest.Item],
    runners: Sequence[str],
    *,
    schemata: tuple[protocol.Schema, ...],
    switch: str,
    token: str,
    deadline: float,
    n: int,
) -> str:
    """One mutant: a fresh worker a property module, the switch set before any import."""
    by_module: dict[Path, list[str]] = {}
    for nodeid in runners:
        by_module.setdefault(items[nodeid].path, []).append(nodeid)
    try:
        for _, nodeids in sorted(by_module.items()):
            first = items[nodeids[0]]
            if _killed(
                state,
                first,
                nodeids,
                schemata=schemata,
                switch=switch,
                token=token,
                deadline=deadline,
                n=n,
            ):
                return "killed" if time.monotonic() < deadline else "not_tried"
    except _CutOff:
        return "not_tried"
    return "survived"


def _killed(
    state: standin._State,
    first: pytest.Item,
    nodeids: Sequence[str],
    *,
    schemata: tuple[protocol.Schema, ...],
    switch: str,
    token: str,
    deadline: float,
    n: int,
) -> bool:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _CutOff
    key = f"{first.path}#{token}"
    state.switch(key)
    worker = state.dedicate(key)
    _emptied(Path(state.spec.home))
    worker.spec = state.spec._replace(
        home=str(Path(state.spec.home) / secrets.token_hex(4)),  # as the run's (issue 18)
        coverage=(),
        # A mutant that loops is cut off by the budget, as the per-mutant runs were.
        call_timeout_s=min(state.spec.call_timeout_s, max(left, 0.1)),
    )
    worker.schemata = schemata  # cross on the start's stdin: no file of the tree is written
    module = first.getparent(pytest.Module)
    if module is None:  # not a module's test (a doctest file): nothing to collect again
        raise _CutOff
    name = getattr(module.obj, "__name__", None)
    saved = sys.modules.pop(name, None) if name else None
    try:
        builtins = worker.request("import", "builtins")
        worker.request("setattr", builtins, switch, token)
        fresh = pytest.Module.from_parent(module.parent, path=module.path)
        found = {item.nodeid: item for item in _items(fresh)}
        for nodeid in nodeids:
            if time.monotonic() >= deadline:
                raise _CutOff
            item = found.get(nodeid)
            if item is None:
                return True  # collected at head, gone with the mutant: it broke the module
            with _fates_only(item.config):
                reports = runtestprotocol(item, log=False, nextitem=None)
            passed = any(r.when == "call" and r.passed for r in reports)
            if not passed or any(r.failed for r in reports):
                return True
        return False
    except _CutOff:
        raise
    except Exception:  # the mutant broke the import or the worker: the property saw it fail
        return True
    finally:
        state.switch(_SESSION)
        state.modules.pop(key, None)
        mine = state.workers.pop(key, None)
        if mine is not None:
            mine.close()  # never state.close: the mutant's coverage and dunders are not the run's
        if name:
            sys.modules.pop(name, None)
            if saved is not None:
                sys.modules[name] = saved


def _emptied(home: Path) -> None:
    """The folder the workers' homes are made in, emptied for the next mutant's worker.

    The run's worker had its home made in it, alone (standin: `spec.home/<hex>`);
    a mutant's home beside the run's and the earlier mutants' told it apart by
    its parent's listing (red team, session 17). Every earlier worker has
    exited; a link the code left is removed, not followed.
    """
    for entry in list(home.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@contextlib.contextmanager
def _fates_only(config: pytest.Config) -> Iterator[None]:
    """A mutant's failure is read as killed, never shown: no traceback with source (issue 20).

    pytest's short and long styles parse the whole file of every frame of the
    failure (hypothesis's engine, the stand-ins: thousands of lines each) to
    show a statement; the one-line style reads none. The main pass keeps its
    style: its failures are the reasons a gate shows.
    """
    style = config.option.tbstyle
    config.option.tbstyle = "line"
    try:
        yield
    finally:
        config.option.tbstyle = style


def _items(node: pytest.Collector) -> Iterator[pytest.Item]:
    for child in node.collect():
        if isinstance(child, pytest.Item):
            yield child
        elif isinstance(child, pytest.Collector):
            yield from _items(child)
