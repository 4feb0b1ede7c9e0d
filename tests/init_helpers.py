"""What the init, tox and demo tests share: a patchjudge wheel, a real sdist, small projects."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import patchjudge
from patchjudge.config import LEDGER, parse_ledger
from patchjudge.git import no_git_env
from patchjudge.paths import first_match
from tests.helpers import built_once, commit, git, init_repo

ROOT = Path(patchjudge.__file__).resolve().parents[2]
# A real, small, pure-Python library whose sdist ships its pytest suite (flat
# layout: six.py and test_six.py at the top). Pinned by hash: the bytes are fixed.
SIX = "six==1.16.0"
SIX_SHA256 = "1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926"


def run(
    argv: list[str], cwd: Path, timeout: float = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        env=no_git_env({**os.environ, **(env or {})}),
        timeout=timeout,
    )


def build_wheel(dest: Path, src: Path = ROOT) -> Path:
    """patchjudge's wheel from the checkout `src` (this one by default), built from a copy:
    two workers never share a build/ dir."""
    tree = dest / "src-copy"
    # The suite writes bytecode into src (tests/conftest.py): a wheel ships sources only.
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__")
    shutil.copytree(src / "src", tree / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (src / name).exists():
            shutil.copy2(src / name, tree / name)
    uv = Path(sys.executable).with_name("uv")
    argv = [str(uv) if uv.exists() else "uv", "build", "-q", "--wheel", "--out-dir", str(dest)]
    result = run([*argv, str(tree)], dest)
    assert result.returncode == 0, result.stderr
    (wheel,) = dest.glob("patchjudge-*.whl")
    return wheel


def spec(wheel: Path) -> tuple[str, str]:
    """init's arguments naming the run's one judge wheel (tests/conftest.py `judge_wheel`).

    Without them init builds a wheel from this editable checkout each time (~2.3 of its
    ~3.6 CPU-s, issue 20); only the tests whose subject is that default pin leave them out.
    """
    return ("--patchjudge-spec", str(wheel))


def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip3") or shutil.which("pip")
    if found is None:
        pytest.skip("no pip to download the third-party sdist with")
    return [found]


# Where `sdist` keeps what it downloaded, shared by the run's xdist workers
# (tests/conftest.py sets it); None: each call downloads into its own `dest`.
DOWNLOADS: Path | None = None


def _download(dest: Path, name: str, version: str, sha256: str) -> Path:
    req = dest / f"{name}.txt"
    req.write_text(f"{name}=={version} --hash=sha256:{sha256}\n")
    argv = [*_pip(), "download", "-q", "--no-deps", "--no-binary", ":all:", "--require-hashes"]
    result = run([*argv, "-r", str(req), "-d", str(dest)], dest, timeout=300)
    assert result.returncode == 0, result.stderr
    (archive,) = dest.glob(f"*-{version}.tar.gz")
    return archive


def sdist(dest: Path, name: str, version: str, sha256: str) -> Path:
    """The unpacked sdist of name==version, downloaded from PyPI with its hash checked."""
    dest.mkdir(parents=True, exist_ok=True)
    if DOWNLOADS is None:
        archive = _download(dest, name, version, sha256)
    else:
        archive = built_once(
            DOWNLOADS, f"sdist-{name}-{version}", lambda d: _download(d, name, version, sha256)
        )
        # pip checked the hash as it downloaded; checked again, as the bytes are shared.
        assert hashlib.sha256(archive.read_bytes()).hexdigest() == sha256, archive
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest / archive.name.removesuffix(".tar.gz")


def six_sdist(dest: Path) -> Path:
    return sdist(dest, "six", "1.16.0", SIX_SHA256)


# A flat layout whose package root holds only its version: the API lives in
# submodules (pyflakes.api declares __all__). Its suite is inside the package
# (pyflakes/test) and needs nothing but pytest; setup.py only, so PEP 517's
# setuptools builds it. Nothing the judge runs on imports pyflakes.
PYFLAKES = ("pyflakes", "3.4.0", "b24f96fafb7d2ab0ec5075b7350b3d2d2218eab42003821c06344973d3ea2f58")
# A src layout (src/cachetools, its root names its API in __all__) with its
# suite in tests/ (pytest only) and [build-system] requires setuptools and
# wheel. No dependencies; nothing the judge runs on imports it.
CACHETOOLS = (
    "cachetools", "6.2.1", "3f391e4bd8f8bf0931169baf7456cc822705f4e2a31f840d218f445b9a854201"
)  # fmt: skip
# The second top-level package of the src layout: no small library on the index
# has two public packages under src/ and a suite that collects with pytest alone
# (attrs has attr/attrs but the judge itself checks those names, cattrs and black
# need dependencies), so the team's own package sits beside the library's, as it
# would in a monorepo. Its root is empty: init walks it.
TEAM_PACKAGE = {
    "src/cachestats/__init__.py": "",
    "src/cachestats/counters.py": (
        '"""Hit ratios for the caches."""\n\n__all__ = ["hit_ratio", "WINDOW"]\n\nWINDOW = 100\n\n\n'
        "def hit_ratio(hits, misses):\n    total = hits + misses\n"
        "    return hits / total if total else 0.0\n\n\ndef _unused():\n    return None\n"
    ),
    "src/cachestats/_impl.py": "def hidden():\n    return 1\n",
    "tests/test_cachestats.py": (
        "from cachestats.counters import hit_ratio\n\n\n"
        "def test_hit_ratio():\n    assert hit_ratio(1, 1) == 0.5\n"
    ),
}


def repo_from_tree(tree: Path, path: Path) -> Path:
    """A git repository on main holding a copy of `tree`, as its authors would commit it."""
    shutil.copytree(tree, path)
    git(path, "init", "-q", "-b", "main")
    commit(path, "upstream sources")
    return path


def tracked(repo: Path) -> list[str]:
    return [p for p in git(repo, "ls-files", "-z").split("\0") if p]


def unmapped_tracked(repo: Path) -> list[str]:
    """Tracked paths the committed ledger's [map] leaves unmapped."""
    ledger = parse_ledger((repo / LEDGER).read_bytes())
    return [p for p in tracked(repo) if first_match(ledger.map, p) is None]


def src_project(path: Path) -> Path:
    """A src-layout project with fixtures, docs and a file init cannot place."""
    return init_repo(
        path,
        {
            "README.md": "# tally\n",
            "pyproject.toml": (
                '[project]\nname = "tally"\nversion = "1"\ndependencies = ["attrs>=23"]\n'
            ),
            "Makefile": "test:\n\tpytest\n",
            "scripts/release.sh": "echo release\n",
            "docs/index.md": "tally\n",
            "src/tally/__init__.py": (
                '"""Tallies."""\n\n__all__ = ["count", "MISSING"]\n\nMISSING = object()\n\n\n'
                "def count(xs):\n    return len(list(xs))\n\n\ndef _private():\n    return 1\n"
            ),
            "tests/test_tally.py": (
                "from tally import count\n\n\ndef test_count():\n    assert count([1]) == 1\n"
            ),
            "tests/fixtures/expected.json": '{"count": 1}\n',
            "tests/fixtures/nested/raw.bin": b"\x00\x01",
        },
    )


def flat_project(path: Path) -> Path:
    """A flat-layout package with its suite in tests/ and no packaging at all."""
    return init_repo(
        path,
        {
            "calc/__init__.py": "def total(xs):\n    return sum(xs)\n",
            "tests/test_calc.py": (
                "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
            ),
        },
    )
