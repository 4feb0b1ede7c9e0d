"""The visible suite at head, collected and run in one pytest, once a gate (issue 20).

The freeze lane runs the suite at head; pathfilter collects it at head. Where
the gate runs it serially (one pytest collects and runs, as bare `pytest
tests` does) and pathfilter's plan is that run's own but for running the
tests, the run's collection is pathfilter's: one pytest start and one
collection of the whole suite fewer. The node ids then come from the very
process whose outcomes the freeze lane reads, under the judge's ini, plugin
and conftest rules, which nothing in the patch chooses (see `shareable`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from patchjudge import bytecode, cache, git, repeat, testrun, treepyc
from patchjudge.config import Ledger
from patchjudge.paths import under
from patchjudge.workspace import Run

SHADOWING = "the tested tree shadows a judge module"


def planned(run: Run) -> bool:
    """Whether this run runs the visible suite at head at all (the freeze lane's rule)."""
    return run.ledger.suite.run and (run.forces("freeze") or run.forces("properties"))


def suite_spec(
    ledger: Ledger, tree: Path, python: str | None
) -> tuple[repeat.Spec, tuple[str, ...]]:
    """How the visible suite runs in `tree`, and which of its paths the tree has.

    One place for the freeze lane's run at head, pathfilter's shared pass and
    init's run at the adoption commit (issue 19): the same conftests, plugins,
    seed, deadline, interpreter.
    """
    spec = repeat.Spec(
        nodeids=(),
        count=1,
        conftest_roots=ledger.suite.paths,
        pythonpath=ledger.gate.pythonpath,
        plugins=ledger.suite.plugins,
        seed=ledger.properties.seed,
        timeout_s=ledger.suite.timeout_s,
        python=python,
    )
    paths = tuple(p for p in ledger.suite.paths if (tree / p).exists())
    if not uses_hypothesis(_sources(tree, paths)):
        # The judge's hypothesis plugin imports hypothesis and its own
        # dependencies into the tested process, where the tree may be one
        # of them (sortedcontainers, attrs): loaded only for a suite that uses it.
        spec = dataclasses.replace(spec, seed=None)
    return spec, paths


def spec_for(run: Run, tree: Path) -> tuple[repeat.Spec, tuple[str, ...]]:
    """The suite's settings and the suite paths `tree` (a head tree) holds."""
    return suite_spec(run.ledger, tree, run.code.python)


def serial(run: Run) -> bool:
    """Whether the suite runs without xdist, judged before it is collected.

    Counted only where the count decides: a whole number of workers or one
    CPU decides alone. Then from the `def test…` lines of its files at head
    (git objects, no code runs, no parse): parametrization can make more, a
    helper named so fewer, which only costs pace, not a check.
    """
    setting = run.ledger.flakes.workers
    cpus = os.cpu_count()
    if repeat.resolve_workers(setting, repeat.AUTO_XDIST_MIN_RUNS, cpus) == 0:
        return True
    if repeat.resolve_workers(setting, 0, cpus) != 0:
        return False
    paths = run.ledger.suite.paths
    files = [e.path for e in run.head_tree if under(e.path, paths) and is_test_file(e.path)]
    estimate = estimated_tests(git.show(run.repo, run.head, f) or b"" for f in sorted(files))
    return repeat.resolve_workers(setting, estimate, cpus) == 0


def head_pass(
    run: Run, tree: Path, spec: repeat.Spec, paths: tuple[str, ...], scratch: Path
) -> tuple[repeat.FirstPass, bool]:
    """The suite collected and run once in `tree`, or the pass an earlier lane of the gate made.

    The second value says it was shared. Keyed by the settings and paths:
    every lane's head tree is made from the same entries.
    """

    def compute() -> repeat.FirstPass:
        tree_bytecode(run, tree, paths)
        return repeat.first_pass(
            tree, paths, spec, scratch, run.environ, box=run.box, tolerated=(SHADOWING,)
        )

    value, shared = run.once(("suite_pass", spec, paths), compute)
    return cast(repeat.FirstPass, value), shared


def tree_bytecode(run: Run, tree: Path, paths: Iterable[str]) -> bytecode.Tally | None:
    """The tree's bytecode, the judge's, written before the suite's pytest starts; None: not.

    The pass runs with bytecode writing off (-B), so each gate compiled the
    tree's modules and rewrote its test files' asserts again, where a bare
    `pytest tests` reuses its `__pycache__`: ~0.3 CPU-s of more-itertools'
    2.4 s suite (issue 20). As the flakes lane does (treepyc.py): only boxed,
    where the judge's cache is, and for the judge's own interpreter.
    """
    directory = cache.placement(run.environ, run.repo, run.isolation)
    if directory is None or run.code.python is not None:
        return None
    return treepyc.provide(tree, [*run.ledger.gate.pythonpath, *paths], directory)


def earlier_pass(run: Run) -> tuple[repeat.Spec, tuple[str, ...], repeat.FirstPass] | None:
    """The suite's pass an earlier lane of this gate made, with its settings and paths.

    Its key was computed by `spec_for` on a fresh head tree of this run, made
    from the same entries and generated files as any other: what a tree made
    now would give. So the freeze lane need not make a tree (40,000 files,
    issue 20) only to learn the key. None when there is not exactly one.
    """
    if run.shared is None:
        return None
    found = run.shared.earlier("suite_pass")
    if len(found) != 1:
        return None
    key, value = found[0]
    if not isinstance(key, tuple) or len(key) != 3:
        return None
    _, spec, paths = key
    return cast(repeat.Spec, spec), cast(tuple[str, ...], paths), cast(repeat.FirstPass, value)


def shareable(collect: testrun.Plan, spec: repeat.Spec, paths: tuple[str, ...]) -> bool:
    """Pure: whether the suite's run collects exactly as `collect` (pathfilter's plan) does.

    The same plan but for `--collect-only`: the same ini, conftest roots,
    pythonpath, plugins and interpreter, and no hypothesis plugin or seed
    in either (the head's files decide whether the run loads it, and the
    base was collected without).
    """
    run_as_collection = repeat.collect_plan(spec, Path(), paths)
    return run_as_collection == dataclasses.replace(collect, tree=Path())


def collection_of(first: repeat.FirstPass) -> testrun.TestRun | None:
    """The pass's collection, when nothing but collection errors or shadowing clouds it.

    A pass that timed out, did not finish, or whose outcomes or channel
    show tampering gives none: pathfilter then collects on its own, as it
    would without the gate, and the freeze lane reports the run.
    """
    if all(p.startswith(("collection error", SHADOWING)) for p in first.problems):
        return first.collected
    return None


def is_test_file(path: str) -> bool:
    """Pure: the judge's ini `python_files = test_*.py *_test.py`."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


_TEST_DEF = re.compile(rb"^[ \t]*(?:async[ \t]+)?def[ \t]+test", re.MULTILINE)


def estimated_tests(sources: Iterable[bytes]) -> int:
    """Pure: about how many test functions `sources` define: their `def test…` lines."""
    return sum(len(_TEST_DEF.findall(source)) for source in sources)


def uses_hypothesis(sources: Iterable[bytes]) -> bool:
    """Pure: whether any of the suite's files names hypothesis (an import, a plugin)."""
    return any(b"hypothesis" in source for source in sources)


def _sources(tree: Path, paths: Iterable[str]) -> Iterable[bytes]:
    for path in paths:
        root = tree / path
        for file in [root] if root.is_file() else sorted(root.rglob("*.py")):
            if file.is_file() and not file.is_symlink():
                yield file.read_bytes()
