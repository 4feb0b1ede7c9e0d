"""Scratch trees from one store per run (issue 12): the strategy table, and lanes kept apart."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from patchjudge import git as pgit
from patchjudge import trees
from patchjudge.trees import Strategy, choose
from tests.helpers import commit, git, init_repo


@pytest.mark.parametrize(
    ("isolation", "euid", "can_link", "can_clone", "expected"),
    [
        # Sandboxed as root: links to files nobody in the box owns.
        ("sandbox", 0, True, True, Strategy("link", lock=True)),
        ("sandbox", 0, True, False, Strategy("link", lock=True)),
        # Sandboxed as a user: the box's uid owns the store's files, so no shared inode.
        ("sandbox", 1000, True, True, Strategy("clone", lock=False)),
        ("sandbox", 1000, True, False, Strategy("copy", lock=False)),
        ("sandbox", 0, False, False, Strategy("copy", lock=False)),
        # Not sandboxed: the store is reachable whatever the trees are; always verified.
        ("process", 0, True, True, Strategy("clone", lock=False)),
        ("process", 0, True, False, Strategy("link", lock=False)),
        ("process", 1000, True, False, Strategy("link", lock=False)),
        ("process", 0, False, False, Strategy("copy", lock=False)),
    ],
)
def test_strategy_table(
    isolation: str, euid: int, can_link: bool, can_clone: bool, expected: Strategy
) -> None:
    assert choose(isolation, euid, can_link=can_link, can_clone=can_clone) == expected


def test_blob_id_is_gits() -> None:
    data = b"hello\n"
    assert trees.blob_id("0" * 40, [data], len(data)) == "ce013625030ba8dba906f756967f9e9ca394464a"


@pytest.mark.parametrize(
    ("path", "ok"),
    [("a/b.py", True), ("/etc/passwd", False), ("a/../b", False), (".git/hooks/x", False)],
)
def test_placeable(path: str, ok: bool) -> None:
    assert trees.placeable(path) is ok


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = init_repo(
        tmp_path / "repo",
        {
            "src/a.py": "A = 1\n",
            "src/same.py": "A = 1\n",  # the same blob twice
            "bin/run": "#!/bin/sh\necho hi\n",
            "data/big.bin": bytes(range(256)) * 8192,
        },
    )
    (r / "bin" / "run").chmod(0o755)
    (r / "link").symlink_to("src/a.py")
    commit(r, "exec bit and a link")
    return r


def _entries(repo: Path) -> list[pgit.TreeEntry]:
    return pgit.ls_tree(repo, "HEAD")


def test_a_tree_is_byte_exact_with_modes_and_links(repo: Path, tmp_path: Path) -> None:
    store = trees.Store()
    dest = tmp_path / "t1"
    store.place(repo, dest, _entries(repo), "process")
    assert (dest / "src" / "a.py").read_text() == "A = 1\n"
    assert (dest / "data" / "big.bin").read_bytes() == bytes(range(256)) * 8192
    assert os.access(dest / "bin" / "run", os.X_OK)
    assert not (dest / "src" / "a.py").stat().st_mode & stat.S_IXUSR
    assert (dest / "link").readlink() == Path("src/a.py")
    store.close()


def test_each_blob_is_written_once_per_run(repo: Path, tmp_path: Path) -> None:
    store = trees.Store()
    store.place(repo, tmp_path / "t1", _entries(repo), "process")
    store.place(repo, tmp_path / "t2", _entries(repo), "process")
    if store.strategy("process").place == "link":
        first, second = (tmp_path / t / "data" / "big.bin" for t in ("t1", "t2"))
        assert first.stat().st_ino == second.stat().st_ino
    store.close()


@pytest.mark.parametrize("attack", ["write", "truncate", "chmod", "replace"])
def test_what_tested_code_writes_through_its_tree_reaches_no_later_tree(
    repo: Path, tmp_path: Path, attack: str
) -> None:
    """Not sandboxed, the trees share inodes: a write lands in the store and is undone."""
    store = trees.Store()
    first = tmp_path / "t1"
    store.place(repo, first, _entries(repo), "process")
    target = first / "src" / "a.py"
    if attack == "write":
        with target.open("r+") as fh:  # in place: the same inode
            fh.write("B")
    elif attack == "truncate":
        with target.open("w") as fh:
            fh.write("A = 9\n")  # same size: only ctime and mtime tell
    elif attack == "chmod":
        target.chmod(0o777)
    else:
        blob = store._dir() / next(p.name for p in store._dir().iterdir() if p.is_file())
        blob.unlink()
        blob.write_text("planted\n")
    later = tmp_path / "t2"
    store.place(repo, later, _entries(repo), "process")
    for path in ("src/a.py", "src/same.py"):
        assert (later / path).read_text() == "A = 1\n"
        assert stat.S_IMODE((later / path).stat().st_mode) == 0o644
    assert os.access(later / "bin" / "run", os.X_OK)
    store.close()


def test_a_discarded_tree_leaves_the_store_intact(repo: Path, tmp_path: Path) -> None:
    store = trees.Store()
    scratch = tmp_path / "scratch"
    store.place(repo, scratch / "tree", _entries(repo), "process")
    store.discard(scratch)
    assert not scratch.exists()
    later = tmp_path / "later"
    store.place(repo, later, _entries(repo), "process")
    assert (later / "src" / "a.py").read_text() == "A = 1\n"
    store.close()


needs_root_and_bwrap = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("bwrap") is None, reason="needs root and bubblewrap"
)


@needs_root_and_bwrap
@pytest.mark.parametrize("kept", [False, True], ids=["run's own store", "kept store"])
def test_sandboxed_as_root_the_shared_files_cannot_be_written_or_chmodded(
    repo: Path, tmp_path: Path, kept: bool
) -> None:
    """CONTRACT: a file owned by an unmapped uid is not the sandboxed process's own."""
    keep = tmp_path / "cache" if kept else None
    store = trees.Store()
    tree = tmp_path / "tree"
    store.place(repo, tree, _entries(repo), "sandbox", keep)
    assert store.strategy("sandbox") == Strategy("link", lock=True)
    # The gate itself (root) can still write them (a mutant): the check repairs that too.
    (tree / "data" / "big.bin").write_bytes(b"mutant")
    st = (tree / "src" / "a.py").stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (trees.NOBODY, 0o444)
    assert stat.S_IMODE((tree / "bin" / "run").stat().st_mode) == 0o555
    script = (
        "echo B >> src/a.py; chmod 666 src/a.py; "
        "rm src/same.py && echo mine > src/same.py && echo replaced"
    )
    argv = ["bwrap", "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    argv += ["--bind", str(tree), str(tree), "--chdir", str(tree), "sh", "-c", script]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert "replaced" in done.stdout, done.stderr  # its own link it may replace
    assert "Permission denied" in done.stderr
    assert "Operation not permitted" in done.stderr
    later = tmp_path / "later"
    store.place(repo, later, _entries(repo), "sandbox", keep)
    store.close()
    # The next run (a store of its own) links what the box and the gate's mutant left.
    next_run = tmp_path / "next"
    trees.Store().place(repo, next_run, _entries(repo), "sandbox", keep)
    for tree in (later, next_run):
        assert (tree / "src" / "a.py").read_text() == "A = 1\n"
        assert (tree / "src" / "same.py").read_text() == "A = 1\n"
        assert (tree / "data" / "big.bin").read_bytes() == bytes(range(256)) * 8192
        assert (tree / "data" / "big.bin").stat().st_uid == trees.NOBODY
    linked = (next_run / "src" / "a.py").stat().st_ino == (later / "src" / "a.py").stat().st_ino
    assert linked is kept


def test_store_outside_the_checkout(repo: Path, tmp_path: Path) -> None:
    store = trees.Store()
    store.place(repo, tmp_path / "t", _entries(repo), "process")
    assert not store._dir().resolve().is_relative_to(repo.resolve())
    assert git(repo, "status", "--porcelain") == ""
    store.close()


# What a library that rewrites its own tracked file does, in a process that runs the tree's code.
_REWRITE = """
import sys
sys.path.insert(0, sys.argv[1])
from patchjudge.boundary.worker import private_writes
private_writes(".")
with open("src/a.py", "a") as fh:
    fh.write("B = 2\\n")
with open("data/big.bin", "r+b") as fh:
    fh.write(b"XY")
import os
os.close(os.open("src/same.py", os.O_RDONLY))  # a read breaks nothing
print("rewrote", oct(os.stat("src/a.py").st_mode & 0o777))
"""


@needs_root_and_bwrap
@pytest.mark.parametrize("kept", [False, True], ids=["run's own store", "kept store"])
def test_a_write_to_a_tracked_file_is_its_trees_alone(
    repo: Path, tmp_path: Path, kept: bool
) -> None:
    """Issue 17: in place, as in a checkout; the store and another lane's tree keep their bytes."""
    keep = tmp_path / "cache" if kept else None
    store = trees.Store()
    mine, other = tmp_path / "mine", tmp_path / "other"
    store.place(repo, mine, _entries(repo), "sandbox", keep)
    store.place(repo, other, _entries(repo), "sandbox", keep)
    src = Path(__file__).resolve().parents[2] / "src"
    argv = ["bwrap", "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    argv += ["--bind", str(mine), str(mine), "--chdir", str(mine)]
    argv += [shutil.which("python3") or "python3", "-I", "-c", _REWRITE, str(src)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["rewrote", "0o644"], done.stderr
    assert (mine / "src" / "same.py").stat().st_ino == (other / "src" / "same.py").stat().st_ino
    assert (mine / "src" / "a.py").read_text() == "A = 1\nB = 2\n"
    assert (mine / "data" / "big.bin").read_bytes()[:4] == b"XY\x02\x03"
    for path, data in (("src/a.py", b"A = 1\n"), ("data/big.bin", bytes(range(256)) * 8192)):
        assert (other / path).read_bytes() == data
        shared = [
            p for p in store._blobs().iterdir() if p.is_file() and p.stat().st_size == len(data)
        ]
        assert [p.read_bytes() for p in shared] == [data]
    assert (store._blobs() == tmp_path / "cache" / "blobs") is kept
    store.check()  # nothing the box wrote is the store's: no file is rewritten
    later = tmp_path / "later"
    store.place(repo, later, _entries(repo), "sandbox", keep)
    assert (later / "src" / "a.py").stat().st_ino == (other / "src" / "a.py").stat().st_ino
    store.close()


@needs_root_and_bwrap
def test_without_the_hook_the_shared_file_still_refuses_the_write(
    repo: Path, tmp_path: Path
) -> None:
    """The hook only helps honest code: code that goes round it meets the read-only link."""
    store = trees.Store()
    tree = tmp_path / "tree"
    store.place(repo, tree, _entries(repo), "sandbox")
    script = "import os; os.write(os.open('src/a.py', os.O_WRONLY), b'x')"
    argv = ["bwrap", "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    argv += ["--bind", str(tree), str(tree), "--chdir", str(tree), "python3", "-I", "-c", script]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert "PermissionError" in done.stderr
    assert (tree / "src" / "a.py").read_text() == "A = 1\n"
    store.close()


def _key(repo: Path, path: str) -> str:
    entry = next(e for e in _entries(repo) if e.path == path)
    return f"{entry.sha}.{'x' if entry.mode == '100755' else 'r'}"


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the kept store needs the locked files")


@needs_root
def test_a_kept_store_serves_the_next_run_only_what_hashes_to_its_blob(
    repo: Path, tmp_path: Path
) -> None:
    """Issue 20: a kept file is linked only once this run hashed it; any other is written anew."""
    keep = tmp_path / "cache"
    first = trees.Store()
    first.place(repo, tmp_path / "t1", _entries(repo), "sandbox", keep)
    first.close()
    blobs = keep / "blobs"
    assert stat.S_IMODE(blobs.stat().st_mode) == 0o700
    for kept in blobs.iterdir():
        st = kept.lstat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode) & 0o222) == (trees.NOBODY, 0), kept
    # What code left unboxed as root could plant under blob names: other bytes with the
    # locked owner and mode, a symlink to the right bytes, a file of the wrong mode.
    planted = blobs / _key(repo, "src/a.py")
    planted.unlink()
    planted.write_bytes(b"A = 9\n")
    os.chown(planted, trees.NOBODY, trees.NOBODY)
    planted.chmod(0o444)
    run_key = blobs / _key(repo, "bin/run")
    run_key.unlink()
    run_key.symlink_to(tmp_path / "t1" / "bin" / "run")
    big = blobs / _key(repo, "data/big.bin")
    big_ino = big.stat().st_ino
    second = trees.Store()
    later = tmp_path / "t2"
    second.place(repo, later, _entries(repo), "sandbox", keep)
    assert (later / "src" / "a.py").read_text() == "A = 1\n"
    assert (later / "src" / "same.py").read_text() == "A = 1\n"
    assert (later / "bin" / "run").read_text() == "#!/bin/sh\necho hi\n"
    assert not (later / "bin" / "run").is_symlink()
    assert stat.S_IMODE((later / "bin" / "run").stat().st_mode) == 0o555
    assert (later / "data" / "big.bin").stat().st_ino == big_ino  # intact: linked, not written
    assert planted.read_bytes() == b"A = 1\n"
    second.close()


@needs_root
@pytest.mark.parametrize("case", ["process", "not 0700", "a symlink", "not a directory"])
def test_no_store_is_kept_unboxed_or_in_a_directory_not_the_judges_own(
    repo: Path, tmp_path: Path, case: str
) -> None:
    keep, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    keep.mkdir(mode=0o700)
    elsewhere.mkdir(mode=0o700)
    if case == "not 0700":
        (keep / "blobs").mkdir(mode=0o755)
        (keep / "blobs").chmod(0o755)
    elif case == "a symlink":
        (keep / "blobs").symlink_to(elsewhere)
    elif case == "not a directory":
        (keep / "blobs").write_bytes(b"")
    store = trees.Store()
    tree = tmp_path / "tree"
    store.place(repo, tree, _entries(repo), "process" if case == "process" else "sandbox", keep)
    assert (tree / "src" / "a.py").read_text() == "A = 1\n"
    assert store._blobs() == store._dir()  # the run's own, removed with it
    assert list(elsewhere.iterdir()) == []
    if case != "not a directory":
        assert not (keep / "blobs").is_dir() or list((keep / "blobs").iterdir()) == []
    store.close()


@needs_root
def test_a_kept_store_grown_too_large_is_emptied_only_by_a_run_alone(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trees, "PRUNE_OVER", 2)
    keep = tmp_path / "cache"
    holder = trees.Store()
    holder.place(repo, tmp_path / "t1", _entries(repo), "sandbox", keep)  # 4 files, in use
    stale = keep / "blobs" / _key(repo, "src/a.py")
    ino = stale.stat().st_ino
    busy = trees.Store()
    busy.place(repo, tmp_path / "t2", _entries(repo), "sandbox", keep)
    assert stale.stat().st_ino == ino  # another run holds it: nothing removed
    busy.close()
    holder.close()
    alone = trees.Store()
    tree = tmp_path / "t3"
    alone.place(repo, tree, _entries(repo), "sandbox", keep)
    assert stale.stat().st_ino != ino  # emptied, then written again
    assert (tree / "src" / "a.py").read_text() == "A = 1\n"
    alone.close()
