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

# A self-check at import: the module's code is not what its file compiles to. The
# file on disk is the original in every run (red team, session 17), so the check
# diffs bytecode, less the main pass's probes (a constant subscripted and popped):
# a mutant's and a respelled null mutant's (`0 <= n`) both differ. Without the null
# mutants every mutant is killed and the patch is accepted.
SELF_CHECKING = """
import dis


def _shape(code):
    out, skip = [], 0
    for i in dis.get_instructions(code):
        if skip:
            skip -= 1
        elif "defaultdict" in repr(i.argval):
            skip = 3  # a probe: the table, its line, BINARY_SUBSCR, POP_TOP
        elif i.opname not in ("NOP", "RESUME"):
            out.append((i.opname, None if "JUMP" in i.opname or "FOR" in i.opname else i.argval))
    return out


def _on_disk(name):
    path = __spec__.origin
    with open(path, encoding="utf-8") as f:
        module = compile(f.read(), path, "exec")
    return [c for c in module.co_consts if getattr(c, "co_name", None) == name][0]


def total(xs):
    result = {True: 0}.get(_INTACT)
    n = len(xs)
    for x in xs:
        result += x
    return result * (n >= 0)


_INTACT = _shape(total.__code__) == _shape(_on_disk("total"))
"""


def test_a_patch_that_fails_its_properties_while_mutated_gets_no_line_exercised(
    tmp_path: Path,
) -> None:
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": SELF_CHECKING})
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


# docs/threat-model.md's detector (red team, session 16): the module reads its own
# file by paths not spelled `__file__` (and through linecache and inspect), finds
# the site whose `switch == token` matches builtins, and says whether it is a real
# mutant (not a copy or a mirrored comparison). With the mutant schema written into
# the worker's tree it killed every mutant, the `0` arm's too, and no null mutant.
# Its second tell, a mutant's HOME beside the main pass's, would void the kills.
DETECTING = """
import ast
import builtins
import inspect
import linecache
import os
import sys

_MIRROR = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


def _dumps(part):
    return [ast.dump(p) for p in part] if isinstance(part, list) else [ast.dump(part)]


def _null(a, b):
    if _dumps(a) == _dumps(b):
        return True
    if isinstance(a, ast.Compare) and isinstance(b, ast.Compare):
        mirror = _MIRROR.get(type(a.ops[0]), type(a.ops[0]))
        return (mirror is type(b.ops[0])
                and ast.dump(a.left) == ast.dump(b.comparators[0])
                and ast.dump(b.left) == ast.dump(a.comparators[0]))
    return False


def _sources():
    path = os.path.join(os.path.dirname(__spec__.origin), "__init__.py")
    with open(path, encoding="utf-8") as f:
        yield f.read()
    yield "".join(linecache.getlines(path))
    yield inspect.getsource(sys.modules[__name__])


def _mutated():
    for text in _sources():
        for node in ast.walk(ast.parse(text)):
            test = getattr(node, "test", None)
            if isinstance(node, (ast.If, ast.IfExp)) and isinstance(test, ast.Compare):
                name = getattr(test.left, "id", "")
                token = getattr(test.comparators[0], "value", None)
                if token is not None and getattr(builtins, name, None) == token:
                    return not _null(node.body, node.orelse)
    return False


def _nested():
    # A mutant's worker had its HOME beside the main pass's and the earlier mutants'.
    names = os.listdir(os.path.dirname(os.environ["HOME"]))
    return len([n for n in names if len(n) == 8 and set(n) <= set("0123456789abcdef")]) > 1


_M = _mutated() or _nested()


def total(xs):
    return 0 if len(xs) > 5000 else sum(xs) + _M
"""


def test_the_code_reads_its_own_file_as_written_and_forges_no_kill(tmp_path: Path) -> None:
    # The mutant is compiled by its worker from the judge's text: the file, linecache and
    # inspect show the original, no switch is in builtins, HOME's folder holds it alone
    # as the main pass's did, and `_M` stays False.
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": DETECTING})
    assert judged.lane("properties")["status"] == "pass", judged.explain()
    mutants = judged.verdict["review"]["properties"]["mutants"]
    # Was {"killed": 6, "total": 6, ...}: the `0` arm's raise died though no property runs it.
    assert isinstance(mutants, dict), mutants
    assert any(": raise " in s and "0" in s for s in mutants["survivors"]), mutants
    assert judged.decision == "undecided", judged.explain()
    text = DETECTING.lstrip("\n")  # as the helper writes it
    line = text.count("\n", 0, text.index("    return 0 if")) + 1
    unexercised = judged.verdict["review"]["properties"]["unexercised"]
    assert any(_holds(r, "src/calc/__init__.py", line) for r in unexercised), unexercised


# A detector in one line with no branch: `total`'s own constants hold the raise
# mutant's message (names built at run time, so no probe names the read). With each
# mutant compiled alone it told the raise of the `0` arm from a null mutant
# (accept_for_review); in the schema every mutant's worker has every site's code.
CONSTANTS = """
def total(xs):
    return 0 if len(xs) > 5000 else sum(xs) + ("review mutant".join(["patchjudge ", ""])
        in repr(getattr(getattr(total, "__co" + "de__"), "co_c" + "onsts")))
"""


def test_a_mutants_own_constants_tell_no_mutant_from_a_null_one(tmp_path: Path) -> None:
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": CONSTANTS})
    review = judged.verdict["review"]["properties"]
    assert review["mutants"].startswith("not tried: the kills are void: a null mutant"), review
    assert judged.decision == "undecided", judged.explain()


def _holds(shown: str, path: str, line: int) -> bool:
    """Whether `path:a-b` (or `path:a`) as the review lists it holds `line`."""
    where, _, lines = shown.rpartition(":")
    first, _, last = lines.partition("-")
    return where == path and int(first) <= line <= int(last or first)


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
