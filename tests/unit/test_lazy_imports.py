"""What the judge's pytest loads (issue 20): coverage.py only where it measures or parses."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import patchjudge.review_phase
from patchjudge import review
before = "coverage" in sys.modules
stmts = review.statements("x = 1\\nif x:\\n    y = 2\\n")
print(before, sorted(stmts.lines), "coverage" in sys.modules)
"""


def test_the_review_phase_loads_coverage_only_to_read_statements() -> None:
    # The gate sends the review's plan with its statements read: the judge's pytest
    # that runs the review phase does not need coverage's parser, so it is not loaded.
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "[1,", "2,", "3]", "True"]


def test_a_lane_process_starts_without_importlib_metadata_or_a_thread_pool() -> None:
    # Issue 19: a nox run starts six patchjudge processes; these two (and the logging
    # and email packages they pull in) are needed only by a properties run's tables.
    check = "import sys, patchjudge.cli; print(sorted({'importlib.metadata', 'concurrent.futures', 'email', 'logging'} & set(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-I", "-c", check], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_lanes_load_no_process_pool() -> None:
    # Issue 20: only the review's per-mutant runs (property files run in process) use a
    # pool; every gate and lane process loaded it, and logging with it, at import.
    check = (
        "import sys, patchjudge.cli, patchjudge.commands.gate; "
        "from patchjudge.lanes import registry; registry(); "
        "print(sorted({'concurrent.futures', 'multiprocessing', 'logging'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", check], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
