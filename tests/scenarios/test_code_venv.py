"""issue 19: `--python` runs the code under test in its own venv, never the judge's.

The code venv here is the cheapest real one: `python -m venv --without-pip`
whose site-packages reaches the judge's runtime (pytest, hypothesis) through
a `.pth` line and holds one module of its own, `codeonly_dep`, that the
judge's venv does not have. patchjudge is not in it: the judge's plugin
comes from the judge.
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from tests.attack_helpers import fast_ledger
from tests.flaky_helpers import code_flaky_module, flaky_calc, freeze_row, registry
from tests.helpers import Result, bare_venv, cli, commit, example_repo, gate, verdict, write

USES_DEP = """
import codeonly_dep


def total(xs):
    return sum(xs) + codeonly_dep.ZERO
"""


@pytest.fixture(scope="session")
def code_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python, site = bare_venv(tmp_path_factory.mktemp("code-venv") / "venv")
    (site / "judge_runtime.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "codeonly_dep.py").write_text("ZERO = 0\n")
    return python


def test_the_code_imports_what_its_own_venv_has(tmp_path: Path, code_venv: Path) -> None:
    repo = example_repo(tmp_path, **{"src/calc/__init__.py": USES_DEP})
    write(repo, {"src/calc/__init__.py": USES_DEP + "\n# a comment\n"})
    commit(repo)
    result = gate(repo, "--python", str(code_venv))
    assert result.code == 0, result.out + result.err
    assert verdict(repo)["verdict"] == "accept_for_review"


def test_without_python_the_judges_venv_lacks_the_codes_dependency(tmp_path: Path) -> None:
    # The honest twin above passes only because --python was given: the same
    # tree in the judge's venv fails on the import.
    repo = example_repo(tmp_path, **{"src/calc/__init__.py": USES_DEP})
    write(repo, {"src/calc/__init__.py": USES_DEP + "\n# a comment\n"})
    commit(repo)
    result = gate(repo)
    assert result.code == 1, result.out + result.err
    assert "codeonly_dep" in result.out


def test_the_codes_venv_is_read_only_to_the_code(tmp_path: Path, code_venv: Path) -> None:
    # A patch that plants a start-up file in its venv would run it before the
    # judge's plugin in every later lane: the box binds the venv read-only.
    site = next(code_venv.parent.parent.glob("lib/python*/site-packages"))
    planted = site / "usercustomize.py"
    test = f"""
    from calc import total


    def test_plant():
        try:
            open({str(planted)!r}, "w").write("raise SystemExit(0)\\n")
        except OSError:
            pass
        assert total([1]) == 1
    """
    repo = example_repo(tmp_path)
    write(repo, {"tests/test_plant.py": test})
    commit(repo)
    gate(repo, "--python", str(code_venv), "--isolation", "sandbox")
    assert not planted.exists()


def test_a_python_that_is_not_one_is_exit_2_naming_the_option(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    commit(repo)
    result = gate(repo, "--python", str(tmp_path / "nope" / "python"))
    assert result.code == 2
    assert result.err.count("\n") == 1 and "--python" in result.err, result.err


def test_unboxed_a_start_up_file_planted_in_the_codes_venv_fails_the_lane(
    tmp_path: Path, code_venv: Path
) -> None:
    # Without the box nothing stops the write; the guard watches the code's venv as it
    # watches the judge's, so the lane that ran the planting test fails, naming the file.
    site = next(code_venv.parent.parent.glob("lib/python*/site-packages"))
    planted = site / f"planted_{tmp_path.name}.pth"
    test = f"""
    from calc import total


    def test_plant():
        open({str(planted)!r}, "w").write("\\n")
        assert total([1]) == 1
    """
    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger(isolation="process")})
    write(repo, {"tests/test_plant.py": test})
    commit(repo)
    try:
        result = gate(repo, "--python", str(code_venv))
    finally:
        planted.unlink(missing_ok=True)
    assert result.code == 1, result.out + result.err
    reasons = [r for lane in verdict(repo)["lanes"].values() for r in lane["reasons"]]
    assert any(planted.name in r for r in reasons), reasons


def _uses_dep(tmp_path: Path) -> Path:
    repo = example_repo(tmp_path, **{"src/calc/__init__.py": USES_DEP})
    commit(repo)
    return repo


def _flakes(repo: Path, *args: str) -> Result:
    return cli(repo, "flakes", "--count", "2", "--workers", "0", "--today", "2026-12-01", *args)


def test_flakes_runs_the_suite_with_the_codes_venv(tmp_path: Path, code_venv: Path) -> None:
    repo = _uses_dep(tmp_path)
    result = _flakes(repo, "--python", str(code_venv))
    assert result.code == 0, result.err
    nodes = json.loads((repo / ".patchjudge" / "flakes.json").read_text())["nodes"]
    assert nodes["tests/test_calc.py::test_two"] == {"fail": 0, "runs": 2}, nodes


def test_flakes_without_python_lacks_the_codes_dependency(tmp_path: Path) -> None:
    # The twin above passes only because --python was given.
    result = _flakes(_uses_dep(tmp_path))
    assert result.code == 1, result.err
    assert "codeonly_dep" in result.err and "cannot be believed" in result.err


def test_oracle_runs_the_properties_with_the_codes_venv(tmp_path: Path, code_venv: Path) -> None:
    repo = _uses_dep(tmp_path)
    result = cli(repo, "oracle", "--max-examples", "20", "--python", str(code_venv))
    assert result.code == 0, result.out + result.err
    doc = json.loads((repo / ".patchjudge" / "oracle.json").read_text())
    assert doc["properties"]["eval/properties/test_total.py::test_total_matches_sum"]["killed"]


def test_oracle_without_python_lacks_the_codes_dependency(tmp_path: Path) -> None:
    result = cli(_uses_dep(tmp_path), "oracle", "--max-examples", "20")
    assert result.code == 2, result.out + result.err
    assert "fails on the unmutated code" in result.err and "codeonly_dep" in result.err


FROZEN = "tests/test_clock.py::test_clock"


def _frozen_repo(tmp_path: Path, shadow: str) -> Path:
    """A frozen flaky test, and a patch whose tree provides a module named like a judge's."""
    repo = example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": flaky_calc(3, 12),
            "tests/test_clock.py": code_flaky_module(tmp_path / "counters"),
            "eval/flakes.freeze.toml": registry(freeze_row(FROZEN)),
        },
    )
    write(repo, {f"src/{shadow}.py": "raise ImportError('the tree copy ran')\n"})
    commit(repo, f"a module named {shadow}")
    return repo


def _freeze(repo: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = cli(repo, "freeze", "--base", "main", "--today", "2026-12-01", *args)
    assert result.code in (0, 1), result.err
    return result.code, result.report(repo, "freeze")


def test_frozen_reruns_in_the_codes_venv_take_a_tree_naming_an_imported_judge_module(
    tmp_path: Path, code_venv: Path
) -> None:
    # pytest imported iniconfig before the tree joined sys.path: in the code's
    # venv the tree's file cannot stand in for it, so the reruns are believed.
    repo = _frozen_repo(tmp_path, "iniconfig")
    code, report = _freeze(repo, "--python", str(code_venv))
    assert code == 0, report["reasons"]
    assert report["details"]["rerun_results"] == {FROZEN: {"fail": 3, "runs": 12}}


def test_frozen_reruns_in_the_judges_venv_still_refuse_that_tree(tmp_path: Path) -> None:
    # The twin above passes only because --python was given.
    code, report = _freeze(_frozen_repo(tmp_path, "iniconfig"))
    assert code == 1
    assert (
        "frozen reruns: the tested tree shadows a judge module: src/iniconfig.py"
        in (report["reasons"])
    ), report["reasons"]


def test_frozen_reruns_in_the_codes_venv_refuse_a_judge_module_not_imported_yet(
    tmp_path: Path, code_venv: Path
) -> None:
    # coverage is imported later, if at all: the tree's copy could still replace it.
    code, report = _freeze(_frozen_repo(tmp_path, "coverage"), "--python", str(code_venv))
    assert code == 1
    assert (
        "frozen reruns: the tested tree shadows a judge module: src/coverage.py"
        in (report["reasons"])
    ), report["reasons"]


@pytest.fixture(scope="session")
def self_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A code venv whose project is named patchjudge: its installed build, not the tree's src."""
    python, site = bare_venv(tmp_path_factory.mktemp("self-venv") / "venv")
    (site / "judge_runtime.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "patchjudge").mkdir()
    (site / "patchjudge" / "__init__.py").write_text('WHO = "the code\'s build"\n')
    return python


WHO = """
import patchjudge


def test_the_suite_imports_the_projects_own_patchjudge():
    assert getattr(patchjudge, "WHO", None) == "the code's build", patchjudge.__file__
"""


def test_a_project_named_patchjudge_runs_its_own_build_not_the_judges_plugin(
    tmp_path: Path, self_venv: Path
) -> None:
    # The judge's plugin reaches the code's venv through PYTHONPATH, ahead of its
    # site-packages: the project's own `patchjudge` must still be what its tests import.
    repo = example_repo(tmp_path)
    write(repo, {"tests/test_who.py": WHO})
    commit(repo)
    result = gate(repo, "--python", str(self_venv))
    assert result.code == 0, result.out + result.err
    assert verdict(repo)["verdict"] == "accept_for_review"
