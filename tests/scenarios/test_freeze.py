"""The freeze lane end to end: real repos, real flaky tests, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.flaky_helpers import code_flaky_module, flaky_calc, flaky_module, freeze_row, registry
from tests.helpers import LEDGER, cli, commit, example_repo, gate, verdict, write

FROZEN = "tests/test_clock.py::test_clock"
TODAY = "2026-12-01"


def _repo(
    tmp_path: Path,
    *rows: str,
    ledger: str = LEDGER,
    extra: dict[str, str | bytes | None] | None = None,
) -> Path:
    """Example project whose tests/test_clock.py fails 3 of 12 runs through calc."""
    counters = tmp_path / "counters"
    return example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": flaky_calc(3, 12),
            "tests/test_clock.py": code_flaky_module(counters),
            "eval/flakes.freeze.toml": registry(*(rows or (freeze_row(FROZEN),))),
            "eval/gate.toml": ledger,
            **(extra or {}),
        },
    )


def _freeze(repo: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = cli(repo, "freeze", "--base", "main", "--today", TODAY, *args)
    assert result.code in (0, 1), result.err
    return result.code, result.report(repo, "freeze")


def _touch_src(repo: Path) -> None:
    text = (repo / "src/calc/__init__.py").read_text()
    write(repo, {"src/calc/__init__.py": text + "\n# a harmless edit\n"})
    commit(repo, "touch the code")


def test_still_flaky_under_the_patch_is_skipped_by_freeze(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _touch_src(repo)
    code, report = _freeze(repo)
    assert code == 0, report["reasons"]
    details = report["details"]
    assert details["skipped_by_freeze"] == [FROZEN]
    assert details["rerun_results"] == {FROZEN: {"fail": 3, "runs": 12}}
    assert details["frozen"][0]["nodeid"] == FROZEN
    assert details["frozen"][0]["expires"] == "2026-12-08"


def test_frozen_test_made_green_by_editing_the_test_rejects(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(repo, {"tests/test_clock.py": "def test_clock():\n    assert True\n"})
    commit(repo, "fix the flaky test by making it assert nothing")
    code, report = _freeze(repo)
    assert code == 1
    assert report["reasons"] == [
        f"frozen test turned green: {FROZEN}: 0/12 failed, registry evidence 3/12; "
        "only a human graduates it"
    ]


def test_frozen_test_made_green_by_the_code_under_test_rejects(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before = (repo / "tests/test_clock.py").read_bytes()
    write(repo, {"src/calc/__init__.py": flaky_calc(0, 12)})
    commit(repo, "make the clock never race")
    assert (repo / "tests/test_clock.py").read_bytes() == before
    code, report = _freeze(repo)
    assert code == 1
    assert "frozen test turned green" in report["reasons"][0]
    assert report["details"]["rerun_results"] == {FROZEN: {"fail": 0, "runs": 12}}


def test_a_conftest_in_the_suite_that_hides_the_failure_rejects(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    # A suite conftest loads (it is test code); what it does to the test counts.
    write(
        repo,
        {
            "tests/conftest.py": """
            import calc

            calc.clock_ok = lambda run_index: True
            """
        },
    )
    commit(repo, "patch the clock from a conftest")
    code, report = _freeze(repo)
    assert code == 1
    assert "frozen test turned green" in report["reasons"][0]


def test_an_expired_row_rejects_on_every_patch(tmp_path: Path) -> None:
    repo = _repo(tmp_path, freeze_row(FROZEN, created="2026-11-10", expires="2026-11-24"))
    write(repo, {"docs/notes.md": "nothing that forces freeze\n"})
    commit(repo, "docs only")
    code, report = _freeze(repo)
    assert code == 1
    assert report["reasons"] == [f"freeze[0] {FROZEN}: expired on 2026-11-24 (today is {TODAY})"]
    assert report["details"]["reruns"].startswith("not forced")


def test_a_row_whose_required_property_breaks_rejects(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(
        repo,
        {"src/calc/__init__.py": flaky_calc(3, 12).replace("return sum(xs)", "return sum(xs) - 1")},
    )
    commit(repo, "break the property the freeze relies on")
    code, report = _freeze(repo)
    assert code == 1
    assert (
        "required property failed: eval/properties/test_total.py::test_total_never_negative"
        in report["reasons"]
    )
    # the frozen test itself is still flaky: that part is fine
    assert report["details"]["skipped_by_freeze"] == [FROZEN]


def test_each_audit_rule_through_the_cli(tmp_path: Path) -> None:
    rows = [
        freeze_row("tests/test_calc.py::test_empty", owner=""),
        freeze_row("tests/test_calc.py::test_two", fail_count=1, runs=0),
        freeze_row("eval/properties/test_total.py::test_total_matches_sum"),
        freeze_row(FROZEN, required=("eval/properties/test_total.py::test_nothing",)),
        freeze_row("tests/test_calc.py::test_three", required=()),
        freeze_row("tests/test_calc.py::test_four", created="2026-11-01"),
    ]
    repo = _repo(tmp_path, *rows)
    write(repo, {"docs/notes.md": "x\n"})
    commit(repo, "docs only")
    code, report = _freeze(repo)
    assert code == 1
    assert report["reasons"] == [
        "freeze[0] tests/test_calc.py::test_empty: no owner",
        "freeze[1] tests/test_calc.py::test_two: fail_count 1 < min_fail_count 2: "
        "not enough evidence of flakiness",
        "freeze[1] tests/test_calc.py::test_two: runs 0 < fail_count 1",
        "freeze[2] eval/properties/test_total.py::test_total_matches_sum: "
        "a property test may not be frozen",
        f"freeze[3] {FROZEN}: required property "
        "eval/properties/test_total.py::test_nothing does not exist",
        "freeze[4] tests/test_calc.py::test_three: required_properties is empty: "
        "a freeze must leave a property on",
        "freeze[5] tests/test_calc.py::test_four: expires 37 days after created (max_age_days 14)",
    ]


def test_a_frozen_node_id_that_no_longer_exists_fails(tmp_path: Path) -> None:
    repo = _repo(tmp_path, freeze_row(FROZEN), freeze_row("tests/test_gone.py::test_gone"))
    _touch_src(repo)
    code, report = _freeze(repo)
    assert code == 1
    assert report["reasons"] == ["frozen node id no longer exists: tests/test_gone.py::test_gone"]


def test_a_malformed_row_is_exit_2_naming_row_and_key(tmp_path: Path) -> None:
    bad = freeze_row(FROZEN).replace("fail_count = 3", 'fail_count = "three"')
    repo = _repo(tmp_path, bad)
    _touch_src(repo)
    result = cli(repo, "freeze", "--base", "main", "--today", TODAY)
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert f"freeze[0] ({FROZEN})" in result.err
    assert "fail_count" in result.err


def test_the_registry_is_read_from_the_merge_base(tmp_path: Path) -> None:
    repo = _repo(tmp_path, freeze_row(FROZEN, created="2026-11-10", expires="2026-11-24"))
    # The patch "renews" its own freeze: the judge never reads it.
    write(repo, {"eval/flakes.freeze.toml": registry(freeze_row(FROZEN))})
    commit(repo, "extend the freeze")
    code, report = _freeze(repo)
    assert code == 1
    assert report["reasons"][0].endswith("expired on 2026-11-24 (today is 2026-12-01)")


def test_gate_accepts_a_still_flaky_frozen_test_and_reviews_the_freeze(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _touch_src(repo)
    result = gate(repo)
    assert result.code == 0, result.out
    doc = verdict(repo)
    assert doc["verdict"] == "accept_for_review"
    assert doc["review"]["freeze"] == [{"nodeid": FROZEN, "expires": "2026-12-08"}]


def test_frozen_reruns_count_a_unittest_case_every_rerun(tmp_path: Path) -> None:
    """pytest-repeat does not repeat a TestCase: further runs must make up the count."""
    counters = tmp_path / "counters"
    nodeid = "tests/test_units.py::TestFlaky::test_tick"
    # reruns = 4 keeps it quick: each further run is a pytest process
    repo = _repo(
        tmp_path,
        freeze_row(nodeid),
        # test_clock fails its first run: frozen too, or the visible suite fails (issue 19).
        freeze_row(FROZEN),
        ledger=LEDGER + "\n[freeze]\nreruns = 4\n",
        extra={"tests/test_units.py": flaky_module(counters, {"test_tick": (2, 12)}, "unittest")},
    )
    _touch_src(repo)
    code, report = _freeze(repo)
    assert code == 0, report["reasons"]
    assert report["details"]["rerun_results"][nodeid] == {"fail": 2, "runs": 4}
    assert report["details"]["reruns"] == 4


def test_audit_judge_flags_a_silent_extension_and_a_lock_without_its_fixture(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    lock = json.loads((repo / "eval/fixtures.lock.json").read_text())
    lock["files"]["tests/fixtures/order.json"] = "0" * 64
    write(
        repo,
        {
            "eval/flakes.freeze.toml": registry(freeze_row(FROZEN, expires="2026-12-10")),
            "eval/fixtures.lock.json": json.dumps(lock),
        },
    )
    commit(repo, "extend the freeze and touch the lock")
    result = cli(repo, "audit-judge", "--base", "main")
    assert result.code == 1, result.err
    assert result.out.splitlines()[:2] == [
        f"flag: expiry moved later without new evidence: {FROZEN} "
        "(2026-12-08 -> 2026-12-10; fail_count/runs still 3/12)",
        "flag: lock entry changed with no matching fixture change: tests/fixtures/order.json",
    ]


def test_audit_judge_passes_a_graduation_and_shows_it_for_review(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write(repo, {"eval/flakes.freeze.toml": registry()})
    commit(repo, "graduate the clock test")
    result = cli(repo, "audit-judge", "--base", "main")
    assert result.code == 0, result.err
    assert result.out.startswith(f"review: graduation: {FROZEN} unfrozen (evidence was 3/12)")
    assert cli(repo, "audit-judge").code == 2
