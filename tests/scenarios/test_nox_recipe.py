"""init's nox CI recipe as CI runs it: the merge base's noxfile from a worktree elsewhere.

Found by toxci (session 18): the noxfile built `[gate] install`'s wheel from its
own folder, which in CI is the merge base's worktree, so the code's venv held the
base's build and pathfilter failed every honest patch to a packaged project
("the build installs calc/__init__.py other than the tree's").
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.attack_helpers import require_sandbox
from tests.helpers import cli, commit, git, write
from tests.init_helpers import flat_project, run, spec
from tests.scenarios.test_tox import MEAN, PYPROJECT, _recipe_lines

pytestmark = pytest.mark.slow


def test_the_nox_recipe_builds_the_heads_wheel_not_the_judges_worktrees(tmp_path, judge_wheel):
    require_sandbox()  # the recipe passes --isolation sandbox
    repo = flat_project(tmp_path / "calc")
    write(repo, {"calc/__init__.py": MEAN, "pyproject.toml": PYPROJECT})
    commit(repo, "mean, packaged")
    result = cli(repo, "init", *spec(judge_wheel))
    assert result.code == 0, result.err
    commit(repo, "Adopt patchjudge")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"calc/__init__.py": MEAN.replace("return sum(xs)", "return sum(list(xs))")})
    commit(repo, "an honest refactor")
    judge, gate = _recipe_lines(repo, "git worktree add --detach", "nox -f ")
    assert " -s gate -- " in gate, gate
    # The one session whose report is the claim: pathfilter (boxed, it runs freeze and
    # properties after itself), on the code's venv the wheel went into.
    gate = gate.replace(" -s gate -- ", " -s gate-pathfilter -- ")
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {"RUNNER_TEMP": str(runner), "BASE_SHA": base}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = run(["bash", "-euc", f"{judge}\n{gate} --today 2026-12-01", "recipe"], repo, env=env)
    out = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, out
    reports = {
        lane: json.loads((repo / ".patchjudge" / f"{lane}.json").read_text())
        for lane in ("pathfilter", "freeze", "properties")
    }
    # Before: pathfilter failed, "the build installs calc/__init__.py other than the tree's".
    assert {lane: r["status"] for lane, r in reports.items()} == dict.fromkeys(reports, "pass"), (
        reports["pathfilter"].get("reasons"),
        out,
    )
