"""Every process that runs the tested code has one fixed hash seed (issue 17).

The worker's is the run's (seed.hash_seed), not the judge's 0 (issue 18): the
property below changed with it, since under 0 a patch knows `hash("a")`.

`python -I` ignores PYTHONHASHSEED, so a parametrize over a set got new node
ids each run and pathfilter saw visible tests "gone" on a comment-only patch.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import commit, example_repo, gate, verdict, write

# Many strings: with a random seed their set order differs between two runs
# with near certainty, and with it the parametrize ids.
WORDS = ", ".join(repr(f"w{i}") for i in range(40))

SET_TESTS = f"""
import sys

import pytest

from calc import total

WORDS = {{{WORDS}}}


@pytest.mark.parametrize("word", WORDS)
def test_word(word):
    assert total([len(word)]) == len(word)


def test_the_seed_is_fixed():
    assert sys.flags.hash_randomization == 0
"""

HASH_CALC = """
def total(xs):
    return sum(xs)


def seed_hash(text):
    return hash(text)
"""

HASH_PROPERTY = """
from hypothesis import given, strategies as st

from calc import seed_hash, total


@given(st.lists(st.integers(min_value=0, max_value=9)))
def test_total_never_negative(xs):
    assert total(xs) >= 0


@given(st.text(max_size=5))
def test_the_worker_hashes_alike_within_the_run(text):
    assert seed_hash(text) == seed_hash(text)


def test_the_workers_hash_seed_is_not_the_judges_known_zero():
    # The judge's pytest keeps seed 0 for its node ids; under it hash("a") is a constant a
    # patch could test for, so the worker's seed is the run's own (issue 18).
    assert seed_hash("a") != hash("a")
"""


def test_a_comment_only_patch_keeps_set_parametrized_ids(tmp_path: Path) -> None:
    repo = example_repo(
        tmp_path,
        **{
            "tests/test_words.py": SET_TESTS,
            "src/calc/__init__.py": HASH_CALC,
            "eval/properties/test_total.py": HASH_PROPERTY,
        },
    )
    write(repo, {"src/calc/__init__.py": "# a comment\n" + HASH_CALC.lstrip("\n")})
    commit(repo, "comment only")
    result = gate(repo)
    doc = verdict(repo)
    assert doc["lanes"]["pathfilter"] == {"status": "pass", "reasons": []}, doc["reasons"]
    assert doc["lanes"]["properties"]["status"] == "pass", doc["reasons"]
    assert result.code == 0, result.out + result.err
