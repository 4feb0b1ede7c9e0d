"""The judge's side inside pytest: sys.path, the hypothesis profile, and outcomes.

Loaded with `-p patchjudge.pytest_plugin` before any conftest or test module,
so what it sets up comes first. It writes JSON lines to a pipe the gate
opened ($PATCHJUDGE_RESULT_FD), never to a file the tested code could rewrite,
and records each outcome twice: as pytest made it (innermost wrapper, before
another plugin's wrapper can edit it) and as it was finally logged. A
mismatch means something in the process rewrote a result.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.machinery
import inspect
import json
import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.unittest import TestCaseFunction

# Imported with the plugin, before any tested code runs and could replace it.
from patchjudge import runner
from patchjudge.failure import examples

CHANNEL_ENV = "PATCHJUDGE_RESULT_FD"
# "1": the tree is the merge base's, in the code's venv (testrun.BASE_TREE_ENV).
BASE_TREE_ENV = "PATCHJUDGE_BASE_TREE"
# JSON list of tree-relative files whose executed lines the run reports (issue 14).
COVERAGE_ENV = "PATCHJUDGE_COVERAGE"
_LONGREPR_CAP = 4000

# Top-level modules the judge itself runs on: a tested tree that provides one
# would replace the judge's code, not just the code under test.
JUDGE_MODULES = (
    "pytest", "_pytest", "pluggy", "iniconfig", "packaging", "hypothesis",
    "_hypothesis_pytestplugin", "_hypothesis_ftz_detector", "_hypothesis_globals",
    "sortedcontainers", "attr", "attrs", "xdist", "execnet", "pytest_repeat",
    "coverage",
)  # fmt: skip

_fd: int | None = None
_raw: dict[tuple[str, str], str] = {}
_shadowed: list[str] = []
# Of those, the modules already imported when the tree joins sys.path: in this
# process the tree's file can no longer stand in for them (issue 19).
_shadowed_imported: list[str] = []
_tree_has_patchjudge = False
# Node ids whose test function pytest actually called, and which items are
# python functions (only those go through pytest_pyfunc_call).
_called: set[str] = set()
_functions: set[str] = set()
# The report attribute an xdist worker's raw outcome and call evidence travel in.
_CARRIED = "_raw"
_OUTCOMES = ("passed", "failed", "skipped")
# A worker's pass or skip that carries neither: stripped on the way, not believed.
_NOT_CARRIED = "not carried"
# coverage.py, when the run measures the changed lines: the measurer, the
# measured files (canonical path -> tree-relative path), and why it is not
# measuring, if it failed (reported on the channel, never a silent zero).
_coverage: Any = None
_measured: dict[str, str] = {}
_coverage_error = ""


def shadowing(entries: list[str], protected: set[str]) -> list[str]:
    """Files on the tested pythonpath that would be imported instead of a protected module.

    Read from the directory listing before any of it is importable, so code in
    the tree cannot hide itself. patchjudge is left out: it is imported already,
    and a tree that is patchjudge itself is the code under test.
    """
    found = []
    for entry in entries:
        try:
            names = sorted(p.name for p in Path(entry).iterdir())
        except OSError:
            continue
        for name in names:
            module = name.split(".", 1)[0]
            is_module = name.endswith((".py", ".pyc", ".so", ".pyd")) or "." not in name
            if is_module and module != "patchjudge" and module in protected:
                found.append(str(Path(entry, name)))
    return found


def coverage_pattern(path: str) -> str:
    """`path` as a coverage.py include glob that matches it (and maybe a few more files).

    coverage's globs have no escape: a glob character becomes `?`, a
    backslash `/` (which coverage matches to either slash). The events name
    only the requested files, so a wider match costs time, never a figure.
    """
    return "".join("?" if c in "*?[]" else "/" if c == "\\" else c for c in path)


def _start_coverage(raw: str) -> None:
    """Measure the listed files from before the tested tree is importable (issue 14)."""
    global _coverage, _coverage_error  # noqa: PLW0603  (set once, at import)
    try:
        files = json.loads(raw)
        root = Path.cwd()
        _measured.update({os.path.realpath(root / rel): rel for rel in files})
        import coverage

        # No config file: a .coveragerc or [tool.coverage] in the patch could
        # omit or exclude its own lines.
        cov = coverage.Coverage(
            data_file=None,
            config_file=False,
            include=[coverage_pattern(p) for p in _measured],
            branch=False,
        )
        cov.start()
        _coverage = cov
    except Exception as exc:  # any failure is reported, whatever raised it
        _coverage_error = f"coverage.py did not start: {type(exc).__name__}: {exc}"


def _setup() -> None:
    global _fd  # noqa: PLW0603  (set once, at import, before any test code runs)
    env = os.environ
    # Taken out of the environment so code under test does not inherit it.
    fd = env.pop(CHANNEL_ENV, None)
    if fd is not None:
        _fd = int(fd)
        os.set_inheritable(_fd, False)
    measure = env.pop(COVERAGE_ENV, None)
    if measure:
        _start_coverage(measure)
    # These two stay in the environment: xdist workers load this plugin again
    # and need them.
    extra = [p for p in env.get("PATCHJUDGE_PYTHONPATH", "").split(os.pathsep) if p]
    examples = env.get("PATCHJUDGE_MAX_EXAMPLES")
    global _shadowed, _shadowed_imported  # noqa: PLW0603  (decided before the tree is importable)
    _shadowed = shadowing(extra, {*sys.modules, *sys.stdlib_module_names, *JUDGE_MODULES})
    _shadowed_imported = shadowing(extra, set(sys.modules))
    if examples is not None:
        # Imported before the tested tree joins sys.path: a `hypothesis`
        # package in the patch's src/ must not stand in for the real one.
        from hypothesis import HealthCheck, Phase, settings

        # Nothing timed: a deterministic gate does not ask how loaded the machine
        # is. `too_slow` (inputs slow to draw: a busy CI runner, round trips out
        # of process) would reject an honest patch by the clock. No explain
        # phase: its comments are cut from the reason (failure.py) and its line
        # tracer made a failing property's run 8x as long (docs/bench.md).
        settings.register_profile(
            "patchjudge",
            max_examples=int(examples),
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            phases=[p for p in Phase if p is not Phase.explain],
            derandomize=False,
            print_blob=True,
        )
        _judge_constants_apart()
    _give_to_tree(_shadowed_imported)
    if extra and env.get(BASE_TREE_ENV) == "1":
        # Before the tree joins sys.path: the venv's build of the project is the head's
        # (red team, session 14). Left in the environment for xdist's workers.
        from patchjudge.boundary.worker import hide_own_build

        hide_own_build(extra, keep=(str(Path(__file__).resolve().parent),))
    # The interpreter ran with -s -P: nothing of the tested tree was on sys.path
    # while site ran, so its sitecustomize and .pth files never loaded.
    sys.path[:0] = extra
    if extra:
        sys.meta_path.insert(0, TreeOnly(extra))
    if extra:
        # The lanes run pytest in the tree (its cwd): a write to a tracked file is the
        # tree's own, as in a checkout (issue 17). The worker's one function, stdlib only.
        from patchjudge.boundary.worker import private_writes

        private_writes(str(Path.cwd()))
    global _tree_has_patchjudge  # noqa: PLW0603
    _tree_has_patchjudge = any(Path(e, "patchjudge", "__init__.py").is_file() for e in extra)
    _find_own_patchjudge()


class TreeOnly:
    """The tree's packages are the tree's alone: no submodule of one from elsewhere.

    Red team, session 13 (redteam7): a package of the tree that merges portions
    of its name (`pkgutil.extend_path`, `__path__ +=`) also finds, in the code's
    venv, the files of the installed project the tree lacks. That venv holds
    the head's build, so in a run of the base's tree (pathfilter's collection,
    the freeze lane's) an optional import (`from calc import _speedups`) ran
    the head's code: it dropped from the base's collection the visible test the
    head deleted, and pathfilter saw none gone. A submodule of a package the
    tested pythonpath provided (a regular package, `X/__init__.py`, imported) is now
    imported from that pythonpath only; found elsewhere, it does not exist.
    """

    def __init__(self, roots: list[str]) -> None:
        self._roots = tuple({*map(os.path.abspath, roots), *map(os.path.realpath, roots)})

    def _inside(self, where: str) -> bool:
        # Where the finder found it under the tested pythonpath, as named there: a module
        # the tree links in from off that path (a symlink) is still the tree's own.
        named, real = os.path.abspath(where), os.path.realpath(where)  # noqa: PTH100 (no resolve)
        return any(p == r or p.startswith(r + os.sep) for p in (named, real) for r in self._roots)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top, dot, _ = fullname.partition(".")
        if not dot or path is None:
            return None
        # A package the tree gave this process (not the judge's own, imported before).
        where = getattr(sys.modules.get(top), "__file__", None)
        if not where or not self._inside(where) or namespace_root(where):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None:
            return None
        locations = list(spec.submodule_search_locations or ())
        if spec.has_location and spec.origin:
            locations = [spec.origin]
        inside = [w for w in locations if self._inside(w)]
        if not inside:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in the tested tree (patchjudge: its package"
                f" is the tree's; a copy of it elsewhere, at {locations[0] if locations else '?'},"
                " is not imported)",
                name=fullname,
            )
        if not spec.has_location:
            spec.submodule_search_locations = inside
        return spec


@functools.cache
def namespace_root(init: str) -> bool:
    """Whether the package `__init__.py` at `init` only declares a namespace (zope's,
    backports': `extend_path` or `declare_namespace`, in a try or not): its portions are
    other distributions' by design (`zope.interface` beside a tree's `zope.schema`), so
    TreeOnly leaves them importable. One with code of its own (an optional import of a
    submodule) is guarded."""
    try:
        tree = ast.parse(Path(init).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    return _only_declares(tree.body)


_DECLARERS = ("pkgutil", "pkg_resources")


def _only_declares(body: list[ast.stmt]) -> bool:
    for node in body:
        if isinstance(node, ast.Import) and all(a.name in _DECLARERS for a in node.names):
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in _DECLARERS:
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.Try):
            handlers = [stmt for h in node.handlers for stmt in h.body]
            if _only_declares([*node.body, *handlers, *node.orelse, *node.finalbody]):
                continue
            return False
        call = node.value if isinstance(node, ast.Assign | ast.Expr) else None
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] != ["__path__"]:
            return False
        func = call.func if isinstance(call, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("extend_path", "declare_namespace"):
            return False
    return True


def _judge_constants_apart() -> None:
    """The judge's own modules give hypothesis no constants to draw (issue 20).

    hypothesis draws some values from the constants in the source of every
    module it calls local (not in site-packages, the stdlib or a test file).
    The judge's package is local when it is not installed in site-packages
    (an editable checkout: the suite's, the bench's): then this process drew
    from the judge's constants, which no bare run of the properties has
    loaded, and parsed each of its modules to find them (~0.3 CPU-s a judge
    pytest). The code's modules (stand-ins name its files) still count, as
    in a bare run. A hypothesis without the hook (another version in the
    code's venv) is left as it is.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    is_local = getattr(providers, "is_local_module_file", None)
    if not callable(is_local):
        return
    here = Path(__file__).parent
    judge = tuple({f"{here.absolute()}{os.sep}", f"{here.resolve()}{os.sep}"})

    def code_only(path: str) -> bool:
        return not str(Path(path).absolute()).startswith(judge) and bool(is_local(path))

    providers.is_local_module_file = code_only  # type: ignore[assignment,attr-defined]


def _give_to_tree(shadowed_imported: list[str]) -> None:
    """Forget the runner's copy of what the tree provides: its tests import the tree's.

    pytest imported pluggy and iniconfig before this plugin, from the judge's
    venv or the runner copies testrun links ahead of the code's venv; it keeps
    the objects it bound. A break of a project that is pluggy is then its tests'
    failure, not pytest's: run on the head's pluggy, pytest itself broke and
    never registered the project's conftest ("fixture 'pm' not found"). Issue 19.
    """
    owned = runner.tree_owned(runner.top_level(Path(p).name for p in shadowed_imported))
    for name in [m for m in sys.modules if m.split(".", 1)[0] in owned]:
        del sys.modules[name]


def _find_own_patchjudge() -> None:
    """In the code's venv, a `patchjudge` of its own (the project's build) beats the judge's.

    The judge's package reaches the code's interpreter as a directory on
    PYTHONPATH (`testrun.judge_path`), ahead of that venv's site-packages. If
    another entry holds a different `patchjudge`, that is the code under test:
    the judge's entry leaves sys.path (this module is loaded already) and
    configure forgets the judge's modules, as for a tree that is patchjudge.
    """
    global _tree_has_patchjudge  # noqa: PLW0603
    here = Path(__file__).parent
    if not here.is_symlink():
        return  # the judge's own venv: the patchjudge found is this one
    judge_entry, own = here.parent.resolve(), here.resolve()
    for entry in sys.path:
        if not entry or Path(entry).resolve() == judge_entry:
            continue
        candidate = Path(entry, "patchjudge")
        if (candidate / "__init__.py").is_file() and candidate.resolve() != own:
            sys.path[:] = [e for e in sys.path if not e or Path(e).resolve() != judge_entry]
            _tree_has_patchjudge = True
            return


def _prefer_tree(package: str) -> None:
    """Forget the installed `package` (the tested tree has its own).

    This plugin lives in patchjudge, so `patchjudge` is imported before the
    tree is on sys.path: without this, patchjudge's own property tests would
    test the installed judge, never the patch. The plugin keeps its module.
    Done at configure time: the plugin's own import must finish first.
    """
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        if name != __name__:
            del sys.modules[name]


_setup()


# The differential's second harness runs in this process after the main pass (issue 20):
# its events go to the channel under this prefix, a record of their own (testrun.py).
SECOND = "second:"
_prefix = ""


@contextlib.contextmanager
def second_record() -> Iterator[None]:
    """Every event emitted inside is the second harness's (`SECOND`), not the main pass's."""
    global _prefix  # noqa: PLW0603  (one channel, one writer: the judge's own thread)
    _prefix = SECOND
    try:
        yield
    finally:
        _prefix = ""


def emit(event: str, **fields: Any) -> None:
    if _fd is None:
        return
    line = json.dumps({"event": _prefix + event, **fields}, default=str) + "\n"
    data = line.encode("utf-8", "surrogateescape")
    while data:
        n = os.write(_fd, data)
        data = data[n:]


def _hypothesis_profile() -> dict[str, Any] | None:
    if "hypothesis" not in sys.modules:
        return None
    from hypothesis import settings

    current = settings.default
    return None if current is None else {"max_examples": current.max_examples}


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _state(item: pytest.Item) -> str:
    """How the visible suite would treat this item, decided at collection."""
    from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks

    try:
        if evaluate_skip_marks(item) is not None:
            return "skip"
        if evaluate_xfail_marks(item) is not None:
            return "xfail"
    except BaseException:  # a skipif whose condition raises: not a plain run
        return "error"
    return "run"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if _tree_has_patchjudge:
        _prefer_tree("patchjudge")
    if _is_worker(config):
        return
    emit(
        "start",
        pid=os.getpid(),
        hypothesis=_hypothesis_profile(),
        shadowed=_shadowed,
        shadowed_imported=_shadowed_imported,
        coverage_error=_coverage_error,
    )


def _emit_executed(nodeid: str, context: str) -> None:
    """The lines of the measured files run in `context`, as one `executed` event."""
    global _coverage_error  # noqa: PLW0603  (a failure mid-run is reported at finish)
    if _coverage is None or _coverage_error:
        return
    try:
        data = _coverage.get_data()
        data.set_query_context(context)
        lines = {}
        for measured in sorted(data.measured_files()):
            rel = _measured.get(os.path.realpath(measured))
            found = data.lines(measured) if rel is not None else None
            if rel is not None and found:
                lines[rel] = sorted(found)
    except Exception as exc:  # reported, never a silent zero
        _coverage_error = f"coverage.py failed while measuring: {type(exc).__name__}: {exc}"
        return
    if lines:
        emit("executed", nodeid=nodeid, lines=lines)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    # A dynamic context per test: which property ran which changed line.
    if _coverage is None or _coverage_error:
        return (yield)
    _coverage.switch_context(item.nodeid)
    try:
        return (yield)
    finally:
        _coverage.switch_context("")
        _emit_executed(item.nodeid, item.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        emit("collect_error", nodeid=report.nodeid, longrepr=str(report.longrepr)[-_LONGREPR_CAP:])


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if _is_worker(session.config):
        return
    items = [
        {
            "nodeid": item.nodeid,
            "state": _state(item),
            "markers": sorted({m.name for m in item.iter_markers()}),
        }
        for item in session.items
    ]
    emit("collected", items=items)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # unittest cases run through TestCase.run, never pytest_pyfunc_call.
    if isinstance(item, pytest.Function) and not isinstance(item, TestCaseFunction):
        _functions.add(item.nodeid)
    report = yield
    outcome = report.outcome
    # An exception in the call that came back as a pass was rewritten.
    if call.excinfo is not None and outcome == "passed" and not hasattr(report, "wasxfail"):
        outcome = "failed"
    _raw[(item.nodeid, call.when)] = outcome
    if _is_worker(item.config):
        # An xdist worker has no channel: the raw outcome and the call's evidence ride on
        # the report to the controller (TestReport keeps extra attributes through xdist's
        # serialisation), so a rewrite in the worker is caught as it is without xdist.
        called = (item.nodeid in _called) if item.nodeid in _functions else None
        report.__dict__[_CARRIED] = {"raw": outcome, "called": called}
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    # Evidence that the test body was reached the ordinary way: a runner whose
    # runtest() was replaced in-process reports passes without it. The function
    # itself must be called, not just this hook: an implementation of it (a conftest's,
    # a plugin the code registers) that returns True without calling it passes too.
    original = pyfuncitem.obj
    if inspect.iscoroutinefunction(original) or inspect.isasyncgenfunction(original):
        _called.add(pyfuncitem.nodeid)  # run by an async plugin its own way
        return (yield)
    nodeid = pyfuncitem.nodeid

    @functools.wraps(original)
    def reached(*args: Any, **kwargs: Any) -> Any:
        _called.add(nodeid)
        return original(*args, **kwargs)

    pyfuncitem.obj = reached
    try:
        return (yield)
    finally:
        pyfuncitem.obj = original


def _falsifying(text: str) -> list[str]:
    """Hypothesis's failing example(s), each on one line (patchjudge.failure owns the text)."""
    return examples(text)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    longrepr = report.longreprtext if report.failed else ""
    raw = _raw.pop((report.nodeid, report.when), None)
    called = (report.nodeid in _called) if report.nodeid in _functions else None
    worker = getattr(report, "node", None) is not None
    if worker:
        # A worker's report (the controller made none of it): what the worker's
        # makereport recorded; a report that carries nothing reads as rewritten.
        carried = report.__dict__.get(_CARRIED)
        carried = carried if isinstance(carried, dict) else {}
        raw = carried.get("raw") if carried.get("raw") in _OUTCOMES else None
        if raw is None:  # a failure hides nothing (xdist's own report of a crashed worker)
            raw = "failed" if report.outcome == "failed" else _NOT_CARRIED
        called = carried.get("called") if isinstance(carried.get("called"), bool) else None
    emit(
        "report",
        nodeid=report.nodeid,
        when=report.when,
        outcome=report.outcome,
        raw=raw,
        wasxfail=hasattr(report, "wasxfail"),
        duration=round(report.duration, 6),
        longrepr=longrepr[-_LONGREPR_CAP:],
        falsifying=_falsifying(longrepr),
        called=called,
        worker=worker,
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config):
        return
    # What ran outside any test (module bodies at import): node id "".
    _emit_executed("", "")
    emit(
        "finish",
        exitstatus=int(exitstatus),
        hypothesis=_hypothesis_profile(),
        coverage_error=_coverage_error,
    )
