"""Paths one file system would check out as one file (pathfold; red team, session 18)."""

from __future__ import annotations

import unicodedata

import pytest

from patchjudge import pathfold

HEAD = ["src/calc/__init__.py", "src/k.py", "docs/caf\u00e9.md"]

# (the path the patch adds, the head path it is one file with, or None)
ROWS: dict[str, tuple[str, str | None]] = {
    "case only": ("SRC/calc/__init__.py", "src/calc/__init__.py"),
    "dotless i (NTFS upcases it to I)": ("src/calc/__\u0131nit__.py", "src/calc/__init__.py"),
    "long s (NFKC)": ("\u017frc/calc/__init__.py", "src/calc/__init__.py"),
    "Kelvin sign": ("src/\u212a.py", "src/k.py"),
    "decomposed e acute (macOS normalises)": (unicodedata.normalize("NFD", "docs/CAF\u00e9.md"), "docs/caf\u00e9.md"),
    "another name": ("src/calc/_init.py", None),
    "the path itself": ("src/calc/__init__.py", None),
    "bytes that are no UTF-8": ("src/\udcff.py", None),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_new_path_that_folds_like_another_is_named_with_it(name: str) -> None:
    new, other = ROWS[name]
    found = pathfold.problems([*HEAD, new], [new])
    if other is None:
        assert found == [], found
    else:
        assert found == [
            f"{new}: one file with {other} on a case-insensitive file system (Windows, macOS):"
            " a clone there checks out one over the other; rename it"
        ], found


def test_a_collision_the_base_already_had_is_not_the_patchs() -> None:
    head = ["a.py", "A.py", "b.py"]
    assert pathfold.problems(head, ["b.py"]) == []
    assert pathfold.problems(head, []) == []
