"""`patchjudge verdict --with-lane`: the lanes that run none of the code, in the verdict's process.

A nox gate runs the fixtures lane (and the replay lane while its slice collects
nothing) there instead of in a session and a process of its own (issue 19).
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import LEDGER, ORDER_JSON, cli, commit, example_repo, verdict, write

ARGS = ("verdict", "--base", "main", "--only-expected")


def test_the_verdicts_process_runs_fixtures_and_replay_and_counts_what_it_made(
    tmp_path: Path,
) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"tests/fixtures/order.json": ORDER_JSON.replace("7", "8")})
    commit(repo)
    # A pass planted where the fixtures report goes: the verdict counts the one it made.
    (repo / ".patchjudge").mkdir()
    (repo / ".patchjudge" / "fixtures.json").write_text('{"status": "pass"}')
    result = cli(repo, *ARGS, "--with-lane", "fixtures", "--with-lane", "replay")
    assert result.code == 1, result.out + result.err
    assert "patchjudge fixtures: fail — changed: tests/fixtures/order.json" in result.out
    assert "patchjudge replay: not_applicable" in result.out
    found = verdict(repo)
    assert found["verdict"] == "reject"
    lanes = {name: lane["status"] for name, lane in found["lanes"].items()}
    # The lanes it did not run and was given no digest for are missing (failed), as before.
    assert lanes == {
        "pathfilter": "fail",
        "fixtures": "fail",
        "freeze": "fail",
        "properties": "fail",
        "replay": "not_applicable",
    }, found
    assert found["lanes"]["freeze"]["reasons"] == ["report missing: the lane did not run"]
    assert "fixtures: changed: tests/fixtures/order.json" in found["reasons"]
    assert result.report(repo, "fixtures")["status"] == "fail"


def test_a_replay_slice_that_collects_the_suite_is_refused_in_the_verdicts_process(
    tmp_path: Path,
) -> None:
    # Collecting runs the code: that belongs in a lane session of its own, with --python.
    ledger = LEDGER + '\n[replay]\nnodeids = ["tests/test_calc.py::test_two"]\n'
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    write(repo, {"README.md": "a patch\n"})
    commit(repo)
    result = cli(repo, *ARGS, "--with-lane", "replay")
    assert result.code == 2, result.out + result.err
    (line,) = result.err.strip().splitlines()
    assert "[replay] nodeids/marker" in line and "--with-lane replay" in line, line
    assert not (repo / ".patchjudge" / "verdict.json").exists()
