"""The gate on awkward repositories and broken judge files: a verdict or exit 2, never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.attack_helpers import attack, fast_ledger
from tests.helpers import (
    cli,
    cli_env,
    commit,
    example_files,
    example_repo,
    fixture_digest,
    gate,
    git,
    init_repo,
    write,
)

GOOD_CALC = "def total(xs):\n    return sum(xs)  # reviewed\n"


def _one_line_exit_2(result: object, starts: str) -> None:
    code, err = result.code, result.err  # type: ignore[attr-defined]
    assert code == 2, result
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(starts), err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize(
    ("files", "starts"),
    [
        ({"eval/gate.toml": "[gate\n"}, "patchjudge: eval/gate.toml (at merge base"),
        ({"eval/gate.toml": "a = " + "[" * 5000}, "patchjudge: eval/gate.toml (at merge base"),
        (
            {"eval/gate.toml": '[gate]\nbase = 7\n[map]\n"**" = []\n'},
            "patchjudge: eval/gate.toml (at merge base",
        ),
        ({"eval/fixtures.lock.json": "[" * 5000}, "patchjudge: eval/fixtures.lock.json (at"),
        (
            {"eval/gate.toml": fast_ledger() + '[fixtures]\nroots = ["nowhere"]\n'},
            "patchjudge: eval/gate.toml (at merge base",
        ),
    ],
    ids=["bad toml", "deep toml", "wrong type", "deep lock", "missing fixture root"],
)
def test_a_bad_judge_file_is_exit_2_and_one_line(
    tmp_path: Path, files: dict[str, str], starts: str
) -> None:
    repo = example_repo(tmp_path, **files)
    write(repo, {"src/calc/__init__.py": GOOD_CALC})
    commit(repo)
    _one_line_exit_2(gate(repo), starts)


def test_shallow_clone_without_a_merge_base_says_fetch_more_history(tmp_path: Path) -> None:
    origin = example_repo(tmp_path / "o")
    for i in range(3):
        write(origin, {"src/calc/__init__.py": GOOD_CALC + f"# {i}\n"})
        commit(origin, f"patch {i}")
    git(origin, "checkout", "-q", "main")
    write(origin, {"docs/main.md": "main moved on\n"})
    commit(origin, "main")
    clone = tmp_path / "clone"
    url = f"file://{origin}"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "patch", url, str(clone))
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    result = cli(clone, "gate", "--base", "origin/main", "--today", "2026-12-01")
    _one_line_exit_2(result, "patchjudge: --base: no merge base")
    assert "fetch more history: git fetch --unshallow" in result.err


def test_repository_with_one_commit_has_nothing_to_judge(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", example_files())
    _one_line_exit_2(gate(repo), "patchjudge: --base: main already contains HEAD")
    _one_line_exit_2(gate(repo, base="HEAD~1"), "patchjudge: --base: unknown revision 'HEAD~1'")


def test_detached_head_is_judged_like_a_branch(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
    write(repo, {"src/calc/__init__.py": GOOD_CALC})
    head = commit(repo)
    git(repo, "checkout", "-q", "--detach", head)
    result = gate(repo)
    assert result.code == 0, result
    assert json.loads((repo / ".patchjudge/verdict.json").read_text())["head"] == head


def test_paths_with_spaces_newlines_and_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    names = [
        b"docs/with space.md",
        b"docs/new\nline.md",
        b"docs/caf\xc3\xa9 \xff.md",
        b"odd \xfe\nname.txt",
    ]

    def add(repo: Path) -> None:
        for name in names:
            (repo / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            (repo / os.fsdecode(name)).write_text("x\n")

    judged = attack(tmp_path, {}, before_commit=add)
    assert judged.decision == "reject", judged.explain()
    # The only unmapped path is the odd one; the rest are docs/** and pass.
    assert judged.reasons == [
        f"pathfilter: unmapped path: {os.fsdecode(names[3])} (extend [map] in eval/gate.toml)"
    ]
    mapped = json.loads((judged.repo / ".patchjudge/pathfilter.json").read_bytes())
    assert set(mapped["details"]["mapped"]) == {os.fsdecode(n) for n in names}
    assert judged.result.err == ""


def test_a_ten_thousand_file_diff(tmp_path: Path) -> None:
    def many(repo: Path) -> None:
        root = repo / "docs" / "bulk"
        for i in range(100):
            part = root / f"d{i:03}"
            part.mkdir(parents=True)
            for j in range(100):
                (part / f"f{j:03}.md").write_text(f"{i} {j}\n")

    judged = attack(tmp_path, {"src/calc/__init__.py": GOOD_CALC}, before_commit=many)
    assert judged.decision == "accept_for_review", judged.explain()
    details = json.loads((judged.repo / ".patchjudge/pathfilter.json").read_text())["details"]
    assert len(details["changes"]) == 10_001


BLOB = bytes(range(256)) * 64 + b"\x00\xff\xfe"


def test_binary_fixtures_are_hashed_as_bytes(tmp_path: Path) -> None:
    base = {"tests/fixtures/blob.bin": BLOB, "tests/fixtures/image.png": b"\x89PNG\r\n\x1a\n"}
    lock = {
        "version": 1,
        "canonical_json": True,
        "files": {
            "tests/fixtures/blob.bin": fixture_digest("x.bin", BLOB),
            "tests/fixtures/image.png": fixture_digest("x.bin", b"\x89PNG\r\n\x1a\n"),
            "tests/fixtures/order.json": fixture_digest(
                "tests/fixtures/order.json",
                example_files()["tests/fixtures/order.json"].encode(),  # type: ignore[union-attr]
            ),
        },
    }
    base["eval/fixtures.lock.json"] = json.dumps(lock).encode()
    intact = attack(tmp_path / "a", {"docs/x.md": "x\n"}, base=base)
    assert intact.decision == "accept_for_review", intact.explain()
    flipped = BLOB[:-1] + b"\x00"
    changed = attack(tmp_path / "b", {"tests/fixtures/blob.bin": flipped}, base=base)
    assert changed.decision == "reject", changed.explain()
    assert changed.reasons == ["fixtures: changed: tests/fixtures/blob.bin"]


def test_a_fixture_root_the_base_does_not_have(tmp_path: Path) -> None:
    """No root and no lock at base: not applicable; a patch that creates one is drift."""
    files = example_files(**{"eval/gate.toml": fast_ledger(), ".gitignore": ".patchjudge/\n"})
    for path in ("tests/fixtures/order.json", "eval/fixtures.lock.json"):
        del files[path]
    repo = init_repo(tmp_path / "repo", files)
    git(repo, "checkout", "-q", "-b", "patch")
    write(repo, {"src/calc/__init__.py": GOOD_CALC})
    commit(repo)
    assert gate(repo).code == 0
    assert json.loads((repo / ".patchjudge/fixtures.json").read_text())["status"] == (
        "not_applicable"
    )
    write(repo, {"tests/fixtures/new.json": "{}\n"})
    commit(repo)
    result = gate(repo)
    assert result.code == 1, result
    reasons = json.loads((repo / ".patchjudge/verdict.json").read_text())["reasons"]
    assert reasons == ["fixtures: extra: tests/fixtures/new.json (not in the lock)"]


def test_the_same_patch_gives_the_same_verdict_bytes_twice(tmp_path: Path) -> None:
    """A benign patch that forces the properties (hypothesis, seeded by the ledger).

    Two runs, not ten: what differs between any two runs (temp paths, pids, times)
    differs between these two. The one rare difference is the judge's own hash seed
    (set order), so the two runs get two different fixed seeds instead of two draws.
    """
    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
    write(repo, {"src/calc/__init__.py": GOOD_CALC})
    commit(repo)
    seen = set()
    for seed in ("1", "2"):
        env = cli_env(PYTHONHASHSEED=seed)
        result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=env)
        assert result.code == 0, (result, (repo / ".patchjudge/verdict.json").read_text())
        seen.add((repo / ".patchjudge/verdict.json").read_bytes())
    assert len(seen) == 1
    doc = json.loads(seen.pop())
    assert doc["verdict"] == "accept_for_review"
    assert doc["lanes"]["properties"]["status"] == "pass"
