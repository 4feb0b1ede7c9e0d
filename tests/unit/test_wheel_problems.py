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
