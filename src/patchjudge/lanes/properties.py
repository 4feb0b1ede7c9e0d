"""properties: do the base's property tests hold against the head's code?"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import io
import json
import secrets
import shutil
import sys
import sysconfig
import tempfile
import tokenize
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from patchjudge import (
    charmap,
    codeenv,
    failure,
    git,
    parsed,
    review,
    review_run,
    seed,
    testrun,
)
from patchjudge.boundary import launcher, protocol, sandbox
from patchjudge.config import PropertiesSettings
from patchjudge.lanes import not_forced, report
from patchjudge.paths import under, within
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "properties"
MIN_LINES = 8
ORACLE_ENV = protocol.ORACLE_ENV  # read by standin.py in the judge's pytest
REVIEW_ENV = "PATCHJUDGE_REVIEW"  # read by review_phase.py in the judge's pytest
# The judge's test tools (standin.JUDGE_TOOLS): never the code under test.
TOOLS = frozenset({"pytest", "_pytest", "hypothesis", "coverage"})
LEDGER_REASON = "listed in [properties] in_process"


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def thin_reason(path: str, source: bytes) -> str | None:
    """Pure: why a property file cannot be a judge (SPEC: under 8 lines, no assert/raise)."""
    try:
        tree = parsed.parse(source)
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
    # The process had the review's budget on top (review_phase.py): the main pass still has its
    # own, and the phase's plugin ends the process when the main pass outlives it.
    if float(run.review_phase.get("main_seconds", 0)) >= settings.timeout_s:
        return [f"timed out after {settings.timeout_s:g} s"], {}
    problems += [
        f"property module not importable: {nodeid}: {reason}"
        for nodeid in sorted(run.collect_errors)
        if (reason := worker_reason(run, nodeid, "collect"))
    ]
    grouped = run.by_nodeid()
    passed, failed = [], []
    for nodeid in run.collected:
        outcomes = grouped.get(nodeid, [])
        bad = [o for o in outcomes if o.outcome == "failed"]
        skipped = [o for o in outcomes if o.outcome == "skipped"]
        if bad:
            falsifying = [f for o in bad for f in o.falsifying]
            worker = worker_reason(run, nodeid, bad[0].when)
            when = "" if bad[0].when == "call" else f" in {bad[0].when}"
            problems.append(
                f"property failed{when}: {nodeid}: {worker}"
                if worker
                else failure.reason(nodeid, bad[0].when, bad[0].longrepr, falsifying)
            )
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


def worker_reason(run: testrun.TestRun, nodeid: str, when: str) -> str:
    """Pure: why the oracle's worker could not answer in that phase (or ""), from the judge's
    own record: a property's text that looks like one is the property's text."""
    found = run.worker_failures.get((nodeid, when))
    return "" if found is None else failure.worker_text(*found)


def needs_process(source: bytes, judge: Collection[str]) -> str | None:
    """Pure: why a property file must share the tested code's process (its AST), or None.

    Decided from the base's file alone, before any code runs (issue 17): a
    decorator, base class or metaclass of the code under test applied to a
    class the file defines needs the class whole in the code's process, and
    a weak reference would watch a stand-in, hypothesis draws from a strategy
    in its own process (one the library builds is a handle out of process),
    and the exact type of a library object is its stand-in's class. "The code under test" is any
    absolute import that is not the standard library, a test tool or one of
    the judge's own modules (`judge`), so nothing the head adds changes it.
    """
    try:
        tree = parsed.parse(source)
    except (SyntaxError, ValueError):
        return None
    library: set[str] = set()
    hypothesis: set[str] = set()
    standard: set[str] = set()
    judge_side: set[str] = set()
    dotted: dict[str, str] = {}  # a name the file's imports bind -> what it names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:  # `import os.path` binds os; `import os.path as p`, os.path
                dotted[a.asname or a.name.partition(".")[0]] = (
                    a.name if a.asname else a.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            dotted.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        roots: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            roots = [
                (a.asname or a.name.partition(".")[0], a.name.partition(".")[0]) for a in node.names
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots = [(a.asname or a.name, node.module.partition(".")[0]) for a in node.names]
        for bound, module in roots:
            if module == "weakref":
                line = getattr(node, "lineno", 0)
                return f"imports weakref (line {line}): a weak reference would watch a stand-in"
            if module not in sys.stdlib_module_names and module not in TOOLS | set(judge):
                library.add(bound)
            if module == "hypothesis":
                hypothesis.add(bound)
            if module in sys.stdlib_module_names:
                standard.add(bound)
            if module in sys.stdlib_module_names or module in TOOLS | set(judge):
                judge_side.add(bound)
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)), key=lambda n: n.lineno
    ):
        uses = [
            *(("decorated with", d) for d in node.decorator_list),
            *(("subclasses", b) for b in node.bases),
            *(("has the metaclass", k.value) for k in node.keywords),
        ]
        for how, expr in uses:
            if _root_name(expr) in library:
                return (
                    f"class {node.name} (line {node.lineno}) {how} {ast.unparse(expr)}, "
                    "of the code under test"
                )
    return (
        _handed_to_library(tree, library, judge_side)
        or _library_strategy(tree, library, hypothesis)
        or _exact_type(tree, standard)
        or (_process_state(tree, dotted) if library else None)
    )


# The standard library's state of the whole process that a library reads from its own
# process: set in the judge's, out of process it is not the code's (issue 17, mpmath's
# `random.seed(42); mp.rand()`).
PROCESS_STATE = frozenset(
    {"random.seed", "random.setstate", "decimal.setcontext", "locale.setlocale", "os.chdir"}
)  # fmt: skip


def _process_state(tree: ast.AST, dotted: dict[str, str]) -> str | None:
    """Pure: the first call that sets process-wide state of the standard library
    (PROCESS_STATE, an attribute of `decimal.getcontext()`, a stdlib module's attribute
    `monkeypatch.setattr` replaces), or None."""

    def path(expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Name):
            return dotted.get(expr.id)
        if isinstance(expr, ast.Attribute):
            inner = path(expr.value)
            return f"{inner}.{expr.attr}" if inner else None
        return None

    def stdlib_target(call: ast.Call) -> bool:
        # `monkeypatch.setattr(secrets, "randbelow", f)` or `("secrets.randbelow", f)`: the
        # judge's module, not the one the code reads (ecc's recorded draws, held-out round 9).
        if not call.args:
            return False
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            target: str | None = first.value
        else:
            target = path(first)
        return bool(target) and str(target).partition(".")[0] in sys.stdlib_module_names

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and path(node.func) in PROCESS_STATE:
            found.append((node.lineno, f"calls {ast.unparse(node.func)}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "monkeypatch"
            and node.func.attr in ("setattr", "delattr")
            and stdlib_target(node)
        ):
            found.append((node.lineno, f"patches {ast.unparse(node.args[0])}"))
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                context = target.value if isinstance(target, ast.Attribute) else None
                if isinstance(context, ast.Call) and path(context.func) == "decimal.getcontext":
                    found.append((node.lineno, f"sets {ast.unparse(target)}"))
    if not found:
        return None
    line, what = min(found)
    return (
        f"{what} (line {line}): state of the whole process, which out of process the code "
        "under test does not share"
    )


# The functional forms that make a class: `Enum("E", "A B")`, `namedtuple(...)`, `type(n, b, d)`.
_CLASS_MAKERS = frozenset(
    {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "namedtuple", "NamedTuple", "TypedDict",
     "make_dataclass", "type"}
)  # fmt: skip
# Parameters whose own methods are the test tools' (pytest fixtures, hypothesis's data).
_TOOL_PARAMETERS = frozenset({"self", "cls", "monkeypatch", "request", "data", "subtests"})


def _handed_to_library(tree: ast.AST, library: set[str], judge_side: set[str]) -> str | None:
    """Pure: the first class, generator or coroutine function the file makes that it hands
    to the code under test (an argument of a call, a decorator), or None.

    Out of process such a thing crosses as a judge handle: the code's
    `converter.structure(d, MyEnum)`, `register_hook(MyClass, ...)` or
    `@lib.seq` over a generator function dispatch on the class (its fields,
    its members, `issubclass`) or on the function's kind (`inspect.
    isgeneratorfunction`, `.send`), which a handle is not; the class's
    methods are judge code, so no stand-in of the worker's can be it (issue
    17). A call counts unless the file's own names, a builtin, the standard
    library, a test tool, the judge's helpers or a tool parameter's own
    method (`self.assertIs`, `monkeypatch.setattr`) make it: a fixture or a
    local the code built may be the code's. An instance passed by value
    (`lib.f(Mine(1))`, `lib.f(mine)`) and a member (`lib.f(Mine.A)`) cross.
    """
    made: dict[str, tuple[str, int]] = {}
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            made[node.name] = (f"class {node.name}", node.lineno)
            own.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            own.add(node.name)
            if isinstance(node, ast.AsyncFunctionDef):
                made.setdefault(node.name, (f"coroutine function {node.name}", node.lineno))
            elif _yields(node):
                made.setdefault(node.name, (f"generator function {node.name}", node.lineno))
        elif isinstance(node, ast.Assign) and _class_maker(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    made[target.id] = (f"class {target.id}", node.lineno)
                    own.add(target.id)

    def judge_made(func: ast.expr) -> bool:
        root = _root_name(func)
        if root is None or root in library:
            return False
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in _TOOL_PARAMETERS
        ):
            return True
        return (
            root in own
            or root in judge_side
            or (root == getattr(func, "id", None) and hasattr(builtins, root))
        )

    def handed(expr: ast.expr) -> ast.Name | None:
        if isinstance(expr, ast.Name):
            return expr if expr.id in made else None
        if isinstance(expr, ast.Call | ast.Lambda | ast.Attribute):
            return None  # a value the call makes, a callback, a member or attribute
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr) and (found := handed(child)):
                return found
        return None

    def reason(name: str, how: str, line: int) -> str:
        what, where = made[name]
        return (
            f"{what} (line {where}) {how} (line {line}), of the code under test: it needs "
            "the object itself in its process, not a judge handle"
        )

    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
        key=lambda n: n.lineno,
    ):
        if node.name in made and made[node.name][1] == node.lineno:
            for deco in node.decorator_list:
                if not judge_made(deco.func if isinstance(deco, ast.Call) else deco):
                    return reason(node.name, f"is decorated with {ast.unparse(deco)}", deco.lineno)
    for call in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        if judge_made(call.func):
            continue
        for expr in [*call.args, *(k.value for k in call.keywords)]:
            if found := handed(expr.value if isinstance(expr, ast.Starred) else expr):
                return reason(found.id, f"is handed to {ast.unparse(call.func)}", call.lineno)
    return None


def _yields(node: ast.FunctionDef) -> bool:
    """Pure: whether it is a generator function (a yield of its own, not a nested def's)."""
    todo: list[ast.AST] = list(node.body)
    while todo:
        child = todo.pop()
        if isinstance(child, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            todo.extend(ast.iter_child_nodes(child))
    return False


def _class_maker(expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _CLASS_MAKERS and (name != "type" or len(expr.args) == 3)


def _exact_type(tree: ast.AST, standard: set[str]) -> str | None:
    """Pure: the first `type(x) is C` (or `==`, `x.__class__ is C`) against a class not the
    builtins' nor the file's own: out of process the type of a library object is the
    stand-in's class (a handle), which no class of the code's is.

    `type(a) is type(b)` and `type(x) is int` hold out of process as in, so they
    do not count (but of two library objects of two classes the first is
    `Handle is Handle` out of process: a leftover, since stdlib values compared
    so are common), nor a standard-library class (`standard`: the names the file
    binds from it; its values cross as data) or a class the file defines,
    which comes back as itself. `type(x)` collected by a comprehension does
    count (jsonpath-ng's `{type(n) for n in walk(tree)} >= {Filter, And}`):
    its types are compared later, where the AST no longer sees them.
    """
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def exact(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Attribute):
            return expr.attr == "__class__"
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "type"
            and len(expr.args) == 1
            and not isinstance(expr.args[0], ast.Constant)
            and not expr.keywords
        )

    def plain(expr: ast.expr) -> bool:
        if exact(expr) or isinstance(expr, ast.Constant):
            return True
        root = _root_name(expr)
        if isinstance(expr, ast.Name) and (root in own or hasattr(builtins, expr.id)):
            return True
        return isinstance(expr, ast.Name | ast.Attribute) and root in standard

    comprehensions = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    for comp in sorted(
        (n for n in ast.walk(tree) if isinstance(n, comprehensions)), key=lambda n: n.lineno
    ):
        parts = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
        for part in parts:
            if exact(part):
                return (
                    f"collects {ast.unparse(part)} (line {comp.lineno}): out of process the "
                    "type of a library object is its stand-in's"
                )
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Compare)), key=lambda n: n.lineno
    ):
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:], strict=False):
            if not isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq):
                continue
            for one, other in ((left, right), (right, left)):
                if exact(one) and not plain(other):
                    return (
                        f"compares {ast.unparse(one)} with {ast.unparse(other)} "
                        f"(line {node.lineno}): out of process the type of a library "
                        "object is its stand-in's"
                    )
    return None


# Strategies whose arguments are strategies themselves (hypothesis.strategies);
# the others take values or callables (`builds`, `sampled_from`, `just`), which cross.
_COMBINATORS = frozenset(
    {"lists", "sets", "frozensets", "tuples", "one_of", "dictionaries", "iterables",
     "fixed_dictionaries", "recursive", "shared", "deferred"}
)  # fmt: skip


def _library_strategy(tree: ast.AST, library: set[str], hypothesis: set[str]) -> str | None:
    """Pure: the first place the file hands hypothesis a strategy the code under test builds.

    hypothesis's engine draws from a strategy in its own process (its
    `do_draw` is given the engine's data): a strategy the library makes
    (hyperlink.hypothesis, a library's `strategies` module) is a handle out
    of process, never a SearchStrategy. Strategy positions: `given`'s
    arguments, `draw(...)`'s (data.draw, a composite's draw), and those of
    the combinators above; a name the file binds to a library value counts
    as the library's.
    """
    made = set(library)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _root_name(node.value) in library:
            made |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        root = _root_name(func)
        strategic = name in _COMBINATORS | {"given"} and root in hypothesis
        # data.draw, a composite's draw; not a library's own `draw` method.
        if not (strategic or (name == "draw" and root not in made)):
            continue
        for expr in [*node.args, *(k.value for k in node.keywords)]:
            if _root_name(expr) in made:
                return (
                    f"draws from {ast.unparse(expr)} (line {node.lineno}), a strategy of the "
                    "code under test: hypothesis needs the strategy itself in its process"
                )
    return None


def _root_name(expr: ast.expr) -> str | None:
    while True:
        if isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Attribute | ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None


def in_process_files(run: Run) -> dict[str, str]:
    """The property files that run in the tested process, each with why: the ledger or the AST."""
    found = dict.fromkeys(run.ledger.properties.in_process, LEDGER_REASON)
    judge = _base_judge_names(run)
    for path, source in property_files(run).items():
        if path not in found and (why := needs_process(source, judge)):
            found[path] = why
    return dict(sorted(found.items()))


def _base_judge_names(run: Run) -> set[str]:
    """Names the judge's own base files provide (as _judge_names reads the judge's tree)."""
    names = set()
    paths = run.ledger.properties.paths
    for entry in run.base_judge_entries:
        names.add(entry.path.split("/", 1)[0].split(".", 1)[0])
        for path in paths:
            rest = entry.path[len(path) :].lstrip("/") if under(entry.path, (path,)) else ""
            if rest:
                names.add(rest.split("/", 1)[0].split(".", 1)[0])
    return names


def thin_files(files: Mapping[str, bytes]) -> list[str]:
    return [r for path, src in sorted(files.items()) if (r := thin_reason(path, src))]


def property_files(run: Run) -> dict[str, bytes]:
    inside = within(run.ledger.properties.paths)
    found = {}
    for e in run.base_entries:
        if e.kind == "blob" and inside(e.path) and is_test_file(e.path):
            found[e.path] = run.read_base(e.path) or b""
    return found


def run_properties(
    run: Run,
    args: Sequence[str] | None = None,
    *,
    edit: Callable[[Path], None] | None = None,
    coverage: Sequence[str] = (),
    review_files: Sequence[review.ChangedFile] = (),
) -> testrun.TestRun:
    """The properties (or some of them) on head's code under the judge's settings.

    Out of process (SPEC "Properties judged out of process"): pytest and the
    property files run on a tree of the judge's files alone and reach the
    head's code only through a worker. The files `[properties] in_process`
    names run the v1 way, in the tested process. `edit` changes the head's
    tree before anything runs (a mutant); `coverage` names the tree-relative
    files whose executed lines come back per test. With `edit` the run stops
    at the first failure: all a killed mutant needs. `review_files`: the
    review's mutants of those files run after the main pass in the same
    pytest (review_phase.py), where every property file runs out of process.
    """
    settings = run.ledger.properties
    targets = tuple(args) if args is not None else settings.paths
    files = in_process_files(run)
    # A target is a directory, a file or a node id (a mutant's runners, the differential's):
    # a node id of an in-process file runs in process too, never out of it by accident.
    in_ids = tuple(t for t in targets if "::" in t and t.partition("::")[0] in files)
    rest = tuple(t for t in targets if t not in in_ids)
    rest_files = [t.partition("::")[0] for t in rest]
    inside = tuple(f for f in files if under(f, rest_files))
    outside = [f for f in property_files(run) if under(f, rest_files) and f not in files]
    runs = []
    with run.scratch() as scratch:
        if outside or not (inside or in_ids):
            runs.append(
                _out_of_process(
                    run,
                    # Per run: the worker's paths (its cwd, HOME, every __file__) name no judge.
                    scratch / secrets.token_hex(4),
                    targets=rest,
                    inside=inside,
                    edit=edit,
                    coverage=tuple(coverage),
                    review_files=() if files else tuple(review_files),
                )
            )
        if inside or in_ids:
            runs.append(
                _in_process(
                    run,
                    scratch / "in",
                    targets=(*inside, *in_ids),
                    edit=edit,
                    coverage=tuple(coverage),
                )
            )
    return testrun.merged(runs)


def _in_process(
    run: Run,
    scratch: Path,
    *,
    targets: tuple[str, ...],
    edit: Callable[[Path], None] | None,
    coverage: tuple[str, ...],
) -> testrun.TestRun:
    settings = run.ledger.properties
    scratch.mkdir()
    tree = run.materialize(scratch / "tree")
    if edit is not None:
        edit(tree)
    plan = testrun.Plan(
        tree=tree,
        args=targets,
        conftest_roots=settings.paths,
        pythonpath=run.ledger.gate.pythonpath,
        seed=settings.seed,
        max_examples=settings.max_examples,
        timeout_s=settings.timeout_s,
        extra=("-x",) if edit is not None else (),
        coverage=coverage,
        python=run.code.python,
    )
    return testrun.run(
        plan,
        scratch=scratch,
        environ=run.environ,
        hypothesis_tables=charmap.prefetched(),
        box=run.box,
    )


def _out_of_process(
    run: Run,
    scratch: Path,
    *,
    targets: tuple[str, ...],
    inside: tuple[str, ...],
    edit: Callable[[Path], None] | None,
    coverage: tuple[str, ...],
    review_files: tuple[review.ChangedFile, ...] = (),
    shape: str = "stdin",
    which: str = "head",
) -> testrun.TestRun:
    settings = run.ledger.properties
    pythonpath = run.ledger.gate.pythonpath
    scratch.mkdir()
    # The judge's process sees the judge's files and nothing of the head's. A random name,
    # as the tree's and the home's: a declared data file's bind shows the worker its path.
    judge = scratch / secrets.token_hex(4)
    git.materialize(run.repo, run.merge_base, judge, list(run.base_judge_entries))
    tree = run.materialize(scratch / secrets.token_hex(4), which)
    # The worker's tree has no property files to read: the code cannot study its judge.
    for path in settings.paths:
        shutil.rmtree(tree / path, ignore_errors=True)
    if edit is not None:
        edit(tree)
    home = scratch / secrets.token_hex(4)
    home.mkdir()
    shared = _judge_tmp(scratch)
    data = DataCopy(run, judge)
    box = _seeing(run.box(tree, home), shared, data.binds)
    spec = protocol.WorkerSpec(
        python=run.code.interpreter,
        tree=str(tree),
        home=str(home),
        names=tuple(
            provided_names(
                _listing(tree, pythonpath),
                _judge_names(judge, settings.paths),
                imported_names(_judge_sources(judge, settings.paths)),
            )
        ),
        pythonpath=tuple(pythonpath),
        coverage=tuple(coverage),
        # A slow first call (a library's import) is bounded by the lane, not a fixed 10 s.
        call_timeout_s=float(settings.call_timeout_s or settings.timeout_s),
        shape=shape,
        # The base's tree in the code's venv: that venv's build of the project is the head's.
        base=which == "base" and run.code.python is not None,
        data=tuple(e.path for e in run.data_entries),
        # Not the judge's 0 (its node ids need that): a seed-0 hash is a tell (issue 18), and
        # nor one the pinned seed gives (seed.applied). A ledger no run resolved: the seed's.
        hash_seed=str(settings.hash_seed or seed.hash_seed(settings.seed)),
        box=_box_spec(box),
    )
    # The differential's second harness in this same pytest after the main pass (issue 20):
    # a worker of the other shape over a tree and home of its own, which no first-harness
    # worker could write (a file left there would tell the second worker it is the second).
    second = None
    if review_files and edit is None and shape == "stdin" and which == "head":
        second = _second_harness(run, scratch, spec, shared, data.binds)
    phase = _review_plan(run, scratch, review_files, second)
    mutants = bool(phase) and settings.review_mutants > 0
    plan = testrun.Plan(
        tree=judge,
        args=targets,
        conftest_roots=settings.paths,
        # The review's plugin first, or preload's: it imports standin, so pytest does not rewrite
        # it from source, and standin then keeps it (a tree that is patchjudge gets stand-ins for
        # every other patchjudge module, standin.JUDGE_PLUGINS).
        plugins=(
            "patchjudge.review_phase" if phase else "patchjudge.boundary.preload",
            "patchjudge.boundary.standin",
        ),
        seed=settings.seed,
        max_examples=settings.max_examples,
        # The mutation phase's budget on top, and the second harness's own (as its own pytest
        # had): the main pass's own limit is checked on its record.
        timeout_s=settings.timeout_s
        + (settings.review_timeout_s if mutants else 0)
        + (settings.timeout_s if second is not None else 0),
        # One file that cannot be collected (a module-level line that cannot cross) is that
        # file's error, not the session's: the other property files still run (issue 17).
        extra=(
            f"--basetemp={shared / BASETEMP}",
            "--continue-on-collection-errors",
            *(f"--ignore={f}" for f in inside),
            *(("-x",) if edit is not None else ()),
        ),
        env=((ORACLE_ENV, protocol.encode_spec(spec)), *phase),
    )
    # The judge's pytest in a box of its own too (issue 17): a property that evaluates or
    # opens what the code returns runs the patch's text in this process, which sees only
    # its scratch dir, never the host, the network or the checkout. The lane starts the
    # workers' boxes at its request (launcher.py): a box cannot start one inside as root.
    # Its workers see the user the judge's pytest sees (testrun.build_env): as an unboxed
    # judge's workers did, since a missing USER tells the code it is judged.
    user = testrun.user_name(run.environ)
    lane_env = {**run.environ, "USER": user, "LOGNAME": user}
    second_box = None if second is None else second[1]
    with data, launcher.serving(box, lane_env, second_box) as launch:
        judging = None
        if launch is not None:
            fd = launch.judge_end.fileno()
            plan = dataclasses.replace(plan, env=(*plan.env, (protocol.LAUNCHER_ENV, str(fd))))
            judging = _judge_boxer(run, launch.box, fd, second_box)
        return testrun.run(
            plan,
            scratch=scratch,
            environ=run.environ,
            hypothesis_tables=charmap.prefetched(),
            box=judging,
        )


def _second_harness(
    run: Run,
    scratch: Path,
    first: protocol.WorkerSpec,
    shared: Path,
    data: tuple[tuple[Path, Path], ...] = (),
) -> tuple[protocol.WorkerSpec, sandbox.Box | None]:
    """The second harness's worker spec and box: the head's tree again, a home of its own,
    a script by path, no coverage (docs/threat-model.md, "Tells that stay")."""
    tree = run.materialize(scratch / secrets.token_hex(4), "head")
    for path in run.ledger.properties.paths:
        shutil.rmtree(tree / path, ignore_errors=True)
    home = scratch / secrets.token_hex(4)
    home.mkdir()
    box = _seeing(run.box(tree, home), shared, data)
    spec = first._replace(
        tree=str(tree),
        home=str(home),
        coverage=(),
        shape=SECOND_SHAPE,
        box=_box_spec(box),
    )
    return spec, box


# The judge's pytest's --basetemp, inside the directory _judge_tmp makes: pytest removes and
# makes the basetemp itself, so the box binds its parent, which stays.
BASETEMP = "basetemp"


def _judge_tmp(scratch: Path) -> Path:
    """A directory of this run's for the judge's `tmp_path`s alone (issue 17)."""
    shared = scratch / f"tmp-{secrets.token_hex(4)}"
    shared.mkdir()
    return shared


def _box_spec(box: sandbox.Box | None) -> protocol.BoxSpec | None:
    """Pure: the worker's box as its spec carries it (the judge starts no box but by hand)."""
    if box is None:
        return None
    return protocol.BoxSpec(
        str(box.tree),
        str(box.home),
        tuple(str(p) for p in (*box.readonly, *box.shared)),
        data_from=tuple(str(source) for source, _ in box.data),
        data_at=tuple(str(at) for _, at in box.data),
    )


class DataCopy:
    """The judge's declared data files (`[properties] data`, issue 17) for one lane's workers.

    `binds`: (the lane's copy, the file's path in the judge's tree), each bound read-only
    at that path in every worker's box; written on entering, removed on leaving. The copy
    is the base's blobs in a directory of the lane's own, which no box of the run sees:
    the judge's pytest may write its tree and scratch (it runs property text, and what a
    property evaluates), so a file bound from there could become a link to the oracle
    before the launcher, outside every box, starts the next worker.
    """

    def __init__(self, run: Run, judge: Path) -> None:
        self.run, self.entries = run, run.data_entries
        # tempfile's own name, made on entering: what /proc/self/mountinfo shows a worker.
        self.root = Path(tempfile.gettempdir(), f"tmp{secrets.token_hex(8)}")
        self.binds = tuple((self.root / e.path, judge / e.path) for e in self.entries)

    def __enter__(self) -> DataCopy:
        if self.entries:
            self.root.mkdir(mode=0o700)  # never one that is there already
            git.materialize(self.run.repo, self.run.merge_base, self.root, list(self.entries))
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _seeing(
    box: sandbox.Box | None, shared: Path, data: tuple[tuple[Path, Path], ...] = ()
) -> sandbox.Box | None:
    """The worker's box with the judge's tmp dirs bound read-only at the same path.

    A property that writes a file under `tmp_path` and hands the library its
    path (whenever's tz files copied there, then `reset_tzpath([tmp_path])`)
    means the library reads it, as in process; the worker's own /tmp is a
    tmpfs of its box. Read-only, and only the basetemp the judge made for
    this run: nothing of the judge's tree, home or TMPDIR, and the code can
    change nothing a property reads back. `data`: the declared data files
    (DataCopy.binds), read-only at their path in the judge's tree.
    """
    if box is None:
        return None
    return dataclasses.replace(box, shared=(*box.shared, shared), data=(*box.data, *data))


def _judge_boxer(
    run: Run, worker: sandbox.Box, fd: int, second: sandbox.Box | None = None
) -> sandbox.Boxer:
    def box(tree: Path, home: Path) -> sandbox.Box | None:
        found = run.box(tree, home)
        return None if found is None else sandbox.judge_box(found, worker, fd, second)

    return box


def _review_plan(
    run: Run,
    scratch: Path,
    files: Sequence[review.ChangedFile],
    second: tuple[protocol.WorkerSpec, sandbox.Box | None] | None = None,
) -> tuple[tuple[str, str], ...]:
    """The mutation phase's plan as a file in the scratch dir (too big for the environment),
    and the differential's second harness (`second`: its worker's spec, issue 20)."""
    settings = run.ledger.properties
    if not files or (settings.review_mutants == 0 and second is None):
        return ()
    plan = scratch / "review-plan.json"
    plan.write_text(
        json.dumps(
            {
                "seed": settings.seed,
                "limit": settings.review_mutants,
                "budget_s": settings.review_timeout_s,
                "main_s": settings.timeout_s,
                "files": [plan_file(f) for f in files],
                "differential": None
                if second is None
                else {
                    "spec": protocol.encode_spec(second[0]),
                    "budget_s": settings.timeout_s,
                    # A def line runs at import for every test: not a reason to run all twice.
                    "inert": {f.path: sorted(binding_only_lines(f)) for f in files},
                },
            }
        ),
        encoding="utf-8",
    )
    return ((REVIEW_ENV, str(plan)),)


def plan_file(f: review.ChangedFile) -> dict[str, Any]:
    """Pure: one changed file as the mutation phase's plan carries it (review_phase.py)."""
    return {
        "path": f.path,
        "text": f.text,
        "encoding": f.encoding,
        "changed": sorted(f.changed),
        # Read here already (issue 20): the judge's pytest does not parse, compile and
        # run coverage's parser over the file a second time.
        "statements": None
        if f.stmts is None
        else {"lines": sorted(f.stmts.lines), "first": sorted(f.stmts.first.items())},
        # The statements a mutant can edit (issue 20): the phase asks whether a property ran
        # one before anything else, and need not walk the module three times to know. The
        # gate chooses among the same candidates after the run (review.candidates keeps them).
        "mutable": sorted({m.statement for m in review.candidates(f)}),
    }


def _listing(tree: Path, pythonpath: Sequence[str]) -> list[tuple[str, bool]]:
    """(name, is a directory) of what each pythonpath entry holds, before any code runs."""
    found = []
    for entry in pythonpath:
        try:
            found += [(p.name, p.is_dir()) for p in sorted((tree / entry).iterdir())]
        except OSError:
            continue
    return found


def _judge_names(judge: Path, paths: Sequence[str]) -> set[str]:
    """Names the judge's own tree provides: property helpers, `eval` itself."""
    names = {p.name.split(".", 1)[0] for p in judge.iterdir()}
    for path in paths:
        if (judge / path).is_dir():
            names |= {p.name.split(".", 1)[0] for p in (judge / path).iterdir()}
    return names


def provided_names(
    listing: Sequence[tuple[str, bool]],
    judge: Collection[str],
    imported: Collection[str] = (),
) -> list[str]:
    """Pure: the top-level modules a pythonpath listing provides, the judge's own left out.

    A module named like the standard library's is a stand-in only where a
    property file imports it by that name: otherwise the judge's own lazy
    imports (`import json` inside pytest or hypothesis) would reach the
    worker, and a tree with a `src/json.py` could not be judged at all.
    """
    names = set()
    for name, is_dir in listing:
        module = name if is_dir else name[:-3] if name.endswith(".py") else ""
        if not module.isidentifier() or module in judge:
            continue
        if module in sys.stdlib_module_names and module not in imported:
            continue
        names.add(module)
    return sorted(names)


def imported_names(sources: Iterable[bytes]) -> set[str]:
    """Pure: the top-level module names these Python sources import (unparsable ones: none)."""
    found: set[str] = set()
    for source in sources:
        try:
            tree = parsed.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found


def _judge_sources(judge: Path, paths: Sequence[str]) -> list[bytes]:
    """The judge's Python files under the properties paths (its property files, conftests)."""
    return [f.read_bytes() for p in paths for f in sorted((judge / p).rglob("*.py"))]


def run(run: Run) -> LaneReport:
    settings = run.ledger.properties
    why = in_process_files(run)
    inside = sorted(why)
    details: dict[str, Any] = {
        "seed": settings.seed,
        "max_examples": settings.max_examples,
        # A mix reads "out_of_process": `in_process` lists the exceptions.
        "oracle": "in_process"
        if inside and set(inside) >= set(property_files(run))
        else "out_of_process",
        "in_process": inside,
        "in_process_why": why,
    }
    if not run.forces(NAME):
        return not_forced(run, NAME, details)
    files = property_files(run)
    problems = thin_files(files)
    if not files:
        problems.append(f"no property test file under {', '.join(settings.paths)}")
    changed, result, shared = lane_run(run)
    if shared:  # the freeze lane of this gate started it, for its required properties
        details["shared"] = {"run": "started by the freeze lane"}
    outcome_problems, outcome_details = judge_outcomes(result, settings)
    problems += outcome_problems
    details.update(outcome_details, files=sorted(files), exitstatus=result.exitstatus)
    # Where hypothesis's Unicode tables came from: cache, built, or not built (issue 20).
    details["charmap"] = charmap.origin
    if not problems:
        problems += _differential(run, changed, result, inside, details)
        _in_process_twice(run, changed, result, inside, details)
    # Outcomes the code's own __eq__ (or another dunder) decided through a handle (issue 18).
    details["dunders"] = {n: list(d) for n, d in sorted(result.dunders.items())}
    # Round trips to the workers by kind (issue 20): a cost figure, judged by nothing.
    details["requests"] = dict(sorted(result.requests.items()))
    problems += _review(run, changed, result, problems, details)
    if problems:
        details["output_tail"] = result.output[-4000:]
    return report(run, NAME, Status.FAIL if problems else Status.PASS, problems, details)


def lane_run(run: Run) -> tuple[list[review.ChangedFile], testrun.TestRun, bool]:
    """The lane's run (every property, the changed lines' coverage, the review's mutants).

    The third value: whether an earlier lane of this gate started it
    (`required_run`); its seed and settings are the run's, alike for both.
    """
    settings = run.ledger.properties

    def compute() -> tuple[list[review.ChangedFile], testrun.TestRun]:
        changed = review_run.changed_files(run)
        unlisted = review_run.unlisted_changes(run)
        coverage = [f.path for f in changed] + [str(c.new_path) for c in unlisted]
        result = run_properties(run, coverage=coverage, review_files=changed)
        # A changed file off the pythonpath that the run executed is code under test too.
        return [*changed, *review_run.reviewed_unlisted(run, unlisted, result.executed)], result

    key = (NAME, "lane run", settings.seed, settings.max_examples)
    value, shared = run.once(key, compute)
    changed, result = cast(tuple[list[review.ChangedFile], testrun.TestRun], value)
    return changed, result, shared


def required_run(run: Run, files: Sequence[str]) -> tuple[testrun.TestRun, bool]:
    """The property files `files` under the judge's settings, for the freeze lane's rows.

    Within a gate that runs this lane too, boxed (so the one walk around the
    lanes guards both alike), its run answers (issue 20): it runs every
    property file with the same seed and settings, and this lane then reads
    it instead of running it again. Read as a run of `files` alone
    (`testrun.restricted`); the second value says it was.
    """
    whole = run.shared is not None and run.isolation == "sandbox" and run.forces(NAME)
    if not whole or not set(files) <= set(property_files(run)):
        return run_properties(run, args=files), False
    _, result, _ = lane_run(run)
    return testrun.restricted(result, files, run.ledger.properties.timeout_s), True


# The second harness's worker (standin.Spec.shape): no start-up, argv or thread in common.
SECOND_SHAPE = "script"


def _differential(
    run: Run,
    changed: Sequence[review.ChangedFile],
    result: testrun.TestRun,
    inside: Sequence[str],
    details: dict[str, Any],
) -> list[str]:
    """The tests that ran a changed line, judged again by a worker of another shape (issue 18).

    Same seed, same inputs; only the node ids whose coverage context holds a
    changed line (all of the out-of-process ones when an import-time line
    changed), so the cost is one more judge process over those tests.
    """
    nodeids = second_run_nodeids(result.executed, changed, result.collected, inside)
    if not nodeids:
        details["differential"] = {"second": SECOND_SHAPE, "nodeids": [], "disagreements": []}
        return []
    # Judged in the main pass's pytest, after it (review_phase.py): what it could not judge
    # there (no record, a module that kept a first-harness handle) runs in a pytest of its own.
    here, problems, passed = judged_in_session(
        result.second, result.second_stale, nodeids, run.ledger.properties
    )
    rest = [n for n in nodeids if n not in here]
    if rest:
        more_problems, more_passed = _again_out_of_process(run, rest, SECOND_SHAPE)
        problems, passed = problems + more_problems, passed + more_passed
    found = disagreements(nodeids, passed, problems)
    details["differential"] = {
        "second": SECOND_SHAPE,
        "nodeids": nodeids,
        "disagreements": [{"nodeid": n, "first": "passed", "second": why} for n, why in found],
    }
    return [
        f"differential: {n} passed in the first harness (a -c worker reading stdin) and not "
        f"in the second (a script worker serving from a thread): {why}"
        for n, why in found
    ]


def judged_in_session(
    second: testrun.TestRun | None,
    stale: Collection[str],
    nodeids: Sequence[str],
    settings: PropertiesSettings,
) -> tuple[set[str], list[str], list[str]]:
    """Pure: the node ids the second harness judged in the main pass's pytest (issue 20), and
    (problems, passed) of that record read as a run of them alone, as judge_outcomes reads a
    pytest of its own. None where the record is not whole: the lane runs those itself."""
    if second is None or not second.started or not second.finished:
        return set(), [], []
    wanted = [n for n in nodeids if n in second.collected and n not in stale]
    if not wanted:
        return set(), [], []
    alone = dataclasses.replace(
        second,
        collected={n: second.collected[n] for n in wanted},
        collect_errors={},
        # Its exit status counts the other node ids too: a failure of these is in outcomes.
        exitstatus=0,
    )
    problems, outcome = judge_outcomes(alone, settings)
    return set(wanted), list(problems), list(outcome.get("passed", []))


def _in_process_twice(
    run: Run,
    changed: Sequence[review.ChangedFile],
    result: testrun.TestRun,
    inside: Sequence[str],
    details: dict[str, Any],
) -> None:
    """The in-process tests that ran a changed line, run again out of process (issue 18).

    `details.differential.in_process`. A file is in process because its
    objects behave otherwise out of it (a weak reference watches a stand-in),
    so an honest test of it can fail out of process with an ordinary
    assertion, as a patch right only in the judge's process does. The base
    tells them apart: each such failure runs out of process once more on the
    merge base's code, and where the base passes there, the difference is the
    patch's; the verdict then holds the merge (`base: passed`, verdict.py).
    """
    nodeids = in_process_nodeids(result.executed, changed, result.collected, inside)
    found: list[dict[str, str]] = []
    if nodeids:
        problems, passed = _again_out_of_process(run, nodeids)  # the first harness's shape
        found = second_outcomes(nodeids, passed, problems)
        # Every second outcome but a pass, "cannot cross" too: that label is read from
        # text the code can write (an exception's message), so only the base may decide.
        failed = [f["nodeid"] for f in found if f["second"] != "passed"]
        if failed:
            base_problems, base_passed = _again_out_of_process(run, failed, which="base")
            at_base = {f["nodeid"]: f["second"] for f in second_outcomes(
                failed, base_passed, base_problems
            )}  # fmt: skip
            for entry in found:
                if entry["nodeid"] in at_base:
                    entry["base"] = at_base[entry["nodeid"]]
    details.setdefault("differential", {})["in_process"] = found


def _again_out_of_process(
    run: Run, nodeids: Sequence[str], shape: str = "stdin", which: str = "head"
) -> tuple[list[str], list[str]]:
    """`nodeids` judged once more by a worker of `shape` on `which` code, same seed:
    (problems, passed)."""
    with run.scratch() as scratch:
        second = _out_of_process(
            run,
            scratch / secrets.token_hex(4),
            targets=tuple(nodeids),
            inside=(),
            edit=None,
            coverage=(),
            shape=shape,
            which=which,
        )
    problems, outcome = judge_outcomes(second, run.ledger.properties)
    return list(problems), list(outcome.get("passed", []))


def in_process_nodeids(
    executed: Mapping[str, Mapping[str, Sequence[int]]],
    changed: Sequence[review.ChangedFile],
    collected: Iterable[str],
    inside: Sequence[str],
) -> list[str]:
    """Pure: the node ids of the in-process files that executed a changed line, sorted."""
    if not inside:
        # No in-process file (the usual run): none to find, and no second whole-module
        # pass over each changed file for its binding-only lines (issue 20).
        return []
    hit = second_run_nodeids(executed, changed, collected, ())
    return [n for n in hit if any(under(n.split("::", 1)[0], (f,)) for f in inside)]


# A second outcome that says the object could not cross, not that the code was wrong.
_CROSSING = ("cannot cross", "not importable", "collection error", "the worker ")


def second_outcomes(
    nodeids: Sequence[str], passed: Collection[str], problems: Sequence[str]
) -> list[dict[str, str]]:
    """Pure: each in-process node id's outcome out of process: passed, cannot cross, failed."""
    found = []
    for nodeid in nodeids:
        if nodeid in passed:
            found.append({"nodeid": nodeid, "first": "passed", "second": "passed"})
            continue
        path = nodeid.split("::", 1)[0]
        said = (
            next((p for p in problems if nodeid in p), None)
            or next((p for p in problems if path in p), None)
            or next(iter(problems), "did not run")
        )
        kind = "cannot cross" if any(w in said for w in _CROSSING) else "failed"
        found.append({"nodeid": nodeid, "first": "passed", "second": f"{kind}: {said}"})
    return found


def second_run_nodeids(
    executed: Mapping[str, Mapping[str, Sequence[int]]],
    changed: Sequence[review.ChangedFile],
    collected: Iterable[str],
    inside: Sequence[str],
) -> list[str]:
    """Pure: the out-of-process node ids that executed a changed line, sorted.

    A changed line run at import (context "") ran for every test: all of them,
    unless each such line only binds a new function (`binding_only_lines`):
    then what the patch does runs in the body, whose lines count per test.
    """
    lines = {f.path: set(f.lines) for f in changed}
    inert = {f.path: binding_only_lines(f) for f in changed}
    hit = {
        nodeid
        for nodeid, files in executed.items()
        if any(
            set(n) & (lines.get(path, set()) - (inert.get(path, set()) if nodeid == "" else set()))
            for path, n in files.items()
        )
    }
    outside = [n for n in collected if not any(under(n.split("::", 1)[0], (f,)) for f in inside)]
    return sorted(n for n in outside if n in hit or "" in hit)


def binding_only_lines(f: review.ChangedFile) -> frozenset[int]:
    """Pure: the changed `def` lines whose run at import binds a new function and runs nothing.

    Issue 20: a patch that adds a function made every property run twice,
    since its `def` line runs at import. Such a line counts for no test when
    all of it is the patch's (every line of the function changed), it is at
    the module's top level, it binds a name the file spells nowhere else (no
    unchanged line can use it as a value), and evaluating it calls no code:
    no decorator, defaults that are constants, annotations that are
    constants or plain names. What the function does then runs in its body,
    whose lines each test that calls it executes in its own context. A
    `class`, an assignment or anything else at import still counts for every
    test.
    """
    try:
        tree = parsed.parse(f.text)
    except (SyntaxError, ValueError):
        return frozenset()
    names: dict[str, int] = {}
    for node in ast.walk(tree):
        name = _bound_or_used(node)
        if name is not None:
            names[name] = names.get(name, 0) + 1
    found = set()
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.decorator_list
            # A dunder is one Python or a tool may look up unasked (a module's __getattr__).
            and not (node.name.startswith("__") and node.name.endswith("__"))
            and names.get(node.name) == 1
            and _inert_signature(node)
            and _wholly_changed(f, node)
        ):
            found.add(node.lineno)
    return frozenset(found)


def _bound_or_used(node: ast.AST) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.alias):
        return (node.asname or node.name).partition(".")[0]
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.keyword):
        return node.arg
    if isinstance(node, ast.Global | ast.Nonlocal):
        return node.names[0] if len(node.names) == 1 else "*"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        return node.value  # getattr(module, "name"), __all__ entries
    return None


def _inert_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    args = node.args
    defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    annotations = [a.annotation for a in every if a.annotation is not None]
    if node.returns is not None:
        annotations.append(node.returns)
    return all(isinstance(d, ast.Constant) for d in defaults) and all(
        isinstance(a, ast.Constant | ast.Name) for a in annotations
    )


def _wholly_changed(f: review.ChangedFile, node: ast.stmt) -> bool:
    end = node.end_lineno or node.lineno
    text = review.python_line_texts(f.text)
    return all(
        n in f.changed
        for n in range(node.lineno, end + 1)
        if n <= len(text) and text[n - 1].strip() and not text[n - 1].lstrip().startswith("#")
    )


def disagreements(
    nodeids: Sequence[str], passed: Collection[str], problems: Sequence[str]
) -> list[tuple[str, str]]:
    """Pure: each node id the first harness passed that the second did not, with its outcome."""
    found = []
    for nodeid in nodeids:
        if nodeid in passed:
            continue
        said = next((p for p in problems if nodeid in p), None) or next(iter(problems), "")
        found.append((nodeid, f"failed: {said}" if said else "did not run"))
    return found


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
    fates: list[tuple[review.Mutant, review.Fate]] = []
    if problems or found:
        details["mutants"] = "not tried: the properties lane failed on the patch as it is"
    else:
        phased = not in_process_files(run)
        details["mutants"], fates = review_run.try_mutants(
            run, changed, result, run_properties, phased=phased
        )
    # What the verdict holds as undecided under [review] (issue 18); figures here.
    details["unexercised"] = review.unexercised(changed, executed, fates)
    details["probes"] = review_run.probe_hits(run, changed)
    # The judge's own record of what it asked the code's objects (issue 18): not the worker's.
    details["operations"] = {
        n: [list(o) for o in ops] for n, ops in sorted(result.operations.items())
    }
    claims = {c for ops in result.operations.values() for _, c in ops if c != protocol.VIEW_CLAIM}
    # The worker's own record names the class that answered when it did (it can only add).
    claims |= {n.rpartition(".")[0] for names in result.dunders.values() for n in names}
    tree_classes, tree_names, blind = _claimed_classes(run, claims)
    details["patch_dunders"] = review.patch_dunders(
        details.get("dunders", {}),
        changed,
        run.ledger.gate.pythonpath,
        operations=result.operations,
        tree_classes=tree_classes,
        tree_names=tree_names,
        blind=blind,
    )
    return found


def _claimed_classes(
    run: Run, claims: Iterable[str]
) -> tuple[dict[str, bool], set[str], dict[str, frozenset[str]]]:
    """Whether the head's tree defines each class a worker named, the tree's top-level names,
    and the deciding dunders each such class answers without reading its operand.

    Read from the head's object store (the AST, no code runs): a claim is
    only as good as the class it names existing where it says.
    """
    pythonpath = run.ledger.gate.pythonpath
    blobs = {e.path for e in run.head_tree if e.kind == "blob"}
    names: set[str] = set()
    for path in blobs:
        for root in pythonpath:
            prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
            if path.startswith(prefix):
                names.add(path[len(prefix) :].split("/", 1)[0].removesuffix(".py"))
    parsed: dict[str, frozenset[str]] = {}
    blinds: dict[str, dict[str, frozenset[str]]] = {}
    blind: dict[str, frozenset[str]] = {}
    known: dict[str, bool] = {}
    for claim in sorted(claims):
        known[claim] = False
        for module in review.claimed_modules(claim):
            if module.partition(".")[0] not in names:
                continue
            qualname = claim[len(module) + 1 :]
            for root in pythonpath:
                prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
                stem = prefix + module.replace(".", "/")
                for path in (f"{stem}.py", f"{stem}/__init__.py"):
                    if path not in blobs:
                        continue
                    if path not in parsed:
                        data = git.show(run.repo, run.head, path) or b""
                        text = data.decode("utf-8", "replace")
                        parsed[path] = review.defined_classes(text)
                        blinds[path] = review.operand_blind(text)
                    known[claim] = known[claim] or qualname in parsed[path]
                    if qualname in blinds[path]:
                        blind[claim] = blind.get(claim, frozenset()) | blinds[path][qualname]
    blind.update(_installed_blind([c for c in known if c.partition(".")[0] not in names], run))
    return known, names, blind


_SOURCE_CAP = 1 << 20  # the code's venv holds the head's build: its files are the patch's


def _installed_blind(claims: Iterable[str], run: Run) -> dict[str, frozenset[str]]:
    """`review.operand_blind` for classes from outside the tree (redteam9), by their source.

    `unittest.mock.ANY` reached by a computed import decides `==` as the base's own
    matcher does. The source is read, never imported: the code's site-packages (or the
    judge's path when the code runs on the judge's interpreter) and the judge's
    standard library (the code's interpreter's may be another 3.x; its matchers are
    the same). A class that is not found there is not held by this rule.
    """
    roots = [*codeenv.search_path(run.code), sysconfig.get_paths()["stdlib"]]
    found: dict[str, frozenset[str]] = {}
    read: dict[Path, dict[str, frozenset[str]]] = {}
    for claim in sorted(claims):
        # The claim is the worker's word: only dotted identifiers name a file to read.
        if not all(part.isidentifier() for part in claim.split(".") if part != "<locals>"):
            continue
        for module in review.claimed_modules(claim):
            qualname = claim[len(module) + 1 :]
            stem = module.replace(".", "/")
            files = [Path(r) / f"{stem}.py" for r in roots if r]
            files += [Path(r) / stem / "__init__.py" for r in roots if r]
            path = next((f for f in files if f.is_file()), None)
            if path is None or path.stat().st_size > _SOURCE_CAP:
                continue  # a module of megabytes is no matcher; the judge reads no more
            if path not in read:
                read[path] = review.operand_blind(path.read_text("utf-8", "replace"))
            if qualname in read[path]:
                found[claim] = read[path][qualname]
            break
    return found
