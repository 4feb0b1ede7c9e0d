"""cache.py: where the judge's cache may live, and which entries it believes (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
