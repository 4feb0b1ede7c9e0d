"""Stand-ins through a real worker: what a property file can do with the code under test.

Each case is a property file run by a real pytest with the stand-in plugin,
on a judge tree that holds no file of the library: `mylib` is importable
only as a stand-in, so every use below crosses the boundary.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

LIBRARY = """
import sys


class Error(ValueError):
    pass


class SubError(Error):
    def __init__(self, msg, code=3):
        super().__init__(msg)
        self.code = code


def total(xs):
    return sum(xs)


def fail(n):
    if n > 2:
        raise SubError("too big", code=n)
    raise KeyError(n)


def count():
    n = 0
    while True:
        yield n
        n += 1


def apply(f, xs, *, twice=False):
    out = [f(x) for x in xs]
    return [f(x) for x in out] if twice else out


def grow(xs, d=None, s=None):
    xs.append(len(xs))
    if d is not None:
        d["seen"] = True
    if s is not None:
        s.add(0)


def values():
    return None, True, 3, 2.5, "s", b"b", [1], (2,), {"k": 1}, {3}, frozenset({4})


def hypothesis_loaded():
    return "hypothesis" in sys.modules or "pytest" in sys.modules


def shout(text):
    print("LOUD", text)
    return text.upper()


class Thing:
    def __init__(self, a: int, b: str = "x"):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, Thing) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self):
        return hash((self.a, self.b))

    def __lt__(self, other):
        return self.a < other.a

    def __add__(self, other):
        return Thing(self.a + (other.a if isinstance(other, Thing) else other), self.b)

    __radd__ = __add__

    def __len__(self):
        return self.a

    def __getitem__(self, i):
        return self.b[i]

    def __contains__(self, x):
        return x in self.b

    def __iter__(self):
        return iter(self.b)

    def __repr__(self):
        return f"Thing({self.a!r}, {self.b!r})"

    def scaled(self, k=1):
        return Thing(self.a * k, self.b)


class Counter:
    def __init__(self):
        self.n = 0

    def bump(self):
        self.n += 1
        return self.n
"""

SUB = """
def double(x):
    return 2 * x
"""

PROPERTIES = """
import pytest
from hypothesis import assume, event, example, given, note, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import mylib
from mylib import Thing, total
from mylib.sub import double


@given(st.lists(st.integers()))
@example([1, 2, 3])
def test_given_example_and_data(xs):
    assume(len(xs) < 50)
    note(f"xs={xs}")
    event("long" if len(xs) > 3 else "short")
    target(float(len(xs)))
    assert total(xs) == sum(xs)


def test_data_crosses_as_values():
    got = mylib.values()
    assert got == (None, True, 3, 2.5, "s", b"b", [1], (2,), {"k": 1}, {3}, frozenset({4}))
    assert [type(v) for v in got] == [type(None), bool, int, float, str, bytes, list, tuple,
                                      dict, set, frozenset]


def test_handles_work_through_the_worker():
    t = Thing(3, b="abc")
    assert t.a == 3 and t.b == "abc"
    assert len(t) == 3 and t[1] == "b" and "c" in t and list(t) == ["a", "b", "c"]
    assert t + 1 == Thing(4, "abc") and 1 + t == Thing(4, "abc")
    assert t.scaled(k=2) == Thing(6, "abc")
    assert Thing(1) < Thing(2) and sorted([Thing(2), Thing(1)]) == [Thing(1), Thing(2)]
    assert {t: 1}[Thing(3, "abc")] == 1
    assert isinstance(t, Thing) and not isinstance(1, Thing)
    assert repr(t) == "Thing(3, 'abc')"
    t.a = 9
    assert t.a == 9
    c = mylib.Counter()
    assert c.bump() == 1 and c.bump() == 2 and c.n == 2


def test_submodules_and_prints():
    assert double(4) == 8
    assert mylib.shout("hi") == "HI"


def test_lazy_iterators_stay_lazy():
    it = mylib.count()
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    import itertools

    assert list(itertools.islice(mylib.count(), 4)) == [0, 1, 2, 3]


def test_exceptions():
    with pytest.raises(mylib.Error) as info:
        mylib.fail(5)
    assert info.value.code == 5 and str(info.value) == "too big"
    assert isinstance(info.value, ValueError) and type(info.value).__name__ == "SubError"
    assert issubclass(mylib.SubError, mylib.Error) and mylib.SubError.__module__ == "mylib"
    with pytest.raises(KeyError):
        mylib.fail(1)
    try:
        mylib.fail(4)
    except mylib.Error as exc:
        assert exc.code == 4
    else:
        raise AssertionError("no error")


def test_judge_functions_run_in_the_judge():
    seen = []

    def key(x):
        seen.append(x)
        return x * 10

    assert mylib.apply(key, [1, 2]) == [10, 20] and seen == [1, 2]
    assert mylib.apply(lambda x: x + 1, [1], twice=True) == [3]
    # Re-entrant: the judge's function calls back into the worker while it waits.
    assert mylib.apply(lambda x: total([x, x]), [1, 2]) == [2, 4]
    with pytest.raises(ZeroDivisionError):
        mylib.apply(lambda x: 1 / x, [0])

    class Mine(Exception):
        pass

    def boom(x):
        raise Mine(x)

    with pytest.raises(Mine):
        mylib.apply(boom, [1])


def test_in_place_changes_are_seen():
    xs, d, s = [1], {}, set()
    mylib.grow(xs, d, s=s)
    assert xs == [1, 1] and d == {"seen": True} and s == {0}


def test_only_the_judge_has_hypothesis():
    assert mylib.hypothesis_loaded() is False


@given(st.builds(Thing), st.sampled_from([Thing(1), Thing(2)]))
def test_builds_and_sampled_handles(t, u):
    assert isinstance(t.a, int) and isinstance(t.b, str)
    assert (t + u).a == t.a + u.a


@pytest.fixture
def counter():
    return mylib.Counter()


@pytest.mark.parametrize("n", [1, 3])
def test_parametrize_and_fixtures(counter, n):
    for _ in range(n):
        counter.bump()
    assert counter.n == n


class Machine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.counter = mylib.Counter()
        self.model = 0

    @rule()
    def bump(self):
        self.model += 1
        assert self.counter.bump() == self.model

    @invariant()
    def agrees(self):
        assert self.counter.n == self.model


TestMachine = Machine.TestCase
"""


UNTIMED = """
from hypothesis import HealthCheck, settings

settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""


def run_judge(
    tmp_path: Path,
    properties: str | Mapping[str, str | bytes],
    library: str = LIBRARY,
    environ: dict[str, str] | None = None,
    spec_more: dict[str, object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The judge's pytest over `properties` (name -> text, or bytes for a data file)."""
    files = properties if isinstance(properties, dict) else {"test_props.py": properties}
    tree, judge = tmp_path / "tree", tmp_path / "judge"
    (tree / "src" / "mylib").mkdir(parents=True)
    (tree / "src" / "mylib" / "__init__.py").write_text(library)
    (tree / "src" / "mylib" / "sub.py").write_text(SUB)
    judge.mkdir()
    for name, text in files.items():
        (judge / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (judge / name).write_bytes(text)
        else:
            (judge / name).write_text(textwrap.dedent(text))
    spec = {
        "python": sys.executable,
        "tree": str(tree),
        "home": str(tmp_path / "home"),
        "names": ["mylib"],
        "pythonpath": ["src"],
        "call_timeout_s": 5,
        **(spec_more or {}),
    }
    src = Path(__file__).resolve().parents[2] / "src"
    # The lane's profile times nothing; hypothesis' default (a 200 ms deadline,
    # `too_slow` past 1 s of draws) failed these tables on a loaded machine.
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "untimed_profile.py").write_text(UNTIMED)
    env = {
        "PATH": os.environ["PATH"],
        "PATCHJUDGE_ORACLE": json.dumps(spec),
        "PYTHONPATH": os.pathsep.join([str(src), str(plugins)]),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp"),
        **(environ or {}),
    }
    return subprocess.run(
        [sys.executable, "-B", "-m", "pytest", "-p", "patchjudge.boundary.standin", "-p", "no:cacheprovider",
         "-p", "untimed_profile", "-rA", "-q", "--hypothesis-profile=untimed", "-o", "addopts=", "-c", os.devnull,
         "--rootdir", str(judge), *sorted(f for f in files if f.startswith("test_"))],
        cwd=judge, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def outcomes(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    found = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR) (\S+)", line)
        if m:
            found[m.group(2).split("::", 1)[-1]] = m.group(1)
    return found


def test_property_files_work_unchanged_through_stand_ins(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES)
    got = outcomes(proc)
    assert got and set(got.values()) == {"PASSED"}, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert len(got) == 13, got
    # The library's print went to the worker's stderr, never onto the wire.
    assert "LOUD hi" in proc.stdout + proc.stderr


HOSTILE = """
import os, time

def crash():
    os._exit(3)

def stall():
    time.sleep(60)

def stalls():
    yield 0
    yield 1
    time.sleep(60)
    yield 2

def forever():
    n = 0
    while True:
        yield n
        n += 1
"""

CAUGHT = {
    "test_crash.py": """
import mylib


def test_a_crash_fails_even_when_caught():
    try:
        mylib.crash()
    except Exception:
        pass


def test_after_the_crash():
    assert mylib.forever is not None
""",
    "test_stall.py": """
import pytest
import mylib


def test_a_stall_past_the_deadline_fails():
    with pytest.raises(Exception):
        mylib.stall()
""",
    # A step that hangs inside a batch (list() fetches ahead): killed at the same deadline.
    "test_stall_batch.py": """
import pytest
import mylib


def test_a_step_that_hangs_in_a_batch_fails():
    with pytest.raises(Exception):
        list(mylib.stalls())
""",
    "test_cross.py": """
import os

import pytest
import mylib


def test_no_judge_module_crosses():
    with pytest.raises(TypeError, match="cannot cross"):
        mylib.forever(os)
""",
}


def test_a_worker_that_cannot_answer_fails_the_property(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, CAUGHT, library=HOSTILE)
    got = outcomes(proc)
    text = proc.stdout
    assert got["test_a_crash_fails_even_when_caught"] == "FAILED", text
    assert "test_crash.py crashed (exit 3)" in text
    # The failure sticks for the module; the next module has a fresh worker.
    assert got["test_after_the_crash"] == "FAILED", text
    assert got["test_a_stall_past_the_deadline_fails"] == "FAILED", text
    assert "test_stall.py did not answer within the 5 s call deadline" in text
    assert got["test_a_step_that_hangs_in_a_batch_fails"] == "FAILED", text
    assert "test_stall_batch.py did not answer within the 5 s call deadline" in text
    assert got["test_no_judge_module_crosses"] == "PASSED", text


LAZY = """
def keep(pred, xs):
    return (x for x in xs if pred(x))
"""

LAZY_PROPERTY = """
import mylib


def test_a_lazy_iterator_calls_its_predicate_after_the_call_returned():
    it = mylib.keep(lambda x: x % 2 == 0, [1, 2, 3, 4])
    assert list(it) == [2, 4]
"""


def test_judge_functions_outlive_the_call_that_gave_them(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, LAZY_PROPERTY, library=LAZY)
    assert set(outcomes(proc).values()) == {"PASSED"}, proc.stdout[-3000:]


# StopIteration out of a call ends any iteration the judge runs around it without a word:
# `all(map(f, xs))` is then True whatever f returns (a patch's way to pass such a property).
STOPPING = """
class Done(StopIteration):
    pass


def stop(x):
    raise StopIteration


def done(x):
    raise Done(x)


def empty():
    return iter(())


def evens(xs):
    for x in xs:
        if x % 2 == 0:
            yield x
"""

STOPPING_PROPERTIES = """
import pytest
import mylib


def test_all_of_a_map_over_a_stopping_call():
    assert all(map(mylib.stop, [1, 2, 3]))


def test_all_of_a_map_over_a_stopping_subclass():
    assert all(map(mylib.done, [1, 2, 3]))


def test_iteration_still_ends_as_it_should():
    assert list(mylib.evens([1, 2, 3, 4])) == [2, 4]
    assert all(map(lambda x: x % 2 == 0, mylib.evens(range(600))))
    with pytest.raises(StopIteration):
        next(mylib.empty())
    assert next(mylib.empty(), None) is None


def test_a_generators_own_steps_still_end_it():
    gen = mylib.evens([2])
    assert gen.__next__() == 2
    with pytest.raises(StopIteration):
        gen.send(None)
    with pytest.raises(StopIteration):
        mylib.evens([]).__next__()
"""


def test_stop_iteration_out_of_a_call_fails_the_property_not_the_loop(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, STOPPING_PROPERTIES, library=STOPPING)
    got, text = outcomes(proc), proc.stdout
    assert got["test_all_of_a_map_over_a_stopping_call"] == "FAILED", text
    assert got["test_all_of_a_map_over_a_stopping_subclass"] == "FAILED", text
    assert "the code under test raised StopIteration out of a call" in text
    assert "the code under test raised Done out of a call" in text
    assert got["test_iteration_still_ends_as_it_should"] == "PASSED", text
    # A generator's own step methods end it as `next` does (PEP 479 is about the body).
    assert got["test_a_generators_own_steps_still_end_it"] == "PASSED", text


# Builtins of the code's: types and pure functions are each side's own; any other runs
# where the code does (a judge that resolved `eval` to its own ran the code's text).
BUILTINS_LIB = """
KEY = len
TYPE = int
load = eval
run = exec
reader = open
"""

BUILTINS_PROPERTIES = """
import os

import mylib


def test_pure_builtins_and_types_are_the_judges_own():
    assert mylib.KEY is len and mylib.TYPE is int
    assert sorted(["bb", "a"], key=mylib.KEY) == ["a", "bb"]


def test_other_builtins_run_in_the_worker():
    assert mylib.load is not eval and mylib.run is not exec and mylib.reader is not open
    assert mylib.load("__import__('os').getpid()") != os.getpid()
"""


def test_a_builtin_of_the_code_runs_in_the_judge_only_if_it_is_pure(tmp_path: Path) -> None:
    from patchjudge.boundary import protocol

    proc = run_judge(tmp_path, BUILTINS_PROPERTIES, library=BUILTINS_LIB)
    got = outcomes(proc)
    assert len(got) == 2 and set(got.values()) == {"PASSED"}, proc.stdout[-3000:]
    # The judge's side decides, whatever a worker names (a forged reference too).
    named = [protocol.builtin_name(f) for f in (len, int, ValueError, eval, exec, open, vars)]
    assert named == ["len", "int", "ValueError", None, None, None, None]


# Bytes the code made, unpickled by a property: a pickle names what to call when it loads.
PICKLING_LIB = """
import os
import pickle


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


class _Run:
    def __reduce__(self):
        return (eval, ("__import__('os').getpid()",))


def dumps(value):
    return pickle.dumps(value)


def hostile():
    return pickle.dumps(_Run())


def hostile_os():
    return pickle.dumps(os.getpid)
"""

PICKLING_PROPERTIES = """
import datetime
import pickle

import pytest
import mylib


def test_data_and_a_handles_own_pickle_load():
    value = {"a": [1, 2.5, b"x"], "when": datetime.date(2026, 12, 2), "s": {1, 2}}
    assert pickle.loads(mylib.dumps(value)) == value
    assert pickle.loads(pickle.dumps(b"x", protocol=2)) == b"x"
    handle = mylib.Point(4)
    assert pickle.loads(pickle.dumps(handle)) == handle


def test_the_codes_bytes_call_nothing_in_the_judge():
    for data in (mylib.hostile(), mylib.hostile_os()):
        with pytest.raises(pickle.UnpicklingError, match="never another function or class"):
            pickle.loads(data)
"""


def test_the_judges_pickle_loads_no_function_the_codes_bytes_name(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PICKLING_PROPERTIES, library=PICKLING_LIB)
    got = outcomes(proc)
    assert len(got) == 2 and set(got.values()) == {"PASSED"}, proc.stdout[-3000:]


# A context manager of the code's whose __exit__ says "suppress": the judge's assert inside
# the `with` once vanished with it, so the property passed whatever the code returned.
SWALLOWING = """
class Swallow:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True
"""

SWALLOWING_PROPERTIES = """
import pytest
import mylib


def test_an_assert_inside_the_codes_with_still_fails():
    with mylib.Swallow():
        assert 1 == 2


def test_pytest_fail_inside_it_still_fails():
    with mylib.Swallow():
        pytest.fail("the judge's verdict")


def test_other_errors_are_the_codes_to_suppress():
    with mylib.Swallow():
        raise KeyError("suppressed, as the code says")
"""


def test_the_codes_exit_cannot_swallow_the_judges_verdict(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, SWALLOWING_PROPERTIES, library=SWALLOWING)
    got = outcomes(proc)
    assert got == {
        "test_an_assert_inside_the_codes_with_still_fails": "FAILED",
        "test_pytest_fail_inside_it_still_fails": "FAILED",
        "test_other_errors_are_the_codes_to_suppress": "PASSED",
    }, proc.stdout[-3000:]


# The property's own model, handed to the code: the code may change its data, not its methods.
REWIRING = """
def rewire(items):
    for item in items:
        item.value = int


def set_data(items):
    for item in items:
        item.v = 5
"""

REWIRING_PROPERTIES = """
import pytest
import mylib


class Item:
    def __init__(self, v):
        self.v = v

    def value(self):
        return self.v


def test_the_code_cannot_replace_the_judges_method():
    items = [Item(3), Item(4)]
    with pytest.raises(AttributeError, match="not its functions"):
        mylib.rewire(items)
    assert [i.value() for i in items] == [3, 4]


def test_the_code_may_set_the_judges_data():
    items = [Item(3)]
    mylib.set_data(items)
    assert items[0].value() == 5
"""


def test_the_code_sets_a_judge_objects_data_never_its_methods(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, REWIRING_PROPERTIES, library=REWIRING)
    got = outcomes(proc)
    assert len(got) == 2 and set(got.values()) == {"PASSED"}, proc.stdout[-3000:]


CONFTEST = {
    "conftest.py": """
import pytest
import mylib


@pytest.fixture
def counter():
    return mylib.Counter()
""",
    "test_one.py": """
import mylib


def test_conftest_fixture_in_this_modules_worker(counter):
    assert counter.bump() == 1
    # The handle crosses back to its own worker (callbacks get data only: issue 18).
    assert mylib.Counter.bump(counter) == 2
""",
    "test_two.py": """
import mylib


def test_and_in_the_next_modules_worker(counter):
    assert counter.bump() == 1 and isinstance(counter, mylib.Counter)
""",
}


def test_a_conftest_fixture_serves_each_module_from_its_worker(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, CONFTEST)
    got = outcomes(proc)
    assert len(got) == 2 and set(got.values()) == {"PASSED"}, proc.stdout[-3000:]


def test_the_judge_shares_one_cpu_with_its_workers() -> None:
    # Judge and worker take turns on every call: one CPU halves the round trip
    # (bench/oracle_boundary.py); the workers inherit the judge's affinity.
    import pytest

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: nothing to share")
    code = (
        "import os; from patchjudge.boundary import standin; standin._share_one_cpu(); "
        "print(len(os.sched_getaffinity(0)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
