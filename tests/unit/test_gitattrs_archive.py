"""What `git archive` applies: export-subst, export-ignore (red team, session 18, redteam14)."""

from __future__ import annotations

from pathlib import Path

from patchjudge import git, gitattrs
from tests.helpers import commit, init_repo, write


def test_archive_attributes_the_patch_turns_on_are_named_as_an_archives() -> None:
    off = {name: "unspecified" for name in gitattrs.CHECKED}
    head = {"src/a.py": {**off, "export-subst": "set"}, "src/native": {"export-ignore": "set"}}
    base = {"src/a.py": off, "src/native": {"export-ignore": "unspecified"}}
    found = gitattrs.problems(base, head)
    assert [f.split(": an archive's")[0] for f in found] == [
        "src/a.py: the patch's .gitattributes set export-subst",
        "src/native: the patch's .gitattributes set export-ignore",
    ], found
    # The base's own export-ignore stays the base's.
    assert gitattrs.problems(head, head) == []
    # On a directory's own path only export-ignore counts: a checkout applies `filter`
    # or `ident` to files, and a pattern naming the directory changes none of them.
    named = {"src/native": {**off, "filter": "lfs", "ident": "set"}}
    assert gitattrs.problems({}, named, frozenset({"src/native"})) == []
    assert len(gitattrs.problems({}, named)) == 2


def test_every_directory_of_a_path_is_checked_and_git_sees_export_ignore_only_there(
    tmp_path: Path,
) -> None:
    assert gitattrs.directories(["a/b/c.py", "a/d.py", "e.py"]) == ["a", "a/b"]
    repo = init_repo(tmp_path / "repo", {"src/native/x.py": "", "src/.gitattributes": ""})
    write(repo, {"src/.gitattributes": "native export-ignore\n"})
    head = commit(repo, "ignore native")
    files = git.checkout_attributes(repo, head, ["src/native/x.py"], ("export-ignore",))
    dirs = git.checkout_attributes(repo, head, ["src", "src/native"], ("export-ignore",))
    # A file under an ignored directory reads unspecified: the directory's own path tells.
    assert files == {"src/native/x.py": {"export-ignore": "unspecified"}}
    assert dirs["src/native"] == {"export-ignore": "set"}, dirs
