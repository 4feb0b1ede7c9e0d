"""The visible suite is gated (issue 19): the freeze lane runs it at head, frozen ids excused."""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import ANSWER_THE_CALL, FLIP
from tests.flaky_helpers import code_flaky_module, flaky_calc, freeze_row, registry
from tests.helpers import (
    CALC,
    LEDGER,
    cli,
    cli_env,
    commit,
    example_repo,
    gate,
    git,
    run_lane,
    verdict,
    write,
)

# Code the visible suite tests and no property does: a break here is the suite's to catch.
DOUBLE = "\n\ndef double(x):\n    return 2 * x\n"
DOUBLE_TESTS = """
from calc import double


def test_double_two():
    assert double(2) == 4


def test_double_zero():
    assert double(0) == 0
"""
TWO = "tests/test_double.py::test_double_two"
FROZEN = "tests/test_clock.py::test_clock"
CODE = "src/calc/__init__.py"
# No property calls double(): the untested-change rule only reports here, so what
# these scenarios judge is the visible suite (issue 18's rule has its own tests).
SUITE_LEDGER = LEDGER.replace("[suite]", '[review]\nunexercised = "report"\n\n[suite]', 1)


def _repo(tmp_path: Path, calc: str = CALC, **files: str | None) -> Path:
    return example_repo(
        tmp_path,
        **{
            CODE: calc + DOUBLE,
            "tests/test_double.py": DOUBLE_TESTS,
            "eval/gate.toml": SUITE_LEDGER,
            **files,
        },
    )


def _patch(repo: Path, files: dict[str, str | bytes | None], message: str = "patch") -> None:
    write(repo, files)
    commit(repo, message)


def _break_double(repo: Path) -> None:
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text.replace("2 * x", "3 * x")}, "double triples")


def _suite(repo: Path) -> object:
    return gate_report(repo, "freeze")["details"]["suite"]


def gate_report(repo: Path, lane: str) -> dict:  # type: ignore[type-arg]
    import json

    return json.loads((repo / ".patchjudge" / f"{lane}.json").read_text())


def _freeze_fails(repo: Path) -> list[str]:
    """The freeze lane alone (it runs the visible suite): fails, its reasons.

    For a test whose subject is the suite run's decision: a failing lane is a reject in
    any gate (tests/unit/test_verdict.py), and the gate's other lanes are not paid for.
    """
    result = run_lane(repo, "freeze")
    assert result.code == 1, result.out + result.err
    report = gate_report(repo, "freeze")
    assert report["status"] == "fail", report
    return list(report["reasons"])


def test_a_patch_that_breaks_a_visible_test_only_is_rejected_naming_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _break_double(repo)
    result = gate(repo)
    assert result.code == 1, result.out
    doc = verdict(repo)
    assert doc["lanes"]["properties"]["status"] == "pass"
    assert doc["reasons"] == [f"freeze: suite: 1 failed: {TWO} — assert 6 == 4"]
    assert doc["review"]["suite"] == f"failed: 1 of 4: {TWO}"
    assert _suite(repo) == {
        "ran": 4,
        "passed": 3,
        "failed": [TWO],
        "excused": [],
        "skipped": 0,
        "problems": [doc["reasons"][0].removeprefix("freeze: ")],
    }
    md = (repo / ".patchjudge" / "verdict.md").read_text()
    assert "- freeze: suite: 1 failed: tests/test\\_double.py::test\\_double\\_two" in md


def test_the_honest_patch_is_accepted_and_says_the_suite_ran(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text.replace("2 * x", "x + x")}, "double by adding")
    result = gate(repo)
    assert result.code == 0, result.out
    doc = verdict(repo)
    assert doc["review"]["suite"] == "ran 4: 4 passed"
    assert "- visible suite: ran 4: 4 passed" in (repo / ".patchjudge/verdict.md").read_text()


def _flaky_repo(tmp_path: Path) -> Path:
    """A frozen test that fails its first run (3 of 12) beside the suite."""
    return _repo(
        tmp_path,
        calc=flaky_calc(3, 12),
        **{
            "tests/test_clock.py": code_flaky_module(tmp_path / "counters"),
            "eval/flakes.freeze.toml": registry(freeze_row(FROZEN)),
        },
    )


def test_a_frozen_failing_test_is_excused(tmp_path: Path) -> None:
    repo = _flaky_repo(tmp_path)
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text + "\n# a harmless edit\n"})
    result = gate(repo)
    assert result.code == 0, result.out
    assert _suite(repo) == {
        "ran": 5,
        "passed": 4,
        "failed": [],
        "excused": [FROZEN],
        "skipped": 0,
        "problems": [],
    }
    assert (
        verdict(repo)["review"]["suite"]
        == "ran 5: 4 passed, 1 failed, excused (frozen or host-dependent)"
    )


def test_beside_a_frozen_failing_test_an_unfrozen_one_fails(tmp_path: Path) -> None:
    repo = _flaky_repo(tmp_path)
    _break_double(repo)
    result = gate(repo)
    assert result.code == 1, result.out
    doc = verdict(repo)
    assert doc["reasons"] == [f"freeze: suite: 1 failed: {TWO} — assert 6 == 4"]
    suite = _suite(repo)
    assert isinstance(suite, dict)
    assert (suite["failed"], suite["excused"]) == ([TWO], [FROZEN])


def test_suite_run_false_accepts_and_says_it_was_not_run(tmp_path: Path) -> None:
    repo = _repo(tmp_path, **{"eval/gate.toml": SUITE_LEDGER + "run = false\n"})
    _break_double(repo)
    result = gate(repo)
    assert result.code == 0, result.out
    doc = verdict(repo)
    assert doc["verdict"] == "accept_for_review"
    assert doc["review"]["suite"] == "not run: [suite] run = false"
    md = (repo / ".patchjudge" / "verdict.md").read_text()
    assert "the project's own tests were not run here" in md


def test_a_change_that_forces_nothing_does_not_run_the_suite(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _patch(repo, {"docs/notes.md": "reviewed, forces no lane\n"})
    result = gate(repo)
    assert result.code == 0, result.out
    assert verdict(repo)["review"]["suite"] == (
        "not run: no changed path forces freeze or properties"
    )


def test_a_base_whose_suite_does_not_collect_gets_the_bases_message(tmp_path: Path) -> None:
    broken = "import nosuchmodule\n\n\ndef test_it():\n    assert nosuchmodule\n"
    repo = _repo(tmp_path, **{"tests/test_broken.py": broken})
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text + "\n# a harmless edit\n"})
    # The base's collection is pathfilter's: that lane on its own (issue 20).
    result = run_lane(repo, "pathfilter")
    assert result.code == 1, result.out
    assert gate_report(repo, "pathfilter")["status"] == "fail"
    reasons = gate_report(repo, "pathfilter")["reasons"]
    assert reasons == [
        "the base does not collect: tests/test_broken.py: "
        "ModuleNotFoundError: No module named 'nosuchmodule' "
        "(not installed where the code runs: pin it in constraints/project.txt, or install it into the --python venv; else fix it at the merge base)"
    ]


def test_a_patch_that_fixes_the_bases_collection_is_not_blamed(tmp_path: Path) -> None:
    broken = "import nosuchmodule\n\n\ndef test_it():\n    assert nosuchmodule\n"
    repo = _repo(tmp_path, **{"tests/test_broken.py": broken})
    _patch(repo, {"tests/test_broken.py": "def test_it():\n    assert True\n"}, "fix the import")
    result = gate(repo)
    assert result.code == 0, result.out
    assert verdict(repo)["review"]["suite"] == "ran 5: 5 passed"


def test_a_patch_whose_test_file_does_not_collect_names_the_exception(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _patch(repo, {"tests/test_double.py": "from calc import triple\n" + DOUBLE_TESTS})
    result = gate(repo)
    assert result.code == 1, result.out
    reasons = gate_report(repo, "pathfilter")["reasons"]
    assert (
        "visible suite at head: collection error: tests/test_double.py: "
        "ImportError: cannot import name 'triple' from 'calc' (src/calc/__init__.py)"
    ) in reasons


SKIP_AT_RUN = """
import pytest


def pytest_runtest_setup(item):
    pytest.skip("not today")
"""
# A suite conftest an honest project has: a fixture, and a hook that only reads.
HONEST_CONFTEST = """
import pytest


@pytest.fixture
def two():
    return 2


def pytest_runtest_setup(item):
    item.config.stash.setdefault(pytest.StashKey(), None)
"""


def test_a_conftest_that_passes_every_test_is_caught(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _break_double(repo)
    _patch(repo, {"tests/conftest.py": FLIP}, "make every test pass")
    result = gate(repo)
    assert result.code == 1, result.out
    reasons = gate_report(repo, "freeze")["reasons"]
    assert any(
        r.startswith(f"suite: outcome rewritten in-process: {TWO} (call) was failed")
        for r in reasons
    ), reasons
    # A run in doubt gives pathfilter no collection: it collected the head on its own.
    assert gate_report(repo, "pathfilter")["details"]["head_collection"] == "collected"


def test_a_conftest_that_answers_the_call_hook_itself_is_caught(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _break_double(repo)
    _patch(repo, {"tests/conftest.py": ANSWER_THE_CALL}, "run no test body")
    reasons = _freeze_fails(repo)
    assert any(
        r.startswith("suite: passed without pytest calling its test function: ") and TWO in r
        for r in reasons
    ), reasons


def test_a_conftest_that_skips_every_test_at_run_time_is_caught(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _break_double(repo)
    _patch(repo, {"tests/conftest.py": SKIP_AT_RUN}, "skip every test")
    reasons = _freeze_fails(repo)
    assert reasons == [
        "suite: 4 newly skipped at run time (they ran at base): tests/test_calc.py::test_empty; "
        f"tests/test_calc.py::test_two; {TWO}; tests/test_double.py::test_double_zero"
    ]


def test_a_patch_whose_code_skips_the_tests_at_run_time_is_caught(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    text = (repo / CODE).read_text()
    skips = "import pytest\n\n" + text.replace("return 2 * x", 'pytest.skip("busy")')
    _patch(repo, {CODE: skips}, "double skips whoever calls it")
    reasons = _freeze_fails(repo)
    assert reasons == [
        "suite: 2 newly skipped at run time (they ran at base): "
        f"{TWO}; tests/test_double.py::test_double_zero"
    ]


def test_a_test_that_skips_at_run_time_at_base_too_is_accepted(tmp_path: Path) -> None:
    skipping = DOUBLE_TESTS + (
        "\n\ndef test_needs_network():\n    import pytest\n\n    pytest.skip('no network')\n"
    )
    repo = _repo(tmp_path, **{"tests/test_double.py": skipping})
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text.replace("2 * x", "x + x")}, "double by adding")
    result = gate(repo)
    assert result.code == 0, result.out
    assert verdict(repo)["review"]["suite"] == "ran 5: 4 passed, 1 skipped"


def test_the_base_run_of_ids_skipped_at_head_is_kept_until_the_base_moves(
    tmp_path: Path,
) -> None:
    """Issue 20: which skipped ids ran at base is cached by base tree, settings and ids.

    A stale answer would be an attack's door: a base that now runs the test,
    read as one that skipped it, would let the head switch it off unseen.
    """
    skip = "\n\ndef test_needs_network():\n    import pytest\n\n    pytest.skip('no network')\n"
    repo = _repo(tmp_path, **{"tests/test_double.py": DOUBLE_TESTS + skip})
    env = cli_env(PATCHJUDGE_CACHE_DIR=str(tmp_path / "cache"))
    text = (repo / CODE).read_text()
    _patch(repo, {CODE: text.replace("2 * x", "x + x")}, "double by adding")
    origins = []
    for _ in range(2):
        result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=env)
        assert result.code == 0, result.out
        assert verdict(repo)["review"]["suite"] == "ran 5: 4 passed, 1 skipped"
        origins.append(gate_report(repo, "freeze")["details"]["cache"]["base_ran"])
    assert origins == ["miss", "hit"]
    # The base moves: the test runs there now, and the head (the old file) skips it.
    git(repo, "checkout", "-q", "main")
    runs = skip.replace("    import pytest\n\n    pytest.skip('no network')\n", "    pass\n")
    _patch(repo, {"tests/test_double.py": DOUBLE_TESTS + runs}, "the network is there")
    git(repo, "checkout", "-q", "-b", "patch2")
    _patch(
        repo, {"tests/test_double.py": DOUBLE_TESTS + skip, CODE: text.replace("2 * x", "x + x")}
    )
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=env)
    assert result.code == 1, result.out
    assert gate_report(repo, "freeze")["details"]["cache"]["base_ran"] == "miss"
    assert gate_report(repo, "freeze")["reasons"] == [
        "suite: 1 newly skipped at run time (they ran at base): "
        "tests/test_double.py::test_needs_network"
    ]


def test_an_honest_suite_conftest_is_accepted(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    tests = DOUBLE_TESTS + "\n\ndef test_double_fixture(two):\n    assert double(two) == 4\n"
    _patch(repo, {"tests/conftest.py": HONEST_CONFTEST, "tests/test_double.py": tests})
    result = gate(repo)
    assert result.code == 0, result.out
    assert verdict(repo)["review"]["suite"] == "ran 5: 5 passed"


def test_a_patch_that_deletes_every_test_is_still_rejected(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _patch(repo, {"tests/test_double.py": None, "tests/test_calc.py": None}, "no tests")
    result = gate(repo)
    assert result.code == 1, result.out
    doc = verdict(repo)
    assert f"pathfilter: visible test gone: {TWO}" in doc["reasons"]
    assert "freeze: suite: collected nothing at head; the base defines 4 test(s)" in doc["reasons"]
    assert doc["review"]["suite"].startswith("failed: ")
