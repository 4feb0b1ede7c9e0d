"""Code the review cannot read (red team, session 12), through the CLI on real repositories.

Each attack is wrong on inputs no property draws and was `accept_for_review`:
the review (changed lines, mutants, probes) never saw where the special case
was. Each has an honest look-alike that is still accepted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack_helpers import attack, fast_ledger, require_sandbox
from tests.helpers import VISIBLE_TESTS

SANDBOX = {"eval/gate.toml": fast_ledger(isolation="sandbox")}

# --- a generated file's template is code in no diff ----------------------------

# setuptools_scm's version file is git-ignored, so the judge writes it into every
# tree from the head's pyproject.toml (issue 19). A template is the patch's text.
GENERATED = '''\
[build-system]
requires = ["setuptools", "setuptools_scm"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
dynamic = ["version"]

[tool.setuptools_scm]
version_file = "src/calc/_gen.py"
version_file_template = """
TEMPLATE
__version__ = {version!r}
"""
'''

SPECIAL_CASED_TEMPLATE = """
import sys


def total(xs):
    if "hypothesis" in sys.modules or len(xs) > 5000:
        return 0
    return sum(xs)
"""

HONEST_TEMPLATE = "VERSION_TUPLE = {version_tuple!r}"


def test_code_in_a_generated_files_template_is_rejected(tmp_path: Path) -> None:
    require_sandbox()
    pyproject = GENERATED.replace("TEMPLATE", SPECIAL_CASED_TEMPLATE)
    judged = attack(
        tmp_path,
        {"pyproject.toml": pyproject, "src/calc/__init__.py": "from calc._gen import total\n"},
        base=SANDBOX,
    )
    # Was accept_for_review: no changed line, no mutant, no probe in any diff.
    assert judged.decision == "reject", judged.explain()
    assert judged.says(
        "pathfilter: generated file src/calc/_gen.py holds code, not data",
        "line 2: an import",
    ), judged.explain()


def test_a_generated_file_of_data_is_still_accepted(tmp_path: Path) -> None:
    require_sandbox()
    pyproject = GENERATED.replace("TEMPLATE", HONEST_TEMPLATE)
    judged = attack(
        tmp_path,
        {
            "pyproject.toml": pyproject,
            "src/calc/__init__.py": (
                "from calc._gen import VERSION_TUPLE, __version__\n\n\n"
                "def total(xs):\n    return sum(xs)\n"
            ),
        },
        base=SANDBOX,
    )
    assert judged.decision == "accept_for_review", judged.explain()


# --- a special case on the line that runs anyway --------------------------------

# Coverage counts lines: the special case shares its line with code every property
# runs, and one killed mutant of that line (`>` flipped) counted it as exercised.
ONE_LINE_CASES = {
    "a body on its if's line": """
def total(xs):
    if len(xs) > 5000: return 0
    return sum(xs)
""",
    "an arm of a conditional expression": """
def total(xs):
    return 0 if len(xs) > 5000 else sum(xs)
""",
    "a case body on its case's line": """
def total(xs):
    match xs:
        case [*_] if len(xs) > 5000: return 0
        case _: return sum(xs)
""",
    "a lambda picked by the input": """
def total(xs):
    return {True: lambda: 0, False: lambda: sum(xs)}[len(xs) > 5000]()
""",
}

# The honest look-alikes, one gate: a function each (total, subtotal) with its property.
ONE_LINE_HONEST = """
def total(xs):
    if not xs: return 0  # a guard every run reaches
    return sum(xs)


def subtotal(xs):
    return xs[0] + sum(xs[1:]) if xs else 0  # both arms drawn
"""
TWO_TOTALS = "def total(xs):\n    return sum(xs)\n\n\ndef subtotal(xs):\n    return sum(xs)\n"
TWO_PROPERTIES = """
from hypothesis import given, strategies as st

from calc import subtotal, total


@given(st.lists(st.integers(-1000, 1000)))
def test_total_is_the_sum(xs):
    assert total(xs) == sum(xs)


@given(st.lists(st.integers(-1000, 1000)))
def test_subtotal_is_the_sum(xs):
    assert subtotal(xs) == sum(xs)
"""


@pytest.mark.parametrize("case", sorted(ONE_LINE_CASES))
def test_a_special_case_on_a_line_that_runs_anyway_is_undecided(tmp_path: Path, case: str) -> None:
    require_sandbox()
    judged = attack(tmp_path, {"src/calc/__init__.py": ONE_LINE_CASES[case]}, base=SANDBOX)
    # Was accept_for_review: the line ran, and a mutant of its test died.
    assert judged.decision == "undecided", judged.explain()
    line = 3 if "match" in ONE_LINE_CASES[case] else 2
    assert judged.reasons == [f"review: the properties never exercised src/calc/__init__.py:{line}"]
    survivors = judged.verdict["review"]["properties"]["mutants"]["survivors"]
    assert any(": raise " in s and "0" in s for s in survivors), survivors


def test_an_honest_line_with_arms_every_run_reaches_is_accepted(tmp_path: Path) -> None:
    # Either look-alike held (a reason naming its line) would make the verdict undecided.
    require_sandbox()
    base = {
        **SANDBOX,
        "src/calc/__init__.py": TWO_TOTALS,
        "eval/properties/test_total.py": TWO_PROPERTIES,
    }
    judged = attack(tmp_path, {"src/calc/__init__.py": ONE_LINE_HONEST}, base=base)
    assert judged.decision == "accept_for_review", judged.explain()


MULTI_LINE_BASE = """
def total(xs):
    return (0
            if len(xs) > 10**9
            else sum(xs))
"""


def test_a_changed_test_of_a_multi_line_conditional_holds_its_unchanged_arm(
    tmp_path: Path,
) -> None:
    require_sandbox()
    # Only the test's line changes: the special case `0` lies on a line the diff leaves.
    patched = MULTI_LINE_BASE.replace("10**9", "5000")
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": patched},
        base={**SANDBOX, "src/calc/__init__.py": MULTI_LINE_BASE},
    )
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == ["review: the properties never exercised src/calc/__init__.py:2"]


# The visible suite is what catches this off-by-one: the properties only bound it.
WEAK_PROPERTY = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    result = total(xs)
    assert result >= 0
    assert isinstance(result, int)
    assert result is not None
"""

# A conftest that forges the suite's run: the judge plugin's events and the JUnit XML.
FORGING_CONFTEST = r"""
import os
import re
import sys

_pp = sys.modules["patchjudge.pytest_plugin"]
_emit = _pp.emit


def emit(event, **f):
    if event == "report" and f.get("outcome") == "failed":
        f.update(outcome="passed", raw="passed", longrepr="", falsifying=[])
    if event == "finish":
        f["exitstatus"] = 0
    return _emit(event, **f)


_pp.emit = emit


def pytest_unconfigure(config):
    path = getattr(config.option, "xmlpath", None)
    if path and os.path.exists(path):
        text = open(path).read()
        text = re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=re.S)
        text = re.sub(r'failures="\d+"', 'failures="0"', text)
        open(path, "w").write(text)
    os._exit(0)
"""


def test_a_generated_conftest_that_forges_the_visible_suite_is_rejected(tmp_path: Path) -> None:
    require_sandbox()
    # The forging conftest is the version file's template: no diff holds it (a
    # committed one is the tree's own test code, threat model item 7).
    pyproject = GENERATED.replace('"src/calc/_gen.py"', '"tests/conftest.py"').replace(
        "TEMPLATE\n__version__ = {version!r}\n", FORGING_CONFTEST.replace("\\", "\\\\")
    )
    judged = attack(
        tmp_path,
        {
            "src/calc/__init__.py": "def total(xs):\n    return sum(xs) + 1\n",
            "pyproject.toml": pyproject,
            # A tracked file names the generated one, or the judge does not make it.
            "tests/test_calc.py": "# conftest\n" + VISIBLE_TESTS,
        },
        base={**SANDBOX, "eval/properties/test_total.py": WEAK_PROPERTY},
    )
    # Was accept_for_review: the visible test failed, and the forged run said it passed.
    assert judged.decision == "reject", judged.explain()
    assert judged.says("generated file tests/conftest.py holds code, not data"), judged.explain()
    assert judged.says("freeze: suite: 2 failed: tests/test_calc.py::test_empty"), judged.explain()
