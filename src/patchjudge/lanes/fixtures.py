"""fixtures: are the fixture bytes at head the bytes the lock holds? And `lock`."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from patchjudge import git, hashing
from patchjudge.config import FixturesSettings
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import report
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "fixtures"


def _digest(path: str, chunks: Iterable[bytes], canonical_json: bool) -> str:
    if hashing.is_canonical_candidate(path, canonical_json):
        return hashing.digest_bytes(path, b"".join(chunks), canonical_json)
    return hashing.digest_chunks(chunks)


def scan_commit(
    repo: Path, rev: str, settings: FixturesSettings
) -> tuple[dict[str, str], list[str], list[str]]:
    """Digests of every blob under the roots at `rev`, straight from the object store."""
    if not settings.roots:  # ls-tree with no paths lists the whole tree
        return {}, [], []
    entries = git.ls_tree(repo, rev, settings.roots)
    symlinks = [e.path for e in entries if e.is_symlink]
    not_files = [e.path for e in entries if e.kind != "blob"]
    files = [e for e in entries if e.kind == "blob" and not e.is_symlink]
    # Identical blobs are read once; a .json path and a plain one may share a blob.
    wanted: dict[str, list[str]] = {}
    for e in files:
        wanted.setdefault(e.sha, []).append(e.path)
    found: dict[str, str] = {}
    for sha, chunks in git.iter_blobs(repo, list(wanted)):
        paths = wanted[sha]
        data = b"".join(chunks) if len(paths) > 1 else None
        for path in paths:
            source: Iterable[bytes] = [data] if data is not None else chunks
            found[path] = _digest(path, source, settings.canonical_json)
    return found, symlinks, not_files


# Files at least this big are hashed on a thread pool: hashlib releases the
# GIL, so two large fixtures hash on two cores (issue 7: >= 2.5 GB/s over
# several large files). Smaller ones cost more to hand over than to hash.
LARGE_FILE = 1 << 20


def scan_worktree(
    repo: Path,
    settings: FixturesSettings,
    *,
    workers: int | None = None,
    large: int = LARGE_FILE,
) -> tuple[dict[str, str], list[str]]:
    """Digests of the files under the roots in the working tree (for `lock`).

    Plain strings and os calls, not pathlib: for a small fixture, building
    Path objects cost more than hashing it (issue 7: >= 50,000 files/s).
    """
    top = os.fspath(repo)
    found: dict[str, str] = {}
    symlinks: list[str] = []
    big: list[str] = []
    for root in settings.roots:
        for rel, is_link in _walk(top, PurePosixPath(root).as_posix()):
            if is_link:
                symlinks.append(rel)
                continue
            path = f"{top}/{rel}"
            if hashing.is_canonical_candidate(rel, settings.canonical_json):
                with io.FileIO(path) as fh:
                    found[rel] = hashing.digest_bytes(rel, fh.readall(), True)
                continue
            with io.FileIO(path) as fh:
                if os.fstat(fh.fileno()).st_size >= large:
                    big.append(rel)
                else:
                    found[rel] = hashlib.sha256(fh.readall()).hexdigest()
    if big:
        # Here, not at the top (issue 20): every gate and lane process imports this lane.
        from concurrent.futures import ThreadPoolExecutor

        count = min(len(big), workers or os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=count) as pool:
            digests = pool.map(_file_sha256, [f"{top}/{rel}" for rel in big])
            found.update(zip(big, digests, strict=True))
    return found, symlinks


def _file_sha256(path: str) -> str:
    with io.FileIO(path) as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _walk(top: str, rel: str) -> Iterator[tuple[str, bool]]:
    """(path relative to top, is a symlink) for every file and symlink under rel.

    A symlinked directory is reported as a symlink, never followed; other
    kinds of file (fifos, sockets) are no fixtures and are skipped, as are
    directories that cannot be read.
    """
    try:
        st = os.lstat(f"{top}/{rel}")
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode):
        yield rel, stat.S_ISLNK(st.st_mode)
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    yield from _walk_dir(top, rel)


def _walk_dir(top: str, rel: str) -> Iterator[tuple[str, bool]]:
    try:
        with os.scandir(f"{top}/{rel}") as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    subdirs = []
    for e in entries:
        path = e.name if rel == "." else f"{rel}/{e.name}"
        if e.is_symlink():
            yield path, True
        elif e.is_file(follow_symlinks=False):
            yield path, False
        elif e.is_dir(follow_symlinks=False):
            subdirs.append(path)
    for path in subdirs:
        yield from _walk_dir(top, path)


def load_lock(data: bytes | None, settings: FixturesSettings, source: str) -> hashing.Lock:
    if data is None:
        return hashing.Lock(settings.canonical_json, {})
    lock = hashing.parse_lock(data, source)
    if lock.canonical_json != settings.canonical_json:
        raise PatchjudgeError(
            f"written with canonical_json={str(lock.canonical_json).lower()}, the ledger says "
            f"{str(settings.canonical_json).lower()}",
            file=source,
            key="canonical_json",
            fix="run patchjudge lock",
        )
    return lock


def run(run: Run) -> LaneReport:
    settings = run.ledger.fixtures
    source = f"{settings.lock} (at merge base {run.merge_base[:12]})"
    lock = load_lock(run.read_base(settings.lock), settings, source)
    found, symlinks, not_files = scan_commit(run.repo, run.head, settings)
    if not lock.files and not found and not symlinks and not not_files:
        return report(run, NAME, Status.NOT_APPLICABLE, ["no fixture files and an empty lock"])
    drift = hashing.compare(lock.files, found, symlinks, not_files)
    reasons = drift.reasons(settings.allow_unhashed_new)
    details = {
        "locked": len(lock.files),
        "found": len(found),
        "missing": list(drift.missing),
        "extra": list(drift.extra),
        "changed": list(drift.changed),
        "symlinks": list(drift.symlinks),
        "not_files": list(drift.not_files),
        "canonical_json": settings.canonical_json,
    }
    return report(run, NAME, Status.FAIL if reasons else Status.PASS, reasons, details)


def write_lock(repo: Path, settings: FixturesSettings, lock_path: Path) -> list[str]:
    """The human step: hash the working tree, rewrite the lock, say what changed."""
    found, symlinks = scan_worktree(repo, settings)
    if symlinks:
        raise PatchjudgeError(
            "a fixture must be a regular file, not a symlink",
            file=symlinks[0],
            fix="replace the link with the bytes it points to",
        )
    old: dict[str, str] = {}
    if lock_path.exists():
        try:
            old = dict(hashing.parse_lock(lock_path.read_bytes(), settings.lock).files)
        except PatchjudgeError:
            old = {}
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock_path.write_text(hashing.lock_json(found, settings.canonical_json))
    drift = hashing.compare(old, found)
    return (
        [f"added: {p}" for p in drift.extra]
        + [f"removed: {p}" for p in drift.missing]
        + [f"changed: {p}" for p in drift.changed]
    )
