"""Tamper evidence: what tested code may not change outside its scratch tree, and whether it did."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import patchjudge

# (size, mtime_ns, ctime_ns, inode, mode, links, digest). ctime cannot be set
# back by a process without root: a file rewritten and re-dated still shows.
# The digest is the SHA-256 of a regular file with more than one link, else "":
# see _links_only.
Stamp = tuple[int, int, int, int, int, int, str]
Snapshot = Mapping[str, Stamp]

# git itself rewrites most of .git at any time (gc --auto, maintenance, a
# fetch); the gate has resolved every ref it uses already. What is watched
# there is what runs code later: hooks and config (see checkout_roots).
_SKIP_DIRS = frozenset({".git"})
# Files site.py runs at interpreter start-up wherever they sit on sys.path.
_STARTUP = ("sitecustomize.py", "usercustomize.py")


def _stamp(st: os.stat_result, path: str) -> Stamp:
    digest = ""
    if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
        digest = _digest(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode, st.st_nlink, digest)


def _digest(path: str) -> str:
    try:
        # The path was lstat'ed as a regular file: a link swapped in since is not followed,
        # a FIFO not waited on. Unreadable gives no digest, so it excuses nothing.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def stamp(path: Path) -> Stamp | None:
    try:
        return _stamp(path.lstat(), str(path))
    except OSError:
        return None


def walk(root: Path, skip: Iterable[str] = ()) -> dict[str, Stamp]:
    """Every file, link and directory under `root` (links not followed), stamped."""
    skipped = {str(root / s) for s in (*_SKIP_DIRS, *skip)}
    found: dict[str, Stamp] = {}
    try:
        st = root.lstat()
    except OSError:
        return found
    found[str(root)] = _stamp(st, str(root))
    if not stat.S_ISDIR(st.st_mode):
        return found
    # os.scandir and plain strings: a venv has thousands of files and this
    # runs around every lane, so no Path objects and no second stat call.
    pending = [str(root)]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path] = _stamp(st, entry.path)
            if stat.S_ISDIR(st.st_mode) and entry.path not in skipped:
                pending.append(entry.path)
    return found


def top_level(directory: Path) -> dict[str, Stamp]:
    """A directory and what site.py would run from it: *.pth and the customize modules."""
    found: dict[str, Stamp] = {}
    try:
        found[str(directory)] = _stamp(directory.lstat(), str(directory))
        names = [p.name for p in directory.iterdir()]
    except OSError:
        return found
    for name in names:
        if name.endswith(".pth") or name in _STARTUP:
            path = directory / name
            try:
                found[str(path)] = _stamp(path.lstat(), str(path))
            except OSError:
                continue
    return found


def interpreter_roots() -> tuple[list[Path], list[Path]]:
    """(walked whole, listed at top level) for the interpreter the lanes run.

    The venv, any other venv's site-packages a .pth put on sys.path, and
    patchjudge's own package are walked whole (a few thousand files); the
    base interpreter's directories on sys.path only for start-up files,
    since walking a whole standard library costs seconds.
    """
    # Under sys.prefix already walked; under the base interpreter, listed only.
    covered = (sys.prefix, sys.base_prefix, sys.base_exec_prefix)
    whole = [Path(sys.prefix), *shared_site(sys.path, covered)]
    whole.append(Path(patchjudge.__file__).resolve().parent)
    listed = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    return whole, listed


def shared_site(sys_path: Iterable[str], covered: Iterable[str]) -> list[Path]:
    """Pure: the site-packages on sys.path under none of the `covered` prefixes.

    init's noxfile gives each lane a fresh venv of its own whose packages are
    the nox run's one judge venv, reached through a .pth (issue 19): that
    venv is the judge's interpreter as much as the lane's own, so it is
    watched as whole as sys.prefix is.
    """
    bases = [Path(p) for p in covered if p]
    found: list[Path] = []
    for entry in sys_path:
        path = Path(entry)
        if not path.is_absolute() or path.name not in ("site-packages", "dist-packages"):
            continue
        if not any(path.is_relative_to(b) for b in bases):
            found.append(path)
    return list(dict.fromkeys(found))


def checkout(repo: Path, walked: Iterable[Path] = (), *, boxed: bool = False) -> dict[str, Stamp]:
    """A checkout: its files, and of .git only what runs code later (hooks, config).

    `walked`: directories inside it that the same snapshot walks whole anyway
    (nox's venvs under `.nox/`): stamped here, not descended into twice.
    `boxed`: every process that runs the patch's code is sandboxed, so the
    working files are not walked (issue 20: 40,000 data files, 0.3 CPU-s a
    walk). The box prevents what that walk detects: it binds only the run's
    scratch directories writable, and Run.scratch refuses one inside the
    checkout; the parts of a checkout a box binds read-only (nox's venvs, the
    reports) are the snapshot's roots, walked whole by the caller. The
    checkout's own entry and .git's hooks and config stay: git runs those
    outside any box.
    """
    if boxed:
        found = {str(repo): st} if (st := stamp(repo)) is not None else {}
    else:
        found = walk(repo, skip=[str(w) for w in walked])
    dotgit = repo / ".git"
    if (st := stamp(dotgit)) is not None:
        found[str(dotgit)] = st
    for extra in (dotgit / "config", dotgit / "hooks", dotgit / "info" / "attributes"):
        found.update(walk(extra))
    return found


def snapshot(
    whole: Iterable[Path],
    listed: Iterable[Path] = (),
    checkouts: Iterable[Path] = (),
    *,
    boxed: bool = False,
) -> dict[str, Stamp]:
    found: dict[str, Stamp] = {}
    for root in listed:
        found.update(top_level(root))
    # Once each: the code's venv may name a root the interpreter's list has too
    # (init's noxfile: the lane runtime both venvs reach, issue 19).
    roots = list(dict.fromkeys(whole))
    for root in roots:
        found.update(walk(root))
    for repo in checkouts:
        # A root under the checkout, named as the checkout's walk names it, is the same
        # files under the same keys: init's noxfile puts the judge's and the code's
        # venvs in `.nox/`, and every lane walked them twice a snapshot.
        inside = [r for r in roots if r != repo and r.is_relative_to(repo)]
        found.update(checkout(repo, inside, boxed=boxed))
    return found


def settled(before: Snapshot, after: Snapshot) -> dict[str, Stamp]:
    """`after`, with a digest wherever `before` had one and the file now has a single link.

    A shared file whose other links all went (`uv cache clean`, a removed venv)
    is compared by its bytes, not reported for its link count.
    """
    out = dict(after)
    for path, b in after.items():
        a = before.get(path)
        if a is not None and a[6] and not b[6] and stat.S_ISREG(b[4]):
            out[path] = (*b[:6], _digest(path))
    return out


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Pure: what appeared, vanished or changed between two snapshots, sorted."""
    out = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    out += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    out += [
        f"changed {p}"
        for p in sorted(before.keys() & after.keys())
        if before[p] != after[p]
        and not _dir_atime_only(before[p], after[p])
        and not _links_only(before[p], after[p])
    ]
    return out


def _links_only(a: Stamp, b: Stamp) -> bool:
    # uv and pip hard-link venv files from a shared cache: another install
    # anywhere on the machine changes a file's link count, and so its ctime
    # (linked and removed again, only the ctime moved). Only a file that was
    # shared already, with the same bytes, is excused: a rewrite re-dated to
    # its old mtime plus a new link of its own would otherwise look like one
    # (size, mtime, inode and mode all kept).
    return (
        a[5] > 1
        and a[6] != ""
        and a[6] == b[6]
        and (a[0], a[1], a[3], a[4]) == (b[0], b[1], b[3], b[4])
    )


def _dir_atime_only(a: Stamp, b: Stamp) -> bool:
    # A directory whose listing is unchanged but whose stamps moved (a file in
    # it was rewritten) is reported through that file, not twice.
    return stat.S_ISDIR(a[4]) and stat.S_ISDIR(b[4]) and a[3] == b[3]
