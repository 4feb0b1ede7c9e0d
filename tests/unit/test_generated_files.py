"""issue 19: which generated files a pyproject.toml declares, and which the judge makes."""

from __future__ import annotations

import pytest

from patchjudge.boxbuild import version_files
from patchjudge.versionfile import DEFAULT, code_in
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


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (DEFAULT.format(version="1.2.dev3", version_tuple=(1, 2, "dev3")), None),
        ("__version__ = version = '1.0'\n__version_tuple__ = (1, 0)\n", None),
        ('"""doc"""\nfrom __future__ import annotations\nVERSION: str = "1"\nX = -1\n', None),
        (
            "from typing import Tuple\nV = Tuple[int, ...]\nif not TYPE_CHECKING:\n    V = object\n",
            None,
        ),
        ("import sys\n__version__ = '1'\n", "line 1: an import"),
        ("from calc.core import total\n", "line 1: an import of calc.core"),
        ("__version__ = '1'\n\n\ndef total(xs):\n    return 0\n", "line 4: a def"),
        ("class V(str):\n    pass\n", "line 1: a class"),
        ("__version__ = str(1)\n", "line 1: a call"),
        ("m = sys.modules\n", "line 1: an attribute"),
        ("f = __import__\n", "line 1: the name __import__"),
        ("f = lambda: 0\n", "line 1: a lambda"),
        ("V = [x for x in ()]\n", "line 1: ListComp"),
        ("if len(()):\n    V = 1\n", "line 1: a call"),
        ("if True:\n    import os\n", "line 2: an import"),
        ("V = {'a': 1}\n", "line 1: Dict"),
        ("print('x')\n", "line 1: a call"),
        ("x.y = 1\n", "line 1: an assignment to Attribute"),
        ("for x in ():\n    pass\n", "line 1: For"),
        ("def (\n", "line 1: does not parse"),
    ],
)
def test_a_generated_file_holds_data_only(source: str, expected: str | None) -> None:
    assert code_in(source.encode()) == expected
