"""The tamper check's comparison (pure) and its stamps of real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from patchjudge import guard

F = stat.S_IFREG | 0o644
D = stat.S_IFDIR | 0o755
#       size mtime ctime inode mode links digest
BASE = (10, 100, 100, 7, F, 1, "")
SHARED = (10, 100, 100, 7, F, 2, "aa")

TABLE: list[tuple[str, guard.Stamp, guard.Stamp, bool]] = [
    ("unchanged", BASE, BASE, False),
    ("rewritten, re-dated, its ctime shows", BASE, (10, 100, 200, 7, F, 1, ""), True),
    ("another install linked a shared file", SHARED, (10, 100, 200, 7, F, 3, "aa"), False),
    ("a shared file lost a link", SHARED, (10, 100, 200, 7, F, 1, "aa"), False),
    ("a shared file linked and unlinked again", SHARED, (10, 100, 200, 7, F, 2, "aa"), False),
    ("an unshared file's ctime alone moved", BASE, (10, 100, 200, 7, F, 1, ""), True),
    # The hole this closes: same size, mtime put back, a new link to excuse the ctime.
    ("rewritten in place plus a link of its own", BASE, (10, 100, 200, 7, F, 2, "bb"), True),
    ("a shared file rewritten in place", SHARED, (10, 100, 200, 7, F, 3, "bb"), True),
    # Unreadable, a shared file has no digest: nothing vouches for its bytes.
    (
        "a shared file without a digest",
        (10, 100, 100, 7, F, 2, ""),
        (10, 100, 200, 7, F, 3, ""),
        True,
    ),
    ("a shared file grew", SHARED, (11, 100, 200, 7, F, 3, "aa"), True),
    ("replaced by another inode", SHARED, (10, 100, 200, 8, F, 3, "aa"), True),
    ("a directory's listing unchanged", (1, 1, 1, 5, D, 2, ""), (1, 2, 2, 5, D, 2, ""), False),
]


@pytest.mark.parametrize(("case", "before", "after", "reported"), TABLE, ids=[t[0] for t in TABLE])
def test_changes_table(case: str, before: guard.Stamp, after: guard.Stamp, reported: bool) -> None:
    assert bool(guard.changes({"/p": before}, {"/p": after})) is reported, case


def test_added_and_removed_are_reported() -> None:
    assert guard.changes({"/a": BASE}, {"/b": BASE}) == ["added /b", "removed /a"]


def test_a_same_size_rewrite_with_a_new_link_is_seen(tmp_path: Path) -> None:
    target = tmp_path / "site" / "mod.py"
    target.parent.mkdir()
    target.write_bytes(b"print('judge')\n")
    before = guard.walk(tmp_path / "site")
    st = target.stat()
    target.write_bytes(b"print('patch')\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.link(target, tmp_path / "elsewhere")
    after = guard.settled(before, guard.walk(tmp_path / "site"))
    assert guard.changes(before, after) == [f"changed {target}"]


def test_a_shared_file_keeps_its_bytes_whatever_its_links_do(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.write_bytes(b"wheel bytes\n")
    target = tmp_path / "site" / "mod.py"
    target.parent.mkdir()
    os.link(cache, target)
    before = guard.walk(tmp_path / "site")
    os.link(cache, tmp_path / "another-venv")
    assert guard.changes(before, guard.settled(before, guard.walk(tmp_path / "site"))) == []
    (tmp_path / "another-venv").unlink()
    cache.unlink()  # the last other link gone: compared by its bytes
    after = guard.settled(before, guard.walk(tmp_path / "site"))
    assert after[str(target)][5] == 1
    assert guard.changes(before, after) == []


def test_a_root_inside_a_checkout_is_walked_once_and_still_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 19, session 12: init's noxfile keeps the judge's and the code's venvs in
    # .nox/ of the checkout, and each lane's snapshot walks them whole as venvs and
    # again as the checkout's files: now once, with the same stamps under the same keys.
    repo = tmp_path / "repo"
    venv = repo / ".nox" / "_judge" / "site-packages"
    (venv / "pkg" / "sub").mkdir(parents=True)
    (venv / "pkg" / "sub" / "mod.py").write_text("X = 1\n")
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("A = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    scanned: list[str] = []
    scandir = os.scandir

    def counting(path: str) -> object:
        scanned.append(path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    snap = guard.snapshot([venv, outside], checkouts=[repo])
    assert sorted(scanned) == sorted(set(scanned)), scanned  # no directory twice
    monkeypatch.undo()
    assert snap == {**guard.walk(repo), **guard.walk(venv), **guard.walk(outside)}
    (venv / "pkg" / "sub" / "mod.py").write_text("X = 2\n")
    (venv / "pkg" / "planted.pth").write_text("\n")
    after = guard.snapshot([venv, outside], checkouts=[repo])
    assert guard.changes(snap, after) == [
        f"added {venv / 'pkg' / 'planted.pth'}",
        f"changed {venv / 'pkg' / 'sub' / 'mod.py'}",
    ]


def test_a_root_named_twice_is_walked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 19, session 12: init's noxfile gives the judge's venv and the code's one
    # lane runtime; the lane's snapshot names it as the interpreter's and as the code's.
    runtime = tmp_path / "lane" / "site-packages"
    (runtime / "pkg").mkdir(parents=True)
    (runtime / "pkg" / "mod.py").write_text("X = 1\n")
    scanned: list[str] = []
    scandir = os.scandir

    def counting(path: str) -> object:
        scanned.append(path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    snap = guard.snapshot([runtime, tmp_path / "other", Path(str(runtime))])
    assert sorted(scanned) == sorted(set(scanned)), scanned
    monkeypatch.undo()
    assert snap == guard.walk(runtime)


@pytest.mark.parametrize("boxed", [False, True])
def test_a_boxed_snapshot_leaves_the_working_files_to_the_box(tmp_path: Path, boxed: bool) -> None:
    # issue 20: sandboxed, no box binds the checkout's working files writable, so the
    # 40,000-file walk is not made; what git runs outside any box (hooks, config) and
    # the roots inside the checkout (nox's venvs, the reports) are still watched.
    repo = tmp_path / "repo"
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (repo / ".git" / "config").write_text("[core]\n")
    (repo / "data").mkdir()
    (repo / "data" / "item.bin").write_bytes(b"x" * 10)
    venv = repo / ".nox" / "_code" / "site-packages"
    venv.mkdir(parents=True)
    before = guard.snapshot([venv], checkouts=[repo], boxed=boxed)
    (repo / "data" / "item.bin").write_bytes(b"y" * 11)
    (repo / "data" / "planted.py").write_text("\n")
    (hooks / "post-commit").write_text("#!/bin/sh\n")
    (repo / ".git" / "config").write_text("[core]\n\thooksPath = /tmp\n")
    (venv / "planted.pth").write_text("\n")
    found = guard.changes(before, guard.snapshot([venv], checkouts=[repo], boxed=boxed))
    always = [
        f"added {hooks / 'post-commit'}",
        f"added {venv / 'planted.pth'}",
        f"changed {repo / '.git' / 'config'}",
    ]
    working = [f"added {repo / 'data' / 'planted.py'}", f"changed {repo / 'data' / 'item.bin'}"]
    assert sorted(found) == sorted(always if boxed else always + working), found
    assert any(k.startswith(str(repo / "data")) for k in before) is not boxed


@pytest.mark.parametrize("isolation", ["process", "sandbox"])
def test_the_lanes_snapshot_walks_the_working_files_only_unboxed(
    tmp_path: Path, isolation: str
) -> None:
    from types import SimpleNamespace

    from patchjudge.commands import gate

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "data.bin").write_bytes(b"x")
    (repo / ".patchjudge").mkdir()
    (repo / ".patchjudge" / "pathfilter.json").write_text("{}")
    run = SimpleNamespace(
        isolation=isolation, code=SimpleNamespace(site=()), reports=repo / ".patchjudge", repo=repo
    )
    snap = gate._snapshot(run)  # type: ignore[arg-type]
    assert str(repo / ".patchjudge" / "pathfilter.json") in snap  # the reports: always
    assert (str(repo / "data.bin") in snap) is (isolation == "process")
