"""What a built wheel may not bring into the judge's venv (boxbuild.wheel_problems)."""

from __future__ import annotations

import pytest

from patchjudge.boxbuild import wheel_problems

INSTALLED = {"pytest": "pytest", "_pytest": "pytest", "shop": "shop", "shop-cli": "shop"}
JUDGE = {"pytest", "pip"}
INFO = "shop-1.0.dist-info/METADATA"


@pytest.mark.parametrize(
    ("members", "scripts", "expected"),
    [
        (["shop/__init__.py", INFO], set(), []),
        # A rebuild of itself (nox -R) replaces its own package and command.
        (["shop/__init__.py", INFO], {"shop-cli"}, []),
        (["shop/__init__.py", "shop-1.0.data/purelib/extra.py", INFO], set(), []),
        (["zz.pth", INFO], set(), ["runs at every interpreter start: zz.pth"]),
        (
            ["shop-1.0.data/platlib/usercustomize.py", INFO],
            set(),
            ["runs at every interpreter start: shop-1.0.data/platlib/usercustomize.py"],
        ),
        (
            ["_pytest/x.py", INFO],
            set(),
            ["would replace _pytest, installed by pytest: _pytest/x.py"],
        ),
        (
            ["shop-1.0.data/headers/x.h", INFO],
            set(),
            ["installs headers files outside its package: shop-1.0.data/headers/x.h"],
        ),
        ([INFO], {"pytest"}, ["installs a command the venv has: pytest"]),
        (
            ["pytest/__init__.py", "pytest-9.0.dist-info/METADATA"],
            set(),
            ["would replace pytest, which the judge runs on"],
        ),
    ],
)
def test_wheel_problems(members: list[str], scripts: set[str], expected: list[str]) -> None:
    bin_names = {"pytest", "patchjudge", "shop-cli"}
    assert wheel_problems(members, scripts, INSTALLED, bin_names, JUDGE) == expected


# Red team, session 12 (second round): what the judge's pytest loads unasked.
HOOKED = {"repeat": "pytest-repeat", "hypothesispytest": "hypothesis"}


@pytest.mark.parametrize(
    ("members", "hooks", "expected"),
    [
        (
            ["sitecustomize.pyc", INFO],
            set(),
            ["runs at every interpreter start: sitecustomize.pyc"],
        ),
        (
            ["shop-1.0.data/purelib/usercustomize.abi3.so", INFO],
            set(),
            ["runs at every interpreter start: shop-1.0.data/purelib/usercustomize.abi3.so"],
        ),
        (
            ["org/python/core.py", INFO],
            set(),
            ["would be imported by the judge's pytest, which looks for org"],
        ),
        (
            [INFO],
            {("hypothesis", "x")},
            ["runs at every import of hypothesis: entry point [hypothesis] x"],
        ),
        (
            [INFO],
            {("pytest11", "patchjudge.pytest_plugin")},
            [
                "stands in for the plugin `-p patchjudge.pytest_plugin` loads: entry point [pytest11]"
            ],
        ),
        (
            [INFO],
            {("pytest11", "_pytest.terminal")},
            ["stands in for the plugin `-p _pytest.terminal` loads: entry point [pytest11]"],
        ),
        (
            [INFO],
            {("pytest11", "repeat")},
            ["stands in for the plugin `-p repeat` loads: entry point [pytest11]"],
        ),
        (
            ["shop/__init__.py", INFO],
            {("pytest11", "tests.plugin")},
            ["stands in for the plugin `-p tests.plugin` loads: entry point [pytest11]"],
        ),
        # Its own plugin, plain or under its own package, and modules in its own package.
        (["shop/__init__.py", INFO], {("pytest11", "shop"), ("pytest11", "shop.extra")}, []),
        (["shop/sitecustomize.py", "shop/typing_extensions.py", INFO], set(), []),
        (["sitecustomize_tools.py", INFO], set(), []),
        (["./zz.pth", INFO], set(), ["names a file the installer would move: ./zz.pth"]),
        (
            ["shop/../typing_extensions.py", "shop\\x.py", "/abs.py", "shop//y.py", INFO],
            set(),
            [
                "names a file the installer would move: /abs.py",
                "names a file the installer would move: shop/../typing_extensions.py",
                "names a file the installer would move: shop//y.py",
                "names a file the installer would move: shop\\x.py",
            ],
        ),
        (["shop/", "shop/__init__.py", INFO], set(), []),
        (
            ["__pycache__/py.cpython-311.pyc", INFO],
            set(),
            ["brings bytecode, which runs in place of a source: __pycache__/py.cpython-311.pyc"],
        ),
        (
            ["shop/__pycache__/m.cpython-311.pyc", INFO],
            set(),
            [
                "brings bytecode, which runs in place of a source: shop/__pycache__/m.cpython-311.pyc"
            ],
        ),
    ],
)
def test_what_the_judges_pytest_would_load_unasked(
    members: list[str], hooks: set[tuple[str, str]], expected: list[str]
) -> None:
    found = wheel_problems(members, set(), INSTALLED, set(), JUDGE, hooks=hooks, plugins=HOOKED)
    assert found == expected
