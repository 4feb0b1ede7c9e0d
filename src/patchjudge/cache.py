"""What the judge computed once and may reuse: where it lives and when it is believed (issue 20).

Only the judge writes here, and only what it computed itself. Two rules
keep a patch out of it:

- no cache unless the run is boxed: in the sandbox the tested code sees
  the tree, its scratch home and the read-only interpreter, never this
  directory; unboxed, the tested code runs as the judge's user and could
  write any entry, so nothing is read or written;
- never inside the checkout: a committed file at an entry's path would be
  the patch's bytes, not the judge's.

Each entry holds its key and the SHA-256 of its payload; an entry whose key
or digest does not match (torn, corrupt, another version's) is recomputed.
A kind keeps its most recently used entries only (`KEEP`): a read renews an
entry, and the first write of a kind in a process drops the rest.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

ENV = "PATCHJUDGE_CACHE_DIR"
Key = Mapping[str, str]

# Entries a kind keeps, the most recently used (session 14): the cache never shrank, and
# a laptop gating every branch piled up a bytecode entry per changed file and run.
KEEP = {"pyc": 4096}
KEEP_DEFAULT = 512
_TORN_AFTER_S = 86_400  # a `.tmp-` file this old is a crashed write's
_pruned: set[Path] = set()  # kinds this process has pruned: once each


def placement(environ: Mapping[str, str], repo: Path, isolation: str) -> Path | None:
    """Pure but for resolving links: the cache directory for this run, or None for none."""
    if isolation != "sandbox":
        return None
    raw = environ.get(ENV)
    if raw == "":
        return None  # PATCHJUDGE_CACHE_DIR= turns the cache off
    if raw is None:
        base = environ.get("XDG_CACHE_HOME") or (
            str(Path(environ["HOME"], ".cache")) if environ.get("HOME") else ""
        )
        if not base:
            return None
        raw = str(Path(base, "patchjudge"))
    path = Path(raw)
    if not path.is_absolute():
        return None  # relative to what? the checkout, most likely: refused
    resolved = path.resolve()
    if resolved.is_relative_to(repo.resolve()):
        return None
    return resolved


def _digest(key: Key) -> str:
    return hashlib.sha256(json.dumps(dict(key), sort_keys=True).encode()).hexdigest()


def encode(key: Key, payload: bytes) -> bytes:
    """Pure: an entry's bytes."""
    doc = {
        "key": dict(key),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "payload": base64.b64encode(payload).decode("ascii"),
    }
    return json.dumps(doc, sort_keys=True).encode()


def decode(data: bytes, key: Key) -> bytes | None:
    """Pure: the payload of an entry made for `key` and intact, else None."""
    try:
        doc = json.loads(data)
        if not isinstance(doc, dict) or doc.get("key") != dict(key):
            return None
        payload = base64.b64decode(doc["payload"], validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None
    return payload if hashlib.sha256(payload).hexdigest() == doc.get("sha256") else None


def path_of(directory: Path, kind: str, key: Key) -> Path:
    return directory / kind / f"{_digest(key)}.json"


def read(directory: Path | None, kind: str, key: Key) -> bytes | None:
    if directory is None:
        return None
    path = path_of(directory, kind, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    found = decode(data, key)
    if found is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # used: the last to go
    return found


def write(directory: Path | None, kind: str, key: Key, payload: bytes) -> None:
    """Best effort and atomic (a rename): a reader sees a whole entry or none."""
    if directory is None:
        return
    target = path_of(directory, kind, key)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(encode(key, payload))
            Path(tmp).replace(target)
        except OSError:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
    _prune(target.parent, KEEP.get(kind, KEEP_DEFAULT))


def stale(entries: Iterable[tuple[str, float]], keep: int) -> list[str]:
    """Pure: the names of the entries beyond the `keep` most recently used (by mtime)."""
    newest_first = sorted(entries, key=lambda entry: (-entry[1], entry[0]))
    return [name for name, _ in newest_first[max(keep, 0) :]]


def _prune(folder: Path, keep: int) -> None:
    """Best effort: a reader of an entry removed here finds none and computes it again."""
    if folder in _pruned:
        return
    _pruned.add(folder)
    entries, torn = [], []
    cutoff = time.time() - _TORN_AFTER_S
    with contextlib.suppress(OSError), os.scandir(folder) as found:
        for entry in found:
            with contextlib.suppress(OSError):
                mtime = entry.stat(follow_symlinks=False).st_mtime
                if entry.name.startswith(".tmp-"):
                    torn += [entry.name] if mtime < cutoff else []
                elif entry.name.endswith(".json"):
                    entries.append((entry.name, mtime))
    for name in [*stale(entries, keep), *torn]:
        with contextlib.suppress(OSError):
            (folder / name).unlink()
