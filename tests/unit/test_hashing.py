"""Fixture policy: canonical JSON where it is safe, raw bytes otherwise; drift by kind."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.errors import PatchjudgeError
from patchjudge.hashing import canonical_bytes, compare, digest_bytes, lock_json, parse_lock

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values, st.booleans(), st.integers(0, 4))
def test_key_order_and_white_space_are_not_drift(value: object, sort: bool, indent: int) -> None:
    import json

    a = json.dumps(value).encode()
    b = json.dumps(value, sort_keys=sort, indent=indent or None).encode()
    assert digest_bytes("x.json", a, True) == digest_bytes("x.json", b, True)


@pytest.mark.parametrize(
    "data",
    [b'{"a": 1, "a": 2}', b"[NaN]", b"[Infinity]", b"{bad", b"[9007199254740993]", b"\xff"],
)
def test_documents_a_second_parser_could_read_otherwise_hash_raw(data: bytes) -> None:
    assert canonical_bytes(data) is None
    assert digest_bytes("x.json", data, True) == hashlib.sha256(data).hexdigest()


def test_canonical_only_for_json_and_only_when_asked() -> None:
    data = b'{"b": 1, "a": 2}'
    raw = hashlib.sha256(data).hexdigest()
    assert digest_bytes("x.txt", data, True) == raw
    assert digest_bytes("x.json", data, False) == raw
    assert digest_bytes("x.json", data, True) == hashlib.sha256(b'{"a":2,"b":1}').hexdigest()


def test_compare_reports_each_kind_apart() -> None:
    locked = {"a": "1", "b": "2", "c": "3", "d": "4"}
    found = {"a": "1", "b": "X", "e": "5"}
    drift = compare(locked, found, symlinks=["c"], not_files=["d"])
    assert drift.changed == ("b",) and drift.extra == ("e",) and drift.missing == ()
    assert drift.symlinks == ("c",) and drift.not_files == ("d",)
    assert drift.reasons(allow_unhashed_new=True) == [
        "changed: b",
        "symlink: c (a fixture must be a file)",
        "not a file: d",
    ]
    assert "extra: e (not in the lock)" in drift.reasons(allow_unhashed_new=False)
    assert compare({"gone": "1"}, {}).reasons(False) == ["missing: gone"]


def test_lock_round_trip() -> None:
    text = lock_json({"b": "0" * 64, "a": "1" * 64}, True)
    lock = parse_lock(text.encode(), "eval/fixtures.lock.json")
    assert list(lock.files) == ["a", "b"] and lock.canonical_json


@pytest.mark.parametrize(
    ("data", "key"),
    [
        (b"[]", None),
        (b'{"version": 2, "canonical_json": true, "files": {}}', "version"),
        (b'{"version": 1, "canonical_json": 1, "files": {}}', "canonical_json"),
        (b'{"version": 1, "canonical_json": true, "files": []}', "files"),
        (b'{"version": 1, "canonical_json": true, "files": {"a": "XYZ"}}', "files.a"),
        (b'{"version": 1, "canonical_json": true, "files": {}, "extra": 1}', "extra"),
        (b"not json", None),
    ],
)
def test_bad_lock_names_the_key(data: bytes, key: str | None) -> None:
    with pytest.raises(PatchjudgeError) as info:
        parse_lock(data, "eval/fixtures.lock.json")
    assert info.value.file == "eval/fixtures.lock.json" and info.value.key == key
