"""The oracle out of process judges what v1 judged, and what v1 could not.

Same verdict in and out of process on a table of hypothesis idioms, and a
library the judge itself runs on (sortedcontainers: hypothesis imports it)
is judged like any other: the judge keeps its own copy, the property files
get the tree's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.attack_helpers import attack, fast_ledger

IDIOMS_CALC = """
class Error(ValueError):
    pass


class Bag:
    def __init__(self, items=()):
        self.items = list(items)

    def add(self, x):
        if x is None:
            raise Error("no None")
        self.items.append(x)
        return self

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, x):
        return x in self.items


def total(xs):
    return sum(xs)


def pairs(xs):
    return zip(xs, xs[1:])


def sort_by(xs, key):
    return sorted(xs, key=key)
"""

IDIOMS = """
import pytest
from hypothesis import assume, event, example, given, note, settings, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import calc
from calc import Bag, pairs, sort_by, total


@given(st.lists(st.integers()))
@example([])
def test_given_example(xs):
    assume(len(xs) < 100)
    note(repr(xs))
    event(f"len {len(xs) // 10}")
    target(float(len(xs)))
    assert total(xs) == sum(xs)


@given(st.lists(st.integers()))
def test_lazy_pairs(xs):
    assert list(pairs(xs)) == list(zip(xs, xs[1:]))


@given(st.lists(st.integers()))
def test_key_function(xs):
    assert sort_by(xs, key=lambda x: -x) == sorted(xs, reverse=True)


@given(st.builds(Bag, st.lists(st.integers())), st.integers())
def test_builds_handle(bag, x):
    before = len(bag)
    assert len(bag.add(x)) == before + 1 and x in bag


@given(st.sampled_from([Bag(), Bag([1])]))
def test_sampled_handles(bag):
    assert len(bag) == len(list(bag))


def test_raises():
    with pytest.raises(calc.Error, match="no None"):
        Bag().add(None)


@pytest.fixture
def bag():
    return Bag([1, 2])


@pytest.mark.parametrize("x", [3, 4])
def test_fixture_and_parametrize(bag, x):
    assert len(bag.add(x)) == 3


class BagMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.bag, self.model = Bag(), []

    @rule(x=st.integers())
    def add(self, x):
        self.bag.add(x)
        self.model.append(x)

    @invariant()
    def agrees(self):
        assert list(self.bag) == self.model


TestBag = BagMachine.TestCase
TestBag.settings = settings(max_examples=10, stateful_step_count=5)
"""

BROKEN_IDIOMS_CALC = IDIOMS_CALC.replace("return sorted(xs, key=key)", "return sorted(xs)")

IN_PROCESS = 'in_process = ["eval/properties/test_idioms.py"]\n'


def outcome(judged, name: str = "properties") -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    details = judged.result.report(judged.repo, name)["details"]
    assert "passed" in details, judged.explain()
    return sorted(details["passed"]), sorted(f["nodeid"] for f in details["failed"])


@pytest.mark.parametrize("calc", [IDIOMS_CALC, BROKEN_IDIOMS_CALC], ids=["sound", "broken"])
def test_hypothesis_idioms_get_the_same_verdict_in_and_out_of_process(
    tmp_path: Path, calc: str
) -> None:
    base = {"src/calc/__init__.py": IDIOMS_CALC, "eval/properties/test_idioms.py": IDIOMS}
    ledger = fast_ledger()
    inside = ledger.replace("timeout_s = 30\n", "timeout_s = 30\n" + IN_PROCESS, 1)
    out = attack(tmp_path / "out", {"src/calc/__init__.py": calc + "\n# patched\n"}, base=base)
    into = attack(
        tmp_path / "in",
        {"src/calc/__init__.py": calc + "\n# patched\n"},
        base={**base, "eval/gate.toml": inside},
    )
    assert out.decision == into.decision, out.explain() + into.explain()
    assert outcome(out) == outcome(into)
    passed, failed = outcome(out)
    if calc is IDIOMS_CALC:
        assert out.decision == "accept_for_review" and not failed, out.explain()
        assert len(passed) == 11, passed
    else:
        assert failed == ["eval/properties/test_idioms.py::test_key_function"], out.explain()


SORTED = '''
import bisect


class SortedList:
    """A small sortedcontainers stand-in: the tree under test provides `sortedcontainers`."""

    def __init__(self, items=()):
        self._items = sorted(items)

    def add(self, x):
        bisect.insort(self._items, x)

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, i):
        return self._items[i]
'''

SORTED_PROPERTY = """
from hypothesis import given, strategies as st

from sortedcontainers import SortedList


@given(st.lists(st.integers()))
def test_sorted_list_stays_sorted(xs):
    s = SortedList()
    for x in xs:
        s.add(x)
    assert list(s) == sorted(xs) and len(s) == len(xs)
"""


@pytest.mark.parametrize("broken", [False, True])
def test_a_library_hypothesis_depends_on_is_judged(tmp_path: Path, broken: bool) -> None:
    code = (
        SORTED.replace("bisect.insort(self._items, x)", "self._items.append(x)")
        if broken
        else SORTED
    )
    base = {
        "src/sortedcontainers/__init__.py": SORTED,
        "eval/properties/test_sorted.py": SORTED_PROPERTY,
    }
    judged = attack(
        tmp_path, {"src/sortedcontainers/__init__.py": code + "\n# patched\n"}, base=base
    )
    if broken:
        assert judged.decision == "reject", judged.explain()
        assert judged.says(
            "properties: property failed: eval/properties/test_sorted.py::"
            "test_sorted_list_stays_sorted"
        ), judged.explain()
    else:
        assert judged.decision == "accept_for_review", judged.explain()
        assert not any("shadows" in r for r in judged.reasons)
    json.dumps(judged.verdict)


ROOT = Path(__file__).resolve().parents[2]


def own_tree() -> dict[str, str | bytes | None]:
    """This repository's code and property files: patchjudge judging patchjudge."""
    files: dict[str, str | bytes | None] = {}
    for path in sorted((ROOT / "src" / "patchjudge").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    for path in sorted((ROOT / "eval" / "properties").glob("*.py")):
        files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return files


# Shrinking a failure in the verdict's properties takes many calls: room for a loaded machine.
OWN_LEDGER = fast_ledger(timeout=240).replace(
    '"src/**" = ["properties", "freeze"]', '"src/**" = ["properties"]'
)


@pytest.mark.long
@pytest.mark.parametrize("broken", [False, True], ids=["sound", "broken"])
def test_this_repositorys_properties_agree_in_and_out_of_process(
    tmp_path: Path, broken: bool
) -> None:
    base = own_tree()
    verdict = (ROOT / "src/patchjudge/verdict.py").read_text()
    if broken:
        # A failed core lane no longer rejects.
        verdict = verdict.replace(
            "if any(lanes[n].status is Status.FAIL for n in CORE_LANES) or replay", "if replay"
        )
    patch = {"src/patchjudge/verdict.py": verdict + "\n# patched\n"}
    files = '["eval/properties/test_paths.py", "eval/properties/test_verdict.py"]'
    inside = OWN_LEDGER.replace("timeout_s = 240\n", f"timeout_s = 240\nin_process = {files}\n", 1)
    out = attack(tmp_path / "out", patch, base={**base, "eval/gate.toml": OWN_LEDGER})
    into = attack(tmp_path / "in", patch, base={**base, "eval/gate.toml": inside})
    assert out.decision == into.decision, out.explain() + into.explain()
    assert outcome(out) == outcome(into), out.explain() + into.explain()
    assert out.decision == ("reject" if broken else "accept_for_review"), out.explain()


def test_run_properties_applies_edit_to_the_worker_and_reports_executed_lines(
    tmp_path: Path,
) -> None:
    from patchjudge.lanes.properties import run_properties
    from patchjudge.workspace import Options, open_run
    from tests.helpers import commit, example_repo, write

    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
    write(repo, {"src/calc/__init__.py": "def total(xs):\n    n = 0\n    for x in xs:\n"
                 "        n += x\n    return n\n"})  # fmt: skip
    commit(repo, "a loop")
    run = open_run(Options(repo=repo, base="main"), environ=dict(os.environ))
    result = run_properties(run, coverage=["src/calc/__init__.py"])
    assert result.exitstatus == 0, result.output
    never = "eval/properties/test_total.py::test_total_never_negative"
    # "": what ran outside any test, the module's top level at import (issue 18).
    assert set(result.executed) == {
        "",
        never,
        "eval/properties/test_total.py::test_total_matches_sum",
    }
    assert set(result.executed[never]["src/calc/__init__.py"]) >= {2, 3, 5}
    assert result.executed[""]["src/calc/__init__.py"] == (1,)  # the `def` line

    def mutant(tree: Path) -> None:
        path = tree / "src" / "calc" / "__init__.py"
        path.write_text(path.read_text().replace("n += x", "n -= x"))

    mutated = run_properties(run, edit=mutant)
    assert mutated.exitstatus != 0
    assert any(o.outcome == "failed" for o in mutated.outcomes)
