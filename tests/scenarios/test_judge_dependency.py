"""issue 19: a tree that provides a module the judge's pytest keeps its own copy of.

pluggy and iniconfig are handed to the tree's tests in any venv
(test_real_projects.py); pytest, hypothesis and coverage are one copy a
process, the runner's. Without --python such a project's suite says nothing of
the tree's copy: the verdict holds (undecided) and says why, and init says how
it is judged for real.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli, commit, example_repo, gate, init_repo, verdict, write
from tests.init_helpers import spec, src_project

# A project's own module under a name the judge's runner keeps (as a monorepo vendors it).
OWN_COVERAGE = (
    '"""Coverage ratios, the project\'s own."""\n\n__all__ = ["ratio"]\n\n\n'
    "def ratio(hit, total):\n    return hit / total if total else 1.0\n"
)
SAID = "the tree provides coverage, which the judge's pytest runs on"


def test_without_python_a_suite_on_the_runners_copy_holds_the_merge_and_says_why(
    tmp_path: Path, lane_venv: Path
) -> None:
    repo = example_repo(tmp_path, **{"src/coverage/__init__.py": OWN_COVERAGE})
    write(repo, {"src/calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"})
    commit(repo)
    result = gate(repo)
    found = verdict(repo)
    assert (result.code, found["verdict"]) == (3, "undecided"), found
    (reason,) = found["reasons"]
    assert reason.startswith(f"review: {SAID}") and "--python" in reason, reason
    md = (repo / ".patchjudge" / "verdict.md").read_text()
    assert SAID in md, md
    assert result.err.count(SAID) == 1, result.err
    # With the code's own venv the suite imports what that venv holds: nothing held.
    result = gate(repo, "--python", str(lane_venv))
    assert (result.code, verdict(repo)["verdict"]) == (0, "accept_for_review"), verdict(repo)
    assert SAID not in result.err, result.err


def test_init_says_how_a_project_the_runner_keeps_is_judged_for_real(
    tmp_path: Path, judge_wheel: Path
) -> None:
    repo = src_project(tmp_path / "tally")
    write(repo, {"src/coverage/__init__.py": OWN_COVERAGE})
    commit(repo, "a coverage module of its own")
    result = cli(repo, "init", "--base", "main", *spec(judge_wheel))
    assert result.code == 0, result.err
    (said,) = [line for line in result.out.splitlines() if line.startswith("coverage: ")]
    assert "--python VENV/bin/python" in said and "nox -s gate" in said, said
    step = "3. on a patch branch: nox -s gate -- --base main"
    assert f"{step}   (or: patchjudge gate --base main --python VENV/bin/python)" in result.out


def test_init_offers_the_plain_cli_where_the_tree_owns_what_it_provides(
    tmp_path: Path, judge_wheel: Path
) -> None:
    # packaging's (or pluggy's) tree is its tests' own in the judge's venv too.
    repo = init_repo(
        tmp_path / "versions",
        {
            "src/packaging/__init__.py": '__all__ = ["newest"]\n\n\ndef newest(xs):\n    return max(xs)\n',
            "tests/test_newest.py": (
                "from packaging import newest\n\n\ndef test_newest():\n    assert newest([1, 2]) == 2\n"
            ),
        },
    )
    result = cli(repo, "init", "--base", "main", *spec(judge_wheel))
    assert result.code == 0, result.err
    assert "(or: patchjudge gate --base main)" in result.out, result.out
    assert "--python" not in result.out, result.out
