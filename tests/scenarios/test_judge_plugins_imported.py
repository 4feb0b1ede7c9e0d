"""The judge's stand-in plugin is imported, never assertion-rewritten from source (issue 20).

pytest rewrites a `-p` module that is not imported yet from its source, every run
(the judge writes no bytecode): standin.py's 3,000 lines cost each judge pytest
without the review's plugin ~80 ms. A plugin named before it (the review's, or
boundary/preload.py) imports it the ordinary way, in every harness.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import LEDGER, commit, example_repo, gate, verdict, write

# A judge file that says how the judge's own plugin was loaded: pytest's rewriting hook is
# the loader of a module it rewrote. `total` runs the changed line, so the test runs again in
# the differential's second harness, which has no review plugin.
LOADED = """
import sys

from hypothesis import given, strategies as st

from calc import total


@given(st.lists(st.integers(min_value=0, max_value=9), max_size=3))
def test_the_stand_ins_plugin_is_imported_not_rewritten(xs):
    loader = sys.modules["patchjudge.boundary.standin"].__spec__.loader
    assert type(loader).__name__ != "AssertionRewritingHook", type(loader).__name__
    assert total(xs) >= 0
"""


@pytest.mark.parametrize("review_mutants", [2, 0])
def test_every_harness_imports_the_stand_ins_plugin(tmp_path: Path, review_mutants: int) -> None:
    ledger = LEDGER.replace("review_mutants = 2", f"review_mutants = {review_mutants}")
    repo = example_repo(
        tmp_path, **{"eval/gate.toml": ledger, "eval/properties/test_loaded.py": LOADED}
    )
    write(repo, {"src/calc/__init__.py": "def total(xs):\n    return sum(x for x in xs)\n"})
    commit(repo, "benign")
    gate(repo)
    doc = verdict(repo)
    assert doc["lanes"]["properties"]["status"] == "pass", doc["reasons"]
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    loaded = "eval/properties/test_loaded.py::test_the_stand_ins_plugin_is_imported_not_rewritten"
    assert loaded in lane["details"]["passed"]
    assert loaded in lane["details"]["differential"]["nodeids"]
    assert lane["details"]["differential"]["disagreements"] == []
