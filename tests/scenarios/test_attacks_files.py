"""The patch's files, not its code's calls (red team, session 18, redteam14).

Each patch is wrong for some user while every lane reads right blobs: a
`git archive` of the head differs from its tree (`export-subst`,
`export-ignore`), or a case-insensitive clone writes one path over another.
All four were accept_for_review on main 2a6a2dc; pathfilter alone decides
now (a failed lane is a reject in any gate: tests/unit/test_verdict.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack_helpers import attack_lane
from tests.helpers import VISIBLE_TESTS

ARCHIVE = "an archive's (git archive) bytes would differ from the blob judged"
BY_HUMAN = "(set it at the merge base, by a human)"
FOLD = (
    "on a case-insensitive file system (Windows, macOS): a clone there checks out one over"
    " the other; rename it"
)


def test_archive_attributes_the_patch_sets_fail_pathfilter(tmp_path: Path) -> None:
    patch = {
        # `$Format:%H$` is 11 characters in the blob, the commit id's 40 in an archive.
        "src/calc/__init__.py": 'def total(xs):\n    return sum(xs) - (len("$Format:%H$") > 11)\n',
        # A module the package needs, and a directory, left out of every archive.
        "src/calc/_fast.py": "def total(xs):\n    return sum(xs)\n",
        "src/calc/native/__init__.py": "",
        "src/calc/.gitattributes": "/__init__.py export-subst\n_fast.py export-ignore\nnative export-ignore\n",
    }
    judged = attack_lane(tmp_path, patch, "pathfilter")
    assert judged.status == "fail", judged.explain()
    assert judged.reasons == [
        f"pathfilter: src/calc/__init__.py: the patch's .gitattributes set export-subst: {ARCHIVE}"
        f" {BY_HUMAN}",
        f"pathfilter: src/calc/_fast.py: the patch's .gitattributes set export-ignore: {ARCHIVE}"
        f" {BY_HUMAN}",
        f"pathfilter: src/calc/native: the patch's .gitattributes set export-ignore: {ARCHIVE}"
        f" {BY_HUMAN}",
    ], judged.reasons


def test_a_path_that_folds_onto_another_fails_pathfilter(tmp_path: Path) -> None:
    patch = {
        # Empty, after `__init__.py` in the index: NTFS writes it over the package.
        "src/calc/__\u0131nit__.py": "",
        # Mapped by `*.py = []`, so no lane but pathfilter looks; `s` under NFKC.
        "\u017frc/calc/__init__.py": "def total(xs):\n    return -1\n",
        # Honest: another name, nothing folds onto it.
        "src/calc/Extra.py": "",
    }
    judged = attack_lane(tmp_path, patch, "pathfilter")
    assert judged.status == "fail", judged.explain()
    assert judged.reasons == [
        f"pathfilter: src/calc/__\u0131nit__.py: one file with src/calc/__init__.py {FOLD}",
        f"pathfilter: \u017frc/calc/__init__.py: one file with src/calc/__init__.py {FOLD}",
    ], judged.reasons


# A visible test made a no-op without deleting it: already rejected on main 2a6a2dc.
EMPTIED = {
    "parametrize emptied": (
        {
            "tests/test_calc.py": "import pytest\n"
            + VISIBLE_TESTS.replace(
                "def test_two():", "@pytest.mark.parametrize('n', [])\ndef test_two(n):"
            )
        },
        "pathfilter",
        "pathfilter: visible test gone: tests/test_calc.py::test_two",
    ),
    "collect_ignore beside the tests": (
        {"tests/conftest.py": "collect_ignore = ['test_calc.py']\n"},
        "pathfilter",
        "pathfilter: visible test gone: tests/test_calc.py::test_empty",
    ),
    "autouse fixture that skips": (
        {
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\n"
            "def _later():\n    pytest.skip('later')\n"
        },
        "freeze",
        "freeze: suite: 2 newly skipped at run time (they ran at base)",
    ),
}


@pytest.mark.parametrize("name", sorted(EMPTIED))
def test_a_visible_test_made_a_no_op_fails_its_lane(tmp_path: Path, name: str) -> None:
    files, lane, reason = EMPTIED[name]
    judged = attack_lane(tmp_path, files, lane)
    assert judged.status == "fail", judged.explain()
    assert judged.says(reason), judged.explain()
