"""The fast paths of fixture hashing (issue 7) give the digests the plain paths gave."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchjudge import hashing
from patchjudge.config import FixturesSettings
from patchjudge.lanes import fixtures

# --- canonical_bytes: json.dumps where it writes RFC 8785, rfc8785 elsewhere --


def _reference_canonical(data: bytes) -> bytes | None:
    """canonical_bytes as it was before the fast path: rfc8785 for every document."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(pairs)

    def reject(name: str) -> Any:
        raise ValueError(name)

    try:
        doc = json.loads(
            data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=reject
        )
        out: bytes = rfc8785.dumps(doc)
    except (ValueError, UnicodeDecodeError, rfc8785.CanonicalizationError, RecursionError):
        return None
    return out


# Keys and strings from everywhere: ASCII, controls, BMP above the surrogates
# (where code point and UTF-16 order part ways), astral, lone surrogates.
chars = st.one_of(
    st.characters(max_codepoint=0x7F),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
    st.characters(min_codepoint=0x10000),
    st.characters(categories=("Cs",)),
    st.sampled_from('"\\\b\f\n\r\t\x00\x1f\x7f\u2028'),
)
texts = st.text(chars, max_size=6)
ascii_keys = st.text(st.characters(max_codepoint=0x7F), max_size=4)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.integers(),
    st.floats(),
    texts,
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(ascii_keys, texts), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(documents, st.booleans(), st.sampled_from([None, 0, 2]))
def test_canonical_bytes_matches_rfc8785_for_any_document(doc, ascii_only, indent):
    data = json.dumps(doc, ensure_ascii=ascii_only, indent=indent).encode("utf-8", "surrogatepass")
    assert hashing.canonical_bytes(data) == _reference_canonical(data)


@given(st.binary(max_size=64))
def test_canonical_bytes_matches_rfc8785_for_any_bytes(data):
    assert hashing.canonical_bytes(data) == _reference_canonical(data)


@pytest.mark.parametrize(
    "text",
    [
        '{"b": 1, "a": [true, null, "x"]}',
        '{"a": 1, "a": 2}',  # duplicate key: raw bytes, not canonical
        '{"n": 9007199254740992}',  # beyond 2**53: raw bytes
        '{"f": 1.0, "g": 1e21, "h": 5e-7}',  # floats: ECMAScript formatting
        '{"\\ue000": 1, "\\ud83d\\ude00": 2}',  # UTF-16 order differs from code points
        '{"s": "\\ud800"}',  # a lone surrogate cannot be UTF-8
        '"\\u0001\\u001f\\u007f"',
        "[" * 200 + "]" * 200,  # deeper than the fast path goes
        "NaN",
    ],
)
def test_canonical_bytes_edge_documents(text):
    data = text.encode()
    assert hashing.canonical_bytes(data) == _reference_canonical(data)


# --- scan_worktree: os calls and a thread pool, same digests as pathlib -------


def _reference_scan(repo: Path, settings: FixturesSettings) -> tuple[dict[str, str], list[str]]:
    """scan_worktree as it was before issue 7: pathlib, one file after another."""
    found: dict[str, str] = {}
    symlinks: list[str] = []

    def walk(base: Path) -> Iterator[Path]:
        if base.is_symlink() or base.is_file():
            yield base
            return
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames.sort()
            links = [d for d in dirnames if Path(dirpath, d).is_symlink()]
            for name in [*sorted(filenames), *links]:
                yield Path(dirpath, name)

    for root in settings.roots:
        base = repo / root
        if not base.exists() and not base.is_symlink():
            continue
        for path in walk(base):
            rel = path.relative_to(repo).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                symlinks.append(rel)
            elif stat.S_ISREG(mode):
                found[rel] = hashing.digest_bytes(rel, path.read_bytes(), settings.canonical_json)
    return found, symlinks


names = st.sampled_from(["a", "b.json", "c.bin", "d", "e.json", "sub", "é.json"])
entries = st.lists(
    st.tuples(
        st.lists(names, min_size=1, max_size=3).map("/".join),
        st.sampled_from(["small", "large", "json", "bad-json", "link-file", "link-dir"]),
        st.integers(min_value=0, max_value=300),
    ),
    max_size=12,
)


def _build(root: Path, spec: list[tuple[str, str, int]]) -> None:
    for rel, kind, size in spec:
        path = root / "fx" / rel
        taken = path.exists() or path.is_symlink()  # a dangling link does not "exist"
        if taken or any(p.is_file() or p.is_symlink() for p in path.parents):
            continue  # taken, or a file already stands where a directory would go
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "small":
            path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
        elif kind == "large":
            path.write_bytes(os.urandom(64 + size))
        elif kind == "json":
            path.write_text(json.dumps({"z": size, "a": [size, "é"]}, indent=size % 3))
        elif kind == "bad-json":
            path.write_text('{"a": 1, "a": 2}')
        elif kind == "link-file":
            path.symlink_to("elsewhere.bin")
        else:
            (root / "fx" / "target-dir").mkdir(exist_ok=True)
            path.symlink_to(root / "fx" / "target-dir", target_is_directory=True)
    (root / "single.json").write_text('{"b": 2, "a": 1}')


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries, st.booleans(), st.sampled_from([1, 2]))
def test_scan_worktree_matches_the_plain_walk(spec, canonical, workers):
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _build(repo, spec)
        roots = ("fx", "single.json", "missing", "fx/")
        s = FixturesSettings(roots, "eval/fixtures.lock.json", canonical, False)
        found, links = fixtures.scan_worktree(repo, s, workers=workers, large=128)
        ref_found, ref_links = _reference_scan(repo, s)
        assert found == ref_found
        assert sorted(links) == sorted(ref_links)


def test_scan_worktree_hashes_large_files_on_the_pool(tmp_path):
    big = os.urandom(3 << 20)
    for name in ("a.bin", "b.bin", "c.bin"):
        (tmp_path / "fx" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "fx" / name).write_bytes(big + name.encode())
    s = FixturesSettings(("fx",), "eval/fixtures.lock.json", True, False)
    found, links = fixtures.scan_worktree(tmp_path, s, workers=2)
    assert links == []
    assert found == {
        f"fx/{n}": hashlib.sha256(big + n.encode()).hexdigest() for n in ("a.bin", "b.bin", "c.bin")
    }
