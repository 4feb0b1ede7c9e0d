"""Pure fixture policy: what a fixture's digest is, and how a tree compares to the lock."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from patchjudge.errors import PatchjudgeError

_HEX64 = re.compile(r"[0-9a-f]{64}")


def is_canonical_candidate(path: str, canonical_json: bool) -> bool:
    return canonical_json and path.endswith(".json")


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        # Two parsers may read `{"a":1,"a":2}` two ways: not the same document.
        raise _Duplicate("duplicate key")
    return doc


# RFC 8785 numbers are IEEE doubles: integers beyond these are not exact.
_INT_MIN, _INT_MAX = -(2**53) + 1, 2**53 - 1
# Deeper documents take the rfc8785 path, whose recursion limit is the one
# the lock was always written under.
_MAX_DEPTH = 64


def _stdlib_writes_jcs(doc: Any) -> bool:
    """Pure: json.dumps(sort_keys, compact, ensure_ascii=False) writes doc as RFC 8785 does.

    True when every key is ASCII (code point order is then UTF-16 order),
    no number is a float (ECMAScript number formatting differs from repr)
    and every integer is exact as a double; the string escapes of the two
    are the same. rfc8785 is pure Python and costs ~10x json.dumps: this is
    what makes 20,000 canonical-JSON fixtures/s (issue 7) reachable.
    """
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        kind = type(value)
        if kind is dict:
            if depth > _MAX_DEPTH or not all(key.isascii() for key in value):
                return False
            children = value.values()
        elif kind is list:
            if depth > _MAX_DEPTH:
                return False
            children = value
        else:
            children = (value,)
            depth -= 1
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is int:
                if not _INT_MIN <= child <= _INT_MAX:
                    return False
            elif kind is not str and kind is not bool and child is not None:
                return False
    return True


def canonical_bytes(data: bytes) -> bytes | None:
    """RFC 8785 form of a JSON document, or None when it is not plain JSON.

    None (hash the raw bytes) for invalid JSON, NaN/Infinity, duplicate keys
    and integers beyond 2**53: anything a second parser could read otherwise.
    """
    try:
        doc = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
        )
        if _stdlib_writes_jcs(doc):
            text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            # A lone surrogate fails here as it does in rfc8785: None below.
            return text.encode("utf-8")
        out: bytes = rfc8785.dumps(doc)
    except (ValueError, UnicodeDecodeError, rfc8785.CanonicalizationError, RecursionError):
        return None
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def digest_bytes(path: str, data: bytes, canonical_json: bool) -> str:
    if is_canonical_candidate(path, canonical_json):
        data = canonical_bytes(data) or data
    return hashlib.sha256(data).hexdigest()


def digest_chunks(chunks: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Lock:
    canonical_json: bool
    files: Mapping[str, str]


def parse_lock(data: bytes, source: str) -> Lock:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise PatchjudgeError(
            f"not valid JSON: {exc}", file=source, fix="run patchjudge lock"
        ) from None
    except RecursionError:  # json recurses once per nested array or object
        raise PatchjudgeError("nested too deeply to be a lock", file=source) from None
    if not isinstance(doc, dict):
        raise PatchjudgeError("must be a JSON object", file=source)
    unknown = set(doc) - {"version", "canonical_json", "files"}
    if unknown:
        raise PatchjudgeError("unknown key", file=source, key=sorted(unknown)[0])
    if doc.get("version") != 1:
        raise PatchjudgeError("must be 1", file=source, key="version")
    canonical = doc.get("canonical_json")
    if not isinstance(canonical, bool):
        raise PatchjudgeError("must be true or false", file=source, key="canonical_json")
    files = doc.get("files")
    if not isinstance(files, dict):
        raise PatchjudgeError("must be an object of path -> sha256", file=source, key="files")
    for path, digest in files.items():
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise PatchjudgeError(
                "must be 64 lowercase hex digits", file=source, key=f"files.{path}"
            )
    return Lock(canonical, files)


def lock_json(files: Mapping[str, str], canonical_json: bool) -> str:
    doc = {"version": 1, "canonical_json": canonical_json, "files": dict(sorted(files.items()))}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Drift:
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    changed: tuple[str, ...]
    symlinks: tuple[str, ...]
    not_files: tuple[str, ...]

    def reasons(self, allow_unhashed_new: bool) -> list[str]:
        out = [f"missing: {p}" for p in self.missing]
        if not allow_unhashed_new:
            out += [f"extra: {p} (not in the lock)" for p in self.extra]
        out += [f"changed: {p}" for p in self.changed]
        out += [f"symlink: {p} (a fixture must be a file)" for p in self.symlinks]
        out += [f"not a file: {p}" for p in self.not_files]
        return out


def compare(
    locked: Mapping[str, str],
    found: Mapping[str, str],
    symlinks: Iterable[str] = (),
    not_files: Iterable[str] = (),
) -> Drift:
    """Pure: the lock against what the tree holds; each kind of drift apart."""
    odd = set(symlinks) | set(not_files)
    return Drift(
        missing=tuple(sorted(p for p in locked if p not in found and p not in odd)),
        extra=tuple(sorted(p for p in found if p not in locked)),
        changed=tuple(sorted(p for p in found if p in locked and found[p] != locked[p])),
        symlinks=tuple(sorted(set(symlinks))),
        not_files=tuple(sorted(set(not_files))),
    )
