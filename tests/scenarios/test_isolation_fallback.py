"""issue 19: isolation is never weaker in silence.

The gate runs inside a real box that forbids user namespaces (bubblewrap's
`--disable-userns`), as a container that blocks them would: `auto` says on
stderr and in verdict.md why the patch's code ran unboxed; `sandbox` stops
at once with one line. The honest look-alike is the same gate outside that
box: no fallback line, no reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patchjudge.git import no_git_env
from tests.attack_helpers import require_sandbox
from tests.helpers import Result, cli, commit, example_repo, gate, verdict, write
from tests.init_helpers import ROOT, flat_project, spec

BENIGN = {"src/calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"}


def _no_userns(repo: Path, *args: str, path: str | None = None) -> Result:
    """`patchjudge ARGS` inside a box where the kernel refuses every user namespace."""
    require_sandbox()  # the outer box needs one user namespace itself
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    env = no_git_env({k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")})
    if path is not None:
        env["PATH"] = path
    argv = [bwrap, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--"]
    argv += [sys.executable, "-m", "patchjudge", *args]
    done = subprocess.run(
        argv, cwd=repo, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    return Result(done.returncode, done.stdout, done.stderr)


def _patched(tmp_path: Path) -> Path:
    repo = example_repo(tmp_path)
    write(repo, BENIGN)
    commit(repo, "benign")
    return repo


def _fallback_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "without a sandbox" in line]


def test_auto_without_user_namespaces_says_why_on_stderr_and_in_the_verdict(
    tmp_path: Path,
) -> None:
    repo = _patched(tmp_path)
    result = _no_userns(repo, "gate", "--base", "main", "--today", "2026-12-01")
    assert result.code == 0, result.out + result.err
    # One line, once per run, with the kernel's own answer.
    lines = _fallback_lines(result.err)
    assert len(lines) == 1, result.err
    assert "isolation 'auto'" in lines[0]
    assert (
        "the kernel refuses user namespaces: unshare: No space left on device (ENOSPC)"
        in (lines[0])
    )
    doc = verdict(repo)
    assert doc["verdict"] == "accept_for_review"
    assert doc["review"]["isolation"] == "process"
    assert doc["review"]["isolation_fallback"].startswith("the kernel refuses user namespaces")
    md = (repo / ".patchjudge" / "verdict.md").read_text()
    assert "- isolation: process (no sandbox" in md
    assert "isolation 'auto' found no sandbox: the kernel refuses user namespaces" in md
    for lane in ("pathfilter", "properties"):
        details = result.report(repo, lane)["details"]
        assert details["isolation_fallback"] == doc["review"]["isolation_fallback"]


def test_auto_without_bwrap_names_bwrap(tmp_path: Path) -> None:
    repo = _patched(tmp_path)
    # git and the interpreter only: no bwrap on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    result = _no_userns(repo, "pathfilter", "--base", "main", path=str(bin_dir))
    assert result.code == 0, result.out + result.err
    lines = _fallback_lines(result.err)
    assert len(lines) == 1 and "without a sandbox: bwrap is not on PATH;" in lines[0]
    report = result.report(repo, "pathfilter")
    assert report["details"]["isolation_fallback"] == "bwrap is not on PATH"


@pytest.mark.parametrize("how", ["ledger", "cli"])
def test_sandbox_without_user_namespaces_stops_at_once_in_one_line(
    tmp_path: Path, how: str
) -> None:
    if how == "ledger":
        repo = example_repo(tmp_path)
        ledger = (repo / "eval" / "gate.toml").read_text()
        write(
            repo,
            {
                "eval/gate.toml": ledger.replace(
                    'base = "main"', 'base = "main"\nisolation = "sandbox"'
                )
            },
        )
        commit(repo, "judge: sandbox")
        subprocess.run(["git", "-C", str(repo), "branch", "-f", "main"], check=True)
        write(repo, BENIGN)
        commit(repo, "benign")
        args: tuple[str, ...] = ()
    else:
        repo = _patched(tmp_path)
        args = ("--isolation", "sandbox")
    started = time.monotonic()
    result = _no_userns(repo, "gate", "--base", "main", "--today", "2026-12-01", *args)
    took = time.monotonic() - started
    assert result.code == 2, result.out + result.err
    assert result.err.count("\n") == 1, result.err
    line = result.err.strip()
    asked = "[gate] isolation" if how == "ledger" else "--isolation"
    assert line.startswith(f"patchjudge: {asked}: isolation 'sandbox' but the kernel refuses")
    assert "unshare: No space left on device (ENOSPC)" in line
    assert "apt-get install bubblewrap" in line
    assert not (repo / ".patchjudge").exists()  # no lane ran
    # Not a timing assertion on the machine's speed: nothing was built or run,
    # so even a loaded box answers well inside the 128 s of the issue.
    assert took < 60


def test_sandboxed_gate_prints_no_fallback(tmp_path: Path) -> None:
    """The honest look-alike: where a box starts, there is nothing to say."""
    require_sandbox()
    repo = _patched(tmp_path)
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert _fallback_lines(result.err) == []
    doc = verdict(repo)
    assert doc["review"]["isolation"] == "sandbox"
    assert "isolation_fallback" not in doc["review"]
    assert "found no sandbox" not in (repo / ".patchjudge" / "verdict.md").read_text()


def test_process_isolation_is_asked_for_and_prints_no_fallback(tmp_path: Path) -> None:
    """`process` by choice is no fallback: no probe, no line, no reason."""
    repo = example_repo(tmp_path)
    ledger = (repo / "eval" / "gate.toml").read_text()
    write(
        repo,
        {"eval/gate.toml": ledger.replace('base = "main"', 'base = "main"\nisolation = "process"')},
    )
    commit(repo, "judge: process")
    subprocess.run(["git", "-C", str(repo), "branch", "-f", "main"], check=True)
    write(repo, BENIGN)
    commit(repo, "benign")
    result = _no_userns(repo, "pathfilter", "--base", "main")
    assert result.code == 0, result.out + result.err
    assert _fallback_lines(result.err) == []
    assert "isolation_fallback" not in result.report(repo, "pathfilter")["details"]


def _nox(noxfile: Path, cwd: Path, envdir: Path, *args: str, boxed: bool) -> Result:
    """`nox -f NOXFILE ARGS`, inside the no-user-namespace box when `boxed`."""
    argv = [sys.executable, "-m", "nox", "--no-color", "-f", str(noxfile), "--envdir", str(envdir)]
    if boxed:
        require_sandbox()
        bwrap = shutil.which("bwrap")
        assert bwrap is not None
        argv = [bwrap, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--", *argv]
    env = no_git_env({k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")})
    done = subprocess.run(
        [*argv, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    return Result(done.returncode, done.stdout, done.stderr)


def _noxfiles(tmp_path: Path, wheel: Path) -> list[tuple[str, Path]]:
    """The noxfile init writes (in an adopted project) and this repository's own."""
    project = flat_project(tmp_path / "calc")
    assert cli(project, "init", *spec(wheel)).code == 0
    commit(project, "Adopt patchjudge")
    return [("init", project / "noxfile.py"), ("this repository", ROOT / "noxfile.py")]


def test_nox_gate_with_sandbox_and_no_user_namespaces_stops_before_any_venv(
    tmp_path: Path, judge_wheel: Path
) -> None:
    for which, noxfile in _noxfiles(tmp_path, judge_wheel):
        envdir = tmp_path / f"envs-{which.replace(' ', '-')}"
        args = ("-s", "gate", "--", "--base", "main", "--isolation", "sandbox")
        result = _nox(noxfile, noxfile.parent, envdir, *args, boxed=True)
        assert result.code != 0, which
        said = [line for line in result.err.splitlines() if "isolation 'sandbox' but" in line]
        assert len(said) == 1, (which, result.err)
        assert "--isolation: isolation 'sandbox' but bwrap cannot start a sandbox here" in said[0]
        assert "no venv was built" in said[0]
        assert "Prerequisite session isolation was not successful" in result.err
        # Not one venv: the lanes never started.
        assert not envdir.exists() or list(envdir.iterdir()) == [], which


def test_nox_isolation_check_passes_where_a_sandbox_starts(
    tmp_path: Path, judge_wheel: Path
) -> None:
    """The honest look-alike: the same check where bubblewrap works lets the lanes run."""
    require_sandbox()
    for which, noxfile in _noxfiles(tmp_path, judge_wheel):
        envdir = tmp_path / f"envs-{which.replace(' ', '-')}"
        # With a base: the session also holds the judge's settings here to the merge
        # base's, and without a base it cannot (session 13). HEAD, not main: this
        # checkout may be a clone of another branch, or one that changed constraints/.
        args = ("-s", "isolation", "--", "--base", "HEAD", "--isolation", "sandbox")
        result = _nox(noxfile, noxfile.parent, envdir, *args, boxed=False)
        assert result.code == 0, (which, result.err)
        assert "Session isolation was successful" in result.err


def test_init_writes_isolation_explicitly_sandbox_where_a_box_starts(
    tmp_path: Path, judge_wheel: Path
) -> None:
    require_sandbox()
    project = flat_project(tmp_path / "calc")
    result = cli(project, "init", *spec(judge_wheel))
    assert result.code == 0, result.err
    ledger = (project / "eval" / "gate.toml").read_text()
    assert '\nisolation = "sandbox"\n' in ledger
    assert "init wrote 'sandbox': a sandbox started where init ran" in ledger
    assert '[gate] isolation = "sandbox": the patch\'s code runs under bubblewrap' in result.out


def test_init_writes_auto_and_the_reason_where_no_box_starts(
    tmp_path: Path, judge_wheel: Path
) -> None:
    project = flat_project(tmp_path / "calc")
    result = _no_userns(project, "init", *spec(judge_wheel))
    assert result.code == 0, result.err
    ledger = (project / "eval" / "gate.toml").read_text()
    assert '\nisolation = "auto"\n' in ledger
    assert "init wrote 'auto': no sandbox started here (the kernel refuses user namespaces" in (
        ledger
    )
    assert '[gate] isolation = "auto": no sandbox starts here (the kernel refuses' in result.out
