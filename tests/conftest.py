"""The suite's hypothesis settings: no deadlines (a loaded CI box is slow, not wrong),
and in CI a derandomized search, so a red run is a change in the code, not in luck."""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

import patchjudge
from patchjudge import git as pgit
from tests import init_helpers
from tests.helpers import GATE_ARGV, Result, benign_repo, built_once, judged_once, shared_dir

# The gate's guard watches patchjudge's own package: a test's subprocess that
# wrote bytecode there while another test's gate ran would read as tampering.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
# The judge's cache (issue 20): the suite's own, never the user's ~/.cache.
SUITE_CACHE = "PATCHJUDGE_SUITE_CACHE_DIR"


def suite_cache(environ: Mapping[str, str]) -> str | None:
    """The judge's cache dir this process inherits from its run's xdist controller, or None:
    make one (and remove it at exit). Pure.

    One a run, not one a worker: the base collections and the charmap one worker computed are
    hits on the other (the controller makes it before its workers start; they inherit its
    environment). Only an xdist worker inherits it, so what a scenario finds there is what
    this run wrote: a value from a shell or an outer pytest is never reused.
    """
    inherited = environ.get(SUITE_CACHE, "")
    if environ.get("PYTEST_XDIST_WORKER") and inherited and Path(inherited).is_absolute():
        return inherited
    return None


if (_inherited := suite_cache(os.environ)) is not None and Path(_inherited).is_dir():
    os.environ["PATCHJUDGE_CACHE_DIR"] = _inherited
else:
    # The maker's pid in its name: tests/unit/test_suite_cache.py checks who made it.
    os.environ[SUITE_CACHE] = tempfile.mkdtemp(prefix=f"patchjudge-test-cache-{os.getpid()}-")
    os.environ["PATCHJUDGE_CACHE_DIR"] = os.environ[SUITE_CACHE]
    atexit.register(shutil.rmtree, os.environ[SUITE_CACHE], True)

settings.register_profile("patchjudge-suite", deadline=None, print_blob=True)
settings.register_profile(
    "patchjudge-ci", parent=settings.get_profile("patchjudge-suite"), derandomize=True
)
settings.load_profile("patchjudge-ci" if os.environ.get("CI") else "patchjudge-suite")


@pytest.fixture(scope="session")
def lane_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of init's pinned lane runtime and nothing else: a code venv (`--python`)."""
    venv = tmp_path_factory.mktemp("lane-venv") / "venv"
    uv = Path(sys.executable).with_name("uv")
    lane = Path(patchjudge.__file__).parent / "templates" / "init" / "lane.txt"
    subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(uv), "pip", "install", "-q", "--python", str(python), "--require-hashes",
         "-r", str(lane)],
        check=True,
    )  # fmt: skip
    return python


@pytest.fixture(scope="session")
def judge_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """patchjudge's wheel, built once for the run: tests only read it (init copies it)."""
    return built_once(shared_dir(tmp_path_factory), "judge-wheel", init_helpers.build_wheel)


@pytest.fixture(scope="session")
def benign_gate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """benign_repo gated once for the run (issue 20), read-only: test_gate's accept and
    test_gate_sharing's shared head collection read different fields of its reports."""
    repo, results = judged_once(tmp_path_factory, "benign-gate", benign_repo, {"gate": GATE_ARGV})
    return repo, results["gate"]


@pytest.fixture(scope="session", autouse=True)
def _downloads_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each pinned sdist is downloaded once for the run (pip takes seconds of CPU), unpacked
    afresh for each test that asks."""
    init_helpers.DOWNLOADS = shared_dir(tmp_path_factory)


def environment_changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The variables a test left added, changed or removed, pytest's own aside. Pure."""
    names = (set(before) | set(after)) - {"PYTEST_CURRENT_TEST"}
    return sorted(n for n in names if before.get(n) != after.get(n))


@pytest.fixture(autouse=True)
def _environment_kept() -> Iterator[None]:
    """A test leaves the worker's environment as it found it: a variable set in process
    (init's noxfile sets VIRTUALENV_NO_SEED at import) changes every later test's
    subprocesses in that worker (tox built venvs with no pip). Use monkeypatch."""
    before = dict(os.environ)
    yield
    changed = environment_changes(before, os.environ)
    assert not changed, f"the test changed os.environ and left it so: {changed}; use monkeypatch"


@pytest.fixture(autouse=True)
def _git_readers_closed() -> Iterator[None]:
    """A test's in-process git readers end with it: patchjudge.git keeps one `git cat-file
    --batch` a repository for the process's life (atexit closes them), so a unit test that
    read a blob left a git process (and its tmp_path's repo open) until the worker exited."""
    yield
    pgit.close_all()


# The long poles (issue 20): with --dist=worksteal each xdist worker is first given a
# contiguous half of the collection and steals from the tail of the other's, so a
# minute-long test collected late can leave one core alone on it at the end of the run.
LONG_MARKERS = ("slow", "long")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "long: a minute or more of CPU on a loaded machine; scheduled first"
    )
    package = Path(patchjudge.__file__).resolve().parent
    if compiles_here(config, package):
        judge_bytecode(package)


# This checkout's own package: an installed patchjudge is not the suite's to write.
CHECKOUT_PACKAGE = Path(__file__).resolve().parents[1] / "src" / "patchjudge"


def compiles_here(config: pytest.Config, package: Path) -> bool:
    """Whether this process writes the judge's bytecode: the xdist controller (or a run
    without xdist) of a run that runs tests, on this checkout's own package. Not a
    collection: a gate judging this repository collects this suite in its scratch tree."""
    worker = hasattr(config, "workerinput")
    return not worker and not config.option.collectonly and package == CHECKOUT_PACKAGE


# A pyc's header: magic, flags (bit 0: hash-based, bit 1: checked), then the source's hash.
CHECKED_HASH = 0b11


def stale_bytecode(package: Path) -> list[Path]:
    """The sources of `package` without a hash-checked `.pyc` of their current bytes."""
    stale: list[Path] = []
    for source in sorted(package.rglob("*.py")):
        try:
            with Path(importlib.util.cache_from_source(str(source))).open("rb") as fh:
                header = fh.read(16)
        except OSError:
            header = b""
        fresh = (
            header[:4] == importlib.util.MAGIC_NUMBER
            and int.from_bytes(header[4:8], "little") == CHECKED_HASH
            and header[8:16] == importlib.util.source_hash(source.read_bytes())
        )
        if not fresh:
            stale.append(source)
    return stale


def judge_bytecode(package: Path) -> None:
    """Hash-checked bytecode for the judge's own package, written once before any test runs.

    Every scenario runs the judge in fresh subprocesses with bytecode writing
    off, so each of them compiled the judge's modules again (a large share of a
    gate's CPU). Written here, in the xdist controller before its workers start,
    in the same mode as the judge's compile step (patchjudge.bytecode); the interpreter reads a
    hash-checked `.pyc` only while the source's bytes match it. Nothing is
    rewritten when every `.pyc` is fresh: a second run in this checkout then
    changes no file that a running one's guard watches (tests/conftest.py's
    PYTHONDONTWRITEBYTECODE says why that matters). A tree that cannot be written
    to only makes the run slower.
    """
    # Only the stale ones, each by py_compile: compileall skips a source whose
    # timestamp `.pyc` (a run with bytecode writing on left it) matches its mtime,
    # whatever invalidation mode it is asked for.
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    with contextlib.suppress(OSError):
        for source in stale_bytecode(package):
            py_compile.compile(str(source), quiet=2, invalidation_mode=mode)


@pytest.hookimpl(wrapper=True)
def pytest_collection() -> Iterator[object]:
    """Collection keeps pytest's cache of rewritten test modules (issue 20).

    The line at the top of this file hands PYTHONDONTWRITEBYTECODE to the xdist workers
    too, so each of them rewrote the asserts of all ~280 test modules on every run
    (~4 CPU-s a worker here) and kept nothing. On only while collecting: xdist schedules
    no test before every worker has collected, so no gate runs while this writes, and
    the judge's own package already has fresh bytecode (judge_bytecode). The caches are
    `__pycache__` (.gitignore, MANIFEST.in's global-exclude).
    """
    was = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = was


def long_poles_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` with those marked slow or long first; each group keeps its order (a stable
    sort), so a module whose tests are all marked still runs as one block of its fixtures."""
    return sorted(items, key=lambda item: not any(item.get_closest_marker(m) for m in LONG_MARKERS))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # trylast: after pytest has grouped items by their fixtures' scopes, so this order is final.
    items[:] = long_poles_first(items)
