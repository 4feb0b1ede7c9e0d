"""tests/conftest.py's _git_readers_closed: no `git cat-file --batch` outlives the test that
opened it. The second test checks what the first left; run alone (or on another xdist
worker) it has nothing to check and passes."""

from __future__ import annotations

from pathlib import Path

from patchjudge import git as pgit
from tests.helpers import git, init_repo

OPENED: list[int] = []  # the pid of the reader the first test left open


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
    except OSError:
        return False
    return state != "Z"


def test_a_test_reads_a_blob_and_leaves_its_reader_open(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", {"a.txt": "a\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    assert pgit.show(repo, head, "a.txt") == b"a\n"
    pid = pgit.batch_pid(repo)
    assert pid is not None and _alive(pid)
    OPENED.append(pid)


def test_the_reader_ended_with_that_test() -> None:
    for pid in OPENED:
        assert not _alive(pid), f"git cat-file {pid} outlived the test that opened it"
