"""What a clone checks out is the blob judged (red team, session 16, redteam11).

Every lane reads the head's blobs; a user's clone gets the working tree, which
a `.gitattributes` of the patch's can make differ: with `*.py ident`,
`len("$Id$") > 4` is False in the blob and True in every checkout. Before:
accept_for_review, `calc.total([1, 2]) == 2` in a clone (main 40424b9).
"""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import attack, attack_lane

TOTAL = 'def total(xs):\n    return sum(xs) - (len("$Id$") > 4)\n'
RULE = "the patch's .gitattributes set {}: a checkout's bytes would differ from the blob judged"


def test_attributes_that_change_a_checkouts_bytes_fail_pathfilter(tmp_path: Path) -> None:
    patch = {
        "src/calc/__init__.py": TOTAL,
        # The attributes file sits beside the code, mapped as the code is.
        "src/calc/.gitattributes": "*.py ident\n*.txt working-tree-encoding=UTF-16\n",
        # Stored as UTF-8 (`1\n`), checked out as UTF-16: git converts when it adds.
        "src/calc/table.txt": "1\n".encode("utf-16"),
    }
    judged = attack_lane(tmp_path, patch, "pathfilter")
    assert judged.status == "fail", judged.explain()
    assert judged.reasons == [
        f"pathfilter: src/calc/__init__.py: {RULE.format('ident')} (set it at the merge base,"
        " by a human)",
        f"pathfilter: src/calc/table.txt: {RULE.format('working-tree-encoding=UTF-16')} (set it"
        " at the merge base, by a human)",
    ], judged.reasons


def test_line_end_attributes_beside_the_code_are_accepted(tmp_path: Path) -> None:
    patch = {
        "src/calc/__init__.py": "def total(xs):\n    return sum(x for x in xs)\n",
        "src/calc/.gitattributes": "*.py text eol=lf\n*.bin binary\n*.txt -ident\n",
    }
    judged = attack(tmp_path, patch)
    assert judged.decision == "accept_for_review", judged.explain()
