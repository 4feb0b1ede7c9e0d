"""issue 19: init runs the visible suite once at the adoption commit and refuses a red one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from patchjudge.config import LEDGER, parse_ledger
from tests.helpers import cli, git, init_repo

CODE = "def total(xs):\n    return sum(xs)\n"
RED = (
    "from calc import total\n\n\n"
    "def test_total():\n    assert total([1, 2]) == 3\n\n\n"
    "def test_empty():\n    assert total([]) == 1, 'the empty sum is wrong'\n\n\n"
    "def test_needs_a_package():\n    import no_such_package_here  # noqa: F401\n"
)
FAILED = [
    "  tests/test_calc.py::test_empty — the empty sum is wrong",
    "  tests/test_calc.py::test_needs_a_package"
    " — ModuleNotFoundError: No module named 'no_such_package_here'",
]


def _repo(path: Path, suite: str) -> Path:
    return init_repo(path, {"calc/__init__.py": CODE, "tests/test_calc.py": suite})


def _as_committed(repo: Path) -> None:
    """Nothing written: no file changed, none added, not even an ignored one."""
    assert git(repo, "status", "--porcelain", "--ignored") == ""


def test_a_red_suite_stops_init_before_it_writes_anything(tmp_path, judge_wheel):
    repo = _repo(tmp_path / "calc", RED)
    result = cli(repo, "init", "--patchjudge-spec", str(judge_wheel))
    assert result.code == 1, result.out + result.err
    assert result.out == ""
    lines = result.err.splitlines()
    assert lines[0] == (
        "patchjudge init: the visible suite (tests) fails at this commit: 2 of 3 tests;"
        " nothing written"
    )
    assert lines[1:3] == FAILED
    assert lines[3].startswith("  fix: install what the tests need where the code runs")
    for option in ("--python", "constraints/project.txt", "--allow-red-suite", "--no-suite-run"):
        assert option in lines[3]
    assert "[suite] run = false" in lines[3]
    assert len(lines) == 4
    _as_committed(repo)

    # The opt-out for a known-red suite: adopted, its failures said last, to fix or freeze.
    allowed = cli(repo, "init", "--patchjudge-spec", str(judge_wheel), "--allow-red-suite")
    assert allowed.code == 0, allowed.err
    assert (repo / LEDGER).is_file()
    assert parse_ledger((repo / LEDGER).read_bytes()).suite.run is True
    tail = allowed.out.splitlines()[-3:]
    assert tail[0] == (
        "warning: the visible suite (tests) fails at this commit: 2 of 3 tests: every patch is"
        " rejected until those tests pass or are frozen in eval/flakes.freeze.toml"
    )
    assert tail[1:] == FAILED


def test_a_suite_that_does_not_collect_says_so_with_the_error(tmp_path, judge_wheel):
    repo = _repo(tmp_path / "calc", "import no_such_package_here\n\n\ndef test_x():\n    pass\n")
    result = cli(repo, "init", "--patchjudge-spec", str(judge_wheel))
    assert result.code == 1, result.out + result.err
    lines = result.err.splitlines()
    assert lines[0] == (
        "patchjudge init: the visible suite (tests) does not collect at this commit;"
        " nothing written"
    )
    assert lines[1] == (
        "  collection error: tests/test_calc.py:"
        " ModuleNotFoundError: No module named 'no_such_package_here'"
    )
    assert lines[2].startswith("  fix: ")
    _as_committed(repo)


def test_a_green_suite_is_said_with_its_count(tmp_path, judge_wheel):
    suite = (
        "import pytest\n\nfrom calc import total\n\n\n"
        "def test_total():\n    assert total([1, 2]) == 3\n\n\n"
        "def test_empty():\n    assert total([]) == 0\n\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n"
    )
    repo = _repo(tmp_path / "calc", suite)
    result = cli(repo, "init", "--patchjudge-spec", str(judge_wheel))
    assert result.code == 0, result.err
    assert "the visible suite passes at this commit (2 passed, 1 skipped)\n" in result.out
    assert "warning" not in result.out


def test_no_suite_run_writes_run_false_and_a_later_force_keeps_it(tmp_path, judge_wheel):
    repo = _repo(tmp_path / "calc", RED)
    result = cli(repo, "init", "--patchjudge-spec", str(judge_wheel), "--no-suite-run")
    assert result.code == 0, result.err
    assert parse_ledger((repo / LEDGER).read_bytes()).suite.run is False
    assert "[suite] run = false (--no-suite-run): the visible suite is not run here\n" in result.out
    # The team said its CI runs the suite: init --force over that judge honours it.
    again = cli(repo, "init", "--patchjudge-spec", str(judge_wheel), "--force")
    assert again.code == 0, again.err
    assert parse_ledger((repo / LEDGER).read_bytes()).suite.run is False
    assert f"[suite] run = false (kept from the existing {LEDGER})" in again.out


def test_the_suite_runs_in_the_python_venv(tmp_path, judge_wheel, lane_venv):
    # The judge's own venv has PyYAML (constraints/dev.txt); the code's venv, lane.txt only.
    assert importlib.util.find_spec("yaml") is not None
    repo = _repo(tmp_path / "calc", "import yaml\n\n\ndef test_x():\n    assert yaml\n")
    argv = ["init", "--patchjudge-spec", str(judge_wheel), "--python", str(lane_venv)]
    result = cli(repo, *argv)
    assert result.code == 1, result.out + result.err
    assert "ModuleNotFoundError: No module named 'yaml'" in result.err.splitlines()[1]
    _as_committed(repo)


def test_a_suite_the_lane_runs_under_xdist_is_run_so_here(tmp_path, judge_wheel):
    # 1,000 test functions: `[flakes] workers = "auto"` picks xdist on a multi-core host,
    # as the freeze lane would at head; the failure is named alike.
    many = "".join(f"def test_{i}():\n    pass\n\n\n" for i in range(999))
    failing = "def test_last():\n    assert total([1]) == 2, 'one is not two'\n"
    repo = _repo(tmp_path / "calc", f"from calc import total\n\n\n{many}{failing}")
    result = cli(repo, "init", "--patchjudge-spec", str(judge_wheel))
    assert result.code == 1, result.out + result.err
    assert result.err.splitlines()[:2] == [
        "patchjudge init: the visible suite (tests) fails at this commit: 1 of 1000 tests;"
        " nothing written",
        "  tests/test_calc.py::test_last — one is not two",
    ]
    _as_committed(repo)
