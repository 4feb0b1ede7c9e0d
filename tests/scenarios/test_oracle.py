"""`patchjudge oracle` on real repositories: a property that kills no mutant fails the audit."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import cli, example_repo

# Calls the code but cannot fail: errors are swallowed, the assert holds for any value.
TAUTOLOGY = """
from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers()))
def test_total_is_total(xs):
    try:
        result = total(xs)
    except Exception:
        return
    assert result == result or result != result
"""


def test_strong_properties_kill_every_mutant(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    result = cli(repo, "oracle", "--max-examples", "30")
    assert result.code == 0, result
    doc = json.loads((repo / ".patchjudge" / "oracle.json").read_text())
    props = doc["properties"]
    assert props["eval/properties/test_total.py::test_total_matches_sum"] == {
        "killed": 4,
        "mutants": 4,
    }
    assert doc["weak"] == [] and doc["survivors"] == []
    assert doc["seed"] == 20260924 and doc["max_examples"] == 30
    assert "killed  src/calc/__init__.py::total:raise@1" in result.out


def test_a_tautology_fails_the_audit(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/properties/test_total.py": TAUTOLOGY})
    result = cli(repo, "oracle", "--max-examples", "30")
    assert result.code == 1, result
    assert (
        "patchjudge oracle: kills no mutant: eval/properties/test_total.py::test_total_is_total"
        in result.out
    )
    doc = json.loads((repo / ".patchjudge" / "oracle.json").read_text())
    assert doc["weak"] == ["eval/properties/test_total.py::test_total_is_total"]
    assert len(doc["survivors"]) == 4


def test_a_property_failing_on_the_unmutated_code_is_a_usage_error(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"src/calc/__init__.py": "def total(xs):\n    return -1\n"})
    result = cli(repo, "oracle", "--max-examples", "10")
    assert result.code == 2, result
    assert result.err.startswith(
        "patchjudge: eval/properties/test_total.py: fails on the unmutated code"
    )
    assert len(result.err.strip().splitlines()) == 1
