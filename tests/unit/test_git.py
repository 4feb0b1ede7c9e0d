"""git.py against real repositories: the raw diff and byte-exact scratch trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchjudge import git as pgit
from patchjudge.errors import GitError
from tests.helpers import commit, git, init_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(
        tmp_path / "r",
        {
            "src/a.py": "print('a')\n" * 20,
            "src/b.py": "print('b')\n" * 20,
            "tool.sh": "#!/bin/sh\n",
            "eval/gate.toml": "x\n",
            "gone.txt": "bye\n",
        },
    )


def test_raw_diff_sees_renames_copies_types_modes_and_deletions(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "mv", "src/a.py", "src/renamed.py")
    (repo / "tool.sh").chmod(0o755)
    (repo / "eval/gate.toml").unlink()
    (repo / "eval/gate.toml").symlink_to("../src/b.py")
    (repo / "gone.txt").unlink()
    # -C finds copies whose source the same diff modifies.
    write(
        repo,
        {
            "odd name\nwith newline.txt": "new\n",
            "src/copy.py": "print('b')\n" * 20,
            "src/b.py": "print('b')\n" * 19 + "print('B')\n",
        },
    )
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("other\n")
    head = commit(repo)
    changes = {(c.status, c.old_path, c.new_path) for c in pgit.diff(repo, base, head)}
    assert ("R", "src/a.py", "src/renamed.py") in changes
    assert ("C", "src/b.py", "src/copy.py") in changes
    assert ("T", "eval/gate.toml", "eval/gate.toml") in changes
    assert ("D", "gone.txt", None) in changes
    assert ("A", None, "odd name\nwith newline.txt") in changes
    assert ("A", None, os.fsdecode(b"caf\xe9.txt")) in changes
    modes = {c.new_path: (c.old_mode, c.new_mode) for c in pgit.diff(repo, base, head)}
    assert modes["tool.sh"] == ("100644", "100755")
    assert modes["eval/gate.toml"] == ("100644", "120000")


def test_materialize_is_byte_exact_and_ignores_gitattributes(repo: Path, tmp_path: Path) -> None:
    write(
        repo,
        {
            ".gitattributes": "*.txt export-subst eol=crlf\nsrc/b.py export-ignore\n",
            "note.txt": "$Format:%H$\nline\n",
            "bin.dat": bytes(range(256)),
        },
    )
    (repo / "tool.sh").chmod(0o755)
    (repo / "link").symlink_to("src/a.py")
    head = commit(repo)
    dest = tmp_path / "tree"
    pgit.materialize(repo, head, dest)
    assert (dest / "note.txt").read_bytes() == b"$Format:%H$\nline\n"
    assert (dest / "src/b.py").exists()
    assert (dest / "bin.dat").read_bytes() == bytes(range(256))
    assert (dest / "link").readlink() == Path("src/a.py")
    assert os.access(dest / "tool.sh", os.X_OK)
    assert not os.access(dest / "src/a.py", os.X_OK)


def test_unknown_ref_and_no_merge_base(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        pgit.rev_parse(repo, "nope")
    other = init_repo(tmp_path / "other", {"x": "1\n"})
    git(repo, "fetch", "-q", str(other), "main:other")
    with pytest.raises(GitError, match="no merge base"):
        pgit.merge_base(repo, "other", "HEAD")


def test_shallow_clone_says_fetch_more_history(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    for i in range(2):
        write(repo, {"src/a.py": f"feature {i}\n"})
        commit(repo)
    git(repo, "checkout", "-q", "main")
    write(repo, {"src/b.py": "main moved on\n"})
    commit(repo)
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", "feature", f"file://{repo}", str(clone))
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/old")
    with pytest.raises(GitError, match="fetch more history: git fetch --unshallow"):
        pgit.merge_base(clone, "origin/old", "HEAD")


def test_parse_raw_diff_of_nothing() -> None:
    assert pgit.parse_raw_diff(b"") == []
