"""What the gate writes for people and CI: valid reports, the step summary, annotations."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import ORDER_JSON, cli, commit, example_repo, write
from tests.schema_helpers import validate_file

LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")
HOSTILE = "notes\n::stop-commands::pj\n<!-- hidden.txt"


def actions_env(summary: Path | None, *, actions: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    if actions:
        env["GITHUB_ACTIONS"] = "true"
    if summary is not None:
        env["GITHUB_STEP_SUMMARY"] = str(summary)
    return env


def workflow_commands(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("::")]


def test_a_rejected_patch_in_actions(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"tests/fixtures/order.json": ORDER_JSON.replace("4", "5"), HOSTILE: "x\n"})
    commit(repo)
    summary = tmp_path / "step-summary.md"
    summary.write_text("# an earlier step\n")

    env = actions_env(summary, actions=True)
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=env)

    assert result.code == 1, result.err
    reports = repo / ".patchjudge"
    for lane in LANES:
        validate_file(reports / f"{lane}.json", "lane_report")
    doc = validate_file(reports / "verdict.json", "verdict")
    assert doc["verdict"] == "reject"
    # Appended, not overwritten: other steps write the same summary file.
    md = (reports / "verdict.md").read_text()
    assert summary.read_text() == "# an earlier step\n" + md
    commands = workflow_commands(result.out)
    assert "::error title=patchjudge fixtures::changed: tests/fixtures/order.json" in commands
    hostile = [c for c in commands if c.startswith("::error title=patchjudge pathfilter::")]
    assert len(hostile) == 1
    assert "notes%0A::stop-commands::pj%0A<!-- hidden.txt" in hostile[0]
    # Every workflow command on stdout is an annotation of ours, whatever the paths held.
    assert all(c.startswith("::error title=patchjudge ") for c in commands), commands
    assert "<!--" not in md


def test_an_accepted_patch_in_actions_has_a_summary_and_no_annotations(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"src/calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"})
    commit(repo)
    summary = tmp_path / "step-summary.md"

    result = cli(
        repo,
        "gate",
        "--base",
        "main",
        "--today",
        "2026-12-01",
        env=actions_env(summary, actions=True),
    )

    assert result.code == 0, result.out + result.err
    for lane in LANES:
        validate_file(repo / ".patchjudge" / f"{lane}.json", "lane_report")
    assert validate_file(repo / ".patchjudge" / "verdict.json", "verdict")["verdict"] == (
        "accept_for_review"
    )
    assert summary.read_text() == (repo / ".patchjudge" / "verdict.md").read_text()
    assert summary.read_text().startswith("## patchjudge: `accept_for_review`")
    assert workflow_commands(result.out) == []


@pytest.mark.parametrize("actions", [False, True])
def test_verdict_over_missing_reports(tmp_path: Path, actions: bool) -> None:
    repo = example_repo(tmp_path)
    commit(repo)

    result = cli(repo, "verdict", "--base", "main", env=actions_env(None, actions=actions))

    # The nox flow with no lane reports on disk: every lane counts as failed.
    assert result.code == 1
    doc = validate_file(repo / ".patchjudge" / "verdict.json", "verdict")
    missing = "report missing: the lane did not run"
    assert [lane["reasons"] for lane in doc["lanes"].values()] == [[missing]] * len(LANES)
    expected = [f"::error title=patchjudge {lane}::{missing}" for lane in LANES]
    assert workflow_commands(result.out) == (expected if actions else [])


def test_a_lane_on_its_own_prints_no_workflow_command_from_a_path(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {HOSTILE: "x\n"})
    commit(repo)

    result = cli(repo, "pathfilter", "--base", "main", env=actions_env(None, actions=True))

    # The nox flow: each lane session prints its reasons before the verdict runs.
    assert result.code == 1
    assert workflow_commands(result.out) == []
    assert "notes\\n::stop-commands::pj\\n<!-- hidden.txt" in result.out
