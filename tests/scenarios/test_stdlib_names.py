"""A tree with modules named like the standard library's is judged out of process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import commit, example_repo, gate, verdict, write

STDLIB_NAMED = {f"src/{m}.py": "OK = True\n" for m in ("json", "re", "inspect", "traceback")}


@pytest.mark.parametrize(
    ("total", "decision"),
    # Sound: no lane fails; the four modules no property imports hold the merge as
    # never exercised (issue 18), which also says the worker never imported them.
    [("sum(xs)", "undecided"), ("-1", "reject")],
    ids=["sound", "broken"],
)
def test_stdlib_named_modules_in_the_tree_do_not_reach_the_judge(
    tmp_path: Path, total: str, decision: str
) -> None:
    repo = example_repo(tmp_path)
    write(repo, {**STDLIB_NAMED, "src/calc/__init__.py": f"def total(xs):\n    return {total}\n"})
    commit(repo, "modules named like the stdlib's beside calc")
    gate(repo)
    doc = verdict(repo)
    assert doc["verdict"] == decision, doc["reasons"]
    if decision == "undecided":
        never = ", ".join(f"src/{m}.py:1" for m in ("inspect", "json", "re", "traceback"))
        assert doc["reasons"] == [f"review: the properties never exercised {never}"], doc
    if decision == "reject":
        # The properties and the visible suite (issue 19) fail on the code, nothing else.
        said = ("properties: property failed: ", "freeze: suite: 2 failed: tests/test_calc.py::")
        assert all(r.startswith(said) for r in doc["reasons"]), doc["reasons"]
        assert any(r.startswith(said[1]) for r in doc["reasons"]), doc
