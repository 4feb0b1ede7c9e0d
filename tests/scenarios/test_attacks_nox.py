"""Red team, session 13: `nox -s gate` (and `tox -e gate`) run in the head's own checkout.

init's noxfile reads the judge's settings (`eval/gate.toml`, `constraints/`)
from its own directory to build the venvs, before any lane runs. From a
checkout of the head those were the patch's: `[gate] install = ["-e ."]` ran
the patch's build backend outside the box, as the gate's user, and
`constraints/` chose the judge's own install. The `isolation` session now
stops the run unless they are the merge base's, byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import patchjudge
from patchjudge.scaffold import template
from tests.helpers import cli, commit, git, init_repo, verdict, write
from tests.init_helpers import flat_project, run, spec

pytestmark = pytest.mark.slow

ROOT_NOXFILE = Path(patchjudge.__file__).resolve().parents[2] / "noxfile.py"

# An in-tree build backend: importing it is running the patch's code.
PYPROJECT = (
    '[build-system]\nrequires = []\nbuild-backend = "evil"\nbackend-path = ["."]\n'
    '[project]\nname = "calc"\nversion = "0"\n'
)


BROKEN = "def total(xs):\n    return sum(xs) + 1\n"


def _adopted_with_a_hostile_head(tmp_path: Path, wheel: Path) -> tuple[Path, Path]:
    """init's project on `main`; on `patch`, a broken change whose ledger installs the
    tree editable (built outside the box) with a backend that leaves a mark outside."""
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", *spec(wheel)).code == 0
    commit(repo, "Adopt patchjudge")
    git(repo, "checkout", "-q", "-b", "patch")
    marker = tmp_path / "ran-outside-the-box"
    ledger = (repo / "eval/gate.toml").read_text()
    assert "install = []" in ledger
    evil = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('pwned')\n"
    write(
        repo,
        {
            "eval/gate.toml": ledger.replace("install = []", 'install = ["-e ."]'),
            "pyproject.toml": PYPROJECT,
            "evil.py": evil + "raise SystemExit(1)\n",
            "calc/__init__.py": BROKEN,
        },
    )
    commit(repo, "broken, and the ledger builds the tree outside the box")
    # Not committed, never judged: a file the judge's install would find (--find-links).
    (repo / "constraints" / "patchjudge-99-py3-none-any.whl").write_bytes(b"PK")
    return repo, marker


def _nox_gate(cwd: Path, *flags: str) -> tuple[int, str]:
    argv = [sys.executable, "-m", "nox", "--no-color", *flags, "-s", "gate", "--"]
    done = run([*argv, "--base", "main", "--today", "2026-12-01"], cwd)
    return done.returncode, done.stdout + done.stderr


def test_the_heads_judge_settings_stop_a_nox_run_in_its_checkout(tmp_path, judge_wheel):
    # Was: the code's venv ran `uv pip install --no-build-isolation -e .` on the host, the
    # backend wrote its mark outside any box (then the lanes ran and rejected, too late).
    repo, marker = _adopted_with_a_hostile_head(tmp_path, judge_wheel)
    code, out = _nox_gate(repo)
    assert code != 0, out
    said = [line for line in out.splitlines() if "not the merge base" in line]
    assert len(said) == 1, out
    assert (
        "constraints/patchjudge-99-py3-none-any.whl, eval/gate.toml: not the merge base" in said[0]
    )
    assert said[0].endswith("(nox -f <base worktree>/noxfile.py -- --base REF); no venv was built.")
    assert "Prerequisite session isolation was not successful" in out
    assert not marker.exists()
    assert not (repo / ".nox").exists() or not [
        p for p in (repo / ".nox").iterdir() if (p / "bin").exists()
    ], out
    # The way the error names: the base's noxfile, from a worktree of the base, judges
    # the same head. Its settings are the base's: nothing of the patch runs unboxed,
    # and the lanes reject the patch (its ledger edit among the reasons).
    base = tmp_path / "base"
    git(repo, "worktree", "add", "-q", str(base), "main")
    code, out = _nox_gate(repo, "-f", str(base / "noxfile.py"))
    assert code == 1, out
    assert not marker.exists()
    found = verdict(repo)
    assert found["verdict"] == "reject", found
    assert "eval/gate.toml" in " ".join(found["lanes"]["pathfilter"]["reasons"]), found


@pytest.mark.parametrize("which", ["init", "this repository"])
def test_without_base_the_remote_default_branch_names_it_and_a_heads_pin_stops_the_run(
    tmp_path, which
):
    # Both noxfiles, `-s isolation` alone (it builds no venv): no --base, so the base is
    # the CLI's, `[gate] base` of origin/main's ledger, never the head's. A pin the head
    # rewrote (the judge's runtime, unhashed) is not the base's.
    if which != "init" and not ROOT_NOXFILE.exists():
        pytest.skip("needs the source tree")
    noxfile = template("init/noxfile.py.tmpl") if which == "init" else ROOT_NOXFILE.read_text()
    repo = init_repo(
        tmp_path / "repo",
        {
            "noxfile.py": noxfile,
            "eval/gate.toml": '[gate]\nbase = "main"\n',
            "constraints/lane.txt": "pytest==8.3.3 --hash=sha256:" + "0" * 64 + "\n",
        },
    )
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"constraints/lane.txt": "pytest @ https://example.invalid/pytest.whl\n"})
    commit(repo, "a pin of the head's")
    argv = [sys.executable, "-m", "nox", "--no-color", "-s", "isolation"]
    done = run(argv, repo)
    assert done.returncode != 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "not the merge base" in line]
    assert len(said) == 1, done.stderr
    assert "Session isolation aborted: constraints/lane.txt: not the merge base" in said[0]
    # The base's bytes again (the head's commit stays): the settings are the base's.
    git(repo, "checkout", "-q", "main", "--", "constraints/lane.txt")
    done = run(argv, repo)
    assert done.returncode == 0, done.stderr


def test_the_heads_constraints_stop_a_tox_run_in_its_checkout(tmp_path, judge_wheel):
    # The tox flow (`init --runner tox`): tox.ini installs the judge from constraints/
    # (patchjudge.txt, --find-links constraints/, no hash). The head's pin named a wheel
    # of its own; toxfile.py, tox's inline plugin, now stops the run before any env.
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", "--runner", "tox", *spec(judge_wheel)).code == 0
    commit(repo, "Adopt patchjudge")
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"constraints/patchjudge.txt": "patchjudge==99\n", "calc/__init__.py": BROKEN})
    commit(repo, "broken, and the judge's pin is the head's")
    argv = [sys.executable, "-m", "tox", "-e", "gate", "--", "--base", "main"]
    done = run(argv, repo, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    said = [line for line in out.splitlines() if "not the merge base" in line]
    assert len(said) == 1, out
    assert "constraints/patchjudge.txt: not the merge base" in said[0]
    assert said[0].endswith("-- --base REF); no environment was built"), said[0]
    assert not (repo / ".tox").exists() or not any((repo / ".tox").glob("*/pyvenv.cfg"))
