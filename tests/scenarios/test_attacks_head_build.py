"""The base's tree never runs the head's build (red team, session 14, redteam8).

The code's venv holds the head's build of the project: `[gate] install = ["."]`,
the head's wheel built in the box (boxbuild) and installed as the nox session
does. Every run of the base's tree (pathfilter's collection, the freeze lane's
base runs, the differential's base rerun in the worker) found there whatever
the base's tree lacks: a top-level optional module, an entry point the head's
wheel declares. `worker.hide_own_build` now takes the project's build out of
those runs (tests/unit/test_own_build.py).
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from patchjudge import boxbuild, codeenv
from tests.attack_helpers import fast_ledger, require_sandbox
from tests.helpers import LEDGER, Result, bare_venv, cli, cli_env, commit, example_repo, git, write
from tests.scenarios.test_differential_inprocess import INSIDE, PROPERTY

pytestmark = pytest.mark.slow

# The project's own build: the smallest PEP 517 backend (the judge's venv has no wheel
# package for setuptools), run in the box as `[gate] install = ["."]` runs it. It packs
# src/ and declares the entry points entry_points.cfg names.
PYPROJECT = '[build-system]\nrequires = []\nbuild-backend = "packsrc"\nbackend-path = ["_build"]\n'
BACKEND = """
import os, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, info = "calc-0.1-py3-none-any.whl", "calc-0.1.dist-info/"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for top, _, files in os.walk("src"):
            for f in files:
                whl.write(os.path.join(top, f), os.path.relpath(os.path.join(top, f), "src"))
        whl.writestr(info + "METADATA", "Metadata-Version: 2.1\\nName: calc\\nVersion: 0.1\\n")
        whl.writestr(info + "WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        if os.path.exists("entry_points.cfg"):
            whl.write("entry_points.cfg", info + "entry_points.txt")
        whl.writestr(info + "RECORD", "")
    return name
"""
# Drops the visible test the head deletes from every collection it runs in.
HIDING = """
try:
    import patchjudge.pytest_plugin as _real
except ImportError:  # the properties' worker: no judge plugin to edit
    _real = None


def run():
    if _real is None:
        return
    _emit = _real.emit

    def emit(event, **fields):
        if event == "collected":
            fields["items"] = [i for i in fields["items"] if not i["nodeid"].endswith("test_two")]
        _emit(event, **fields)

    _real.emit = emit


run()
"""
GONE = "visible test gone: tests/test_calc.py::test_two"


def _installed(repo: Path, where: Path) -> Path:
    """The code's venv: the judge's runtime, and the checkout's build as nox installs it."""
    python, site = bare_venv(where)
    (site / "judge_runtime.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = boxbuild.build_wheel(repo, where.parent / "wheels", "sandbox")
    boxbuild.install(wheel, codeenv.resolve(str(python)))
    return python


def _gate(repo: Path, python: Path) -> tuple[Result, dict]:  # type: ignore[type-arg]
    env = cli_env(PATCHJUDGE_CACHE_DIR=str(repo.parent / "cache"))
    result = cli(
        repo, "gate", "--base", "main", "--today", "2026-12-01", "--python", str(python), env=env
    )
    return result, json.loads((repo / ".patchjudge" / "verdict.json").read_text())


def _lane(repo: Path, python: Path, name: str) -> tuple[Result, dict]:  # type: ignore[type-arg]
    """One lane alone, where the test's subject is that lane's base run (a lane's fail is a
    reject: tests/unit/test_verdict.py); the whole gate is the honest accept's."""
    env = cli_env(PATCHJUDGE_CACHE_DIR=str(repo.parent / "cache"))
    today = ("--today", "2026-12-01") if name == "freeze" else ()
    result = cli(repo, name, "--base", "main", *today, "--python", str(python), env=env)
    return result, json.loads((repo / ".patchjudge" / f"{name}.json").read_text())


def _repo(tmp_path: Path, calc: str, ledger: str = "") -> Path:
    require_sandbox()
    files = {
        "pyproject.toml": PYPROJECT,
        "_build/packsrc.py": BACKEND,
        "src/calc/__init__.py": calc,
        "eval/gate.toml": ledger or fast_ledger(isolation="sandbox"),
        ".gitignore": ".patchjudge/\n",
    }
    return example_repo(tmp_path, **files)


def _deletes_test_two(repo: Path, files: dict[str, str]) -> None:
    tests = (repo / "tests" / "test_calc.py").read_text()
    write(repo, {"tests/test_calc.py": tests[: tests.index("def test_two")], **files})
    commit(repo, "hostile")


OPTIONAL_TOP = (
    "try:\n    import _calc_speedups  # noqa: F401\nexcept ImportError:\n"
    "    _calc_speedups = None\n\n\ndef total(xs):\n    return sum(xs)\n"
)


def test_a_heads_top_level_module_never_runs_in_the_base_collection(tmp_path: Path) -> None:
    repo = _repo(tmp_path, OPTIONAL_TOP)
    _deletes_test_two(repo, {"src/_calc_speedups.py": HIDING})
    result, found = _lane(repo, _installed(repo, tmp_path / "code"), "pathfilter")
    # On main e75b20e: pathfilter passed (undecided by the review of _calc_speedups.py only):
    # the base's `import _calc_speedups` ran the head's, installed in the code's venv.
    assert (result.code, found["status"]) == (1, "fail"), (found, result.err[-2000:])
    assert GONE in found["reasons"], found["reasons"]


PLUGIN_LOADER = (
    "from importlib.metadata import entry_points\n\n\ndef total(xs):\n    return sum(xs)\n\n\n"
    "for _plugin in entry_points(group='calc.plugins'):\n    _plugin.load()\n"
)


def test_a_heads_entry_point_is_not_the_bases(tmp_path: Path) -> None:
    repo = _repo(tmp_path, PLUGIN_LOADER)
    plugin = "[calc.plugins]\nfast = calc_fast\n"
    _deletes_test_two(repo, {"entry_points.cfg": plugin, "src/calc_fast.py": HIDING})
    result, found = _lane(repo, _installed(repo, tmp_path / "code"), "pathfilter")
    # On main e75b20e: pathfilter passed: the base's loader found the head's entry point in
    # the venv's metadata and imported the head's calc_fast. Now the base lists no such
    # entry point (it would have failed to import it): the base collects whole.
    assert (result.code, found["status"]) == (1, "fail"), (found, result.err[-2000:])
    assert GONE in found["reasons"], found["reasons"]
    assert not [r for r in found["reasons"] if "does not collect" in r], found["reasons"]


# The differential's base rerun, in the worker: an in-process property file whose test
# the head passes only in process is held unless the base's code fails it out of process
# too. The head's build made the base's code fail there, and so excused the head.
ORDERED = (
    "def total(xs):\n    return sum(xs)\n\n\ndef ordered(xs):\n    return sorted(xs)\n\n\n"
    "try:\n    from _calc_speedups import ordered  # noqa: F811\nexcept ImportError:\n    pass\n"
)
IN_PROCESS_ONLY = (
    "def ordered(xs):\n"
    '    return sorted(xs) if "/in/tree/" in __import__("calc").__file__ else list(xs)\n'
)


def test_the_differentials_base_rerun_never_imports_the_heads_build(tmp_path: Path) -> None:
    ledger = LEDGER.replace('base = "main"', 'base = "main"\nisolation = "sandbox"', 1)
    ledger = ledger.replace("timeout_s = 60\n", f'timeout_s = 60\nin_process = ["{INSIDE}"]\n', 1)
    repo = _repo(tmp_path, ORDERED, ledger)
    git(repo, "checkout", "-q", "main")
    write(repo, {INSIDE: PROPERTY})
    commit(repo, "an in-process property")
    git(repo, "checkout", "-q", "patch")
    git(repo, "merge", "-q", "main")
    write(repo, {"src/_calc_speedups.py": IN_PROCESS_ONLY})
    commit(repo, "speed-ups right only in process")
    result, lane = _lane(repo, _installed(repo, tmp_path / "code"), "properties")
    assert "differential" in lane["details"], (lane, result.err[-2000:])
    [seen] = [
        e
        for e in lane["details"]["differential"]["in_process"]
        if e["nodeid"] == f"{INSIDE}::test_ordered_is_sorted"
    ]
    # On main e75b20e: base "failed: ...": the base's code imported the head's installed
    # _calc_speedups in the worker, so the head's in-process-only pass was the file's.
    assert seen["second"].startswith("failed: "), seen
    assert seen["base"] == "passed", (seen, result.err[-2000:])
    # A passing lane with that entry holds the merge (undecided): tests/unit/test_verdict.py.
    assert lane["status"] == "pass", lane["reasons"]


# The honest look-alike: the base's own speed-ups, version and plugins, which its tree
# declares and holds; the head's build has the same (and its version) in the venv.
HONEST = (
    "from importlib.metadata import entry_points, version\n\n"
    "try:\n    import _calc_speedups\nexcept ImportError:\n    _calc_speedups = None\n"
    "__version__ = version('calc')\n"
    "PLUGINS = [p.load() for p in entry_points(group='calc.plugins')]\n\n\n"
    "def total(xs):\n    assert _calc_speedups.FAST and PLUGINS == ['mine'], PLUGINS\n"
    "    return sum(xs)\n"
)


def test_an_honest_base_keeps_its_own_speedups_version_and_plugins(tmp_path: Path) -> None:
    repo = _repo(tmp_path, HONEST)
    git(repo, "checkout", "-q", "main")
    own = {
        "src/_calc_speedups.py": "FAST = True\n",
        "src/calc_plugins.py": "PLUGIN = 'mine'\n",
        "entry_points.cfg": "[calc.plugins]\nmine = calc_plugins:PLUGIN\n",
    }
    write(repo, own)
    commit(repo, "speed-ups and a plugin of its own")
    git(repo, "checkout", "-q", "patch")
    git(repo, "merge", "-q", "main")
    write(repo, {"src/calc/__init__.py": HONEST.replace("sum(xs)", "sum(list(xs))")})
    commit(repo, "honest")
    result, found = _gate(repo, _installed(repo, tmp_path / "code"))
    assert found["verdict"] == "accept_for_review", (found["reasons"], result.err[-2000:])


# The freeze lane's base run: a visible test the head skips at run time must have run at
# base to count as newly skipped. The base's `total` is the speed-ups' if built; the
# head's, installed, skips the test, so it was skipped at base too and none was "new".
ACCELERATED = (
    "def total(xs):\n    return sum(xs)\n\n\n"
    "try:\n    from _calc_speedups import total  # noqa: F811\nexcept ImportError:\n    pass\n"
)
SKIPPING = (
    "import sys\n\n\ndef total(xs):\n"
    "    if len(xs) == 2 and 'pytest' in sys.modules:\n"
    "        sys.modules['pytest'].skip('speed-ups: not for two')\n"
    "    return sum(xs)\n"
)


def test_the_freeze_lanes_base_run_never_imports_the_heads_build(tmp_path: Path) -> None:
    repo = _repo(tmp_path, ACCELERATED)
    write(repo, {"src/_calc_speedups.py": SKIPPING})
    commit(repo, "speed-ups that skip a visible test")
    result, freeze = _lane(repo, _installed(repo, tmp_path / "code"), "freeze")
    # On main e75b20e: freeze passed: the base's run imported the head's installed
    # _calc_speedups and skipped test_two too, so the head's skip was not new.
    assert any("newly skipped at run time" in p and "test_two" in p for p in freeze["reasons"]), (
        freeze,
        result.err[-2000:],
    )
    assert (result.code, freeze["status"]) == (1, "fail"), freeze
