"""The mutation phase reads a mutant's fate, not its traceback (issue 20).

pytest's short and long traceback styles parse the whole source file of
every frame of a failure to show its statement: for a killed mutant that is
hypothesis' engine and the stand-ins, thousands of lines each, for a report
nobody reads. A real pytest runs a failing test once as the main pass does
and once as the phase does (`runtestprotocol` inside `_fates_only`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = """
import json

import pytest
from _pytest.runner import runtestprotocol

from patchjudge import review_phase


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    result = yield
    item = session.items[0]
    with review_phase._fates_only(item.config):
        reports = runtestprotocol(item, log=False, nextitem=None)
    (item.path.parent / "seen.json").write_text(json.dumps({
        "failed": [r.when for r in reports if r.failed],
        "longrepr": [str(r.longrepr) for r in reports if r.failed],
        "style_after": item.config.option.tbstyle,
    }))
    return result
"""

TEST = """
def helper(x):
    assert x == 2, "a distinctive message"


def test_fails():
    helper(1)
"""


def test_a_mutants_failure_is_read_without_its_source(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_m.py").write_text(textwrap.dedent(TEST))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tb=short", "-q", "test_m.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    # The main pass shows the statement, as the gate's reasons need.
    assert "helper(1)" in run.stdout, run.stdout + run.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["failed"] == ["call"]
    (longrepr,) = seen["longrepr"]
    # Killed all the same, and its message kept; no line of source was read to say so.
    assert "a distinctive message" in longrepr
    assert "helper(1)" not in longrepr and "assert x == 2" not in longrepr
    assert seen["style_after"] == "short"
