"""What the properties said about the diff (issue 14), through the CLI on real repositories."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import LEDGER, cli, cli_env, commit, example_repo, gate, verdict, write

# A module no property imports: its changes are never executed by the properties.
SCALE = """
def scale(xs, k):
    return [x * k for x in xs]
"""

TOTAL_LOOP = """
def total(xs):
    result = 0
    for x in xs:
        result += x
    return result
"""

SCALE_BRANCHY = """
def scale(xs, k):
    if k == 1:
        return list(xs)
    return [x * k for x in xs]
"""


def ledger(**properties: object) -> str:
    """The scenario ledger with a few [properties] keys set (small, so the suite stays fast)."""
    settings = {"max_examples": 10, **properties}
    text = LEDGER.replace("max_examples = 50\n", "").replace("review_mutants = 2\n", "")
    extra = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in settings.items())
    return text.replace("[properties]\n", f"[properties]\n{extra}")


def repo_with(tmp_path: Path, **properties: object) -> Path:
    return example_repo(
        tmp_path, **{"eval/gate.toml": ledger(**properties), "src/calc/extra.py": SCALE}
    )


def properties(repo: Path) -> dict:  # type: ignore[type-arg]
    result = cli(repo, "properties", "--base", "main")
    assert result.code in (0, 1), result
    return result.report(repo, "properties")


def test_a_refactor_the_properties_run_is_executed_and_its_mutants_killed(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, review_mutants=3, min_changed_lines_executed=1.0)
    write(repo, {"src/calc/__init__.py": TOTAL_LOOP})
    commit(repo, "total as a loop")
    report = properties(repo)
    assert report["status"] == "pass", report
    details = report["details"]
    assert details["changed_lines"] == {"executed": 4, "total": 4, "unexecuted": []}
    # One mutant a statement (result = 1, dropped +=, dropped return): each breaks the sum.
    assert details["mutants"] == {"killed": 3, "total": 3, "not_tried": 0, "survivors": []}


def test_a_refactor_no_property_calls_is_never_executed_and_its_mutants_survive(
    tmp_path: Path,
) -> None:
    repo = repo_with(tmp_path, review_mutants=2)
    write(repo, {"src/calc/extra.py": SCALE_BRANCHY})
    commit(repo, "scale by one is a copy")
    report = properties(repo)
    assert report["status"] == "pass", report  # report only: the threshold is 0
    details = report["details"]
    # git's hunk: the two lines added above the unchanged `return`.
    assert details["changed_lines"] == {
        "executed": 0,
        "total": 2,
        "unexecuted": ["src/calc/extra.py:2-3"],
    }
    # One a statement, the strongest operator first; nothing ran them, nothing killed them.
    assert details["mutants"] == {
        "killed": 0,
        "total": 2,
        "not_tried": 0,
        "survivors": [
            "src/calc/extra.py:2: == -> !=",
            "src/calc/extra.py:3: dropped: return list(xs)",
        ],
    }


def test_the_threshold_fails_the_lane_with_the_ranges(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, review_mutants=3, min_changed_lines_executed=0.5)
    write(repo, {"src/calc/extra.py": SCALE_BRANCHY})
    commit(repo, "scale by one is a copy")
    result = gate(repo)
    assert result.code == 1, result
    why = "the properties never ran 2 of 2 changed lines: src/calc/extra.py:2-3"
    doc = verdict(repo)
    assert doc["verdict"] == "reject"
    assert doc["reasons"] == [f"properties: {why}"]
    props = doc["review"]["properties"]
    assert props["changed_lines"]["executed"] == 0
    assert props["mutants"] == "not tried: the properties lane failed on the patch as it is"
    md = (repo / ".patchjudge" / "verdict.md").read_text()
    assert "- changed lines executed: 0 of 2\n" in md
    assert "- never executed: src/calc/extra.py:2-3\n" in md


def test_a_diff_with_no_python_change_has_no_mutants(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    write(repo, {"src/calc/VERSION": "2\n", "README.md": "# calc 2\n"})
    commit(repo, "version 2")
    report = properties(repo)
    assert report["status"] == "pass", report
    assert report["details"]["changed_lines"] == {"executed": 0, "total": 0, "unexecuted": []}
    assert report["details"]["mutants"] == {
        "killed": 0,
        "total": 0,
        "not_tried": 0,
        "survivors": [],
    }


COUNTDOWN = """
def total(xs):
    return sum(xs)


def countdown(n):
    while n > 0:
        n -= 1
    return n
"""

COUNTDOWN_PROPERTY = """
from hypothesis import given, strategies as st

from calc import countdown


@given(st.integers(min_value=-5, max_value=5))
def test_countdown_ends_at_zero_or_below(n):
    result = countdown(n)
    assert result <= 0
    assert result == min(n, 0)
    assert isinstance(result, int)
"""


def test_mutants_past_the_budget_are_not_tried_never_killed(tmp_path: Path) -> None:
    base = COUNTDOWN.replace("while n > 0:", "while n >= 1:")
    repo = example_repo(
        tmp_path,
        **{
            "eval/gate.toml": ledger(review_mutants=1, review_timeout_s=1),
            "src/calc/__init__.py": base,
            "eval/properties/test_countdown.py": COUNTDOWN_PROPERTY,
        },
    )
    write(repo, {"src/calc/__init__.py": COUNTDOWN})
    commit(repo, "countdown while positive")
    report = properties(repo)
    assert report["status"] == "pass", report
    # The one mutant (> -> <=) loops for ever on n = 0: the 1 s budget cuts it off.
    assert report["details"]["mutants"] == {
        "killed": 0,
        "total": 1,
        "not_tried": 1,
        "survivors": [],
    }


def test_verdicts_are_byte_identical_over_two_runs(tmp_path: Path) -> None:
    # Two runs, not ten: temp paths, pids and times differ between any two runs; the
    # judge's hash seed (set order) is the rare difference, so each run gets its own.
    repo = repo_with(tmp_path, review_mutants=3, max_examples=5)
    judged = "def total(xs):\n    return sum(x for x in xs)\n"
    write(repo, {"src/calc/__init__.py": judged, "src/calc/extra.py": SCALE_BRANCHY})
    commit(repo, "a judged and an unjudged refactor")
    # The unjudged refactor holds the merge (issue 18): undecided, the same every run.
    first_env = cli_env(PYTHONHASHSEED="1")
    assert cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=first_env).code == 3
    assert verdict(repo)["reasons"] == [
        "review: the properties never exercised src/calc/extra.py:2-3"
    ]
    reports = repo / ".patchjudge"
    first = {
        name: (reports / name).read_bytes()
        for name in ("properties.json", "verdict.json", "verdict.md")
    }
    review = verdict(repo)["review"]["properties"]
    assert review["changed_lines"]["executed"] == 1 and review["changed_lines"]["total"] == 3
    # The executed line's two mutants first (killed), then one of the unexecuted (survives);
    # the generator's element is an arm, tried beyond the limit (red team, session 12): killed.
    assert review["mutants"]["killed"] == 3 and len(review["mutants"]["survivors"]) == 1
    env = cli_env(PYTHONHASHSEED="2")
    assert cli(repo, "properties", "--base", "main", env=env).code == 0
    assert cli(repo, "verdict", "--base", "main", env=env).code == 3
    again = {name: (reports / name).read_bytes() for name in first}
    assert again == first


# --- the patch is an adversary: it may not configure or replace the measurement ----

HIDDEN = """
def scale(xs, k):
    if k == 1:  # pragma: no cover
        return list(xs)  # pragma: no cover
    return [x * k for x in xs]
"""

COVERAGE_CONFIG = {
    ".coveragerc": "[run]\nomit = src/*\n[report]\nexclude_lines =\n    if k\n    return\n",
    "setup.cfg": "[coverage:run]\nomit = src/*\n",
    "tox.ini": "[coverage:run]\nomit = src/*\n",
    "pyproject.toml": '[tool.coverage.run]\nomit = ["src/*"]\n',
}


def test_the_patch_cannot_configure_the_measurement(tmp_path: Path) -> None:
    """Config files omitting its code, pragmas on its lines: both counted as they ran."""
    repo = repo_with(tmp_path, review_mutants=0)
    write(
        repo,
        {
            **COVERAGE_CONFIG,
            "src/calc/__init__.py": "def total(xs):\n    return sum(x for x in xs)\n",
            "src/calc/extra.py": HIDDEN,
        },
    )
    commit(repo, "hide the unjudged lines")
    report = properties(repo)
    assert report["status"] == "pass", report
    assert report["details"]["changed_lines"] == {
        "executed": 1,
        "total": 3,
        "unexecuted": ["src/calc/extra.py:2-3"],
    }
    assert report["details"]["mutants"] == "off: [properties] review_mutants = 0"


SHADOW_COVERAGE = {
    "src/coverage/__init__.py": "class Coverage:\n    pass\n",
    "src/calc/__init__.py": "def total(xs):\n    return sum(x for x in xs)\n",
}


def test_a_patch_that_brings_its_own_coverage_cannot_change_the_measurement(
    tmp_path: Path,
) -> None:
    # Out of process the worker imports the judge's coverage.py before the
    # tree is on sys.path: the patch's `coverage` is only code under test.
    repo = repo_with(tmp_path, review_mutants=0)
    write(repo, SHADOW_COVERAGE)
    commit(repo, "bring my own coverage")
    report = properties(repo)
    assert report["status"] == "pass", report
    assert report["details"]["changed_lines"]["executed"] >= 1, report["details"]


def test_in_process_a_patch_that_shadows_coverage_is_rejected(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, review_mutants=0, in_process=["eval/properties/test_total.py"])
    write(repo, SHADOW_COVERAGE)
    commit(repo, "bring my own coverage")
    report = properties(repo)
    assert report["status"] == "fail"
    assert any(
        r.endswith("the tested tree shadows a judge module: src/coverage")
        for r in report["reasons"]
    ), report["reasons"]


NOISY_TOTAL = """
def total(xs):
    label = "total"
    note = label + "!"
    return sum(xs)
"""


def test_executed_lines_whose_mutants_survive_are_shown_and_parallel_runs_keep_apart(
    tmp_path: Path,
) -> None:
    """Two mutants, both run, at the same time: neither run may disturb the other's fate."""
    repo = repo_with(tmp_path, review_mutants=2)
    write(repo, {"src/calc/__init__.py": NOISY_TOTAL})
    commit(repo, "total, labelled")
    report = properties(repo)
    assert report["status"] == "pass", report
    assert report["details"]["changed_lines"] == {"executed": 2, "total": 2, "unexecuted": []}
    # The labels change nothing the properties check: run, and survived.
    assert report["details"]["mutants"] == {
        "killed": 0,
        "total": 2,
        "not_tried": 0,
        "survivors": [
            "src/calc/__init__.py:2: 'total' -> ''",
            "src/calc/__init__.py:3: '!' -> ''",
        ],
    }
