"""The worker's global PRNGs are seeded by the judge, run after run the same (issue 17).

In process hypothesis seeds `random` (and numpy's global state, and every
PRNG given to `register_random`) at each example's start and restores it at
the end. A library that draws from its process's `random` out of process
draws from the worker's: unseeded, it would draw other numbers on every run,
and the gate would say different things on one commit. The worker follows a
seeding of its own once, then `st.random_module()`'s, never the example's
(red team, session 12, third round: each example seeded 0 again was a tell)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from patchjudge.boundary import protocol
from patchjudge.boundary.standin import WorkerPrng, salted_seed
from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
import random
import sys
import types

def roll(n=1):
    return [random.random() for _ in range(n)]

def state():
    return hash(random.getstate())

# numpy's global state, as hypothesis reaches it (numpy.random.seed/get_state/set_state),
# without numpy: a stand-in module of the library's own.
_numpy_state = random.Random()
numpy = types.ModuleType("numpy")
numpy.random = types.ModuleType("numpy.random")
numpy.random.seed = _numpy_state.seed
numpy.random.get_state = _numpy_state.getstate
numpy.random.set_state = _numpy_state.setstate
numpy.random.random = _numpy_state.random
sys.modules["numpy"], sys.modules["numpy.random"] = numpy, numpy.random

def numpy_roll():
    return numpy.random.random()
"""

PROPERTIES = """
import json
import pathlib
import random

from hypothesis import given, settings, strategies as st

import mylib

DRAWS = []


@settings(max_examples=10)
@given(st.integers())
def test_records_the_librarys_draws(n):
    DRAWS.append(mylib.roll(2) + [mylib.numpy_roll()])


@settings(max_examples=10)
@given(st.random_module(), st.integers())
def test_random_module_seeds_the_librarys_random_too(seeder, n):
    assert mylib.roll() == [random.Random(seeder.seed).random()]


def test_zz_keeps_the_draws():
    pathlib.Path("draws.json").write_text(json.dumps(DRAWS))
"""

TESTS = {
    "test_records_the_librarys_draws",
    "test_random_module_seeds_the_librarys_random_too",
    "test_zz_keeps_the_draws",
}


def bare(tmp_path: Path) -> dict[str, str]:
    """The same files under plain pytest, the library imported in process: the reference."""
    (tmp_path / "mylib").mkdir(parents=True)
    (tmp_path / "mylib" / "__init__.py").write_text(LIBRARY)
    (tmp_path / "test_props.py").write_text(PROPERTIES)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-B", "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q",
         "-o", "addopts=", "-c", os.devnull, "--rootdir", str(tmp_path), "test_props.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return outcomes(proc)


def test_the_librarys_random_draws_the_same_run_after_run(tmp_path: Path) -> None:
    assert bare(tmp_path / "bare") == dict.fromkeys(TESTS, "PASSED")
    draws = []
    for run in ("first", "second"):
        proc = run_judge(tmp_path / run, PROPERTIES, library=LIBRARY)
        got = outcomes(proc)
        assert got == dict.fromkeys(TESTS, "PASSED"), proc.stdout[-6000:] + proc.stderr[-3000:]
        draws.append(json.loads((tmp_path / run / "judge" / "draws.json").read_text()))
    # The same numbers run after run (random's and numpy's, loaded after the first request),
    # and no example starts again from a state the library saw: it goes on as in a process
    # of the user's, not from random.Random(0)'s.
    assert draws[0] == draws[1] and len(draws[0]) == 10
    assert len({json.dumps(d) for d in draws[0]}) == 10
    zero = random.Random(0)
    assert draws[0][0][:2] != [zero.random(), zero.random()]


def test_a_worker_follows_its_own_seeding_then_the_nested_ones_in_force() -> None:
    # Red team, session 12 (third round): with each example seeded 0 again, a patch right
    # only in Random(0)'s state, or in a state it saw before though it drew since, passed.
    prng = WorkerPrng(salt="12345")
    own = (0, salted_seed("12345", 0))
    assert prng.seeds == (own,)
    outside = prng.getstate()
    prng.seed(0)  # the example's own (deterministic_PRNG): not followed
    example = prng.getstate()
    assert prng.seeds == (own,)
    prng.seed(7)  # st.random_module()'s drawn seed: the property sees it
    assert prng.seeds[0] == own and [seed for _, seed in prng.seeds[1:]] == [7]
    assert protocol.seeds_ok(prng.seeds)
    prng.setstate(example)
    assert prng.seeds == (own,)
    prng.setstate(outside)
    assert prng.getstate() == ()
    assert salted_seed("1", 0) != salted_seed("0", 0) != 0
    assert all(0 <= salted_seed(str(s), 0) < protocol.SEED_LIMIT for s in range(50))


@pytest.mark.parametrize(
    "seeds",
    [[(1, 0)], ((1,),), ((1, -1),), ((1, 1 << 32),), (("1", 0),), ((1, 0),) * 65, ((1, True),)],
)
def test_seeds_that_are_not_serial_seed_pairs_are_refused(seeds: object) -> None:
    assert not protocol.seeds_ok(seeds)


def test_a_prng_is_seeded_with_what_hypothesis_seeds_with() -> None:
    with pytest.raises(ValueError, match="below 2"):
        WorkerPrng().seed(1 << 32)
