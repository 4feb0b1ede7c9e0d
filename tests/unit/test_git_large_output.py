"""git listings and blobs over proc's 1 MiB output cap come back whole (found by issue 7)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from patchjudge import git
from patchjudge.config import FixturesSettings
from patchjudge.lanes import fixtures
from tests.helpers import git as run_git
from tests.helpers import init_repo

ENTRIES = 20_000  # ~75 bytes of ls-tree output each: 1.5 MB


def _repo_with_many_fixtures(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo", {"README.md": "x\n"})
    blob = run_git(repo, "hash-object", "-w", "README.md").strip()
    # The index straight from a listing: 20,000 paths without writing 20,000 files.
    listing = "".join(
        f"100644 {blob}\ttests/fixtures/d{i % 40}/f{i:05d}.txt\n" for i in range(ENTRIES)
    )
    subprocess.run(
        ["git", "-C", str(repo), "update-index", "--index-info"],
        input=listing.encode(),
        check=True,
        env=git.no_git_env({}),
    )
    (repo / "big.lock.json").write_text('{"k": "' + "v" * (2 << 20) + '"}\n')
    run_git(repo, "add", "big.lock.json")
    run_git(repo, "commit", "-q", "-m", "many")
    return repo


def test_ls_tree_and_show_are_not_cut_at_the_output_cap(tmp_path: Path) -> None:
    repo = _repo_with_many_fixtures(tmp_path)
    entries = git.ls_tree(repo, "HEAD", ("tests/fixtures",))
    assert len(entries) == ENTRIES
    assert entries[0].path == "tests/fixtures/d0/f00000.txt"
    shown = git.show(repo, "HEAD", "big.lock.json")
    assert shown is not None and len(shown) == (2 << 20) + 10


def test_fixtures_scan_of_a_large_tree_sees_every_file(tmp_path: Path) -> None:
    repo = _repo_with_many_fixtures(tmp_path)
    settings = FixturesSettings(("tests/fixtures",), "eval/fixtures.lock.json", True, False)
    found, symlinks, not_files = fixtures.scan_commit(repo, "HEAD", settings)
    assert len(found) == ENTRIES and not symlinks and not not_files
    assert len(set(found.values())) == 1  # one blob, read once, digest shared
