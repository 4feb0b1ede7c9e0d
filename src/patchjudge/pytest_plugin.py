"""The judge's side inside pytest: sys.path, the hypothesis profile, and outcomes.

Loaded with `-p patchjudge.pytest_plugin` before any conftest or test module,
so what it sets up comes first. It writes JSON lines to a pipe the gate
opened ($PATCHJUDGE_RESULT_FD), never to a file the tested code could rewrite,
and records each outcome twice: as pytest made it (innermost wrapper, before
another plugin's wrapper can edit it) and as it was finally logged. A
mismatch means something in the process rewrote a result.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from collections.abc import Generator
from typing import Any

import pytest

CHANNEL_ENV = "PATCHJUDGE_RESULT_FD"
_LONGREPR_CAP = 4000

PRELOAD = (
    "hypothesis",
    "hypothesis.strategies",
    "hypothesis.extra.pytestplugin",
    "pytest_repeat",
    "xdist",
    "xdist.plugin",
)

_fd: int | None = None
_raw: dict[tuple[str, str], str] = {}


def _setup() -> None:
    global _fd  # noqa: PLW0603  (set once, at import, before any test code runs)
    env = os.environ
    # Taken out of the environment so code under test does not inherit it.
    fd = env.pop(CHANNEL_ENV, None)
    if fd is not None:
        _fd = int(fd)
        os.set_inheritable(_fd, False)
    # These two stay in the environment: xdist workers load this plugin again
    # and need them (a worker's sys.path is the controller's snapshot from
    # before the tree joined it).
    examples = env.get("PATCHJUDGE_MAX_EXAMPLES")
    if examples is not None:
        from hypothesis import settings

        settings.register_profile(
            "patchjudge",
            max_examples=int(examples),
            database=None,
            deadline=None,
            derandomize=False,
            print_blob=True,
        )
    # The judge's own tools are imported before the tested tree joins
    # sys.path: a `hypothesis/` or `pytest_repeat.py` in the patch then finds
    # the real module already in sys.modules and shadows nothing.
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    extra = [p for p in env.get("PATCHJUDGE_PYTHONPATH", "").split(os.pathsep) if p]
    # The interpreter ran with -I: nothing of the tested tree was on sys.path
    # while site ran, so its sitecustomize and .pth files never loaded.
    sys.path[:0] = extra


_setup()


def emit(event: str, **fields: Any) -> None:
    if _fd is None:
        return
    line = json.dumps({"event": event, **fields}, default=str) + "\n"
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


def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):
        return
    origins = {n: getattr(sys.modules.get(n), "__file__", None) for n in ("pytest", *PRELOAD)}
    emit("start", pid=os.getpid(), hypothesis=_hypothesis_profile(), origins=origins)


@pytest.hookimpl(trylast=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        emit("collect_error", nodeid=report.nodeid, longrepr=str(report.longrepr)[:_LONGREPR_CAP])


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
    report = yield
    outcome = report.outcome
    # An exception in the call that came back as a pass was rewritten.
    if call.excinfo is not None and outcome == "passed" and not hasattr(report, "wasxfail"):
        outcome = "failed"
    _raw[(item.nodeid, call.when)] = outcome
    return report


_EXAMPLE_STARTS = ("Falsifying example", "Falsifying explicit example", "Failing test case")


def _falsifying(text: str) -> list[str]:
    """Hypothesis's failing example(s), each folded onto one line.

    Hypothesis prints `Falsifying example: f(x=1)` (older) or a multi-line
    `Failing test case: f(\n    x=1,\n)` (newer); both end when the call's
    parentheses close.
    """
    found: list[str] = []
    current: list[str] | None = None
    depth = 0
    for raw in text.splitlines():
        line = raw[1:].strip() if raw.startswith("E ") else raw.strip()
        if current is None and line.startswith(_EXAMPLE_STARTS):
            current, depth = [], 0
        if current is None:
            continue
        current.append(line)
        depth += line.count("(") - line.count(")")
        if depth <= 0:
            found.append(" ".join(current).replace("( ", "(").replace(", )", ")"))
            current = None
    return found


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    longrepr = report.longreprtext if report.failed else ""
    emit(
        "report",
        nodeid=report.nodeid,
        when=report.when,
        outcome=report.outcome,
        raw=_raw.pop((report.nodeid, report.when), None),
        wasxfail=hasattr(report, "wasxfail"),
        duration=round(report.duration, 6),
        longrepr=longrepr[-_LONGREPR_CAP:],
        falsifying=_falsifying(longrepr),
        worker=getattr(report, "node", None) is not None,
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config):
        return
    emit("finish", exitstatus=int(exitstatus), hypothesis=_hypothesis_profile())
