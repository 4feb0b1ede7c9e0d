"""The properties' seed (issue 18): derived from a key the patch cannot know, or pinned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import seed
from patchjudge.config import parse_ledger

HEAD, LEDGER_SHA = "a" * 40, "b" * 64


def test_a_known_value_pins_the_message_and_the_cut() -> None:
    # HMAC-SHA256(b"k", "patchjudge-seed-v1\0<head>\0<ledger sha>"), first 8 bytes big-endian:
    # a change of the documented message changes every recorded seed, so it is pinned here.
    assert seed.derive(b"k", HEAD, LEDGER_SHA) == 3795309989257127106


@pytest.mark.parametrize(
    ("key", "head", "ledger"),
    [(b"k2", HEAD, LEDGER_SHA), (b"k", "c" * 40, LEDGER_SHA), (b"k", HEAD, "d" * 64)],
)
def test_each_input_changes_the_seed(key: bytes, head: str, ledger: str) -> None:
    assert seed.derive(key, head, ledger) != seed.derive(b"k", HEAD, LEDGER_SHA)


def test_the_fields_cannot_run_into_each_other() -> None:
    # The separator keeps ("ab", "c") and ("a", "bc") apart.
    assert seed.derive(b"k", "ab", "c") != seed.derive(b"k", "a", "bc")


@given(st.binary(min_size=1, max_size=40), st.text(max_size=40), st.text(max_size=64))
def test_a_derived_seed_is_a_64_bit_unsigned_int_and_the_same_every_time(
    key: bytes, head: str, ledger: str
) -> None:
    value = seed.derive(key, head, ledger)
    assert 0 <= value < 2**64
    assert value == seed.derive(key, head, ledger)


RESOLVE = [
    ({}, seed.Seed(20260924, "pinned")),
    ({"PATCHJUDGE_SEED_KEY": ""}, seed.Seed(20260924, "pinned")),
    ({"PATCHJUDGE_SEED_KEY": "k"}, seed.Seed(3795309989257127106, "key")),
    ({"OTHER": "k"}, seed.Seed(20260924, "pinned")),
]


@pytest.mark.parametrize(("environ", "expected"), RESOLVE)
def test_resolve_takes_the_key_from_the_environ_passed_in(
    environ: dict[str, str], expected: seed.Seed
) -> None:
    assert seed.resolve(20260924, environ, HEAD, LEDGER_SHA) == expected


def test_the_run_ledger_carries_the_resolved_seed_and_its_source() -> None:
    ledger = parse_ledger(b'[map]\n"src/**" = ["properties"]\n[properties]\nseed = 5\n')
    pinned = seed.applied(ledger, {}, HEAD)
    assert (pinned.properties.seed, pinned.properties.seed_source) == (5, "pinned")
    keyed = seed.applied(ledger, {"PATCHJUDGE_SEED_KEY": "k"}, HEAD)
    want = seed.derive(b"k", HEAD, ledger.sha256)
    assert (keyed.properties.seed, keyed.properties.seed_source) == (want, "key")
    # Everything else, the ledger's digest included, is the ledger as parsed.
    assert keyed.sha256 == ledger.sha256 and keyed.review == ledger.review


def test_the_workers_hash_seed_is_pinned_by_the_run_seed() -> None:
    # sha256("patchjudge-hash-seed-v1\0" + "20260924"): a change of the message is seen here.
    assert seed.hash_seed(20260924) == 2606610705
    assert seed.hash_seed(20260924) != seed.hash_seed(20260925)


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_a_hash_seed_is_in_pythonhashseeds_range_and_never_zero(run_seed: int) -> None:
    # 0 would be hash randomisation off: the one seed whose hashes a patch knows by heart.
    assert 1 <= seed.hash_seed(run_seed) <= 2**32 - 1


def test_the_workers_hash_seed_is_the_keys_or_the_commits_never_the_pinned_seeds() -> None:
    # A hash seed derived from the pinned seed alone is public: a patch that knows hash("a")
    # under it knows it is judged (red team, session 11). Without the key: the commit's.
    ledger = parse_ledger(b'[map]\n"src/**" = ["properties"]\n[properties]\nseed = 5\n')
    pinned = seed.applied(ledger, {}, HEAD)
    assert pinned.properties.seed == 5
    assert pinned.properties.hash_seed == seed.commit_hash_seed(5, HEAD, ledger.sha256)
    assert pinned.properties.hash_seed != seed.hash_seed(5)
    assert seed.applied(ledger, {}, HEAD) == pinned  # every run of one commit alike
    assert seed.applied(ledger, {}, "b" * 40).properties.hash_seed != pinned.properties.hash_seed
    keyed = seed.applied(ledger, {"PATCHJUDGE_SEED_KEY": "k"}, HEAD)
    want = seed.hash_seed(seed.derive(b"k", HEAD, ledger.sha256))
    assert keyed.properties.hash_seed == want


@given(st.integers(0, 2**64 - 1), st.text(), st.text())
def test_a_commits_hash_seed_is_in_range_and_never_zero(run_seed: int, head: str, sha: str) -> None:
    assert 1 <= seed.commit_hash_seed(run_seed, head, sha) <= 2**32 - 1
