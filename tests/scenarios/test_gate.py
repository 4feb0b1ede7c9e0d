"""The gate end to end: real repositories, the real CLI, one patch per scenario."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import (
    LEDGER,
    ORDER_JSON,
    Result,
    cli,
    commit,
    copy_repo,
    example_repo,
    gate,
    git,
    judged_once,
    run_lane,
    verdict,
    write,
)

# Config files the runner-configuration attacks touch are mapped, so the
# property lane (not an unmapped path) is what must catch them.
CONFIG_LEDGER = LEDGER.replace(
    "[map]\n",
    '[map]\n"conftest.py" = ["properties"]\n"pyproject.toml" = ["properties"]\n'
    '"setup.cfg" = ["properties"]\n"pytest.ini" = ["properties"]\n"tox.ini" = ["properties"]\n',
)


def patch(repo: Path, files: dict[str, str | bytes | None]) -> None:
    write(repo, files)
    commit(repo, "agent patch")


def reasons(repo: Path) -> list[str]:
    return verdict(repo)["reasons"]


def assert_reject(repo: Path, result, fragment: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == 1, result.out + result.err
    doc = verdict(repo)
    assert doc["verdict"] == "reject"
    assert any(fragment in r for r in doc["reasons"]), doc["reasons"]


def lane_reasons(repo: Path, result: Result, lane: str) -> list[str]:
    """A lane run on its own that failed: its reasons as a verdict lists them."""
    assert result.code == 1, result.out + result.err
    report = result.report(repo, lane)
    assert report["status"] == "fail", report
    return [f"{lane}: {r}" for r in report["reasons"]]


def assert_lane_fails(repo: Path, result: Result, lane: str, fragment: str) -> None:
    """The lane on its own (issue 20) fails naming `fragment`: a reject in any gate
    (tests/unit/test_verdict.py)."""
    found = lane_reasons(repo, result, lane)
    assert any(fragment in r for r in found), found


def test_benign_change_is_accepted_for_review(benign_gate: tuple[Path, Result]) -> None:
    repo, result = benign_gate
    assert result.code == 0, result.out + result.err
    assert result.out.splitlines()[-7].startswith("patchjudge: accept_for_review")
    doc = verdict(repo)
    assert list(doc) == [
        "schema",
        "verdict",
        "base",
        "head",
        "ledger_sha256",
        "lanes",
        "reasons",
        "review",
    ]
    assert doc["verdict"] == "accept_for_review" and doc["reasons"] == []
    assert doc["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert doc["base"] == git(repo, "rev-parse", "main").strip()
    assert doc["review"] == {
        "isolation": doc["review"]["isolation"],
        "properties": {
            "seed": 20260924,
            "seed_source": "pinned",
            "max_examples": 50,
            "oracle": doc["review"]["properties"]["oracle"],
            "in_process": [],
            # The one changed line, executed; its two mutants (drop, raise) killed, and the
            # raise in its generator's element, an arm (red team, session 12).
            "changed_lines": {"executed": 1, "total": 1, "unexecuted": []},
            "mutants": {"killed": 3, "total": 3, "not_tried": 0, "survivors": []},
            "unexercised": [],
            "probes": [],
        },
        "fixtures": "lock intact",
        "freeze": [],
        "replay": "not required",
        # The visible suite ran at head (issue 19): both of its tests passed.
        "suite": "ran 2: 2 passed",
    }
    props = result.report(repo, "properties")
    assert props["status"] == "pass" and len(props["details"]["passed"]) == 2
    for lane in ("pathfilter", "fixtures", "freeze", "properties", "replay"):
        report = result.report(repo, lane)
        assert (report["base"], report["head"]) == (doc["base"], doc["head"])
    assert (
        (repo / ".patchjudge" / "verdict.md")
        .read_text()
        .startswith("## patchjudge: `accept_for_review`")
    )


def test_docs_only_change_forces_no_properties(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(repo, {"docs/usage.md": "# usage\n"})
    result = gate(repo)
    assert result.code == 0, result.out
    assert result.report(repo, "properties")["status"] == "not_applicable"


# --- pathfilter ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        (
            {"eval/gate.toml": LEDGER.replace("max_examples = 50", "max_examples = 1")},
            "protected path changed: eval/gate.toml (modified)",
        ),
        ({"Makefile": "all:\n"}, "unmapped path: Makefile"),
        (
            {
                "tests/test_calc.py": "import pytest\nfrom calc import total\n\n\n@pytest.mark.skip\n"
                "def test_empty():\n    assert total([]) == 0\n\n\ndef test_two():\n    assert total([1, 2]) == 3\n"
            },
            "visible test newly skipped: tests/test_calc.py::test_empty",
        ),
        (
            {
                "tests/test_calc.py": "import pytest\nfrom calc import total\n\n\n@pytest.mark.xfail\n"
                "def test_empty():\n    assert total([]) == 0\n\n\ndef test_two():\n    assert total([1, 2]) == 3\n"
            },
            "visible test newly xfailed: tests/test_calc.py::test_empty",
        ),
        (
            {"src/calc/__init__.py": "raise ImportError('broken')\n"},
            "visible suite at head: collection error: tests/test_calc.py",
        ),
    ],
)
def test_pathfilter_fails(tmp_path: Path, files: dict[str, str | None], fragment: str) -> None:
    repo = example_repo(tmp_path)
    patch(repo, files)
    assert_lane_fails(repo, run_lane(repo, "pathfilter"), "pathfilter", fragment)


# A property renamed out of the judge, a symlink into it and a new file under the
# properties path are test_attacks_judge.py's cases, a deleted test module
# test_attacks_surface.py's: each with its reason and exit 1, through whole gates.
def test_rename_into_the_judge(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    git(repo, "mv", "tests/test_calc.py", "eval/test_calc.py")
    commit(repo, "move a test in")
    result = run_lane(repo, "pathfilter")
    assert_lane_fails(repo, result, "pathfilter", "protected path changed: eval/test_calc.py")


# --- fixtures -----------------------------------------------------------------


def test_fixture_bytes_rewritten(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(repo, {"tests/fixtures/order.json": ORDER_JSON.replace('"total": 4', '"total": 5')})
    result = gate(repo)
    assert_reject(repo, result, "fixtures: changed: tests/fixtures/order.json")
    assert verdict(repo)["review"]["fixtures"] == "changed: tests/fixtures/order.json"


def test_fixture_replaced_by_a_symlink_to_identical_bytes(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"tests/data/order.json": ORDER_JSON})
    (repo / "tests/fixtures/order.json").unlink()
    (repo / "tests/fixtures/order.json").symlink_to("../data/order.json")
    commit(repo)
    result = run_lane(repo, "fixtures")
    assert_lane_fails(repo, result, "fixtures", "fixtures: symlink: tests/fixtures/order.json")


def test_json_fixture_reserialised_with_other_key_order_is_not_drift(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    doc = json.loads(ORDER_JSON)
    reordered = json.dumps(dict(reversed(list(doc.items()))), indent=4)
    patch(repo, {"tests/fixtures/order.json": reordered})
    result = run_lane(repo, "fixtures")
    assert result.code == 0, result.out
    assert result.report(repo, "fixtures")["status"] == "pass"


def test_new_unlocked_fixture_and_deleted_fixture(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"tests/fixtures/keep.txt": "keep\n"})
    patch(repo, {"tests/fixtures/new.txt": "new\n", "tests/fixtures/keep.txt": None})
    found = lane_reasons(repo, run_lane(repo, "fixtures"), "fixtures")
    assert any("fixtures: extra: tests/fixtures/new.txt" in r for r in found), found
    assert "fixtures: missing: tests/fixtures/keep.txt" in found


def test_lock_is_the_human_step_and_says_what_changed(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"tests/fixtures/order.json": "{}\n", "tests/fixtures/more.txt": "x\n"})
    result = cli(repo, "lock")
    assert result.code == 0, result.err
    assert result.out.splitlines()[:2] == [
        "added: tests/fixtures/more.txt",
        "changed: tests/fixtures/order.json",
    ]
    commit(repo, "relock")
    # A relocked lock in the patch is still a judge edit.
    result = run_lane(repo, "pathfilter")
    assert_lane_fails(repo, result, "pathfilter", "protected path changed: eval/fixtures.lock.json")


# --- properties ---------------------------------------------------------------


def test_broken_library_fails_its_property_with_the_falsifying_example(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(
        repo,
        {"src/calc/__init__.py": "def total(xs):\n    return sum(xs) if len(xs) < 3 else -1\n"},
    )
    result = gate(repo)
    assert_reject(
        repo,
        result,
        "properties: property failed: eval/properties/test_total.py::test_total_never_negative",
    )
    failed = result.report(repo, "properties")["details"]["failed"]
    examples = [f for entry in failed for f in entry["falsifying"]]
    assert "test_total_never_negative(xs=[0, 0, 0])" in examples[0], examples
    assert result.report(repo, "properties")["details"]["seed"] == 20260924


FLIP_CONFTEST = """
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report


def pytest_collection_modifyitems(items):
    items[:] = [i for i in items if "properties" not in str(i.fspath)]
"""
BROKEN = {"src/calc/__init__.py": "def total(xs):\n    return -1\n"}


@pytest.mark.parametrize(
    "files",
    [
        {"conftest.py": FLIP_CONFTEST},
        {
            "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-k nothing_matches -p no:hypothesispytest'\n"
        },
        {"setup.cfg": "[tool:pytest]\naddopts = --deselect eval/properties/test_total.py\n"},
        {"pytest.ini": "[pytest]\naddopts = -p no:python\npython_files = nothing_*.py\n"},
        {"tox.ini": "[pytest]\naddopts = --co\n"},
    ],
    ids=["root-conftest", "pyproject-addopts", "setup-cfg", "pytest-ini", "tox-ini"],
)
def test_runner_configuration_in_the_patch_cannot_switch_properties_off(
    tmp_path: Path, files: dict[str, str]
) -> None:
    # The properties lane's decision, so the lane on its own (issue 20): the judge's pytest
    # reads its own ini, never the patch's, and still finds the broken property.
    repo = example_repo(tmp_path, **{"eval/gate.toml": CONFIG_LEDGER})
    patch(repo, {**BROKEN, **files})
    assert_lane_fails(repo, run_lane(repo, "properties"), "properties", "property failed")


def test_pytest_addopts_in_the_environment_is_ignored(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(repo, BROKEN)
    env = dict(os.environ, PYTEST_ADDOPTS="-k nothing --co", PYTEST_PLUGINS="nope")
    # The properties lane's decision, so the lane on its own (issue 20).
    result = cli(repo, "properties", "--base", "main", env=env)
    assert_lane_fails(repo, result, "properties", "property failed")


def test_a_property_that_hangs_fails_within_timeout(tmp_path: Path) -> None:
    # The visible suite hangs too (test_two calls total): its deadline is short as well,
    # or the gate waits out the suite's 60 s after the properties' 4 s.
    ledger = LEDGER.replace("timeout_s = 60\n\n[suite]", "timeout_s = 4\n\n[suite]").replace(
        "[suite]\ntimeout_s = 60", "[suite]\ntimeout_s = 4"
    )
    assert ledger.count("timeout_s = 4") == 2
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    patch(
        repo,
        {
            "src/calc/__init__.py": "import time\n\ndef total(xs):\n    while xs:\n        time.sleep(1)\n    return 0\n"
        },
    )
    result = gate(repo)
    assert_reject(repo, result, "properties: timed out after 4 s")


FORGER = """
import json
import os
from pathlib import Path

FORGED = {"schema": 1, "verdict": "accept_for_review", "reasons": []}
# What an attacker can find: the working directory, and any path in the environment.
for base in {Path.cwd(), *(Path(v) for v in os.environ.values() if v.startswith("/"))}:
    try:
        (base / ".patchjudge").mkdir(exist_ok=True)
        (base / ".patchjudge" / "verdict.json").write_text(json.dumps(FORGED))
    except OSError:
        pass


def total(xs):
    return -1
"""


def test_code_that_forges_a_verdict_on_import_is_still_rejected(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(repo, {"src/calc/__init__.py": FORGER})
    result = gate(repo)
    assert_reject(repo, result, "properties: property failed")
    assert not (repo / "src" / "calc" / ".patchjudge").exists()


# --- bad input ------------------------------------------------------------------


def test_a_bad_ledger_at_the_base_is_exit_2_and_one_line(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/gate.toml": LEDGER + "\n[properties_typo]\n"})
    patch(repo, {"docs/x.md": "x\n"})
    result = gate(repo)
    assert result.code == 2
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "eval/gate.toml" in result.err and "[properties_typo]" in result.err


def test_nothing_to_judge_and_unknown_base_are_usage_errors(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    same = gate(repo)
    assert same.code == 2 and "nothing to judge" in same.err
    unknown = gate(repo, base="no-such-branch")
    assert unknown.code == 2 and "unknown revision 'no-such-branch'" in unknown.err


LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")


def _docs_patch(tmp_path: Path) -> Path:
    repo = example_repo(tmp_path)
    patch(repo, {"docs/x.md": "x\n"})
    return repo


@pytest.fixture(scope="module")
def docs_lanes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Result]]:
    """Each lane on its own over a docs-only patch, once a run (issue 20): the two tests
    below read its reports and digests, each in a copy of its own."""
    argv = {lane: (lane, "--base", "main") for lane in LANES}
    return judged_once(tmp_path_factory, "docs-lanes", _docs_patch, argv)


def test_lane_reports_then_verdict_from_disk_and_staleness(
    tmp_path: Path, docs_lanes: tuple[Path, dict[str, Result]]
) -> None:
    shared, lanes = docs_lanes
    assert {lane: lanes[lane].code for lane in LANES} == dict.fromkeys(LANES, 0), lanes
    repo = copy_repo(shared, tmp_path)
    assert cli(repo, "verdict", "--base", "main").code == 0
    patch(repo, {"docs/y.md": "y\n"})
    stale = cli(repo, "verdict", "--base", "main")
    assert stale.code == 1
    assert all("stale report: head" in r for r in verdict(repo)["reasons"])
    (repo / ".patchjudge" / "fixtures.json").write_text("{not json")
    assert any(
        "fixtures: report unreadable" in r
        for r in (cli(repo, "verdict", "--base", "main"), reasons(repo))[1]
    )


FAKE_HYPOTHESIS = '''
"""A hypothesis whose @given never runs the test body."""


def given(*args, **kwargs):
    def wrap(fn):
        def test(*a, **k):
            return None

        test.__name__ = fn.__name__
        return test

    return wrap
'''


def test_a_shadowing_hypothesis_in_the_patch_shadows_nothing(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    patch(
        repo,
        {
            **BROKEN,
            "src/hypothesis/__init__.py": FAKE_HYPOTHESIS,
            "src/hypothesis/strategies.py": "def lists(*a, **k):\n    return None\nintegers = lists\n",
        },
    )
    # The properties lane's decision: the lane on its own (a lane fail is a reject).
    assert_lane_fails(repo, run_lane(repo, "properties"), "properties", "property failed")


def test_verdict_with_expected_digests_ignores_rewritten_and_unlisted_reports(
    tmp_path: Path, docs_lanes: tuple[Path, dict[str, Result]]
) -> None:
    shared, lanes = docs_lanes
    repo = copy_repo(shared, tmp_path)
    digests = {}
    for lane in LANES:
        last = lanes[lane].out.strip().splitlines()[-1]
        digests[lane] = last.rsplit("sha256=", 1)[1]
    expect = [f"--expect={k}={v}" for k, v in digests.items()]
    assert cli(repo, "verdict", "--base", "main", *expect).code == 0
    # What the tested code might do between a lane and the verdict: rewrite a report.
    path = repo / ".patchjudge" / "fixtures.json"
    path.write_text(path.read_text().replace('"pass"', '"pass" '))
    rewritten = cli(repo, "verdict", "--base", "main", *expect)
    assert rewritten.code == 1
    assert "fixtures: report unreadable: fixtures.json changed after the lane wrote it" in reasons(
        repo
    )
    # A lane nox skipped printed no digest: missing, whatever lies on disk.
    unlisted = cli(repo, "verdict", "--base", "main", "--only-expected", *expect[:2])
    assert unlisted.code == 1
    assert "freeze: report missing: the lane did not run" in reasons(repo)


def test_the_judge_tree_replaced_by_a_file_is_rejected_not_a_crash(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    git(repo, "rm", "-rq", "eval")
    write(repo, {"eval": "not a directory any more\n"})
    commit(repo)
    result = gate(repo)
    assert_reject(repo, result, "protected path changed: eval/gate.toml (deleted)")
    assert "pathfilter: unmapped path: eval (extend [map] in eval/gate.toml)" in reasons(repo)
    assert not any("crashed" in r for r in reasons(repo))


UNITTEST_PROPERTY = """
import unittest

from hypothesis import given
from hypothesis import strategies as st

from calc import total


class TotalProperties(unittest.TestCase):
    @given(st.lists(st.integers(min_value=0, max_value=9)))
    def test_never_negative(self, xs):
        self.assertGreaterEqual(total(xs), 0)
        if total(xs) < 0:
            raise AssertionError(xs)
"""


def test_unittest_style_properties_count_as_run(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/properties/test_unit.py": UNITTEST_PROPERTY})
    patch(repo, {"src/calc/__init__.py": "def total(xs):\n    return sum(xs) + 0\n"})
    result = gate(repo)
    assert result.code == 0, result.out
    passed = result.report(repo, "properties")["details"]["passed"]
    assert "eval/properties/test_unit.py::TotalProperties::test_never_negative" in passed


def test_audit_judge_shares_the_nothing_to_judge_guard(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    same = cli(repo, "audit-judge", "--base", "main")
    assert same.code == 2 and "nothing to judge" in same.err and "--base" in same.err
