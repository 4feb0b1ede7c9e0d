"""What the lanes of one gate share (issue 20), and where they must not."""

from __future__ import annotations

from pathlib import Path

from tests.flaky_helpers import code_flaky_module, flaky_calc, freeze_row, registry
from tests.helpers import (
    LEDGER,
    Result,
    cli,
    commit,
    copy_repo,
    example_repo,
    gate,
    verdict,
    write,
)

FROZEN = "tests/test_clock.py::test_clock"
REQUIRED = "eval/properties/test_total.py::test_total_never_negative"


def _frozen_repo(tmp_path: Path, ledger: str = LEDGER) -> Path:
    """A frozen flaky test whose row requires a property; the patch touches the code."""
    repo = example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": flaky_calc(3, 12),
            "tests/test_clock.py": code_flaky_module(tmp_path / "counters"),
            "eval/flakes.freeze.toml": registry(freeze_row(FROZEN)),
            "eval/gate.toml": ledger,
        },
    )
    return repo


def _patch(repo: Path, code: str) -> None:
    write(repo, {"src/calc/__init__.py": code})
    commit(repo, "agent patch")


def test_the_gate_runs_the_required_properties_once(tmp_path: Path) -> None:
    repo = _frozen_repo(tmp_path)
    _patch(repo, flaky_calc(3, 12) + "\n# a harmless edit\n")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    freeze = result.report(repo, "freeze")
    props = result.report(repo, "properties")
    assert freeze["details"]["shared"] == {
        "required_properties": "the properties lane's run",
        "suite_run": "pathfilter's",
    }
    assert props["details"]["shared"] == {"run": "started by the freeze lane"}
    assert freeze["details"]["skipped_by_freeze"] == [FROZEN]
    assert REQUIRED in props["details"]["passed"]
    # The lane on its own (as nox runs it) runs its own, and concludes the same.
    alone = cli(repo, "freeze", "--base", "main", "--today", "2026-12-01")
    assert alone.code == 0, alone.out + alone.err
    own = alone.report(repo, "freeze")
    assert "shared" not in own["details"]
    assert own["reasons"] == freeze["reasons"]
    assert own["details"]["suite"] == freeze["details"]["suite"]


def test_a_required_property_the_patch_breaks_fails_the_freeze_lane_in_the_gate(
    tmp_path: Path,
) -> None:
    repo = _frozen_repo(tmp_path)
    _patch(repo, flaky_calc(3, 12).replace("return sum(xs)", "return sum(xs) - 1"))
    result = gate(repo)
    assert result.code == 1, result.out + result.err
    freeze = result.report(repo, "freeze")
    assert freeze["status"] == "fail"
    assert f"required property failed: {REQUIRED}" in freeze["reasons"]
    assert freeze["details"]["shared"] == {
        "required_properties": "the properties lane's run",
        "suite_run": "pathfilter's",
    }
    assert result.report(repo, "properties")["status"] == "fail"
    assert verdict(repo)["verdict"] == "reject"


def test_an_unboxed_gate_runs_the_required_properties_in_each_lane(tmp_path: Path) -> None:
    """Unboxed, each lane's walk tells whose processes wrote what: nothing is shared across it."""
    ledger = LEDGER.replace('base = "main"\n', 'base = "main"\nisolation = "process"\n')
    repo = _frozen_repo(tmp_path, ledger)
    _patch(repo, flaky_calc(3, 12) + "\n# a harmless edit\n")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert "shared" not in result.report(repo, "freeze")["details"]
    assert "shared" not in result.report(repo, "properties")["details"]


def test_the_head_collection_is_shared_where_the_plans_agree(tmp_path: Path) -> None:
    """xdist for the suite: freeze collects before it runs, as pathfilter did."""
    ledger = LEDGER + "\n[flakes]\nworkers = 2\n"
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    _patch(repo, "def total(xs):\n    return sum(x for x in xs)\n")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    freeze = result.report(repo, "freeze")
    assert freeze["details"]["shared"] == {"suite_collection": "pathfilter's"}
    assert freeze["details"]["suite"]["passed"] == 2
    # A suite that uses hypothesis is collected with its plugin and seed: a plan of its own.
    repo = example_repo(tmp_path / "hypothesis", **{"eval/gate.toml": ledger})
    _patch(repo, "def total(xs):\n    return sum(x for x in xs)\n")
    write(repo, {"tests/test_more.py": HYPOTHESIS_TEST})
    commit(repo, "a hypothesis test in the suite")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    freeze = result.report(repo, "freeze")
    assert "shared" not in freeze["details"]
    assert freeze["details"]["suite"]["passed"] == 3


HYPOTHESIS_TEST = """
from hypothesis import given, strategies as st

from calc import total


@given(st.integers(min_value=0, max_value=9))
def test_one(x):
    assert total([x]) == x
"""


def test_pathfilter_takes_the_heads_collection_from_the_suites_run(
    tmp_path: Path, benign_gate: tuple[Path, Result]
) -> None:
    """One pytest collects and runs the suite at head for both lanes (issue 20)."""
    repo, result = benign_gate
    assert result.code == 0, result.out + result.err
    pathfilter = result.report(repo, "pathfilter")
    freeze = result.report(repo, "freeze")
    assert pathfilter["details"]["head_collection"] == "the suite's run"
    assert freeze["details"]["shared"] == {"suite_run": "pathfilter's"}
    assert freeze["details"]["suite"]["passed"] == 2
    # The lane alone collects on its own, and concludes the same (in a copy: the gate's is shared).
    copy = copy_repo(repo, tmp_path)
    alone = cli(copy, "pathfilter", "--base", "main")
    assert alone.code == 0, alone.out + alone.err
    own = alone.report(copy, "pathfilter")
    assert own["details"]["head_collection"] == "collected"
    assert own["details"]["visible_tests"] == pathfilter["details"]["visible_tests"]
    assert own["reasons"] == pathfilter["reasons"]


# The patch's conftest drops a visible test from the collection it hands pytest.
HIDING_CONFTEST = """
def pytest_collection_modifyitems(session, config, items):
    items[:] = [i for i in items if not i.name.endswith("_two")]
"""


def test_a_test_the_patchs_conftest_hides_from_the_suites_run_is_gone(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(
        repo,
        {
            "tests/conftest.py": HIDING_CONFTEST,
            "src/calc/__init__.py": "def total(xs):\n    return 0\n",
        },
    )
    commit(repo, "agent patch: hide the test that fails")
    result = gate(repo)
    assert result.code == 1, result.out + result.err
    pathfilter = result.report(repo, "pathfilter")
    assert pathfilter["details"]["head_collection"] == "the suite's run"
    assert "visible test gone: tests/test_calc.py::test_two" in pathfilter["reasons"]
    assert verdict(repo)["verdict"] == "reject"


def test_a_suite_run_with_the_hypothesis_plugin_is_no_collection_of_pathfilters(
    tmp_path: Path,
) -> None:
    """The head's files decide whether the run loads hypothesis's plugin; the base had none."""
    repo = example_repo(tmp_path)
    _patch(repo, "def total(xs):\n    return sum(x for x in xs)\n")
    write(repo, {"tests/test_more.py": HYPOTHESIS_TEST})
    commit(repo, "a hypothesis test in the suite")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert result.report(repo, "pathfilter")["details"]["head_collection"] == "collected"
    freeze = result.report(repo, "freeze")
    assert "shared" not in freeze["details"]
    assert freeze["details"]["suite"]["passed"] == 3
