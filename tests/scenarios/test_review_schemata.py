"""The review's mutants in the judge's session (issue 20), through the CLI on real repositories.

A patch that notices it is being mutated and fails every property then
forges kills, and kills are what count a changed line as exercised: the
null mutants void them. Its honest look-alike, whose properties kill real
mutants, is accepted.
"""

from __future__ import annotations

import json
from pathlib import Path

from patchjudge import review
from tests.attack_helpers import attack, fast_ledger, require_sandbox

HONEST = """
def total(xs):
    result = 0
    for x in xs:
        result += x
    return result
"""

# The same loop, and a self-check at import: a module that is not the file it
# was written as (any rewrite, a mutant's or a schema's) fails every call. No
# mutant of the check itself makes it say intact: without the null mutants
# every mutant is killed and the patch is accepted.
SELF_CHECKING = """
_SOURCE = open(globals()["__fi" + "le__"], encoding="utf-8").read()
_INTACT = bool({{lines}: 1}.get(_SOURCE.count(chr(10))))


def total(xs):
    result = 0 if _INTACT else None
    for x in xs:
        result += x
    return result
"""


def _self_checking() -> str:
    text = SELF_CHECKING.lstrip("\n")
    return text.replace("{lines}", str(text.count("\n")))


def test_a_patch_that_fails_its_properties_while_mutated_gets_no_line_exercised(
    tmp_path: Path,
) -> None:
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": _self_checking()})
    props = judged.lane("properties")
    # Every property holds on the patch as written.
    assert props["status"] == "pass", judged.explain()
    review = judged.verdict["review"]["properties"]
    assert review["mutants"].startswith("not tried: the kills are void: a null mutant"), review
    assert judged.decision == "undecided", judged.explain()
    assert review["unexercised"], review
    assert any(r.startswith("review: the properties never exercised") for r in judged.reasons), (
        judged.reasons
    )


def test_an_honest_patch_whose_properties_kill_its_mutants_is_accepted(tmp_path: Path) -> None:
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": HONEST})
    assert judged.decision == "accept_for_review", judged.explain()
    review = judged.verdict["review"]["properties"]
    assert review["mutants"] == {"killed": 2, "total": 2, "not_tried": 0, "survivors": []}
    assert review["unexercised"] == []


def test_in_process_property_files_keep_the_per_mutant_runs(tmp_path: Path) -> None:
    ledger = fast_ledger().replace(
        "review_mutants = 2", 'review_mutants = 2\nin_process = ["eval/properties/test_total.py"]'
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": HONEST}, base={"eval/gate.toml": ledger})
    assert judged.decision == "accept_for_review", judged.explain()
    review = judged.verdict["review"]["properties"]
    assert review["mutants"] == {"killed": 2, "total": 2, "not_tried": 0, "survivors": []}


LOOP = "def total(xs):\n    result = 0\n    for x in xs:\n        result += x\n    return result\n"
LABELLED = LOOP.replace("    result = 0\n", '    label = "total"\n    result = 0\n')


def _forging(text: str) -> str:
    """The module, and at its end lines that write a kill of the label's mutant on the channel."""
    f = review.changed_file("src/calc/__init__.py", LABELLED.encode(), [2])
    assert f is not None
    (label,) = [m for m in review.candidates(f) if m.operator == "change_constant"]
    # Where patchjudge cannot be imported (the worker's box binds none of it, issue 18) the
    # code carries on: a module that fails there would kill every mutant run out of process.
    return text + (
        "try:\n"
        "    from patchjudge import pytest_plugin as _p\n"
        "except ImportError:\n"
        "    _p = None\n"
        "if _p is not None:\n"
        "    _p.emit('review_phase', main_seconds=0, ran=True)\n"
        f"    _p.emit('mutant', id={label.id!r}, fate='killed')\n"
    )


def test_in_process_the_code_cannot_forge_the_mutation_phases_kills(tmp_path: Path) -> None:
    ledger = fast_ledger().replace(
        "review_mutants = 2", 'review_mutants = 3\nin_process = ["eval/properties/test_total.py"]'
    )
    base = {"eval/gate.toml": ledger, "src/calc/__init__.py": _forging(LOOP)}
    # The patch adds one line, a label no property reads: its mutants are that line's alone.
    judged = attack(tmp_path, {"src/calc/__init__.py": _forging(LABELLED)}, base=base)
    mutants = judged.verdict["review"]["properties"]["mutants"]
    # The label's mutant ran the per-mutant way and survived: the forged kill counts for nothing.
    assert "src/calc/__init__.py:2: 'total' -> ''" in mutants["survivors"], mutants


BASED = "class Base:\n    pass\n\n\n" + LOOP
# A module-level subclass of a library class: the AST keeps this file in process.
ASSERTS_NOTHING = """
from hypothesis import given, strategies as st

import calc


class Item(calc.Base):
    pass


@given(st.lists(st.integers()))
def test_total_runs(xs):
    # Runs the patch's lines; checks nothing a mutant of them changes.
    assert isinstance(Item(), calc.Base)
    calc.total(xs)
"""


def test_an_in_process_files_mutants_run_in_process_and_survive_what_it_does_not_check(
    tmp_path: Path,
) -> None:
    # Out of process this file cannot even be collected: a mutant run there fails, and
    # counted every mutant killed, for a property that checks nothing about the result.
    base = {
        "src/calc/__init__.py": "class Base:\n    pass\n\n\ndef total(xs):\n    return sum(xs)\n",
        "eval/properties/test_total.py": ASSERTS_NOTHING,
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": BASED}, base=base)
    props = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert props["details"]["in_process"] == ["eval/properties/test_total.py"], props["details"]
    mutants = judged.verdict["review"]["properties"]["mutants"]
    assert isinstance(mutants, dict), (mutants, judged.explain())
    assert mutants["total"] >= 1 and mutants["killed"] == 0, mutants
