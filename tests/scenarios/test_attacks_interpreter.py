"""Attacks on the interpreter: start-up files in the tree, writes into the judge, forged reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.attack_helpers import (
    BROKEN_CALC,
    Judged,
    attack,
    gate_with,
    judged,
    require_sandbox,
    throwaway_python,
)
from tests.helpers import cli, commit, example_repo, write

# If any of these ran, `calc` would be a correct stand-in and the broken patch would pass.
HEAL = "import sys, types; m = types.ModuleType('calc'); m.total = sum; sys.modules['calc'] = m"

STARTUP: dict[str, dict[str, str | bytes | None]] = {
    "sitecustomize in src": {"src/sitecustomize.py": HEAL + "\n"},
    "usercustomize in src": {"src/usercustomize.py": HEAL + "\n"},
    "pth in src": {"src/zz_heal.pth": HEAL + "\n"},
    "sitecustomize at the root": {"sitecustomize.py": HEAL + "\n", "usercustomize.py": HEAL + "\n"},
    "pth beside the properties' rootdir": {"heal.pth": HEAL + "\n"},
}


def test_startup_files_in_the_tree_never_run(tmp_path: Path) -> None:
    # Every place at once, one gate: each file heals calc, so one that ran anywhere would
    # pass the broken patch (no file can shadow another into silence: all of them heal).
    planted: dict[str, str | bytes | None] = {}
    for files in STARTUP.values():
        planted.update(files)
    assert len(planted) == 6  # no two places share a path
    judged_ = attack(tmp_path, {"src/calc/__init__.py": BROKEN_CALC, **planted})
    assert judged_.decision == "reject", judged_.explain()
    assert judged_.says("properties: property failed"), judged_.explain()


FAKE_HYPOTHESIS = {
    "src/hypothesis/__init__.py": """
        class settings:
            default = None
            def __init__(self, *a, **k): pass
            def __call__(self, f): return f
            @staticmethod
            def register_profile(*a, **k): pass
        def given(*a, **k):
            def deco(f):
                def test(): pass
                test.__name__ = f.__name__
                return test
            return deco
        """,
    "src/hypothesis/strategies.py": "def lists(*a, **k): pass\ndef integers(*a, **k): pass\n",
    "src/hypothesis/extra/__init__.py": "",
    "src/hypothesis/extra/pytestplugin.py": """
        def pytest_addoption(parser):
            parser.addoption("--hypothesis-seed")
            parser.addoption("--hypothesis-profile")
        """,
}


def test_tree_shadowing_hypothesis_is_rejected(tmp_path: Path) -> None:
    """A fake `hypothesis` on the tested pythonpath once passed every property (fixed)."""
    judged_ = attack(tmp_path, {"src/calc/__init__.py": BROKEN_CALC, **FAKE_HYPOTHESIS})
    assert judged_.decision == "reject", judged_.explain()
    # Out of process the property files import the judge's hypothesis (a judge
    # tool, never a stand-in), which finds the bug; the tree's copy is inert.
    assert judged_.says("properties: property failed"), judged_.explain()
    assert not judged_.says("shadows"), judged_.explain()


# Runs at import of the code under test, i.e. already while pathfilter collects the
# visible suite: plant a fake hypothesis ahead of the real one for the later lanes.
PLANT_PTH = """
import pathlib, site

_sp = pathlib.Path(site.getsitepackages()[0])
_fake = _sp / "zz_fake"
(_fake / "hypothesis").mkdir(parents=True, exist_ok=True)
(_fake / "hypothesis" / "__init__.py").write_text("def given(*a, **k):\\n    return lambda f: f\\n")
(_sp / "aaa_attack.pth").write_text(f"import sys; sys.path.insert(0, {str(_fake)!r})\\n")


def total(xs):
    return -1
"""


def _judged_in_a_throwaway_venv(tmp_path: Path, code: str, isolation: str) -> tuple[Path, Judged]:
    """The gate, run by a venv of its own (throwaway_python), on a patch of calc to `code`."""
    python = throwaway_python(tmp_path)
    repo = example_repo(tmp_path, **{"eval/gate.toml": _ledger(isolation)})
    write(repo, {"src/calc/__init__.py": code})
    commit(repo)
    return python, judged(repo, gate_with(python, repo))


def test_code_that_writes_a_pth_into_the_judge_venv_is_rejected(tmp_path: Path) -> None:
    python, result = _judged_in_a_throwaway_venv(tmp_path, PLANT_PTH, "process")
    assert result.decision == "reject", result.explain()
    assert result.says(
        "pathfilter: tested code wrote outside its scratch tree: added", "aaa_attack.pth"
    )
    assert (python.parent.parent / "lib").exists()  # the write landed in the throwaway venv


# A rewrite that keeps everything the stamp compares but the ctime and the link
# count: the same size, the old mtime put back, and a hard link of its own so
# the ctime reads like another install's link (the guard once excused that).
RELINK = """
import os, pathlib, site, tempfile

_pth = pathlib.Path(site.getsitepackages()[0]) / "_patchjudge_test_deps.pth"
_st = _pth.stat()
_text = _pth.read_bytes()
_pth.write_bytes(_text.replace(b"import site; ", b"import site ;"))  # same size, still working
os.utime(_pth, ns=(_st.st_atime_ns, _st.st_mtime_ns))
os.link(_pth, pathlib.Path(tempfile.mkdtemp()) / "link")


def total(xs):
    return sum(xs)
"""


def test_a_same_size_rewrite_re_dated_and_relinked_is_tampering(tmp_path: Path) -> None:
    _, result = _judged_in_a_throwaway_venv(tmp_path, RELINK, "process")
    assert result.decision == "reject", result.explain()
    # The first lane that ran the code says so, not a later one the rewrite happened to break.
    assert result.says(
        "pathfilter: tested code wrote outside its scratch tree: changed",
        "_patchjudge_test_deps.pth",
    ), result.explain()


# Finds the user's checkout the way an attacker would (the gate is its parent
# process, its cwd is the checkout) and forges every report and the verdict.
FORGE = """
import json, os, pathlib

def _ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])


def _forge():
    # Up the process tree to the gate's cwd: out of process the parent is the judge.
    for pid in _ancestors():
        try:
            checkout = pathlib.Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if (checkout / ".git").exists():
            break
    else:
        return
    reports = checkout / ".patchjudge"
    reports.mkdir(exist_ok=True)
    for path in reports.glob("*.json"):
        doc = json.loads(path.read_text())
        if "lane" in doc:
            doc.update(status="pass", reasons=[])
            path.write_text(json.dumps(doc))
    (reports / "verdict.json").write_text(json.dumps({"verdict": "accept_for_review"}))

_forge()


def total(xs):
    return sum(xs)
"""


def _ledger(isolation: str | None = None) -> str:
    from tests.attack_helpers import fast_ledger

    return fast_ledger(isolation=isolation)


def test_in_the_sandbox_the_judge_venv_is_read_only(tmp_path: Path) -> None:
    require_sandbox()
    python, result = _judged_in_a_throwaway_venv(tmp_path, PLANT_PTH, "sandbox")
    assert result.decision == "reject", result.explain()
    assert not list((python.parent.parent / "lib").rglob("aaa_attack.pth"))
    assert not result.says("tested code wrote outside its scratch tree"), result.explain()


@pytest.mark.parametrize("isolation", ["process", "sandbox"])
def test_forged_reports_in_the_checkout_change_no_gate_verdict(
    tmp_path: Path, isolation: str
) -> None:
    if isolation == "sandbox":
        require_sandbox()
    judged_ = attack(
        tmp_path,
        {"src/calc/__init__.py": FORGE, "eval/notes.txt": "sneak\n"},
        base={"eval/gate.toml": _ledger(isolation)},
    )
    assert judged_.decision == "reject", judged_.explain()
    assert judged_.says("protected path changed: eval/notes.txt")
    # Process-level isolation detects the forgery; the sandbox never lets it reach the checkout.
    assert judged_.says(
        "tested code wrote outside its scratch tree:",
        "added .patchjudge/verdict.json (in the checkout)",
    ) is (isolation == "process"), judged_.explain()


@pytest.mark.long
def test_forged_reports_between_nox_lanes_fail_the_lane_that_ran_the_code(tmp_path: Path) -> None:
    """The nox flow: one process a lane, the verdict read from disk afterwards."""
    repo = example_repo(tmp_path, **{"eval/gate.toml": _ledger("process")})
    write(repo, {"src/calc/__init__.py": FORGE, "eval/notes.txt": "sneak\n"})
    commit(repo)
    common = ("--base", "main", "--today", "2026-12-01", "--run-id", "nox1")
    codes = {lane: cli(repo, lane, *common).code for lane in ("pathfilter", "fixtures", "freeze")}
    assert codes["pathfilter"] == 1
    assert cli(repo, "properties", *common).code == 1
    cli(repo, "replay", *common)
    final = cli(repo, "verdict", *common)
    doc = json.loads((repo / ".patchjudge" / "verdict.json").read_text())
    assert final.code == 1 and doc["verdict"] == "reject", final
    assert any(
        r.startswith("properties: tested code wrote outside its scratch tree: changed .patchjudge/")
        for r in doc["reasons"]
    ), doc["reasons"]


MINI_PROPERTY = """
from hypothesis import given, strategies as st

from patchjudge.mini import double


@given(st.integers())
def test_double_is_even(x):
    assert double(x) % 2 == 0
    assert double(x) == x + x
"""


def test_a_tree_that_is_patchjudge_is_judged_as_the_patch_not_the_installed_judge(
    tmp_path: Path,
) -> None:
    """patchjudge's own eval: its properties once tested the installed judge (fixed)."""
    base = {
        "src/patchjudge/__init__.py": "",
        "src/patchjudge/mini.py": "def double(x):\n    return 2 * x\n",
        "eval/properties/test_mini.py": MINI_PROPERTY,
    }
    patch = {"src/patchjudge/mini.py": "def double(x):\n    return 2 * x + 1\n"}
    judged_ = attack(tmp_path, patch, base=base)
    assert judged_.decision == "reject", judged_.explain()
    assert judged_.says("property failed: eval/properties/test_mini.py::test_double_is_even")


# Plants a hook in the user's checkout: it would run at their next commit.
HOOK = """
import os, pathlib

_hooks = pathlib.Path(os.readlink(f"/proc/{os.getppid()}/cwd")) / ".git" / "hooks"
if _hooks.is_dir():
    (_hooks / "post-commit").write_text("#!/bin/sh\\necho owned\\n")


def total(xs):
    return sum(xs)
"""


@pytest.mark.long
def test_code_that_plants_a_git_hook_in_the_checkout_is_rejected(tmp_path: Path) -> None:
    judged_ = attack(
        tmp_path, {"src/calc/__init__.py": HOOK}, base={"eval/gate.toml": _ledger("process")}
    )
    assert judged_.decision == "reject", judged_.explain()
    assert judged_.says(
        "tested code wrote outside its scratch tree: added .git/hooks/post-commit (in the checkout)"
    ), judged_.explain()


def test_in_the_sandbox_no_hook_reaches_the_checkout(tmp_path: Path) -> None:
    require_sandbox()
    judged_ = attack(
        tmp_path, {"src/calc/__init__.py": HOOK}, base={"eval/gate.toml": _ledger("sandbox")}
    )
    # Prevented, not detected: the code under test is correct and could not see the
    # checkout, so no lane fails. What it tried is still held (issue 18): its /proc and
    # getppid probes, and the lines no property runs.
    assert judged_.decision == "undecided", judged_.explain()
    assert all(r.startswith("review: ") for r in judged_.reasons), judged_.explain()
    assert judged_.says("review: probe of the judge at src/calc/__init__.py:", "/proc")
    assert not (judged_.repo / ".git" / "hooks" / "post-commit").exists()
