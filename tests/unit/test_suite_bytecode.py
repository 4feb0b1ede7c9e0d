"""The suite's own speed: the judge's package gets hash-checked bytecode once a run, in the
xdist controller before any worker starts (tests/conftest.py), so the hundreds of gate
subprocesses read it instead of compiling the judge's modules again."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

import patchjudge
from tests.conftest import (
    CHECKED_HASH,
    CHECKOUT_PACKAGE,
    compiles_here,
    judge_bytecode,
    stale_bytecode,
)

# The suite writes bytecode only for this checkout's own package (tests/conftest.py).
INSTALLED = pytest.mark.skipif(
    Path(patchjudge.__file__).resolve().parent != CHECKOUT_PACKAGE,
    reason="patchjudge is installed, not this checkout's src",
)


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "src" / "judge"
    (package / "lanes").mkdir(parents=True)
    (package / "__init__.py").write_text("X = 1\n")
    (package / "lanes" / "__init__.py").write_text("")
    (package / "lanes" / "freeze.py").write_text("def run():\n    return 0\n")
    (package / "schema.json").write_text("{}\n")
    return package


def _pyc(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_every_module_gets_hash_checked_bytecode_of_its_current_bytes(tmp_path: Path) -> None:
    package = _package(tmp_path)
    sources = sorted(package.rglob("*.py"))
    assert stale_bytecode(package) == sources
    judge_bytecode(package)
    for source in sources:
        header = _pyc(source).read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER, source
        assert int.from_bytes(header[4:8], "little") == CHECKED_HASH, source
        assert header[8:16] == importlib.util.source_hash(source.read_bytes()), source
    assert stale_bytecode(package) == []


def test_fresh_bytecode_is_never_rewritten_and_a_changed_source_is_compiled_again(
    tmp_path: Path,
) -> None:
    # A second run in the same checkout must change no file a running one's guard watches.
    package = _package(tmp_path)
    judge_bytecode(package)
    stamps = {p: p.stat() for p in package.rglob("*.pyc")}
    judge_bytecode(package)
    for pyc, st in stamps.items():
        now = pyc.stat()
        assert (now.st_ino, now.st_mtime_ns, now.st_ctime_ns) == (
            st.st_ino, st.st_mtime_ns, st.st_ctime_ns
        ), pyc  # fmt: skip
    changed = package / "lanes" / "freeze.py"
    changed.write_text("def run():\n    return 1\n")
    assert stale_bytecode(package) == [changed]
    judge_bytecode(package)
    assert stale_bytecode(package) == []


def test_a_timestamp_pyc_or_a_foreign_one_is_stale(tmp_path: Path) -> None:
    package = _package(tmp_path)
    judge_bytecode(package)
    source = package / "__init__.py"
    pyc = _pyc(source)
    header = pyc.read_bytes()
    pyc.write_bytes(header[:4] + (0).to_bytes(4, "little") + header[8:])  # timestamp-based
    assert stale_bytecode(package) == [source]
    pyc.write_bytes(b"\0\0\0\0" + header[4:])  # another interpreter's magic
    assert stale_bytecode(package) == [source]


@INSTALLED
def test_this_run_compiled_the_judge_before_the_tests_started() -> None:
    # In an xdist worker: written by the controller; without xdist: by this process.
    assert stale_bytecode(Path(patchjudge.__file__).resolve().parent) == []


def _config(*, worker: bool = False, collectonly: bool = False) -> pytest.Config:
    config = SimpleNamespace(option=SimpleNamespace(collectonly=collectonly))
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return cast(pytest.Config, config)


def test_only_the_controller_of_a_run_compiles_and_only_this_checkouts_package() -> None:
    assert compiles_here(_config(), CHECKOUT_PACKAGE)
    assert not compiles_here(_config(worker=True), CHECKOUT_PACKAGE)
    # A gate judging this repository collects this suite: no bytecode from that.
    assert not compiles_here(_config(collectonly=True), CHECKOUT_PACKAGE)
    # An installed patchjudge (a venv's site-packages) is not the suite's to write.
    site = Path(sysconfig.get_paths()["purelib"]) / "patchjudge"
    assert not compiles_here(_config(), site)


def test_collection_keeps_pytests_rewritten_test_modules_with_bytecode_writing_off(
    tmp_path: Path,
) -> None:
    # Every xdist worker inherits PYTHONDONTWRITEBYTECODE from tests/conftest.py: without
    # its collection hook each one rewrote every test module's asserts on every run.
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1\n")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
         "--collect-only", "-q", "-c", os.devnull, "--rootdir", str(tmp_path),
         str(tmp_path / "test_one.py")],
        cwd=root, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = [p.name for p in (tmp_path / "__pycache__").glob("test_one.*.pyc")]
    assert len(kept) == 1 and "-pytest-" in kept[0], kept
