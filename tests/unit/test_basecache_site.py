"""The base caches' key holds what of the code's venv a base run can load (red team, s12)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from patchjudge import basecache
from patchjudge.git import TreeEntry


def _entry(path: str) -> TreeEntry:
    return TreeEntry(mode="100644", kind="blob", sha="0" * 40, path=path)


def test_the_base_tree_shadows_the_top_level_modules_of_its_pythonpath() -> None:
    paths = ("src/calc/__init__.py", "src/one.py", "src/ns/core.py", "tests/t.py", "x.py")
    entries = [_entry(p) for p in paths]
    # A directory without __init__.py (src/ns, and src, tests under ".") is a namespace
    # portion: a regular package of its name in the code's venv wins over it at base.
    assert basecache.shadowed(entries, ["src"]) == {"calc", "one"}
    assert basecache.shadowed(entries, ["."]) == {"x"}
    assert basecache.shadowed(entries, []) == set()


def test_the_base_tree_covers_its_files_and_folders_under_each_root() -> None:
    entries = [_entry(p) for p in ("src/calc/__init__.py", "src/calc/sub/m.py", "tests/t.py")]
    assert basecache.covered(entries, ["src"]) == {
        "calc", "calc/__init__.py", "calc/sub", "calc/sub/m.py"
    }  # fmt: skip
    assert basecache.covered(entries, []) == set()


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    for rel, text in {
        "calc/__init__.py": "VALUE = 1\n",
        "calc-0.1.dist-info/METADATA": "Name: calc\n",
        "calc-0.1.dist-info/RECORD": "calc/__init__.py,,\n",
        "_pytest/main.py": "x = 1\n",
        "__pycache__/py.cpython-311.pyc": "bytecode",
        "py.py": "y = 1\n",
    }.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    return site


def _write(rel: str, text: str) -> Callable[[Path], None]:
    def change(site: Path) -> None:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)

    return change


# What the base's tree holds of the package (basecache.covered): its copy wins at base.
COVERED = frozenset({"calc", "calc/__init__.py", "calc/_version.py"})


@pytest.mark.parametrize(
    ("change", "moves"),
    [
        (_write("calc-0.1.dist-info/entry_points.txt", "[pytest11]\nx = calc_plug\n"), True),
        (_write("calc_plug.py", "z = 1\n"), True),
        (_write("_pytest/main.py", "x = 2\n"), True),
        (_write("sitecustomize.py", ""), True),
        (_write("zz.pth", "import calc_plug\n"), True),
        # Named like the project's package, not the package: it runs at every start.
        (_write("calc.pth", "import calc_plug\n"), True),
        # The project's own package (the tree's copy runs at base), bookkeeping, bytecode.
        (_write("calc/__init__.py", "VALUE = 2\n"), False),
        (_write("calc/_version.py", "v = '0.1'\n"), False),
        # One the tree lacks: a base package that merges portions imports it (redteam7).
        (_write("calc/_speedups.py", "fast = True\n"), True),
        (_write("calc/sub/__init__.py", ""), True),
        (_write("calc-0.1.dist-info/RECORD", "calc/__init__.py,sha256=x,9\n"), False),
        (_write("calc-0.1.dist-info/direct_url.json", '{"url": "file:///w/1/calc.whl"}'), False),
        (_write("__pycache__/py.cpython-311.pyc", "other bytecode"), False),
    ],
    ids=[
        "an entry point", "a module", "a runtime distribution's source", "a start-up file",
        "a .pth", "a .pth named like the package", "the project's package", "a file in it",
        "a file the tree lacks", "a subpackage the tree lacks", "RECORD", "direct_url", "bytecode",
    ],
)  # fmt: skip
def test_the_digest_moves_with_what_a_base_run_can_load(
    tmp_path: Path, change: Callable[[Path], None], moves: bool
) -> None:
    site = _site(tmp_path)
    before = basecache.site_digest.__wrapped__((site,), frozenset({"calc"}), COVERED)
    change(site)
    after = basecache.site_digest.__wrapped__((site,), frozenset({"calc"}), COVERED)
    assert (before != after) is moves
