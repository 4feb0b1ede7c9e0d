"""The properties judged in two harnesses that share no tells (issue 18, "A differential run").

The tests that ran the patch's changed lines run again, same seed and inputs,
in a worker of another shape (a script by path, its loop in a thread of its
own, instead of `python -c` reading stdin). A patch that behaves only in one
shape passes there and fails in the other: the lane fails with both outcomes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import commit, example_repo, gate, verdict, write

CALC = """
import importlib.machinery
import sys
import threading


def total(xs):
    return sum(xs)


def ordered(xs):
    return sorted(xs)
"""

PROPERTY = """
from hypothesis import given, strategies as st

from calc import ordered, total


@given(st.lists(st.integers(), min_size=2))
def test_ordered_is_sorted(xs):
    assert ordered(xs) == sorted(xs)


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert total(xs) >= 0
"""


def _repo(tmp_path: Path) -> Path:
    return example_repo(
        tmp_path, **{"src/calc/__init__.py": CALC, "eval/properties/test_ordered.py": PROPERTY}
    )


# Tells the first harness cannot hide (docs/threat-model.md, "Tells that stay, each in one
# harness only"): its argv memory still says -c, its main thread serves, and the changed-line
# probes (issue 20) sit in the code's constants, its loader and the first finder.
FIRST_HARNESS_TELLS = {
    "cmdline_and_main_thread": "b'-c' in open('/proc/self/cmdline', 'rb').read().split(b'\\0')"
    " and threading.current_thread() is threading.main_thread()",
    "probe_consts": "any(type(c).__module__ == 'collections' for c in ordered.__code__.co_consts)",
    "probe_loader": "type(__loader__) is not importlib.machinery.SourceFileLoader",
    # importlib's finders are classes on sys.meta_path; the probes' is an instance.
    "probe_finder": "any(type(f).__module__ == '_frozen_importlib_external'"
    " for f in sys.meta_path)",
}


@pytest.mark.parametrize("tell", sorted(FIRST_HARNESS_TELLS))
def test_a_patch_that_behaves_only_in_one_harness_is_rejected_with_both_outcomes(
    tmp_path: Path, tell: str
) -> None:
    repo = _repo(tmp_path)
    # Right only where the worker looks as the first harness does.
    shaped = CALC.replace(
        "return sorted(xs)",
        f"on_stage = {FIRST_HARNESS_TELLS[tell]}\n    return sorted(xs) if on_stage else list(xs)",
    )
    write(repo, {"src/calc/__init__.py": shaped})
    commit(repo, "sorts in one harness only")
    gate(repo)
    doc = verdict(repo)
    assert doc["verdict"] == "reject", doc["reasons"]
    [reason] = [r for r in doc["reasons"] if "differential" in r]
    assert "test_ordered_is_sorted" in reason, reason
    assert "passed in the first harness" in reason, reason
    assert "AssertionError" in reason or "assert" in reason, reason
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    [seen] = lane["details"]["differential"]["disagreements"]
    assert seen["first"] == "passed", seen
    assert seen["second"].startswith("failed"), seen


def test_an_honest_patch_agrees_in_both_harnesses(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(repo, {"src/calc/__init__.py": CALC.replace("sorted(xs)", "sorted(list(xs))")})
    commit(repo, "honest")
    result = gate(repo)
    doc = verdict(repo)
    assert doc["lanes"]["properties"]["status"] == "pass", doc["reasons"]
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    differential = lane["details"]["differential"]
    # Only the tests that ran a changed line are judged twice.
    assert differential["nodeids"] == ["eval/properties/test_ordered.py::test_ordered_is_sorted"]
    assert differential["disagreements"] == []
    assert result.code in (0, 3), result.out + result.err


def test_a_new_function_no_property_calls_is_judged_twice_by_no_test(tmp_path: Path) -> None:
    # Issue 20: its def line runs at import, which made every property run twice.
    repo = _repo(tmp_path)
    helper = '\n\ndef unused_helper(xs, start=0):\n    """New, called by nothing."""\n'
    write(repo, {"src/calc/__init__.py": CALC + helper + "    return start + len(xs)\n"})
    commit(repo, "adds a helper")
    gate(repo)
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert lane["status"] == "pass", lane["reasons"]
    assert lane["details"]["differential"]["nodeids"] == []


def test_a_new_function_whose_header_runs_code_at_import_judges_every_test_twice(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    helper = "\n\ndef unused_helper(xs, start=total([1])):\n    return start + len(xs)\n"
    write(repo, {"src/calc/__init__.py": CALC + helper})
    commit(repo, "adds a helper whose default calls the code")
    gate(repo)
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert lane["status"] == "pass", lane["reasons"]
    nodeids = lane["details"]["differential"]["nodeids"]
    assert nodeids == sorted(lane["details"]["passed"]), nodeids
    assert "eval/properties/test_ordered.py::test_ordered_is_sorted" in nodeids
