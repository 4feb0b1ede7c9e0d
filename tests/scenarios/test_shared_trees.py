"""Lanes share what each revision's tree is made of, never what tested code writes (issue 12)."""

from __future__ import annotations

from pathlib import Path

from bench.scale import data_files

from tests.attack_helpers import BROKEN_CALC, attack, fast_ledger
from tests.helpers import CALC, commit, example_repo, gate, verdict, write

# The visible suite's conftest runs in pathfilter's collection of head. It
# plants a module next to the library and rewrites a tracked data file in
# place (the same inode, if trees shared one); where the tree is read-only
# to it (sandboxed), the write is refused and nothing changes either way.
PLANTING_CONFTEST = """
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
(ROOT / "src" / "calc" / "planted.py").write_text("PLANTED = True\\n")
try:
    with (ROOT / "data" / "shared.txt").open("r+") as fh:
        fh.write("WRITTEN\\n")
except PermissionError:
    pass
"""

# The judge's property, read from the base: it runs in the properties lane,
# after pathfilter, against a tree that must hold neither write.
ISOLATION_PROPERTY = """
from pathlib import Path

import calc


def test_no_file_from_another_lane():
    package = Path(calc.__file__).resolve().parent
    assert not (package / "planted.py").exists(), "a file pathfilter's tests wrote"
    shared = package.parent.parent / "data" / "shared.txt"
    assert shared.read_text() == "pristine\\n", "a tracked file pathfilter's tests rewrote"
    assert calc.total([1, 2]) == 3
"""

# The visible suite at head proves the conftest ran in pathfilter's own tree:
# its collection fails if the planted module is not there.
VISIBLE_AT_HEAD = """
from calc import planted, total


def test_planted_in_my_own_tree():
    assert planted.PLANTED


def test_empty():
    assert total([]) == 0


def test_two():
    assert total([1, 2]) == 3
"""


def test_a_file_one_lanes_tested_code_writes_reaches_no_later_lane(tmp_path: Path) -> None:
    judged = attack(
        tmp_path,
        {
            "tests/conftest.py": PLANTING_CONFTEST,
            "tests/test_calc.py": VISIBLE_AT_HEAD,
            "src/calc/__init__.py": CALC + "\n# touched: forces properties\n",
        },
        base={
            "data/shared.txt": "pristine\n",
            "eval/properties/test_isolation.py": ISOLATION_PROPERTY,
        },
    )
    assert judged.lane("pathfilter")["status"] == "pass", judged.explain()
    assert judged.lane("properties")["status"] == "pass", judged.explain()
    assert judged.decision == "accept_for_review", judged.explain()
    # Nor does it reach the user's checkout.
    assert not (judged.repo / "src" / "calc" / "planted.py").exists()
    assert (judged.repo / "data" / "shared.txt").read_text() == "pristine\n"


def test_the_property_sees_a_planted_file_when_the_tree_holds_one(tmp_path: Path) -> None:
    """The control: the same property fails when the planted module is in the head commit."""
    judged = attack(
        tmp_path,
        {"src/calc/planted.py": "PLANTED = True\n"},
        base={
            "data/shared.txt": "pristine\n",
            "eval/properties/test_isolation.py": ISOLATION_PROPERTY,
        },
    )
    assert judged.says("property failed", "test_no_file_from_another_lane"), judged.explain()


DATA_FILES = 3000


def _large_repo(tmp_path: Path, patch: str) -> Path:
    ledger = fast_ledger().replace('"docs/**" = []', '"docs/**" = []\n"data/**" = []')
    # The bench's own builder of bulk files (bench/scale.py), a few thousand of them.
    data: dict[str, str | bytes | None] = dict(data_files(DATA_FILES, 64))
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger, **data})
    first = sorted(data)[0]
    write(repo, {"src/calc/__init__.py": patch, first: b"revised\n"})
    commit(repo, "a patch to the library and to one data file")
    return repo


def test_a_large_tree_is_judged_as_a_small_one(tmp_path: Path) -> None:
    good = _large_repo(tmp_path / "good", CALC + "\n# a comment\n")
    result = gate(good)
    doc = verdict(good)
    assert doc["verdict"] == "accept_for_review", (doc["reasons"], result.out, result.err)
    assert doc["lanes"]["properties"]["status"] == "pass"
    bad = _large_repo(tmp_path / "bad", BROKEN_CALC)
    gate(bad)
    doc = verdict(bad)
    assert doc["verdict"] == "reject"
    assert any("property failed" in r for r in doc["reasons"]), doc["reasons"]


# A library that rewrites a tracked data file of its own at import, in place (issue 17), as
# some do with a cache or a table they regenerate: in a checkout that works. It signs the
# file with its tree's root, so a write that reached another tree would name the wrong one.
SELF_REWRITING = (
    CALC
    + """
from pathlib import Path as _Path

_TABLE = _Path(__file__).with_name("table.txt")
SEEN = _TABLE.read_text()
ROOT = str(_Path(__file__).resolve().parents[2])
with _TABLE.open("w") as _fh:  # the same file, truncated and written
    _fh.write(f"pristine\\nrewritten in {ROOT}\\n")
"""
)

# Every lane imports the library in trees of its own, some more than once: what each import
# read is pristine, or this tree's own rewrite, never another tree's.
SEES_ITS_OWN_TABLE = """
from pathlib import Path

import calc


def test_the_table_is_this_trees_own():
    first, *rest = calc.SEEN.splitlines()
    assert first == "pristine"
    mine = f"rewritten in {calc.ROOT}"
    assert rest in ([], [mine]), f"another tree's write reached this one: {rest}"
    table = Path(calc.__file__).with_name("table.txt").read_text()
    assert table == f"pristine\\n{mine}\\n"
    assert calc.total([1, 2]) == 3
"""


def test_a_library_that_rewrites_its_own_tracked_file_is_accepted(tmp_path: Path) -> None:
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": SELF_REWRITING + "\n# patched\n"},
        base={
            "src/calc/__init__.py": SELF_REWRITING,
            "src/calc/table.txt": "pristine\n",
            "tests/test_table.py": SEES_ITS_OWN_TABLE,
            "eval/properties/test_table.py": SEES_ITS_OWN_TABLE,
        },
    )
    assert judged.decision == "accept_for_review", judged.explain()
    assert judged.lane("properties")["status"] == "pass", judged.explain()
    assert (judged.repo / "src" / "calc" / "table.txt").read_bytes() == b"pristine\n"
