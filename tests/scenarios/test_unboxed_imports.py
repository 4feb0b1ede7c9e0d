"""Unboxed, the judge's process imports nothing of its venv after a lane ran the code.

With `isolation = "process"` the tested code runs as the gate's user and can
rewrite the judge's venv; a module the gate or a lane process first imports
after that runs the rewrite in the judge's own process, before the guard's
walk can report it. Lazy imports (issue 20) had made coverage.py one of them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import BENIGN_CALC, LEDGER, cli_env, commit, example_repo, write

# Runs the real CLI in one process; records sys.modules when the first lane starts
# (`guarded` is where the gate and a lane process run each unboxed lane).
PROBE = """
import sys, sysconfig
import patchjudge.cli
from patchjudge.commands import gate

seen = {}
real = gate.guarded
def spy(*args, **kwargs):
    seen.setdefault("before", set(sys.modules))
    return real(*args, **kwargs)
gate.guarded = spy
code = patchjudge.cli.main(sys.argv[1:])
stdlib = sysconfig.get_path("stdlib")
late = sorted(
    name for name in set(sys.modules) - seen["before"]
    if not (getattr(sys.modules[name], "__file__", None) or stdlib).startswith(stdlib)
)
print("LATE", code, late)
"""

UNBOXED = LEDGER.replace('base = "main"', 'base = "main"\nisolation = "process"')


@pytest.mark.parametrize("command", ["gate", "properties"])
def test_an_unboxed_run_imports_its_modules_before_the_first_lane(
    tmp_path: Path, command: str
) -> None:
    repo = example_repo(tmp_path, **{"eval/gate.toml": UNBOXED})
    write(repo, {"src/calc/__init__.py": BENIGN_CALC})
    commit(repo, "agent patch")
    argv = [command, "--base", "main", "--today", "2026-12-01"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=repo,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=300,
        check=False,
    )
    line = [x for x in done.stdout.splitlines() if x.startswith("LATE ")]
    assert line == ["LATE 0 []"], done.stdout[-3000:] + done.stderr[-3000:]
