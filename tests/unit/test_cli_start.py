"""What a `python -m patchjudge` process loads for its command (issue 20: a process's start).

Each process of a gate imported the whole CLI: a run, the box's builder, git's
plumbing and the lanes' test runner, whatever the command. These run the real
entry point in a real subprocess and read `sys.modules` when it is done.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchjudge.git import no_git_env
from tests.helpers import benign_repo

RUN = """
import json, runpy, sys
sys.argv = ["patchjudge", *sys.argv[1:]]
try:
    runpy.run_module("patchjudge", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, sorted(sys.modules)]))
"""

# What a lane that runs tests (or the review) needs, and `verdict` and `fixtures` do not.
TEST_RUNNING = {
    "patchjudge.testrun",
    "patchjudge.replay",
    "patchjudge.charmap",
    "patchjudge.review",
    "patchjudge.review_phase",
    "coverage",
    "hypothesis",
    "_pytest",
}


def _start(cwd: Path, *argv: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=no_git_env(os.environ),
        check=True,
        timeout=120,
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return benign_repo(tmp_path_factory.mktemp("start"))


@pytest.mark.parametrize("argv", [("--help",), ("lock", "--help"), ("gate", "--bad-option")])
def test_help_and_usage_errors_load_no_run(argv: tuple[str, ...], tmp_path: Path) -> None:
    code, modules = _start(tmp_path, *argv)
    assert code == (0 if argv[-1] == "--help" else 2)
    run = {"patchjudge.workspace", "patchjudge.boundary.sandbox", "patchjudge.git", "pathspec"}
    assert modules & run == set()


@pytest.mark.parametrize("command", ["verdict", "fixtures"])
def test_a_command_that_runs_no_tests_loads_no_test_runner(command: str, repo: Path) -> None:
    # `verdict` reads the lanes' reports; `fixtures` hashes files: neither starts pytest.
    _, modules = _start(repo, command, "--base", "main")
    assert "patchjudge.workspace" in modules  # it did open the run
    assert modules & TEST_RUNNING == set()
