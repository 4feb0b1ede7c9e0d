"""cache.py: where the judge's cache may live, and which entries it believes (issue 20)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import cache

KEY = {"unicodedata": "15.0.0", "hypothesis": "6.0"}


@pytest.mark.parametrize(
    ("env", "isolation", "expected"),
    [
        ({"PATCHJUDGE_CACHE_DIR": "/c"}, "sandbox", "/c"),
        ({"PATCHJUDGE_CACHE_DIR": "/c"}, "process", None),  # unboxed code could write it
        ({"PATCHJUDGE_CACHE_DIR": ""}, "sandbox", None),  # turned off
        ({"PATCHJUDGE_CACHE_DIR": "rel/dir"}, "sandbox", None),  # relative: refused
        ({"PATCHJUDGE_CACHE_DIR": "{repo}/.cache"}, "sandbox", None),  # in the checkout
        ({"PATCHJUDGE_CACHE_DIR": "{repo}"}, "sandbox", None),
        ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "sandbox", "/x/patchjudge"),
        ({"HOME": "/h"}, "sandbox", "/h/.cache/patchjudge"),
        ({"HOME": "{repo}"}, "sandbox", None),  # HOME is the checkout (some CI images)
        ({}, "sandbox", None),
    ],
)
def test_placement(
    tmp_path: Path, env: dict[str, str], isolation: str, expected: str | None
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    environ = {k: v.format(repo=repo) for k, v in env.items()}
    found = cache.placement(environ, repo, isolation)
    assert found == (None if expected is None else Path(expected).resolve())


def test_a_link_into_the_checkout_is_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "c").mkdir(parents=True)
    (tmp_path / "link").symlink_to(repo / "c")
    assert (
        cache.placement({"PATCHJUDGE_CACHE_DIR": str(tmp_path / "link")}, repo, "sandbox") is None
    )


def test_decode_believes_only_an_intact_entry_for_its_key() -> None:
    good = cache.encode(KEY, b"payload")
    assert cache.decode(good, KEY) == b"payload"
    assert cache.decode(good, {**KEY, "hypothesis": "6.1"}) is None  # another version's
    assert cache.decode(good.replace(b'"sha256": "', b'"sha256": "0'), KEY) is None
    forged = good.replace(b"cGF5bG9hZA==", b"ZXZpbA==")  # b"evil", digest left as it was
    assert forged != good and cache.decode(forged, KEY) is None
    assert cache.decode(good[:-5], KEY) is None  # torn
    assert cache.decode(b"[]", KEY) is None
    assert cache.decode(b'{"key": {}, "payload": "!!"}', {}) is None


def test_write_then_read_and_a_corrupt_entry_is_none(tmp_path: Path) -> None:
    assert cache.read(tmp_path, "k", KEY) is None
    cache.write(tmp_path, "k", KEY, b"\x00data")
    assert cache.read(tmp_path, "k", KEY) == b"\x00data"
    cache.path_of(tmp_path, "k", KEY).write_bytes(b"garbage")
    assert cache.read(tmp_path, "k", KEY) is None
    cache.write(None, "k", KEY, b"x")  # no directory: nothing, no error
    assert cache.read(None, "k", KEY) is None
    assert [p.name for p in (tmp_path / "k").iterdir()] == [cache.path_of(tmp_path, "k", KEY).name]


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=4), st.integers(0, 50), max_size=12),
    st.integers(-1, 14),
)
def test_stale_is_what_lies_beyond_the_most_recently_used(
    mtimes: dict[str, int], keep: int
) -> None:
    gone = cache.stale(mtimes.items(), keep)
    kept = set(mtimes) - set(gone)
    assert len(set(gone)) == len(gone)
    assert len(kept) == min(len(mtimes), max(keep, 0))
    # Nothing kept is older than anything dropped.
    assert all(mtimes[k] >= mtimes[g] for k in kept for g in gone)


def test_a_kind_keeps_its_most_recently_used_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "KEEP_DEFAULT", 3)
    monkeypatch.setattr(cache, "_pruned", set())
    keys = [{"n": str(i)} for i in range(4)]
    for age, key in zip((40, 30, 20, 10), keys, strict=True):
        cache.write(tmp_path, "kind", key, b"x")
        os.utime(cache.path_of(tmp_path, "kind", key), (time.time() - age,) * 2)
    torn = tmp_path / "kind" / ".tmp-crashed"
    torn.write_bytes(b"half")
    os.utime(torn, (time.time() - 2 * 86_400,) * 2)
    # The oldest is read, so renewed; the first write of the kind in this process prunes.
    monkeypatch.setattr(cache, "_pruned", set())
    assert cache.read(tmp_path, "kind", keys[0]) == b"x"
    cache.write(tmp_path, "kind", {"n": "new"}, b"y")
    left = {p.name for p in (tmp_path / "kind").iterdir()}
    expected = {cache.path_of(tmp_path, "kind", k).name for k in (keys[0], keys[3], {"n": "new"})}
    assert left == expected  # keys 1 and 2 (least recently used) and the torn write gone
    # A kind is pruned once a process: later writes leave the count above KEEP.
    cache.write(tmp_path, "kind", {"n": "newer"}, b"z")
    assert len(list((tmp_path / "kind").iterdir())) == 4
