"""Real temp git repositories and the real CLI, in as few lines as a test needs."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
import rfc8785

from patchjudge.git import no_git_env

_DATE = "2026-11-24T12:00:00+00:00"


def git(repo: Path, *args: str) -> str:
    env = no_git_env(os.environ)
    env.update(
        GIT_AUTHOR_NAME="agent",
        GIT_AUTHOR_EMAIL="agent@example.invalid",
        GIT_COMMITTER_NAME="agent",
        GIT_COMMITTER_EMAIL="agent@example.invalid",
        GIT_AUTHOR_DATE=_DATE,
        GIT_COMMITTER_DATE=_DATE,
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(repo.parent),
    )
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def write(repo: Path, files: Mapping[str, str | bytes | None]) -> None:
    """Write (or, for None, delete) files; str is dedented."""
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"))


def commit(repo: Path, message: str = "change") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def init_repo(path: Path, files: Mapping[str, str | bytes | None]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write(path, files)
    commit(path, "base")
    return path


LEDGER = """
[gate]
base = "main"

[map]
"src/**" = ["properties", "freeze"]
"tests/fixtures/**" = ["fixtures"]
"tests/**" = ["freeze"]
"docs/**" = []
"*.md" = []

[properties]
seed = 20260924
# Few review mutants (issue 14): every scenario that runs the properties pays for them.
review_mutants = 2
max_examples = 50
timeout_s = 60

[suite]
timeout_s = 60
"""

PROPERTY = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    assert total(xs) >= 0


@given(st.lists(st.integers(min_value=-1000, max_value=1000)))
def test_total_matches_sum(xs):
    expected = 0
    for x in xs:
        expected += x
    assert total(xs) == expected
"""

CALC = """
def total(xs):
    return sum(xs)
"""

VISIBLE_TESTS = """
from calc import total


def test_empty():
    assert total([]) == 0


def test_two():
    assert total([1, 2]) == 3
"""

ORDER_JSON = '{"order": 7, "lines": [{"sku": "a", "qty": 2}], "total": 4}\n'


def bare_venv(venv: Path) -> tuple[Path, Path]:
    """`python -m venv --without-pip` at `venv`: (its python, its site-packages).

    The cheapest real interpreter of another venv; a test adds what it needs
    there (a .pth to the judge's runtime, a module of its own).
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    return python, Path(site)


def fixture_digest(path: str, data: bytes) -> str:
    if path.endswith(".json"):
        data = rfc8785.dumps(json.loads(data))
    return hashlib.sha256(data).hexdigest()


def example_files(**overrides: str | bytes | None) -> dict[str, str | bytes | None]:
    """A small adopted project: code, a visible suite, a fixture and its judge."""
    files: dict[str, str | bytes | None] = {
        "README.md": "# calc\n",
        "src/calc/__init__.py": CALC,
        "tests/test_calc.py": VISIBLE_TESTS,
        "tests/fixtures/order.json": ORDER_JSON,
        "eval/gate.toml": LEDGER,
        "eval/properties/test_total.py": PROPERTY,
        "eval/flakes.freeze.toml": "# known flakes\n",
    }
    files.update(overrides)
    lock = {
        "version": 1,
        "canonical_json": True,
        "files": {
            p: fixture_digest(p, c.encode() if isinstance(c, str) else c)
            for p, c in sorted(files.items())
            if p.startswith("tests/fixtures/") and c is not None
        },
    }
    files.setdefault("eval/fixtures.lock.json", json.dumps(lock, indent=2) + "\n")
    return files


def example_repo(tmp_path: Path, **overrides: str | bytes | None) -> Path:
    """The example project committed on main, with a branch `patch` checked out."""
    repo = init_repo(tmp_path / "repo", example_files(**overrides))
    git(repo, "checkout", "-q", "-b", "patch")
    return repo


# The benign loop rewrite: every lane runs and passes, the review kills its mutants.
BENIGN_CALC = "def total(xs):\n    return sum(x for x in xs)\n"


def benign_repo(tmp_path: Path) -> Path:
    """The example project with BENIGN_CALC committed as the patch."""
    repo = example_repo(tmp_path)
    write(repo, {"src/calc/__init__.py": BENIGN_CALC})
    commit(repo, "agent patch")
    return repo


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def report(self, repo: Path, name: str) -> dict:  # type: ignore[type-arg]
        return json.loads((repo / ".patchjudge" / f"{name}.json").read_text())


def cli_env(**extra: str) -> dict[str, str]:
    """The environment `cli` runs in by default, plus `extra`."""
    # Inherited GITHUB_* would make a scenario gate append to the real job summary.
    # A seed key in the shell would change every scenario's inputs (issue 18).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GITHUB_") and k != "PATCHJUDGE_SEED_KEY"
    }
    env.update(extra)
    return env


def cli(
    repo: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> Result:
    """`python -m patchjudge ARGS` in `repo`, as a user runs it."""
    if env is None:
        env = cli_env()
    full_env = no_git_env(env)
    proc = subprocess.run(
        [sys.executable, "-m", "patchjudge", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def gate(repo: Path, *args: str, base: str = "main") -> Result:
    return cli(repo, "gate", "--base", base, "--today", "2026-12-01", *args)


# `gate(repo)`'s arguments, for judged_once.
GATE_ARGV = ("gate", "--base", "main", "--today", "2026-12-01")


def run_lane(repo: Path, name: str, *args: str, base: str = "main") -> Result:
    """`patchjudge NAME --base BASE`: one lane on its own, its report `.report(repo, NAME)`.

    For a test whose subject is that lane's decision (issue 20): a whole gate
    would also pay for the lanes the test never reads. freeze judges its rows on
    the gate's day.
    """
    today = ("--today", "2026-12-01") if name == "freeze" else ()
    return cli(repo, name, "--base", base, *today, *args)


def verdict(repo: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((repo / ".patchjudge" / "verdict.json").read_text())


def shared_dir(factory: pytest.TempPathFactory) -> Path:
    """A directory every xdist worker of this run sees (each worker's basetemp is its own)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def built_once(shared: Path, name: str, build: Callable[[Path], Path]) -> Path:
    """`build(dir)` run by the first xdist worker that asks; its result reused by every other.

    For read-only things several tests would rebuild (issue 20): the judge's wheel, the
    pinned sdists. A build that raised leaves no marker, so the next caller builds again.
    """
    root = shared / f"once-{name}"
    marker = root / "built"
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / "lock"):
        if not marker.exists():
            work = root / "work"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            marker.write_text(str(build(work).relative_to(root)))
    return root / marker.read_text()


def judged_once(
    factory: pytest.TempPathFactory,
    name: str,
    make: Callable[[Path], Path],
    commands: Mapping[str, Sequence[str]],
) -> tuple[Path, dict[str, Result]]:
    """The repository `make(dir)` builds, and the CLI `commands` run there once a run.

    For tests that build the same repository and patch and read different
    fields of what one gate (or one set of lanes) wrote (issue 20). Each value
    of `commands` is a CLI argument list, run in the order given; the results are
    kept by their key. The repository is shared and read-only: a test that
    writes there or runs more works on `copy_repo` of it.
    """

    def build(work: Path) -> Path:
        repo = make(work)
        results = {key: asdict(cli(repo, *argv)) for key, argv in commands.items()}
        (work / "results.json").write_text(json.dumps(results))
        return repo

    repo = built_once(shared_dir(factory), name, build)
    results = json.loads((repo.parent / "results.json").read_text())
    return repo, {key: Result(**value) for key, value in results.items()}


def copy_repo(repo: Path, dest: Path) -> Path:
    """A private copy of a shared repository (judged_once) with its reports, for a test that
    writes there."""
    return Path(shutil.copytree(repo, dest / repo.name, symlinks=True))
