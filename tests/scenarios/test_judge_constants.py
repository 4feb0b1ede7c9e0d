"""The judge's own source gives hypothesis no values to draw (issue 20).

hypothesis draws some values from the constants in the source of every
module it calls local: the code's, in a bare run. The judge's package is
local too when it is not installed in site-packages (this checkout is
editable), so the judge's pytest drew from the judge's own constants, which
no bare run has loaded, and parsed every judge module to find them.

The property below fails on exactly those values: integers that only the
judge's source spells (none of hypothesis' own pool, none of the code's). A
bare run never draws them; with the judge's modules in the pool about one
draw in forty would be one of them, and it draws 500.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis.internal.conjecture.providers import GLOBAL_CONSTANTS

import patchjudge
from tests.helpers import CALC, cli, commit, example_repo, write

PROPERTY = """
from hypothesis import given, strategies as st

from calc import total

JUDGE_ONLY = set({judge_only!r})


@given(st.lists(st.integers(min_value=100_000), min_size=10, max_size=10))
def test_draws_nothing_only_the_judge_spells(xs):
    drawn = set(xs)
    assert total(xs) == sum(xs)
    assert not JUDGE_ONLY & drawn, sorted(JUDGE_ONLY & drawn)
"""


def judge_only_integers() -> set[int]:
    """Integers well above 100,000 in the judge's source that hypothesis has no other source of.

    Well above: a bounded draw often lands on its bound or just past it.
    """
    found = set()
    for path in Path(patchjudge.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Constant) and type(node.value) is int:
                found.add(node.value)
    return {n for n in found if n >= 200_000} - set(GLOBAL_CONSTANTS.integers)


def test_the_judge_draws_no_constant_of_its_own_source(tmp_path: Path) -> None:
    judge_only = judge_only_integers()
    assert judge_only, "the judge's source spells no large integer: this test proves nothing"
    repo = example_repo(
        tmp_path,
        **{"eval/properties/test_total.py": PROPERTY.format(judge_only=sorted(judge_only))},
    )
    write(repo, {"src/calc/__init__.py": CALC + "# a comment\n"})
    commit(repo, "a comment-only patch")
    result = cli(repo, "properties", "--base", "main")
    report = result.report(repo, "properties")
    assert result.code == 0, report["reasons"]
    nodeid = "eval/properties/test_total.py::test_draws_nothing_only_the_judge_spells"
    assert report["details"]["passed"] == [nodeid]
