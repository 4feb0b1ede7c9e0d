"""The head's build must ship the tree's modules (ownbuild, red team session 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchjudge import ownbuild, versionfile

GOOD = b"def total(xs):\n    return sum(xs)\n"
TREE = {
    "src/calc/__init__.py": ownbuild.blob_sha(GOOD),
    "src/calc/rates.json": ownbuild.blob_sha(b"{}"),
    "src/ns/part.py": ownbuild.blob_sha(GOOD),  # a namespace portion: no __init__.py
    "src/calc/impl.py": "",  # a symlink: the build packs its target
}
VERSION = "src/calc/_version.py"

# (what the build installed, the problems' beginnings)
ROWS: dict[str, tuple[dict[str, bytes], list[str]]] = {
    "the tree's bytes": ({"calc/__init__.py": GOOD, "calc/rates.json": b"{}"}, []),
    "a symlink's target": ({"calc/impl.py": b"x = 1\n"}, []),
    "another module": (
        {"calc/__init__.py": b"def total(xs):\n    return -1\n"},
        ["the build installs calc/__init__.py other than the tree's src/calc/__init__.py"],
    ),
    "other data": ({"calc/rates.json": b'{"vat": 0}'}, ["the build installs calc/rates.json"]),
    "a module the package lacks": (
        {"calc/_fast.py": GOOD},
        ["the build installs calc/_fast.py, which the tree's package src/calc lacks"],
    ),
    # Imported from the venv in every run (the tree has no such name): judged as shipped.
    "a top-level module the tree lacks": ({"calc_extra.py": GOOD, "other/x.py": GOOD}, []),
    # A namespace portion merges with the venv's: the build's module is what runs.
    "a namespace portion's new module": ({"ns/more.py": GOOD}, []),
    "a compiled module or data file the package lacks": (
        {"calc/_speed.cpython-311-x86_64-linux-gnu.so": b"\x7fELF", "calc/py.typed": b""},
        [],
    ),
    "the version file, data": ({"calc/_version.py": b"version = '1.0'\n"}, []),
    "the version file, code": (
        {"calc/_version.py": b"import os\nversion = '1.0'\n"},
        ["the build installs calc/_version.py holding code, not data"],
    ),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_what_the_build_may_install_beside_the_tree(name: str) -> None:
    installed, expected = ROWS[name]
    found = ownbuild.problems(installed, TREE, ["src"], [VERSION], versionfile.code_in)
    assert len(found) == len(expected), found
    for got, want in zip(found, expected, strict=True):
        assert got.startswith(want), (got, want)


def test_the_first_pythonpath_root_that_holds_a_name_decides() -> None:
    tree = {"lib/calc/__init__.py": ownbuild.blob_sha(b"x = 1\n"), **TREE}
    assert ownbuild.problems({"calc/__init__.py": GOOD}, tree, ["src", "lib"], [], str) == []
    wrong = ownbuild.problems({"calc/__init__.py": GOOD}, tree, ["lib", "src"], [], str)
    assert [p.split(":")[0] for p in wrong] == [
        "the build installs calc/__init__.py other than the tree's lib/calc/__init__.py"
    ]
    root = ownbuild.problems({"calc.py": b"x = 2\n"}, {"calc.py": "0" * 40}, ["."], [], str)
    assert len(root) == 1 and "the tree's calc.py" in root[0], root


def test_the_blob_id_is_gits() -> None:
    assert ownbuild.blob_sha(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def _dist(site: Path, name: str, url: str | None, rows: list[str]) -> None:
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": url, "dir_info": {}}))
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in rows))


def test_only_a_local_builds_own_files_are_read_as_installed(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "calc" / "__pycache__").mkdir(parents=True)
    (site / "calc" / "__init__.py").write_bytes(GOOD)
    (site / "calc" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (site / "dep").mkdir()
    (site / "dep" / "__init__.py").write_bytes(b"dep = 1\n")
    rows = [
        "calc/__init__.py",
        "calc/__pycache__/x.cpython-311.pyc",
        "calc-0.1.dist-info/METADATA",
        "../../../bin/calc",
        "calc/gone.py",
    ]
    _dist(site, "calc", "file:///work/calc", rows)
    _dist(site, "dep", None, ["dep/__init__.py"])  # from an index: not the project's
    _dist(site, "remote", "https://example.org/remote.whl", ["dep/__init__.py"])
    assert ownbuild.installed_files([site, site]) == {"calc/__init__.py": GOOD}
