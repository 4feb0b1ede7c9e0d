"""fixtures: are the fixture bytes at head the bytes the lock holds? And `lock`."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

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


def scan_worktree(repo: Path, settings: FixturesSettings) -> tuple[dict[str, str], list[str]]:
    """Digests of the files under the roots in the working tree (for `lock`)."""
    found: dict[str, str] = {}
    symlinks: list[str] = []
    for root in settings.roots:
        base = repo / root
        if not base.exists() and not base.is_symlink():
            continue
        for path in _walk(base):
            rel = path.relative_to(repo).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                symlinks.append(rel)
            elif stat.S_ISREG(mode):
                found[rel] = _digest(rel, _read_chunks(path), settings.canonical_json)
    return found, symlinks


def _walk(base: Path) -> Iterator[Path]:
    if base.is_symlink() or base.is_file():
        yield base
        return
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for name in [*sorted(filenames), *(d for d in dirnames if Path(dirpath, d).is_symlink())]:
            yield Path(dirpath, name)


def _read_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            yield chunk


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
