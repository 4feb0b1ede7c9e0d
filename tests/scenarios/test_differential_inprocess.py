"""In-process property files judged a second time, out of process (issue 18, record only).

A file the ledger (or the AST) keeps in process runs where the code can reach
the oracle. The tests of it that ran a changed line run again out of process,
same seed, and `details.differential.in_process` records each second outcome:
`passed`, `cannot cross: ...` (the file needed the process) or `failed: ...`.
It is a record, not a verdict: docs/spec.md says why.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import LEDGER, commit, example_repo, gate, write

CALC = """
def total(xs):
    return sum(xs)


def ordered(xs):
    return sorted(xs)
"""

PROPERTY = """
from hypothesis import given, strategies as st

from calc import ordered


@given(st.lists(st.integers(), min_size=2))
def test_ordered_is_sorted(xs):
    assert ordered(xs) == sorted(xs)


@given(st.lists(st.integers()))
def test_ordered_keeps_the_length(xs):
    assert len(ordered(xs)) == len(xs)
"""
INSIDE = "eval/properties/test_ordered.py"
NODEID = f"{INSIDE}::test_ordered_is_sorted"
KEEPS = f"{INSIDE}::test_ordered_keeps_the_length"


def _repo(tmp_path: Path) -> Path:
    ledger = LEDGER.replace("timeout_s = 60\n", f'timeout_s = 60\nin_process = ["{INSIDE}"]\n', 1)
    return example_repo(
        tmp_path, **{"src/calc/__init__.py": CALC, INSIDE: PROPERTY, "eval/gate.toml": ledger}
    )


def _second(repo: Path) -> list[dict[str, str]]:
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert lane["details"]["in_process"] == [INSIDE], lane["details"]
    return lane["details"]["differential"]["in_process"]  # type: ignore[no-any-return]


def test_a_patch_right_only_in_the_judges_process_is_recorded_failing_out_of_it(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    # Right only in the in-process run's tree (its path ends in in/tree): not a probe.
    cheat = CALC.replace(
        "return sorted(xs)", 'return sorted(xs) if "/in/tree/" in __file__ else list(xs)'
    )
    write(repo, {"src/calc/__init__.py": cheat})
    commit(repo, "sorts in process only")
    gate(repo)
    seen, kept = _second(repo)
    assert kept == {"nodeid": KEEPS, "first": "passed", "second": "passed"}, kept
    assert seen["nodeid"] == NODEID, seen
    assert seen["first"] == "passed", seen
    assert seen["second"].startswith("failed: "), seen
    assert "assert" in seen["second"], seen


def test_an_honest_patch_passes_in_process_and_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(repo, {"src/calc/__init__.py": CALC.replace("sorted(xs)", "sorted(list(xs))")})
    commit(repo, "honest")
    gate(repo)
    assert _second(repo) == [
        {"nodeid": n, "first": "passed", "second": "passed"} for n in (NODEID, KEEPS)
    ]
