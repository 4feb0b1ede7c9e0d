"""pathfilter's source comparison: the tests a file defines, read from its AST, as a table."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.lanes.pathfilter import defined_tests, source_problems, touched
from patchjudge.paths import Change

P = "tests/test_x.py"

SOURCES = [
    ("def test_a():\n    pass\n", {"test_a"}),
    ("async def test_a():\n    pass\ndef helper():\n    pass\n", {"test_a"}),
    (
        "class TestA:\n    def test_m(self):\n        pass\n    class TestB:\n"
        "        def test_n(self):\n            pass\n",
        {"TestA::test_m", "TestA::TestB::test_n"},
    ),
    ("class Helper:\n    def test_m(self):\n        pass\n", set()),
    ("import sys\nif sys.platform:\n    def test_a():\n        pass\nelse:\n"
     "    def test_b():\n        pass\n", {"test_a", "test_b"}),
    ("try:\n    import x\nexcept ImportError:\n    def test_a():\n        pass\n", {"test_a"}),
    ("test_a = make_test()\nTestCase: type = build()\n", {"test_a", "TestCase"}),
    ("from other import test_shared\n", {"test_shared"}),
    ("def test_a(:\n", set()),
]  # fmt: skip


@pytest.mark.parametrize(("source", "names"), SOURCES)
def test_defined_tests(source: str, names: set[str]) -> None:
    assert defined_tests(P, source.encode()) == {f"{P}::{n}" for n in names}


def test_a_gone_file_defines_nothing() -> None:
    assert defined_tests(P, None) == frozenset()


A, B = f"{P}::test_a", f"{P}::test_b"

PROBLEMS = [
    # (base collected, head collected, base defined, head defined, problems)
    ([A, B], [A, B], {A, B}, {A, B}, []),
    # Deleted from source and from the collection: the node-id rule reports it, not this.
    ([A, B], [A], {A, B}, {A}, []),
    # Deleted from source but still collected: a forged collection.
    ([A, B], [A, B], {A, B}, {A}, [f"visible test deleted from source but still collected: {B}"]),
    # Parametrize ids aside.
    ([f"{A}[1]", f"{A}[2]"], [f"{A}[1]"], {A}, set(),
     [f"visible test deleted from source but still collected: {A}"]),
    # Not defined at base in a form the AST sees (inherited, generated): nothing to compare.
    ([A], [A], set(), set(), []),
    # Moved to another file: gone by node id, which surface_problems already says.
    ([A], ["tests/test_y.py::test_a"], {A}, {"tests/test_y.py::test_a"}, []),
]  # fmt: skip


@pytest.mark.parametrize(("base", "head", "base_def", "head_def", "problems"), PROBLEMS)
def test_source_problems(
    base: list[str], head: list[str], base_def: set[str], head_def: set[str], problems: list[str]
) -> None:
    assert source_problems(base, head, base_def, head_def) == problems


@pytest.mark.parametrize(
    ("shadowed", "copies"),
    [
        # issue 19: what the runner hands to the tree's tests is the tree's own there
        (["src/iniconfig"], []),
        (["src/pluggy", "src/inspect.py", "lib/json"], []),  # the stdlib's stay theirs
        (["attr.py", "src/attr"], []),
        # what the runner keeps (one copy a process) is the judge's without --python
        (["src/pytest", "src/_pytest", "src/pluggy"], ["_pytest", "pytest"]),
        (["hypothesis-python/src/hypothesis", "coverage"], ["coverage", "hypothesis"]),
        (["src/patchjudge"], []),  # a tree that is patchjudge gets its own (configure)
        ([], []),
    ],
)
def test_the_judges_copies_a_tree_provides(shadowed: list[str], copies: list[str]) -> None:
    from patchjudge.lanes.pathfilter import judges_copies

    assert judges_copies(shadowed) == copies


def _change(status: str, old: str | None, new: str | None) -> Change:
    return Change(status, "100644", "100644", old, new)


def test_only_the_files_a_patch_names_are_read_from_source() -> None:
    files = {"tests/test_a.py", "tests/test_b.py", "tests/test_c.py", "tests/test_d.py"}
    changes = [
        _change("M", "tests/test_a.py", "tests/test_a.py"),
        _change("R100", "tests/test_b.py", "tests/test_moved.py"),  # renamed away: its old name
        _change("D", "tests/test_c.py", None),
        _change("A", None, "tests/test_new.py"),
    ]
    assert touched(files, changes) == {"tests/test_a.py", "tests/test_b.py", "tests/test_c.py"}
    assert touched(files, []) == set()


_FILES = st.sampled_from(["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"])
_IDS = st.builds(lambda f, n: f"{f}::test_{n}", _FILES, st.sampled_from("xyz"))


@given(
    base=st.lists(_IDS, max_size=6),
    head=st.lists(_IDS, max_size=6),
    base_def=st.sets(_IDS, max_size=6),
    head_def=st.sets(_IDS, max_size=6),
    changed=st.sets(_FILES),
)
def test_an_unchanged_file_never_holds_a_test_deleted_from_source(
    base: list[str],
    head: list[str],
    base_def: set[str],
    head_def: set[str],
    changed: set[str],
) -> None:
    """Reading only the changed files says what reading every file says (issue 20)."""
    # A file the patch did not change defines at head what it defined at base.
    head_def = {n for n in head_def if _file(n) in changed} | {
        n for n in base_def if _file(n) not in changed
    }
    changes = [_change("M", f, f) for f in sorted(changed)]
    files = {_file(n) for n in base}
    read = touched(files, changes)
    narrowed = source_problems(
        base,
        head,
        {n for n in base_def if _file(n) in read},
        {n for n in head_def if _file(n) in read},
    )
    assert narrowed == source_problems(base, head, base_def, head_def)


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]
