"""issue 19: which venv each nox session installs the project into, and which it runs the code with.

Recorded, not run (tests/nox_recorder.py): the judge's venv (`session.install`)
gets pinned constraints and patchjudge only; what `[gate] install` names goes
into the code's venv, whose python every command that runs the code is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patchjudge.scaffold import template
from tests.unit.test_nox_constraints import recorded

ROOT = Path(__file__).resolve().parents[2]
# The commands that run the code under test, and so take --python.
RUNS_CODE = {"pathfilter", "freeze", "properties", "replay", "flakes", "oracle"}


def _commands(calls: list[dict[str, Any]]) -> list[list[str]]:
    return [c["args"] for c in calls if c["method"] == "run" and c["args"][:1] == ["patchjudge"]]


def _code_python(args: list[str]) -> str:
    return args[args.index("--python") + 1]


@pytest.fixture(scope="module")
def init_sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    project = tmp_path_factory.mktemp("project")
    (project / "eval").mkdir()
    (project / "eval" / "gate.toml").write_text('[gate]\ninstall = ["."]\n')
    (project / "noxfile.py").write_text(template("init/noxfile.py.tmpl"))
    return recorded(project / "noxfile.py")


@pytest.mark.parametrize("name", ["flakes", "oracle", "freeze", "gate-properties", "replay-run"])
def test_inits_sessions_run_the_code_with_the_codes_venv(
    init_sessions: dict[str, list[dict[str, Any]]], name: str
) -> None:
    commands = _commands(init_sessions[name])
    assert commands, init_sessions[name]
    for args in commands:
        assert args[1] in RUNS_CODE or args[1:3] == ["replay", "run"], args
        assert _code_python(args).endswith("/code/bin/python"), args


def test_inits_judge_venvs_never_get_the_project(
    init_sessions: dict[str, list[dict[str, Any]]],
) -> None:
    for name, calls in init_sessions.items():
        for call in calls:
            if call["method"] == "install":
                # Pins with hashes, or patchjudge itself from its pin file.
                assert "--require-hashes" in call["args"] or any(
                    a.endswith("patchjudge.txt") for a in call["args"]
                ), (name, call)
