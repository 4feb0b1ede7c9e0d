"""The review's edge (issue 14): the diff's changed sources from git, and the mutant runs."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from patchjudge import basecache, cache, charmap, git, probes, review, testrun
from patchjudge.paths import SYMLINK, Change, any_match, symlink_target
from patchjudge.workspace import Run

_REGULAR = ("100644", "100755")


class PropertyRunner(Protocol):
    """lanes.properties.run_properties, passed in (it imports this module)."""

    def __call__(
        self,
        run: Run,
        args: Sequence[str] | None = None,
        *,
        edit: Callable[[Path], None] | None = None,
        coverage: Sequence[str] = (),
    ) -> testrun.TestRun: ...


def on_pythonpath(path: str, pythonpath: Sequence[str]) -> bool:
    for entry in pythonpath:
        root = entry.rstrip("/")
        if root in ("", ".") or path.startswith(root + "/"):
            return True
    return False


def changed_files(run: Run) -> list[review.ChangedFile]:
    """The .py files on the pythonpath the patch adds or changes, with their changed lines.

    The judge's files and the visible suite are not code under test. A file
    new at head (or a copy, or a symlink turned file) is changed throughout.
    """
    return _read_changed(run, _wanted(run, on_path=True))


def unlisted_changes(run: Run) -> list[Change]:
    """The .py files the patch adds or changes off the pythonpath or in the visible suite,
    and the files at the ends of the symlinks it adds or changes (any name).

    Not code under test by where they are; code under test once a property's
    run executes them (`reviewed_unlisted`): a changed line of the library
    that puts `tools/` on `sys.path` and imports from there would otherwise
    hide what it imports from the review (red team, session 10). Only their
    paths before the run: a file is read from git once the run executed it.
    """
    unique = {str(c.new_path): c for c in [*_wanted(run, on_path=False), *_linked(run)]}
    return sorted(unique.values(), key=lambda c: str(c.new_path))


def ran_in(
    changes: Sequence[Change], executed: Mapping[str, Mapping[str, Sequence[int]]]
) -> list[Change]:
    """Pure: the changes whose file a property's run (or the import before it) executed."""
    ran = {path for per_node in executed.values() for path, lines in per_node.items() if lines}
    return [c for c in changes if c.new_path in ran]


def reviewed_unlisted(
    run: Run, unlisted: Sequence[Change], executed: Mapping[str, Mapping[str, Sequence[int]]]
) -> list[review.ChangedFile]:
    """The unlisted files a property's run executed a line of: reviewed as the rest."""
    return _read_changed(run, ran_in(unlisted, executed))


def _listed(run: Run, path: str) -> bool:
    """A .py file on the pythonpath outside the visible suite: `changed_files` reads it."""
    suite = [f"{p.rstrip('/')}/**" for p in run.ledger.suite.paths]
    return (
        path.endswith(".py")
        and on_pythonpath(path, run.ledger.gate.pythonpath)
        and not any_match(suite, path)
    )


def _wanted(run: Run, *, on_path: bool) -> list[Change]:
    judge = run.ledger.judge_paths()
    return [
        c
        for c in run.changes
        if c.new_path is not None
        and c.new_path.endswith(".py")
        and c.new_mode in _REGULAR
        and not any_match(judge, c.new_path)
        and _listed(run, c.new_path) == on_path
    ]


def linked_targets(links: Mapping[str, str], limit: int = 40) -> list[str]:
    """Pure: where each symlink (path -> its target) ends, through the others; repo-relative.

    A module on the pythonpath that is a symlink runs the file at the end of
    the chain, whatever that file is called: the review reads it there.
    """
    found = []
    for link in sorted(links):
        path: str | None = link
        for _ in range(limit):
            if path is None or path not in links:
                break
            path = symlink_target(path, links[path])
        if path is not None and path not in links:
            found.append(path)
    return sorted(set(found))


def _linked(run: Run) -> list[Change]:
    """The files at the ends of the symlinks the patch adds or changes, as changes to review."""
    links = {
        c.new_path: os.fsdecode(git.show(run.repo, run.head, c.new_path) or b"")
        for c in run.changes
        if c.new_path is not None and c.new_mode == SYMLINK
    }
    if not links:
        return []
    judge = run.ledger.judge_paths()
    by_path = {c.new_path: c for c in run.changes if c.new_path is not None}
    regular = {e.path: e.mode for e in git.ls_tree(run.repo, run.head) if e.mode in _REGULAR}
    found = []
    for target in linked_targets(links):
        if target not in regular or any_match(judge, target) or _listed(run, target):
            continue
        change = by_path.get(target)
        if change is None or change.new_mode not in _REGULAR:
            # Unchanged, but importable as code only now: changed throughout.
            change = Change("A", "000000", regular[target], None, target)
        found.append(change)
    return found


def _read_changed(run: Run, wanted: Sequence[Change]) -> list[review.ChangedFile]:
    if not wanted:
        return []
    head = {e.path: e for e in git.ls_tree(run.repo, run.head)}
    base = {e.path: e for e in run.base_entries}
    directory = cache.placement(run.environ, run.repo, run.isolation)

    def read(text: str, changed: frozenset[int]) -> review.Statements | None:
        return cached_statements(directory, text, changed)

    found = []
    for change in sorted(wanted, key=lambda c: str(c.new_path)):
        assert change.new_path is not None
        new = head.get(change.new_path)
        data = git.show(run.repo, run.head, change.new_path)
        if new is None or data is None:
            continue
        old = base.get(change.old_path or "") if change.status in "MR" else None
        if old is not None and old.kind == "blob" and old.mode in _REGULAR:
            lines: frozenset[int] = review.hunk_lines(git.diff_blobs(run.repo, old.sha, new.sha))
        else:
            lines = frozenset(range(1, review.git_line_count(data) + 1))
        if (f := review.changed_file(change.new_path, data, lines, read)) is not None:
            found.append(f)
    return found


STATEMENTS = "statements"  # the cache's kind


@functools.cache
def coverage_parser() -> str | None:
    """SHA-256 of coverage.py's release and parser, read from the files, not imported."""
    spec = importlib.util.find_spec("coverage")  # a top-level package: nothing runs
    if spec is None or spec.origin is None:
        return None
    digest = hashlib.sha256()
    for name in ("version.py", "parser.py"):
        try:
            digest.update(Path(spec.origin).with_name(name).read_bytes())
        except OSError:
            return None
    return digest.hexdigest()


def cached_statements(
    directory: Path | None, text: str, changed: frozenset[int]
) -> review.Statements | None:
    """`review.statements(text, changed)`, kept in the judge's cache (issue 20).

    Importing coverage.py costs a gate process ~0.1 CPU-s, more than its parse of
    a file. The answer depends on the text, the changed lines, coverage's parser,
    the interpreter's `ast` and the judge's code: the key holds all five. `directory` is None where
    cache.py allows no cache (an unboxed run): then it is computed as before.
    """
    parser = coverage_parser()
    if directory is None or parser is None:
        return review.statements(text, changed)
    key = {
        "text_sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        "changed": ",".join(map(str, sorted(changed))),
        "coverage": parser,
        "python": sys.version,
        # The judge's own reading of them (`analysed_lines`, `_blanked`): an upgrade
        # of patchjudge that changes it must not take an older version's answer.
        "judge": basecache.judge_digest(),
    }
    found = cache.read(directory, STATEMENTS, key)
    if found is not None:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            return review.statements_from_json(json.loads(found))
    stmts = review.statements(text, changed)
    doc = json.dumps(review.statements_to_json(stmts), sort_keys=True).encode()
    cache.write(directory, STATEMENTS, key, doc)
    return stmts


def probe_hits(run: Run, changed: Sequence[review.ChangedFile]) -> list[str]:
    """The probes of the judge the patch adds on its changed lines (issue 18), `path:line: what`.

    The base's side is the file the change came from (a modification or a
    rename): a probe the base already had on the same line is not the patch's.
    """
    origin = {c.new_path: c.old_path for c in run.changes if c.status in "MR" and c.old_path}
    found: list[str] = []
    for f in changed:
        old = origin.get(f.path)
        data = git.show(run.repo, run.merge_base, old) if old else None
        decoded = review.decode(data) if data is not None else None
        base = decoded[0] if decoded is not None else None
        found += probes.changed_hits(f.path, base, f.text, f.changed)
    return found


def _limited(run: Run, seconds: int) -> Run:
    """The run with a shorter property deadline: what is left of the review's budget."""
    props = dataclasses.replace(run.ledger.properties, timeout_s=seconds)
    return dataclasses.replace(run, ledger=dataclasses.replace(run.ledger, properties=props))


def _writer(path: str, data: bytes) -> Callable[[Path], None]:
    def edit(tree: Path) -> None:
        target = tree / path
        if not target.resolve().is_relative_to(tree.resolve()):
            raise AssertionError(f"unreachable: {path} leaves the scratch tree")
        target.unlink()
        target.write_bytes(data)

    return edit


@dataclasses.dataclass(frozen=True)
class _Task:
    """One mutant's run, as data: it crosses to a worker process."""

    path: str
    data: bytes
    nodeids: tuple[str, ...]
    deadline: float  # time.monotonic(), the same clock in every process on the host


def _attempt(run: Run, runner: PropertyRunner, task: _Task) -> review.Fate:
    left = task.deadline - time.monotonic()
    if left <= 0:
        return review.Fate.NOT_TRIED
    timeout_s = run.ledger.properties.timeout_s
    limit = min(timeout_s, max(1, math.ceil(left)))
    edit = _writer(task.path, task.data)
    outcome = runner(_limited(run, limit), task.nodeids, edit=edit)
    return review.fate(outcome, task.nodeids, cut_off=limit < timeout_s)


def _start_worker(tables: dict[str, bytes]) -> None:
    charmap.provide(tables)


def try_mutants(
    run: Run,
    changed: Sequence[review.ChangedFile],
    result: testrun.TestRun,
    runner: PropertyRunner,
    *,
    cpus: int | None = None,
    phased: bool = False,
) -> tuple[dict[str, Any] | str, list[tuple[review.Mutant, review.Fate]]]:
    """Run the chosen mutants against the properties that executed their lines.

    Returns the review's summary and each mutant's fate (which lines the
    judge saw a mutant die on: review.unexercised). `phased`: the run held
    the mutation phase (review_phase.py), whose fates are read from it.

    Two at a time where there are two cores, each pair member in a worker
    process of its own: proc.run reaps whatever the tested code leaves
    behind as strays among this process's children, so two runs from two
    threads of one process would kill each other's pytest.
    `[properties] review_timeout_s` is the budget for all of them: a mutant
    not started by then, or cut off by it, is not tried, never killed.
    """
    settings = run.ledger.properties
    if settings.review_mutants == 0:
        return "off: [properties] review_mutants = 0", []
    index = review.node_index(result.executed, changed)
    chosen = review.choose(
        changed,
        settings.seed,
        settings.review_mutants,
        executed=lambda m: bool(index.get((m.path, m.statement))),
    )
    # Only where the gate asked for the phase (every property file out of process): in
    # process, the tested code shares pytest's process and could write these events.
    phase = phased and result.review_phase.get("ran") is True
    deadline = time.monotonic() + settings.review_timeout_s
    tasks = [
        _Task(m.path, data, review.runners(m, index, result.collected), deadline)
        for m, data in chosen
    ]
    # No property runs the line: nothing can kill the mutant, no run needed.
    fates = {i: review.Fate.SURVIVED for i, t in enumerate(tasks) if not t.nodeids}
    if phase:
        # The mutation phase ran them in the judge's pytest; a site it could not compile in
        # (or a mutant it did not name) runs the per-mutant way, after it.
        said = {m.id: result.mutants.get(m.id, "legacy") for m, _ in chosen}
        fates.update(
            (i, review.Fate(said[m.id]))
            for i, (m, _) in enumerate(chosen)
            if i not in fates and said[m.id] in _FATES
        )
    todo = [i for i, t in enumerate(tasks) if i not in fates]
    workers = 2 if (cpus if cpus is not None else os.cpu_count() or 1) >= 2 else 1
    if workers > 1 and len(todo) > 1 and not phase:
        # Here, not at the top (issue 20): only the per-mutant runs use a pool, and
        # concurrent.futures brings logging and multiprocessing into every lane process.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        portable = dataclasses.replace(run, environ=dict(run.environ))
        context = multiprocessing.get_context("spawn")  # fork would copy this process's threads
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_worker, initargs=(charmap.prefetched(),)
        ) as pool:
            futures = {i: pool.submit(_attempt, portable, runner, tasks[i]) for i in todo}
            for i, future in futures.items():
                try:
                    fates[i] = future.result()
                except BrokenProcessPool:  # a worker died (OOM, a signal): untried, not killed
                    fates[i] = review.Fate.NOT_TRIED
    else:
        fates.update((i, _attempt(run, runner, tasks[i])) for i in todo)
    results = [(m, fates[i]) for i, (m, _) in enumerate(chosen)]
    kills = any(f is review.Fate.KILLED for _, f in results)
    if phase and (why := void(result.null_mutants, kills=kills)):
        # The kills are void: no line counts as exercised by them (review.unexercised).
        return why, [
            (m, review.Fate.NOT_TRIED if f is review.Fate.KILLED else f) for m, f in results
        ]
    return review.mutants_summary(results), results


_FATES = frozenset(f.value for f in review.Fate)


def void(null_fates: Sequence[str], *, kills: bool = True) -> str | None:
    """Pure: why the mutation phase's kills count for nothing, from its null mutants' fates.

    A null mutant changes nothing: killed, the code behaves otherwise when it
    is being mutated (issue 18: a self-check that fails every property then);
    not reached within the budget, nothing vouches for the kills before it
    (with no kill, there is nothing to void: the summary says what ran).
    """
    if "killed" in null_fates:
        return (
            "not tried: the kills are void: a null mutant (one that changes nothing) was killed; "
            "the code under test fails its properties when it is being mutated"
        )
    if kills and any(f != "survived" for f in null_fates):
        return (
            "not tried: the kills are void: a null mutant was not run within "
            "[properties] review_timeout_s; raise it so every mutant runs"
        )
    return None
