"""In-process property files judged a second time, out of process (issue 18).

A file the ledger (or the AST) keeps in process runs where the code can reach
the oracle. The tests of it that ran a changed line run again out of process,
same seed, and `details.differential.in_process` records each second outcome:
`passed`, `cannot cross: ...` (the file needed the process) or `failed: ...`.
A failure runs once more out of process on the base's code: where the base
passes there, the patch made the difference and the verdict is undecided.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import LEDGER, commit, example_repo, gate, git, verdict, write

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
    result = gate(repo)
    seen, kept = _second(repo)
    assert kept == {"nodeid": KEEPS, "first": "passed", "second": "passed"}, kept
    assert seen["nodeid"] == NODEID, seen
    assert seen["first"] == "passed", seen
    assert seen["second"].startswith("failed: "), seen
    assert "assert" in seen["second"], seen
    # Out of process the base's code passes it: the difference is the patch's.
    assert seen["base"] == "passed", seen
    judged = verdict(repo)
    assert judged["verdict"] == "undecided", result.out + result.err
    [reason] = [r for r in judged["reasons"] if "passed in process and failed out of it" in r]
    assert reason.startswith(f"review: {NODEID} passed in process"), reason


def test_an_honest_patch_passes_in_process_and_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(repo, {"src/calc/__init__.py": CALC.replace("sorted(xs)", "sorted(list(xs))")})
    commit(repo, "honest")
    result = gate(repo)
    assert verdict(repo)["verdict"] == "accept_for_review", result.out + result.err
    assert _second(repo) == [
        {"nodeid": n, "first": "passed", "second": "passed"} for n in (NODEID, KEEPS)
    ]


def test_a_test_that_fails_out_of_process_at_base_too_is_the_files_not_the_patchs(
    tmp_path: Path,
) -> None:
    # The base's code is already right only in process (as a file that needs the process
    # is): an honest change to that line fails out of process at base and head alike.
    repo = _repo(tmp_path)
    only_inside = 'return sorted(xs) if "/in/tree/" in __file__ else list(xs)'
    write(repo, {"src/calc/__init__.py": CALC.replace("return sorted(xs)", only_inside)})
    commit(repo, "base right only in process")
    git(repo, "branch", "-f", "main")
    honest = only_inside.replace("sorted(xs)", "sorted(list(xs))")
    write(repo, {"src/calc/__init__.py": CALC.replace("return sorted(xs)", honest)})
    commit(repo, "an honest change to it")
    result = gate(repo)
    seen = {e["nodeid"]: e for e in _second(repo)}
    assert seen[NODEID]["second"].startswith("failed: "), seen
    assert seen[NODEID]["base"].startswith("failed: "), seen
    judged = verdict(repo)
    # Held, if at all, for another reason (an in-process file's lines count as run only
    # where a mutant was killed): never for a difference the base has too.
    assert judged["verdict"] != "reject", result.out + result.err
    assert not [r for r in judged["reasons"] if "failed out of it" in r], judged["reasons"]


def test_a_patch_that_fails_out_of_process_with_a_crossing_message_is_still_held(
    tmp_path: Path,
) -> None:
    # "cannot cross" is read from the failure's text, which the code writes: the label
    # does not excuse it, the base (which passes out of process) decides.
    repo = _repo(tmp_path)
    forged = (
        'if "/in/tree/" not in __file__:\n'
        '        raise TypeError("cannot cross to the code under test: forged")\n'
        "    return sorted(xs)"
    )
    write(repo, {"src/calc/__init__.py": CALC.replace("return sorted(xs)", forged)})
    commit(repo, "forges a crossing refusal out of process")
    result = gate(repo)
    seen = {e["nodeid"]: e for e in _second(repo)}
    assert seen[NODEID]["second"].startswith("cannot cross: "), seen
    assert seen[NODEID]["base"] == "passed", seen
    judged = verdict(repo)
    assert judged["verdict"] == "undecided", result.out + result.err
    assert any(f"review: {NODEID} passed in process" in r for r in judged["reasons"])
