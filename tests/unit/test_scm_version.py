"""boxbuild's version for a project whose version comes from git (issue 19): pure parts."""

from __future__ import annotations

import pytest

from patchjudge.boxbuild import scm_version, uses_scm

SHA = "2283442c2f0e9d1b7a6c5e4d3b2a19081726354a"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"build-system": {"requires": ["setuptools>=77", "setuptools-scm>=8"]}}, True),
        ({"build-system": {"requires": ["setuptools_scm[toml] >= 6.2"]}}, True),
        ({"build-system": {"requires": ["hatchling", "hatch-vcs"]}}, True),
        ({"build-system": {"requires": ["Vcs_Versioning"]}}, True),
        ({"tool": {"setuptools_scm": {}}}, True),
        ({"tool": {"hatch": {"version": {"source": "vcs"}}}}, True),
        ({"tool": {"hatch": {"version": {"path": "src/x/__init__.py"}}}}, False),
        ({"build-system": {"requires": ["setuptools", "wheel"]}}, False),
        ({"build-system": "garbled", "tool": []}, False),
        ({}, False),
    ],
)
def test_uses_scm(doc: dict, expected: bool) -> None:  # type: ignore[type-arg]
    assert uses_scm(doc) is expected


@pytest.mark.parametrize(
    ("tag", "distance", "version"),
    [
        (None, 3, "0.1.dev3+g2283442c2"),  # no tag: setuptools_scm's own form
        ("v2.3.1", 0, "2.3.1"),  # on the tag
        ("2.3.1", 4, "2.3.1.post4+g2283442c2"),  # past it, naming the commit
        ("version-1", 0, "version-1"),  # not a v-prefixed number: as it is
    ],
)
def test_scm_version(tag: str | None, distance: int, version: str) -> None:
    assert scm_version(SHA, tag, distance) == version
