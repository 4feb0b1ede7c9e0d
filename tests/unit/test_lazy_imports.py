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


GENERATED = """
import sys
from pathlib import Path
import patchjudge.cli, patchjudge.commands.gate
from patchjudge.lanes import load
load("freeze")
from patchjudge import boxbuild, workspace
pyproject = b'[tool.setuptools_scm]\\nwrite_to = "pkg/_version.py"\\n'
wanted = workspace.generated_wanted(pyproject, {"pkg", "pkg/__init__.py"}, ["eval/**"])
env = {boxbuild.PRETEND: "1.2.3"}
made = workspace.render_generated(
    pyproject, wanted, lambda doc: boxbuild.version_at(doc, env, Path("."), "HEAD")
)
print(sorted(made), sorted({"importlib.metadata", "zipfile", "configparser", "email"} & set(sys.modules)))
"""


def test_a_lane_writing_a_version_file_loads_no_wheel_reader() -> None:
    # Issue 19: iniconfig's version file is rendered in every nox lane process through
    # boxbuild's version_files/version_at; reading wheels and distributions (zipfile,
    # configparser, importlib.metadata and email) is for building one, not for that.
    out = subprocess.run(
        [sys.executable, "-I", "-c", GENERATED], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "['pkg/_version.py'] []"
