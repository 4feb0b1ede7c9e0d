"""issue 19: a dirty working tree is judged at HEAD, and the gate says so in one line."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import commit, example_repo, gate, git, run_lane, verdict, write

BENIGN = {"src/calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"}


def _dirty_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "uncommitted" in line]


def test_uncommitted_changes_are_named_and_not_judged(tmp_path: Path) -> None:
    """The gate judges commits: uncommitted edits and untracked files are not read or touched."""
    repo = example_repo(tmp_path)
    write(repo, BENIGN)
    head = commit(repo, "benign")
    # A broken edit, an edited judge file, a new module that would exit and a new file:
    # none is the patch (test_robustness.py's dirty tree, merged here).
    dirty = {
        "src/calc/__init__.py": "def total(xs):\n    return -1\n",
        "eval/gate.toml": "# edited, not committed\n",
        "src/calc/untracked.py": "raise SystemExit(9)\n",
        "notes.txt": "x\n",
    }
    write(repo, dirty)
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert _dirty_lines(result.err) == [
        f"patchjudge: judging HEAD {head[:12]}; 4 uncommitted changes are not judged"
    ]
    assert verdict(repo)["head"] == head and verdict(repo)["verdict"] == "accept_for_review"
    # The checkout is left as it was.
    for path, content in dirty.items():
        assert (repo / path).read_text() == content, path


def test_a_clean_tree_says_nothing_even_with_the_reports_beside_it(tmp_path: Path) -> None:
    """The honest look-alike: the gate's own .patchjudge/ is no uncommitted change.

    The second run is one lane: every lane and the gate read the tree in the same
    place (workspace.open_run), and a lane costs a fraction of a gate.
    """
    repo = example_repo(tmp_path)
    write(repo, BENIGN)
    commit(repo, "benign")
    first = gate(repo)
    assert first.code == 0, first.out + first.err
    assert (repo / ".patchjudge" / "verdict.json").is_file()
    assert git(repo, "status", "--porcelain").startswith("?? .patchjudge/")
    second = run_lane(repo, "pathfilter")
    assert second.code == 0, second.out + second.err
    assert _dirty_lines(first.err) == [] and _dirty_lines(second.err) == []


def test_a_named_head_says_nothing_of_the_working_tree(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, BENIGN)
    head = commit(repo, "benign")
    write(repo, {"notes.txt": "x\n"})
    # One lane, as above: the named head is read where the gate reads it.
    result = run_lane(repo, "pathfilter", "--head", head)
    assert result.code == 0, result.out + result.err
    assert _dirty_lines(result.err) == []
