"""Attack scenarios in three lines: build the example project, apply a hostile patch, judge it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import Result, commit, example_repo, gate, git, run_lane, write

# A patch that breaks the code under test: every attack below rides on it, so
# a verdict of accept means the attack switched a lane off.
BROKEN_CALC = """
def total(xs):
    return -1
"""

# A suite conftest that makes every report a pass: what graders have been beaten with.
FLIP = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""

# The call hook answered by the conftest: pytest never calls the test function (the
# plugin's wrapper around the hook once counted the hook as the call).
ANSWER_THE_CALL = """
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    return True
"""

# The smallest ledger the attack tests need: short limits so a hang costs seconds.
FAST_LEDGER = """
[gate]
base = "main"

[map]
"src/**" = ["properties", "freeze"]
"tests/fixtures/**" = ["fixtures"]
"tests/**" = ["freeze"]
"docs/**" = []
"*.md" = []
"*.ini" = []
"*.cfg" = []
"*.toml" = []
"*.xml" = []
"*.pth" = []
"*.py" = []
"conftest.py" = []

[properties]
seed = 20260924
max_examples = 20
timeout_s = {timeout}
review_mutants = 2

[suite]
timeout_s = {timeout}
"""


def fast_ledger(timeout: int = 30, isolation: str | None = None) -> str:
    """The attack ledger; `isolation="process"` for the v1 defences that detect, not prevent."""
    text = FAST_LEDGER.replace("{timeout}", str(timeout))
    if isolation is not None:
        text = text.replace('base = "main"', f'base = "main"\nisolation = "{isolation}"', 1)
    return text


@dataclass(frozen=True)
class Judged:
    """A gate run over one hostile patch, and what it decided."""

    repo: Path
    result: Result
    verdict: dict  # type: ignore[type-arg]

    @property
    def decision(self) -> str:
        return str(self.verdict["verdict"])

    @property
    def reasons(self) -> list[str]:
        return list(self.verdict["reasons"])

    def lane(self, name: str) -> dict:  # type: ignore[type-arg]
        return dict(self.verdict["lanes"][name])

    def says(self, *fragments: str) -> bool:
        """Every fragment appears in one reason (the reason names the attack)."""
        return any(all(f in r for f in fragments) for r in self.reasons)

    def explain(self) -> str:
        return f"{self.decision}: {self.reasons}\n{self.result.out}\n{self.result.err}"


Patch = Mapping[str, str | bytes | None]


def hostile_repo(
    tmp_path: Path,
    patch: Patch,
    *,
    base: Patch | None = None,
    before_commit: Callable[[Path], None] | None = None,
) -> Path:
    """Example project (plus `base` files) on main, `patch` committed on top on `patch`."""
    overrides = {"eval/gate.toml": fast_ledger(), **(base or {})}
    repo = example_repo(tmp_path, **overrides)
    write(repo, patch)
    if before_commit is not None:
        before_commit(repo)
    commit(repo, "hostile patch")
    return repo


def attack(
    tmp_path: Path,
    patch: Patch,
    *,
    base: Patch | None = None,
    before_commit: Callable[[Path], None] | None = None,
    args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> Judged:
    """Example project (plus `base` files) on main, `patch` committed on top, then the gate."""
    repo = hostile_repo(tmp_path, patch, base=base, before_commit=before_commit)
    result = gate(repo, *args) if env is None else gate_env(repo, env, *args)
    path = repo / ".patchjudge" / "verdict.json"
    doc = json.loads(path.read_text()) if path.exists() else {"verdict": None, "reasons": []}
    return Judged(repo, result, doc)


@dataclass(frozen=True)
class LaneJudged:
    """One lane run on its own over a hostile patch (`patchjudge LANE`), and its report.

    For a test whose subject is that lane's decision from git data alone (issue 20):
    the other lanes' processes are not paid for. A lane that fails is a reject in
    any gate (verdict.decide, tested as tables in tests/unit/test_verdict.py).
    """

    repo: Path
    result: Result
    report: dict  # type: ignore[type-arg]

    @property
    def status(self) -> str:
        return str(self.report["status"])

    @property
    def reasons(self) -> list[str]:
        """As a verdict lists them: `lane: reason`."""
        return [f"{self.report['lane']}: {r}" for r in self.report["reasons"]]

    def says(self, *fragments: str) -> bool:
        """Every fragment appears in one reason (the reason names the attack)."""
        return any(all(f in r for f in fragments) for r in self.reasons)

    def explain(self) -> str:
        return f"{self.status}: {self.reasons}\n{self.result.out}\n{self.result.err}"


def attack_lane(
    tmp_path: Path,
    patch: Patch,
    lane: str,
    *,
    base: Patch | None = None,
    before_commit: Callable[[Path], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> LaneJudged:
    """`attack`'s repository and patch, judged by the one lane `lane` on its own."""
    from tests.helpers import cli

    repo = hostile_repo(tmp_path, patch, base=base, before_commit=before_commit)
    result = (
        run_lane(repo, lane)
        if env is None
        else cli(repo, lane, "--base", "main", env={**os.environ, **env})
    )
    path = repo / ".patchjudge" / f"{lane}.json"
    doc = (
        json.loads(path.read_text())
        if path.exists()
        else {"lane": lane, "status": None, "reasons": []}
    )
    return LaneJudged(repo, result, doc)


def gate_env(repo: Path, env: Mapping[str, str], *args: str) -> Result:
    from tests.helpers import cli

    return cli(
        repo, "gate", "--base", "main", "--today", "2026-12-01", *args, env={**os.environ, **env}
    )


def symlink(repo: Path, link: str, target: str) -> None:
    path = repo / link
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def git_mv(repo: Path, old: str, new: str) -> None:
    (repo / new).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", old, new)


def throwaway_python(tmp_path: Path) -> Path:
    """A venv of its own whose site-packages an attack may write, importing ours.

    Attacks on the judge's interpreter write .pth files into site-packages:
    they must land in a venv the test throws away, never the one running it.
    """
    import site

    from tests.helpers import bare_venv

    python, own = bare_venv(tmp_path / "judge-venv")
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in ours)
    (own / "_patchjudge_test_deps.pth").write_text(lines)
    return python


def gate_with(python: Path, repo: Path, *args: str) -> Result:
    """The gate under another interpreter (see throwaway_python)."""
    import subprocess

    from patchjudge.git import no_git_env

    proc = subprocess.run(
        [str(python), "-m", "patchjudge", "gate", "--base", "main", "--today", "2026-12-01", *args],
        cwd=repo, capture_output=True, text=True, env=no_git_env(os.environ), timeout=300,
        check=False,
    )  # fmt: skip
    return Result(proc.returncode, proc.stdout, proc.stderr)


def judged(repo: Path, result: Result) -> Judged:
    path = repo / ".patchjudge" / "verdict.json"
    doc = json.loads(path.read_text()) if path.exists() else {"verdict": None, "reasons": []}
    return Judged(repo, result, doc)


def require_sandbox() -> None:
    """A test that needs bubblewrap fails in CI without it (never skips there); skips elsewhere."""
    import pytest

    from patchjudge.boundary import sandbox

    reason = sandbox.probe()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the sandbox tests: {reason} ({sandbox.HOW_TO_GET})")
    pytest.skip(f"no sandbox here: {reason}")
