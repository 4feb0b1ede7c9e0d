"""`nox -s gate` on a real repository: every lane in its own fresh pinned venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import patchjudge
from tests.helpers import LEDGER, ORDER_JSON, commit, example_repo, verdict, write

ROOT = Path(patchjudge.__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / "noxfile.py").exists(), reason="needs the source tree"),
]


def _nox_repo(tmp_path: Path) -> Path:
    # The judge installs patchjudge from this source tree instead of a PyPI pin.
    ledger = LEDGER.replace('[gate]\nbase = "main"', f'[gate]\nbase = "main"\ninstall = ["{ROOT}"]')
    repo = example_repo(
        tmp_path,
        **{
            "eval/gate.toml": ledger,
            "noxfile.py": (ROOT / "noxfile.py").read_text(),
            "constraints/lane.txt": (ROOT / "constraints/lane.txt").read_text(),
            "constraints/build.txt": (ROOT / "constraints/build.txt").read_text(),
        },
    )
    return repo


def _nox(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "NOX"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_nox_gate_runs_every_lane_in_its_own_venv_and_rejects_a_rewritten_fixture(
    tmp_path: Path,
) -> None:
    # One gate run, not two (issue 20): a benign code change and a rewritten fixture in one
    # patch. The fixtures lane alone rejects it; every other lane judged the benign change
    # in its own venv and passed, and the verdict (run by the gate session over the digests
    # nox kept) names nothing else, then exits 1 through nox.
    repo = _nox_repo(tmp_path)
    write(
        repo,
        {
            "src/calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n",
            "tests/fixtures/order.json": ORDER_JSON.replace("7", "8"),
        },
    )
    commit(repo)
    bad = _nox(repo, "-s", "gate", "--", "--base", "main")
    assert bad.returncode == 1, bad.stdout[-3000:] + bad.stderr[-3000:]
    found = verdict(repo)
    assert found["verdict"] == "reject"
    assert found["reasons"] == ["fixtures: changed: tests/fixtures/order.json"], found
    others = {n: lane["status"] for n, lane in found["lanes"].items() if n != "fixtures"}
    assert set(others.values()) <= {"pass", "not_applicable"}, found
    assert others["pathfilter"] == others["freeze"] == others["properties"] == "pass", found
    # Every session built its own venv.
    assert {p.name for p in (repo / ".nox").iterdir()} >= {
        "gate",
        "gate-pathfilter",
        "gate-fixtures",
        "gate-freeze",
        "gate-properties",
        "gate-replay",
    }
    # The public lane session fails on its own lane's failure.
    lane = _nox(repo, "-R", "-s", "fixtures", "--", "--base", "main")
    assert lane.returncode == 1
