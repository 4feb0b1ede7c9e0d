"""What the head leaves in the code's venv never reaches a later head's verdict (red team, s12).

The judge keeps the base's collection (and which ids ran at base) in its cache,
keyed by everything the base's run depends on, the code's venv among it
(`--python`; nox passes one). That venv holds the head's build. A head whose
install put a `pytest11` entry point named `patchjudge.pytest_plugin` in it
made every pytest of the venv run its module as the judge's plugin, the base's
collection too: it added a test to each collection. Under the venv's
distribution names and versions alone the forged base collection was kept,
and the next, honest head on that machine was rejected "visible test gone"
for the phantom. boxbuild now refuses such a wheel (test_boxbuild.py); this
is the second line, for a venv no wheel check saw (the user's own install):
the key holds the bytes a base run can load, the project's own package aside.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from tests.attack_helpers import fast_ledger, require_sandbox
from tests.helpers import (
    PROPERTY,
    Result,
    bare_venv,
    cli,
    cli_env,
    commit,
    example_repo,
    git,
    write,
)

pytestmark = pytest.mark.slow

# The judge's own plugin, re-exported, with one test more in every collection.
FAKE_PLUGIN = """
import patchjudge.pytest_plugin as _real

_emit = _real.emit


def emit(event, **fields):
    if event == "collected":
        phantom = {"nodeid": "tests/test_calc.py::test_phantom", "state": "run", "markers": []}
        fields["items"] = [*fields["items"], phantom]
    _emit(event, **fields)


_real.emit = emit
globals().update({k: v for k, v in vars(_real).items() if k.startswith("pytest_")})
"""
INFO = "calc-0.1.dist-info"


def _code_venv(where: Path, package: str, hostile: bool) -> Path:
    """The code's venv at `where`, rebuilt: the judge's runtime, the project as installed."""
    shutil.rmtree(where, ignore_errors=True)
    python, site = bare_venv(where)
    (site / "judge_runtime.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "calc").mkdir()
    (site / "calc" / "__init__.py").write_text(package)
    (site / INFO).mkdir()
    (site / INFO / "METADATA").write_text("Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n")
    (site / INFO / "RECORD").write_text("")
    if hostile:
        (site / "calc_plug.py").write_text(FAKE_PLUGIN)
        (site / INFO / "entry_points.txt").write_text(
            "[pytest11]\npatchjudge.pytest_plugin = calc_plug\n"
        )
    return python


def _gate(repo: Path, python: Path, cache: Path) -> tuple[Result, dict]:  # type: ignore[type-arg]
    import json

    env = cli_env(PATCHJUDGE_CACHE_DIR=str(cache))
    result = cli(
        repo, "gate", "--base", "main", "--today", "2026-12-01", "--python", str(python), env=env
    )
    report = json.loads((repo / ".patchjudge" / "verdict.json").read_text())
    pathfilter = json.loads((repo / ".patchjudge" / "pathfilter.json").read_text())
    return result, {**report, "base_collection": pathfilter["details"]["cache"]["base_collection"]}


def _pathfilter(repo: Path, python: Path, cache: Path) -> tuple[Result, dict]:  # type: ignore[type-arg]
    """pathfilter alone: the lane that collects the base and keeps it (a hostile head's run
    here only leaves its collection in the cache; the honest head's whole gate reads it)."""
    import json

    env = cli_env(PATCHJUDGE_CACHE_DIR=str(cache))
    result = cli(repo, "pathfilter", "--base", "main", "--python", str(python), env=env)
    report = json.loads((repo / ".patchjudge" / "pathfilter.json").read_text())
    return result, {**report, "base_collection": report["details"]["cache"]["base_collection"]}


def _head(repo: Path, branch: str, code: str) -> None:
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", branch)
    write(repo, {"src/calc/__init__.py": code})
    commit(repo, branch)


def _repo(tmp_path: Path) -> Path:
    return example_repo(
        tmp_path,
        **{"eval/gate.toml": fast_ledger(isolation="sandbox"), ".gitignore": ".patchjudge/\n"},
    )


def test_a_heads_install_cannot_leave_the_base_collection_for_the_next_head(
    tmp_path: Path,
) -> None:
    require_sandbox()
    repo, venv, cache = _repo(tmp_path), tmp_path / "code", tmp_path / "cache"
    _head(repo, "hostile", "def total(xs):\n    return sum(list(xs))\n")
    _pathfilter(repo, _code_venv(venv, "VALUE = 1\n", hostile=True), cache)
    _head(repo, "honest", "def total(xs):\n    return sum(iter(xs))\n")
    result, found = _gate(repo, _code_venv(venv, "VALUE = 2\n", hostile=False), cache)
    # Was: reject, "pathfilter: visible test gone: tests/test_calc.py::test_phantom"
    # (the hostile run's base collection, kept and read back: "hit").
    assert (found["verdict"], found["base_collection"]) == ("accept_for_review", "miss"), (
        found["reasons"],
        result.err[-2000:],
    )


def test_an_honest_heads_own_package_still_reads_the_kept_base_collection(
    tmp_path: Path,
) -> None:
    require_sandbox()
    repo, venv, cache = _repo(tmp_path), tmp_path / "code", tmp_path / "cache"
    _head(repo, "first", "def total(xs):\n    return sum(list(xs))\n")
    _, first = _pathfilter(repo, _code_venv(venv, "VALUE = 1\n", hostile=False), cache)
    _head(repo, "second", "def total(xs):\n    return sum(iter(xs))\n")
    # The installed project differs head by head; the base's run imports the tree's.
    _, second = _gate(repo, _code_venv(venv, "VALUE = 2\n", hostile=False), cache)
    assert (first["status"], first["base_collection"]) == ("pass", "miss"), first
    assert (second["verdict"], second["base_collection"]) == ("accept_for_review", "hit")


# Red team, session 12 (third round): the key left out every top-level name the base's
# tree has on its pythonpath, a namespace package (a directory, no __init__.py) among
# them; a regular package of that name in the code's venv wins over a namespace portion
# earlier on sys.path, so the base's runs imported the head's installed `calc`.
FORGING_PACKAGE = FAKE_PLUGIN.replace("globals().update(", "_unused = dict(")


def _namespace_repo(tmp_path: Path) -> Path:
    """The example project with `calc` a namespace package (src/calc/core.py, no __init__)."""
    repo = _repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    (repo / "src" / "calc" / "__init__.py").unlink()
    write(
        repo,
        {
            "src/calc/core.py": "def total(xs):\n    return sum(xs)\n",
            "tests/test_calc.py": "from calc.core import total\n\n\ndef test_empty():\n"
            "    assert total([]) == 0\n\n\ndef test_two():\n    assert total([1, 2]) == 3\n",
            "eval/properties/test_total.py": PROPERTY.replace(
                "from calc import", "from calc.core import"
            ),
        },
    )
    commit(repo, "calc as a namespace package")
    return repo


def _namespace_venv(where: Path, core: str, init: str | None) -> Path:
    """The code's venv: the namespace project installed (`init`: a head's calc/__init__.py)."""
    shutil.rmtree(where, ignore_errors=True)
    python, site = bare_venv(where)
    (site / "judge_runtime.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "calc").mkdir()
    (site / "calc" / "core.py").write_text(core)
    if init is not None:
        (site / "calc" / "__init__.py").write_text(init)
    (site / INFO).mkdir()
    (site / INFO / "METADATA").write_text("Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n")
    (site / INFO / "RECORD").write_text("")
    return python


def _namespace_head(repo: Path, branch: str, code: str) -> None:
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", branch)
    write(repo, {"src/calc/core.py": code})
    commit(repo, branch)


def test_a_heads_package_over_a_namespace_package_cannot_leave_the_base_collection(
    tmp_path: Path,
) -> None:
    require_sandbox()
    repo, venv, cache = _namespace_repo(tmp_path), tmp_path / "code", tmp_path / "cache"
    _namespace_head(repo, "hostile", "def total(xs):\n    return sum(list(xs))\n")
    core = "def total(xs):\n    return sum(xs)\n"
    _pathfilter(repo, _namespace_venv(venv, core, FORGING_PACKAGE), cache)
    _namespace_head(repo, "honest", "def total(xs):\n    return sum(iter(xs))\n")
    result, found = _gate(repo, _namespace_venv(venv, core, None), cache)
    # On lead: reject, "pathfilter: visible test gone: tests/test_calc.py::test_phantom":
    # the hostile head's calc/__init__.py ran in the base's collection, and the key left
    # the namespace package's name out ("hit").
    assert (found["verdict"], found["base_collection"]) == ("accept_for_review", "miss"), (
        found["reasons"],
        result.err[-2000:],
    )


# Red team, session 13 (redteam7): a base package that merges portions of its name
# (`pkgutil.extend_path`) and imports an optional module reaches the head's installed
# `calc/_speedups.py` in the code's venv at base: the key left the whole installed
# `calc/` out, as the tree's copy of each of its files wins, yet this one the base has not.
MERGING_CALC = (
    "import pkgutil\n\n"
    "__path__ = pkgutil.extend_path(__path__, __name__)\n"
    "try:\n    from calc import _speedups  # noqa: F401\nexcept ImportError:\n"
    "    _speedups = None\n\n\n"
    "def total(xs):\n    return sum(xs)\n"
)


def _merging_venv(where: Path, init: str, speedups: str | None) -> Path:
    """The code's venv: the project installed, with a head's `calc/_speedups.py` or none."""
    python = _code_venv(where, init, hostile=False)
    if speedups is not None:
        site = next(Path(where).glob("lib/python*/site-packages"))
        (site / "calc" / "_speedups.py").write_text(speedups)
    return python


def _merging_base(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repo, where the code's venv goes, the judge's cache): main's calc merges portions."""
    require_sandbox()
    repo, venv, cache = _repo(tmp_path), tmp_path / "code", tmp_path / "cache"
    git(repo, "checkout", "-q", "main")
    write(repo, {"src/calc/__init__.py": MERGING_CALC})
    commit(repo, "calc merges portions and takes its speed-ups if built")
    return repo, venv, cache


def test_a_heads_portion_of_a_merging_base_package_cannot_leave_the_base_collection(
    tmp_path: Path,
) -> None:
    repo, venv, cache = _merging_base(tmp_path)
    _head(repo, "hostile", MERGING_CALC.replace("sum(xs)", "sum(list(xs))"))
    _pathfilter(repo, _merging_venv(venv, MERGING_CALC, FORGING_PACKAGE), cache)
    _head(repo, "honest", MERGING_CALC.replace("sum(xs)", "sum(iter(xs))"))
    result, found = _gate(repo, _merging_venv(venv, MERGING_CALC, None), cache)
    # On main 6400fdf: reject, "pathfilter: visible test gone: tests/test_calc.py::
    # test_phantom": the hostile head's calc/_speedups.py ran in the base's collection
    # through the base's extend_path, and the key left the installed calc/ out ("hit").
    assert (found["verdict"], found["base_collection"]) == ("accept_for_review", "miss"), (
        found["reasons"],
        result.err[-2000:],
    )


# The same reach within one run, no cache needed: the head deletes the visible test its
# code fails and ships a `calc/_speedups.py` that drops that test from every collection.
# At base the merging package imported it from the code's venv (the head's build).
HIDING = """
import patchjudge.pytest_plugin as _real

_emit = _real.emit


def emit(event, **fields):
    if event == "collected":
        fields["items"] = [i for i in fields["items"] if not i["nodeid"].endswith("test_two")]
    _emit(event, **fields)


_real.emit = emit
"""


def test_a_heads_portion_of_a_merging_base_package_never_runs_in_the_base_collection(
    tmp_path: Path,
) -> None:
    repo, venv, cache = _merging_base(tmp_path)
    git(repo, "checkout", "-q", "-b", "hostile")
    tests = (repo / "tests" / "test_calc.py").read_text()
    write(
        repo,
        {
            "tests/test_calc.py": tests[: tests.index("def test_two")],
            "src/calc/_speedups.py": HIDING,
        },
    )
    commit(repo, "hostile")
    result, found = _pathfilter(repo, _merging_venv(venv, MERGING_CALC, HIDING), cache)
    # On main 6400fdf: pathfilter passed (undecided only by the review of _speedups.py):
    # the base's collection, forged by the head's installed module, lacked test_two too.
    # A lane's fail is a reject (tests/unit/test_verdict.py).
    assert (result.code, found["status"]) == (1, "fail"), (found, result.err[-2000:])
    assert "visible test gone: tests/test_calc.py::test_two" in found["reasons"]
