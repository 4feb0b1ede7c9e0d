"""The tested tree's bytecode, compiled by the judge outside the box and kept (issue 20).

Every judge pytest runs with bytecode writing off (`-B`: a `.pyc` is code,
written by the judge or not at all), so each process of a run, and each
xdist worker in it, compiled the tree's modules again and rewrote the
asserts of every test file: on toolz's 2 s suite that was the larger part
of `patchjudge flakes`' CPU beyond a bare `pytest --count 12 -n 2`, which
reuses its `__pycache__`.

Here the judge writes that bytecode into the scratch tree before pytest
starts: hash-checked `.pyc` for modules (bytecode.compile_files, cached as
the venv's are) and pytest's own rewritten `.pyc` for test files and
conftests (pytest reads them even under `-B`, checking the source's hash).
Compiling and rewriting parse the source; neither runs it. Each is kept in
the judge's cache under the source's SHA-256 and the versions that shape
it, so a later run of the same files only reads them: a changed file has
another key, and a `.pyc` whose hash is not its source's is ignored by the
interpreter and by pytest alike. Nothing the tested code writes can reach
the cache: it is only used when the run is boxed (cache.placement).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import marshal
import os
import sys
import types
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from patchjudge import bytecode, cache

KIND = "pytest-pyc"
# A file this large, or a tree beyond this much source, is left to pytest in the box:
# the judge's own process never spends more than a bounded parse on the patch's bytes.
MAX_FILE_BYTES = 1 << 20
MAX_TREE_BYTES = 16 << 20
# What pytest rewrites, as the judge's ini names test files (testrun._INI), and conftests.
_TEST_PREFIX, _TEST_SUFFIX = "test_", "_test.py"


def is_rewritten(name: str) -> bool:
    """Pure: whether pytest rewrites the asserts of a file of this name under the judge's ini."""
    test = name.startswith(_TEST_PREFIX) or name.endswith(_TEST_SUFFIX)
    return name == "conftest.py" or (test and name.endswith(".py"))


def sources(tree: Path, roots: Iterable[str]) -> Iterator[Path]:
    """The `.py` files under `roots` of `tree`: no link followed, no hidden or cache folder.

    The judge writes beside each one, outside the box: a root that leaves the
    tree (`..` in the ledger) or a folder whose `__pycache__` is not a plain
    folder of its own gives none (materialize drops every `__pycache__` path;
    this holds without it).
    """
    seen: set[Path] = set()
    inside = tree.resolve()
    for root in roots:
        top = tree / root
        if top.is_symlink() or not top.is_dir() or not top.resolve().is_relative_to(inside):
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            cache_dir = Path(folder, "__pycache__")
            if cache_dir.is_symlink() or (cache_dir.exists() and not cache_dir.is_dir()):
                continue
            for name in sorted(files):
                path = Path(folder, name)
                if name.endswith(".py") and path not in seen and not path.is_symlink():
                    seen.add(path)
                    yield path


def pytest_version() -> str:
    """The judge's pytest's version, without importing pytest (a CLI that reads cached
    bytecode runs none of it)."""
    from _pytest._version import version

    return str(version)


def pytest_tail() -> str:
    """Pure but for versions: the name's end of pytest's rewritten `.pyc` (its `PYC_TAIL`)."""
    return f".{sys.implementation.cache_tag}-pytest-{pytest_version()}.pyc"


def rewrite_key(source: bytes, pytest: str | None = None) -> cache.Key:
    """Pure but for the versions: what pytest's rewritten `.pyc` of `source` depends on."""
    return {
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "magic": importlib.util.MAGIC_NUMBER.hex(),
        "pytest": pytest or pytest_version(),
        # The judge's ini sets no enable_assertion_pass_hook: the rewrite's one setting.
        "mode": "rewrite-checked-hash",
    }


def rewritten(path: Path, source: bytes) -> bytes | None:
    """pytest's rewritten `.pyc` of `source`, as pytest writes it; None where pytest itself
    should rewrite it in the box (it does not parse, or rewriting warns: the run shows it)."""
    from _pytest.assertion.rewrite import _write_pyc_fp, rewrite_asserts

    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            tree = ast.parse(source, filename=str(path))
            rewrite_asserts(tree, source, str(path), None)
            code = compile(tree, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if said:
        return None
    out = io.BytesIO()
    _write_pyc_fp(out, importlib.util.source_hash(source), code)
    return out.getvalue()


def _usable(pyc: bytes, source: bytes) -> bool:
    """Pure: pytest's checked-hash header for exactly `source`, and a code object after it."""
    header = importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + importlib.util.source_hash(source)
    if len(pyc) <= len(header) or not pyc.startswith(header):
        return False
    try:
        return isinstance(marshal.loads(pyc[len(header) :]), types.CodeType)
    except (ValueError, EOFError, TypeError):
        return False


def _write(pyc: Path, data: bytes) -> None:
    pyc.parent.mkdir(exist_ok=True)
    pyc.unlink(missing_ok=True)
    with pyc.open("xb") as fh:
        fh.write(data)


def provide(tree: Path, roots: Iterable[str], directory: Path | None) -> bytecode.Tally:
    """Bytecode for the `.py` files under `roots`, beside each in `tree`'s `__pycache__`.

    For the judge's interpreter only (the pyc names carry its cache tag and
    pytest's version). Best effort: what is not written here is compiled by
    the run's own processes, as before.
    """
    plain: list[Path] = []
    tests: list[Path] = []
    budget = MAX_TREE_BYTES
    for path in sources(tree, roots):
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size > MAX_FILE_BYTES or size > budget:
            continue
        budget -= size
        (tests if is_rewritten(path.name) else plain).append(path)
    done = bytecode.compile_files(plain, directory)
    cached, compiled, failed = done.cached, done.compiled, done.failed
    tail = pytest_tail() if tests else ""
    for path in tests:
        try:
            source = path.read_bytes()
        except OSError:
            failed += 1
            continue
        key = rewrite_key(source)
        pyc = path.parent / "__pycache__" / (path.name[:-3] + tail)
        data = cache.read(directory, KIND, key)
        fresh = data is None or not _usable(data, source)
        if fresh:
            data = rewritten(path, source)
        if data is None:
            failed += 1
            continue
        try:
            _write(pyc, data)
        except OSError:
            failed += 1
            continue
        if fresh:
            compiled += 1
            cache.write(directory, KIND, key, data)
        else:
            cached += 1
    return bytecode.Tally(cached, compiled, failed)
