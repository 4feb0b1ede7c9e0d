"""Blind dunders of classes from outside the tree, read from their source (redteam9)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from patchjudge import codeenv
from patchjudge.lanes import properties

MATCHERS = """
class Always:
    def __eq__(self, other):
        return True


class Honest:
    def __eq__(self, other):
        return other == 1
"""


def _run(site: Path) -> Any:
    return cast(Any, SimpleNamespace(code=codeenv.CodeEnv(python="py", site=(site,))))


def test_a_class_in_the_codes_site_packages_is_read_not_imported(tmp_path: Path) -> None:
    (tmp_path / "matchers").mkdir()
    (tmp_path / "matchers" / "__init__.py").write_text(MATCHERS)
    # Importing it would fail: it is only ever read.
    (tmp_path / "boom.py").write_text(
        "raise SystemExit('imported')\nclass B:\n    __lt__ = lambda s, o: 1\n"
    )
    found = properties._installed_blind(
        ["matchers.Always", "matchers.Honest", "boom.B", "unittest.mock._ANY", "nowhere.X"],
        _run(tmp_path),
    )
    assert found == {
        "matchers.Always": frozenset({"__eq__"}),
        "boom.B": frozenset({"__lt__"}),
        # The judge's standard library.
        "unittest.mock._ANY": frozenset({"__eq__", "__ne__"}),
    }


def test_a_claim_that_is_no_dotted_name_reads_no_file(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text(MATCHERS)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "y.py").write_text(MATCHERS)
    site = tmp_path / "site"
    site.mkdir()
    claims = ["..x.Always", "/" + str(outside / "y").lstrip("/") + ".Always", "x/../x.Always"]
    assert properties._installed_blind(claims, _run(site)) == {}


def test_a_module_too_large_to_be_a_matcher_is_not_read(tmp_path: Path, monkeypatch: Any) -> None:
    # The code's venv holds the head's build: a file of gigabytes there must not be read.
    (tmp_path / "big.py").write_text(MATCHERS)
    monkeypatch.setattr(properties, "_SOURCE_CAP", len(MATCHERS) - 1)
    assert properties._installed_blind(["big.Always"], _run(tmp_path)) == {}
    monkeypatch.setattr(properties, "_SOURCE_CAP", len(MATCHERS))
    assert properties._installed_blind(["big.Always"], _run(tmp_path)) == {
        "big.Always": frozenset({"__eq__"})
    }
