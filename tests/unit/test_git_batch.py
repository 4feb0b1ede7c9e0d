"""One `git cat-file --batch` serves a run's blob reads (issue 20)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchjudge import git as pgit
from tests.helpers import commit, git, init_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    files: dict[str, str | bytes | None] = {f"src/m{i}.py": f"x = {i}\n" for i in range(12)}
    files["empty.txt"] = ""
    made = init_repo(tmp_path / "r", files)
    (made / "link").symlink_to("src/m1.py")
    commit(made, "a link")
    yield made
    pgit.close_all()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
    except OSError:
        return False
    return state != "Z"


def test_one_process_serves_many_reads_and_streams(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    pgit.close_all()
    for i in range(12):
        assert pgit.show(repo, head, f"src/m{i}.py") == f"x = {i}\n".encode()
    pid = pgit.batch_pid(repo)
    assert pid is not None and _alive(pid)
    # Absent paths, a directory, an empty blob and a link read through the same process.
    assert pgit.show(repo, head, "nope.py") is None
    assert pgit.show(repo, head, "src") is None
    assert pgit.show(repo, head, "empty.txt") == b""
    assert pgit.show(repo, head, "link") == b"src/m1.py"
    assert pgit.show(repo, "no-such-rev", "src/m1.py") is None
    # A whole tree streamed, then single reads again: still that one process.
    pgit.materialize(repo, head, tmp_path / "tree")
    assert (tmp_path / "tree" / "src" / "m7.py").read_text() == "x = 7\n"
    assert pgit.show(repo, head, "src/m3.py") == b"x = 3\n"
    assert pgit.batch_pid(repo) == pid
    pgit.close_all()
    assert pgit.batch_pid(repo) is None
    assert not _alive(pid)  # exited and reaped: a clean close


def test_a_stream_left_half_read_does_not_poison_later_reads(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    shas = [e.sha for e in pgit.ls_tree(repo, head, ("src",))]
    blobs = pgit.iter_blobs(repo, shas)
    next(blobs)
    blobs.close()  # the consumer gave up after the first blob
    assert pgit.show(repo, head, "src/m5.py") == b"x = 5\n"
    assert [b"".join(chunks) for _, chunks in pgit.iter_blobs(repo, shas[:2])] == [
        pgit.show(repo, head, e.path) for e in pgit.ls_tree(repo, head, ("src",))[:2]
    ]


def test_a_read_inside_a_stream_and_a_newline_name_still_answer(repo: Path) -> None:
    write(repo, {"odd\nname.txt": "odd\n"})
    head = commit(repo)
    shas = [e.sha for e in pgit.ls_tree(repo, head, ("src",))]
    seen = []
    for _, chunks in pgit.iter_blobs(repo, shas):
        seen.append(b"".join(chunks))
        assert pgit.show(repo, head, "src/m0.py") == b"x = 0\n"
    assert len(seen) == 12
    assert pgit.show(repo, head, "odd\nname.txt") == b"odd\n"


def test_a_forked_child_opens_its_own(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    assert pgit.show(repo, head, "src/m0.py") == b"x = 0\n"
    pid = os.fork()
    if pid == 0:  # the child: the parent's pipes are not its to use
        ok = pgit.show(repo, head, "src/m2.py") == b"x = 2\n" and pgit.batch_pid(repo) is not None
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert pgit.show(repo, head, "src/m4.py") == b"x = 4\n"
