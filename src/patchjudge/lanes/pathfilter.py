"""pathfilter: did the patch touch the judge, change what nobody mapped, or hide tests?"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from patchjudge import basecache, cache, failure, git, gitattrs, parsed, pathfold, runner, testrun
from patchjudge.lanes import collection, report, suitepass
from patchjudge.paths import Change
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run, generated_wanted

NAME = "pathfilter"
# The visible suite is the tree's own test code, not the oracle: a tree that is
# attrs or pluggy collects with itself, and the AST comparison below keeps a
# collection forged that way from hiding a deleted test (issue 11).
SHADOWING = "the tested tree shadows a judge module"


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


_PARAMS = re.compile(r"\[.*\]$")
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)


def defined_tests(path: str, source: bytes | None) -> frozenset[str]:
    """Pure: the test node ids a file defines in its source, parametrize ids aside.

    What pytest would collect under the judge's ini (`test*` functions,
    `Test*` classes and their `test*` methods, at any nesting of classes),
    read from the AST: no code runs, so nothing can forge it. A file that is
    gone or does not parse defines nothing.
    """
    if source is None:
        return frozenset()
    try:
        tree = parsed.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(_defined(tree.body, path))


def _defined(body: Iterable[ast.stmt], prefix: str) -> Iterable[str]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield f"{prefix}::{node.name}"
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from _defined(node.body, f"{prefix}::{node.name}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            yield from (
                f"{prefix}::{t.id}"
                for t in targets
                if isinstance(t, ast.Name) and t.id.startswith(("test", "Test"))
            )
        elif isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if name.startswith(("test", "Test")):
                    yield f"{prefix}::{name}"
        elif isinstance(node, _BLOCKS):
            for block in ("body", "orelse", "finalbody"):
                yield from _defined(getattr(node, block, []), prefix)
            for handler in getattr(node, "handlers", []):
                yield from _defined(handler.body, prefix)


def source_problems(
    base_collected: Collection[str],
    head_collected: Collection[str],
    base_defined: Collection[str],
    head_defined: Collection[str],
) -> list[str]:
    """Pure: a test collected at base and defined in its source must still be defined at head.

    The node-id rule decides what a deleted test is (a test moved to another
    file or renamed is gone, as `surface_problems` says); this catches the one
    case the collection cannot: a head collection that still lists a test the
    head's source no longer defines (a conftest or plugin forging items).
    """
    head_functions = {_PARAMS.sub("", n) for n in head_collected}
    problems = []
    for function in sorted({_PARAMS.sub("", n) for n in base_collected}):
        gone = function in base_defined and function not in head_defined
        if gone and function in head_functions:
            problems.append(f"visible test deleted from source but still collected: {function}")
    return problems


# Held out (tomlkit, platformdirs): a suite that imports a test-only package
# the code's venv lacks is the commonest base that does not collect.
MISSING_MODULE = "ModuleNotFoundError: No module named "


def _base_fix(said: str) -> str:
    """Pure: the base's collection error with the fix a user can make."""
    if said.startswith(MISSING_MODULE):
        return (
            f"{said} (not installed where the code runs: pin it in constraints/project.txt,"
            " or install it into the --python venv; else fix it at the merge base)"
        )
    return f"{said} (fix it at the merge base)"


def collection_problems(base: Mapping[str, str], head: Mapping[str, str]) -> list[str]:
    """Pure: collection errors (node id -> pytest's text) at base and head, each blamed right.

    A file that does not collect at base and still does not at head is the
    base's fault, said as such; one that fails only at head is the patch's;
    one that fails only at base, the patch fixed (issue 19).
    """
    problems = [
        f"the base does not collect: {n or '<session>'}: {_base_fix(failure.last_line(text))}"
        for n, text in sorted(base.items())
        if n in head
    ]
    problems += [
        f"visible suite at head: {testrun.collection_error(n, text)}"
        for n, text in sorted(head.items())
        if n not in base
    ]
    return problems


def uncollected_base_problems(
    base_defined: Collection[str], head_collected: Collection[str]
) -> list[str]:
    """Pure: tests a file that did not collect at base defines (AST) must be collected at head."""
    head_functions = {_PARAMS.sub("", n) for n in head_collected}
    return [
        f"visible test gone: {t} (its file did not collect at base: read from its source)"
        for t in sorted(base_defined)
        if t not in head_functions
    ]


def touched(files: Iterable[str], changes: Iterable[Change]) -> set[str]:
    """Pure: those of `files` the patch changed, under either name of a rename or copy.

    A file the diff does not name is the same blob at base and head: it
    defines the same tests on both sides, so none of them can be "deleted
    from source" there, and its source need not be read twice (issue 20).
    """
    named = {p for c in changes for p in c.sides()}
    return {f for f in files if f in named}


def defined_at(run: Run, rev: str, files: Iterable[str]) -> set[str]:
    """The tests `files` define at `rev`, read from git objects (no checkout the code touched)."""
    found: set[str] = set()
    for path in sorted(set(files)):
        found |= defined_tests(path, git.show(run.repo, rev, path))
    return found


def _plan(run: Run, tree: Path, paths: tuple[str, ...], which: str = "head") -> testrun.Plan:
    return testrun.Plan(
        tree=tree,
        args=paths,
        conftest_roots=run.ledger.suite.paths,
        pythonpath=run.ledger.gate.pythonpath,
        plugins=run.ledger.suite.plugins,
        timeout_s=run.ledger.suite.timeout_s,
        collect_only=True,
        python=run.code.python,
        base=which == "base",
    )


def collect_suite(run: Run, which: str, scratch: Path) -> tuple[testrun.TestRun, tuple[str, ...]]:
    """The visible suite collected at `which` (head or base), its own conftests loaded."""
    tree = run.materialize(scratch / "tree", which)
    paths = tuple(p for p in run.ledger.suite.paths if (tree / p).exists())
    if not paths:
        return testrun.TestRun(0, False, True, True, {}, {}, {}, (), 0), paths
    return collection(run, which, _plan(run, tree, paths, which), scratch)[0], paths


def collect_head(run: Run, scratch: Path) -> tuple[testrun.TestRun, str]:
    """The head's collection; in a gate that runs the suite serially, that run's (issue 20).

    The second value says which: "the suite's run" (collected and run in
    one pytest, the freeze lane reads the same pass) or "collected". Only
    where the run's plan is pathfilter's own but for running the tests
    (suitepass.shareable) and its collection is clear of any doubt; else
    pathfilter collects on its own, as a lane run alone or an unboxed gate does.
    """
    # Boxed only: unboxed, the walk around each lane tells whose tests wrote what.
    boxed_gate = run.shared is not None and run.isolation == "sandbox"
    if boxed_gate and suitepass.planned(run) and suitepass.serial(run):
        tree = run.materialize(scratch / "pass" / "tree", "head")
        spec, paths = suitepass.spec_for(run, tree)
        if paths and suitepass.shareable(_plan(run, tree, paths), spec, paths):
            first, _ = suitepass.head_pass(run, tree, spec, paths, scratch / "pass" / "run")
            found = suitepass.collection_of(first)
            if found is not None:
                return found, "the suite's run"
    return collect_suite(run, "head", scratch / "own")[0], "collected"


def collect_base(run: Run, scratch: Path) -> tuple[testrun.TestRun, tuple[str, ...], str]:
    """The base's collection, from the judge's cache when it holds this very one (issue 20).

    The third value says where it came from: hit, miss (collected, then kept
    when worth keeping) or off (no cache for this run: unboxed or turned off).
    """
    directory = cache.placement(run.environ, run.repo, run.isolation)
    if directory is None:
        return (*collect_suite(run, "base", scratch), "off")
    # The suite paths are the tree's (which of them exist): the key holds the tree.
    key = basecache.key(
        entries=run.base_entries,
        ledger_sha256=run.ledger.sha256,
        plan=_plan(run, Path(), (), "base"),
        judge=basecache.judge_digest(),
        interpreter=basecache.interpreter(
            run.code,
            basecache.shadowed(run.base_entries, run.ledger.gate.pythonpath),
            basecache.covered(run.base_entries, run.ledger.gate.pythonpath),
        ),
        environ=run.environ,
    )
    found = basecache.decode(cache.read(directory, basecache.KIND, key), scratch)
    if found is not None:
        return (*found, "hit")
    base, paths = collect_suite(run, "base", scratch)
    payload = basecache.encode(base, paths, scratch)
    if payload is not None:
        cache.write(directory, basecache.KIND, key, payload)
    return base, paths, "miss"


def judges_copies(shadowed: Sequence[str]) -> list[str]:
    """Pure: top-level names the tree provides whose tests run the runner's copy instead.

    Only what the runner keeps (pytest, hypothesis, coverage: one copy a
    process, the one that runs): every other judge dependency, pluggy or
    iniconfig, is handed to the tree's tests (`runner.tree_owned`), and the
    standard library stays the standard library's. Without `--python` a tree
    that is pytest is tested against the judge's pytest (issue 19).
    """
    names = runner.top_level(Path(p).name for p in shadowed)
    kept = names & runner.RUNNER_KEEPS - {"patchjudge"}  # a tree that is patchjudge gets its own
    return sorted(n for n in kept if n not in sys.stdlib_module_names)


def attribute_problems(run: Run) -> list[str]:
    """Attributes the patch sets that change a checkout's or an archive's bytes (gitattrs)."""
    if not gitattrs.touches_attributes(p for c in run.changes for p in c.sides()):
        return []
    paths = [e.path for e in run.head_tree if e.kind == "blob"]
    # A directory's own path too: `git archive` leaves it out whole on export-ignore.
    # One check-attr a revision for both (each call is a read-tree and a check-attr).
    dirs = gitattrs.directories(paths)
    head = git.checkout_attributes(run.repo, run.head, paths + dirs, gitattrs.CHECKED)
    base = git.checkout_attributes(run.repo, run.merge_base, paths + dirs, gitattrs.CHECKED)
    return gitattrs.problems(base, head, frozenset(dirs))


def fold_problems(run: Run) -> list[str]:
    """Paths the patch adds that a case-insensitive clone writes over another (pathfold)."""
    new = [c.new_path for c in run.changes if c.new_path is not None and c.status in "ACR"]
    return pathfold.problems((e.path for e in run.head_tree), new) if new else []


def own_build_problems(run: Run) -> list[str]:
    """The head's build in the code's venv must ship the tree's modules (ownbuild)."""
    if run.code.python is None or not run.code.site:
        return []
    from patchjudge import ownbuild, versionfile

    installed = ownbuild.installed_files(run.code.site)
    if not installed:
        return []
    tree = {e.path: "" if e.is_symlink else e.sha for e in run.head_tree if e.kind == "blob"}
    # Every version file the head's pyproject declares: the build writes it whether
    # or not the package imports it (iniconfig), so the tree never holds it.
    pyproject = git.show(run.repo, run.head, "pyproject.toml")
    generated = generated_wanted(pyproject, tree, run.ledger.judge_paths())
    return ownbuild.problems(
        installed, tree, run.ledger.gate.pythonpath, generated, versionfile.code_in
    )


def run(run: Run) -> LaneReport:
    problems = list(run.classification.problems)
    problems += [
        f"generated file {path} holds code, not data ({why}): the review cannot read it;"
        " keep its template (pyproject.toml) to the version"
        for path, why in sorted(run.refused_generated.items())
    ]
    problems += own_build_problems(run)
    problems += attribute_problems(run)
    problems += fold_problems(run)
    with run.scratch() as base_dir, run.scratch() as head_dir:
        base, base_paths, base_origin = collect_base(run, base_dir)
        head, head_origin = collect_head(run, head_dir)
    # The base's too: the head's collection runs the patch's code, which could
    # empty its own list; the merge base's tree is the adoption's.
    shadowed = [*base.shadowed, *head.shadowed]
    copies = judges_copies(shadowed) if run.code.python is None else []
    if copies:
        print(f"patchjudge: {runner.judges_copy_reason(copies)}", file=sys.stderr)
    timeout = run.ledger.suite.timeout_s
    # Collection errors at base are the base's own; anything else there means
    # the surface cannot be compared at all, which is no pass either.
    base_broken = [
        p
        for p in testrun.run_problems(base, timeout)
        if not p.startswith(("collection error", SHADOWING))
    ]
    problems += [f"visible suite at base: {p}" for p in base_broken]
    problems += [
        f"visible suite at head: {p}"
        for p in testrun.run_problems(head, timeout)
        if not p.startswith(("collection error", SHADOWING))
    ]
    problems += collection_problems(base.collect_errors, head.collect_errors)
    problems += surface_problems(base.collected, head.collected)
    # A base file that did not collect has no node ids to compare: its source does.
    unread = {n.split("::", 1)[0] for n in base.collect_errors if n} - set(head.collect_errors)
    problems += uncollected_base_problems(defined_at(run, run.merge_base, unread), head.collected)
    files = touched({n.split("::", 1)[0] for n in base.collected}, run.changes)
    problems += source_problems(
        base.collected,
        head.collected,
        defined_at(run, run.merge_base, files),
        defined_at(run, run.head, files),
    )
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
        # Where the base's collection came from: the judge's cache or a run (issue 20).
        "cache": {"base_collection": base_origin},
        # Where the head's came from: its own collection or the suite's run (issue 20).
        "head_collection": head_origin,
    }
    if copies:
        details["judges_copy"] = copies
    status = Status.FAIL if problems else Status.PASS
    return report(run, NAME, status, list(dict.fromkeys(problems)), details)
