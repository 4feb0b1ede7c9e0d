"""The tested tree's bytecode, compiled by the judge and kept (issue 20, treepyc.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from patchjudge import bytecode, cache, treepyc


@pytest.mark.parametrize(
    ("name", "rewritten"),
    [
        ("test_x.py", True),
        ("x_test.py", True),
        ("conftest.py", True),
        ("x.py", False),
        ("testing.py", False),
        ("test_x.pyi", False),
        ("test_data.txt", False),
    ],
)
def test_what_pytest_rewrites_under_the_judges_ini(name: str, rewritten: bool) -> None:
    assert treepyc.is_rewritten(name) is rewritten


def test_the_name_is_pytests_own() -> None:
    from _pytest.assertion.rewrite import PYC_TAIL

    assert treepyc.pytest_tail() == PYC_TAIL


def test_a_changed_input_misses() -> None:
    key = treepyc.rewrite_key(b"assert 1\n", "9.2.0")
    assert treepyc.rewrite_key(b"assert 1\n", "9.2.0") == key
    assert treepyc.rewrite_key(b"assert 2\n", "9.2.0") != key  # the source
    assert treepyc.rewrite_key(b"assert 1\n", "9.3.0") != key  # pytest's version
    assert key["magic"] and key["mode"]  # the interpreter's bytecode and the format
    assert bytecode.cache_key(b"x = 1\n") != bytecode.cache_key(b"x = 2\n")


def _tree(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": "def one():\n    return 1\n",
        "tests/conftest.py": "",
        "tests/test_a.py": "from pkg.mod import one\n\ndef test_a():\n    assert one() == 2\n",
        # pytest warns when it rewrites this one: left to pytest, so the run still shows it.
        "tests/test_warns.py": "def test_w():\n    assert (1, 'always true')\n",
        "tests/test_bad.py": "def (:\n",
        ".hidden/test_h.py": "",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    outside = root.parent / f"{root.name}-outside.py"
    outside.write_text("secret = 1\n")
    (root / "tests/test_link.py").symlink_to(outside)
    return root


def _pycs(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*.pyc")}


def test_compiled_once_then_read_from_the_cache(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    first = _tree(tmp_path / "one")
    made = treepyc.provide(first, [".", "tests"], store)
    # Not the link (its target is outside the tree), the hidden folder, the file that does
    # not parse or the one whose rewrite warns (failed: pytest meets them in the box).
    assert (made.cached, made.compiled, made.failed) == (0, 4, 2), made
    tag, tail = sys.implementation.cache_tag, treepyc.pytest_tail()
    assert _pycs(first) == {
        f"pkg/__pycache__/__init__.{tag}.pyc",
        f"pkg/__pycache__/mod.{tag}.pyc",
        f"tests/__pycache__/conftest{tail}",
        f"tests/__pycache__/test_a{tail}",
    }
    # Another tree with the same files reads them all; a changed file misses.
    second = _tree(tmp_path / "two")
    (second / "tests/test_a.py").write_text("def test_a():\n    assert 3 == 4\n")
    again = treepyc.provide(second, [".", "tests"], store)
    assert (again.cached, again.compiled, again.failed) == (3, 1, 2), again
    assert _pycs(second) == _pycs(first)


def test_an_entry_that_is_not_the_sources_bytecode_is_recompiled(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    tree = _tree(tmp_path / "t")
    source = (tree / "tests/test_a.py").read_bytes()
    other = treepyc.rewritten(tree / "x.py", b"assert 0\n")
    assert other is not None
    cache.write(store, treepyc.KIND, treepyc.rewrite_key(source), other)
    made = treepyc.provide(tree, ["tests"], store)
    pyc = tree / "tests/__pycache__" / ("test_a" + treepyc.pytest_tail())
    assert (made.cached, made.compiled) == (0, 2), made
    assert pyc.read_bytes() == treepyc.rewritten(tree / "tests/test_a.py", source)


def test_a_file_beyond_the_bound_is_left_to_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "t")
    monkeypatch.setattr(treepyc, "MAX_FILE_BYTES", 10)
    made = treepyc.provide(tree, ["tests", "pkg"], None)
    # Within 10 bytes: the empty conftest.py and pkg/__init__.py, and test_bad.py (failed).
    assert _pycs(tree) == {
        f"tests/__pycache__/conftest{treepyc.pytest_tail()}",
        f"pkg/__pycache__/__init__.{sys.implementation.cache_tag}.pyc",
    }
    assert (made.cached, made.compiled, made.failed) == (0, 2, 1), made


def test_pytest_reads_the_judges_bytecode_and_fails_as_it_would(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t")
    shutil.rmtree(tree / ".hidden")
    (tree / "tests/test_bad.py").unlink()
    treepyc.provide(tree, [".", "tests"], None)
    log = tmp_path / "debug.log"
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": str(tree),
    }
    argv = [sys.executable, "-B", "--check-hash-based-pycs", "always", "-m", "pytest"]
    argv += ["-p", "no:cacheprovider", f"--debug={log}", "-q", "tests/test_a.py"]
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "assert 1 == 2" in done.stdout  # the rewritten assert's own explanation
    trace = log.read_text()
    assert "found cached rewritten pyc" in trace and "rewriting" not in trace.split("test_a")[0]
    assert not (tree / "tests/__pycache__" / "test_a.pyc").exists()


def test_nothing_is_written_outside_the_tree(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tree / "tests/__pycache__").symlink_to(outside, target_is_directory=True)
    made = treepyc.provide(tree, ["pkg", "tests", "../outside", ".."], None)
    assert list(outside.iterdir()) == []
    assert made.compiled == 2  # pkg's two modules only
