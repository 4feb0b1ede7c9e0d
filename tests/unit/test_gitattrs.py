"""Attributes that change a checkout's bytes (gitattrs, git.checkout_attributes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge import git, gitattrs
from tests.helpers import commit, init_repo, write

OFF = {"ident": "unspecified", "filter": "unspecified", "working-tree-encoding": "unspecified"}

# (base's attributes of the path, head's, the problems' attribute shown)
ROWS: dict[str, tuple[dict[str, str], dict[str, str], list[str]]] = {
    "nothing": (OFF, OFF, []),
    "ident turned on": (OFF, {**OFF, "ident": "set"}, ["set ident:"]),
    "a filter named": (OFF, {**OFF, "filter": "lfs"}, ["set filter=lfs:"]),
    "an encoding": (OFF, {**OFF, "working-tree-encoding": "UTF-16"}, ["working-tree-encoding=UTF-16"]),
    "the base's own filter": ({**OFF, "filter": "lfs"}, {**OFF, "filter": "lfs"}, []),
    "another filter than the base's": ({**OFF, "filter": "lfs"}, {**OFF, "filter": "x"}, ["filter=x"]),
    "turned off": ({**OFF, "ident": "set"}, {**OFF, "ident": "unset"}, []),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ROWS))
def test_only_what_the_patch_turns_on_counts(name: str) -> None:
    base, head, expected = ROWS[name]
    found = gitattrs.problems({"src/a.py": base}, {"src/a.py": head})
    assert len(found) == len(expected), found
    for got, want in zip(found, expected, strict=True):
        assert got.startswith("src/a.py: the patch's .gitattributes ") and want in got, got


def test_a_new_path_under_the_bases_pattern_is_the_bases() -> None:
    # The base has no such path: its attributes for the name are still what it says.
    assert gitattrs.problems({}, {"src/new.py": OFF}) == []
    assert gitattrs.problems({}, {"src/new.py": {**OFF, "ident": "set"}}) != []


def test_only_a_changed_attributes_file_asks_git() -> None:
    assert gitattrs.touches_attributes(["src/calc/.gitattributes"])
    assert gitattrs.touches_attributes([".gitattributes"])
    assert not gitattrs.touches_attributes(["src/calc/gitattributes.py", "docs/.gitattributes.md"])


def test_git_applies_the_revisions_own_files_macros_and_nesting(tmp_path: Path) -> None:
    repo = init_repo(
        tmp_path / "repo",
        {"src/a.py": "x = 1\n", ".gitattributes": "[attr]stamped ident\n", "README.md": "r\n"},
    )
    base = git.git(repo, "rev-parse", "HEAD").decode().strip()
    write(repo, {"src/.gitattributes": "*.py stamped\n"})
    commit(repo, "stamp")
    # The working tree is never read: an uncommitted attributes file changes nothing.
    write(repo, {".gitattributes": "[attr]stamped ident\n*.md filter=x\n"})
    names = gitattrs.BYTE_CHANGING
    head = git.checkout_attributes(repo, "HEAD", ["src/a.py", "README.md"], names)
    assert head["src/a.py"]["ident"] == "set"
    assert head["README.md"] == OFF
    before = git.checkout_attributes(repo, base, ["src/a.py"], names)
    assert before["src/a.py"]["ident"] == "unspecified"
    assert [p.split(":")[0] for p in gitattrs.problems(before, head)] == ["src/a.py"]
