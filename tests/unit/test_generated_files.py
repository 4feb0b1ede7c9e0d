"""issue 19: which generated files a pyproject.toml declares, and which the judge makes."""

from __future__ import annotations

import pytest

from patchjudge.boxbuild import version_files
from patchjudge.workspace import generated_wanted


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({}, ()),
        ({"tool": {"setuptools_scm": {}}}, ()),
        ({"tool": {"setuptools_scm": {"write_to": "src/a/_version.py"}}}, ("src/a/_version.py",)),
        ({"tool": {"setuptools_scm": {"version_file": "a/v.py"}}}, ("a/v.py",)),
        (
            {"tool": {"setuptools_scm": {"write_to": "a/v.py", "version_file": "a/v.py"}}},
            ("a/v.py",),
        ),
        (
            {"tool": {"hatch": {"build": {"hooks": {"vcs": {"version-file": "a/_v.py"}}}}}},
            ("a/_v.py",),
        ),
        ({"tool": {"setuptools_scm": {"write_to": 3}}}, ()),
        ({"tool": "nonsense"}, ()),
    ],
)
def test_version_files(doc: dict[str, object], expected: tuple[str, ...]) -> None:
    assert version_files(doc) == expected


def _pyproject(path: str) -> bytes:
    return f'[tool.setuptools_scm]\nwrite_to = "{path}"\n'.encode()


@pytest.mark.parametrize(
    ("pyproject", "tracked", "expected"),
    [
        (None, set(), []),
        (b"[project]\nname = 'x'\n", set(), []),
        (_pyproject("src/a/_version.py"), {"src/a/__init__.py"}, ["src/a/_version.py"]),
        # Tracked already: the tree's own file stays.
        (_pyproject("src/a/_version.py"), {"src/a/_version.py"}, []),
        # Not Python, outside the tree, unnormalised, or a judge path: never written.
        (_pyproject("src/a/VERSION"), set(), []),
        (_pyproject("../a/_version.py"), set(), []),
        (_pyproject("/etc/_version.py"), set(), []),
        (_pyproject("src/./a/_version.py"), set(), []),
        (_pyproject("eval/properties/test_forged.py"), set(), []),
        (b"write_to = [not toml", set(), []),
    ],
)
def test_generated_wanted(pyproject: bytes | None, tracked: set[str], expected: list[str]) -> None:
    assert generated_wanted(pyproject, tracked, ["eval/**"]) == expected
