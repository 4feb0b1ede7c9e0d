"""issue 19: init runs its starter once at the adoption commit and refuses a red start."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge.commands.init import first_failure
from tests.helpers import cli, commit, init_repo
from tests.init_helpers import flat_project


def test_a_green_start_says_so(tmp_path: Path) -> None:
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init")
    assert result.code == 0, result.err
    assert "the starter passes at this commit (1 names)" in result.out
    assert "the visible suite passes at this commit (1 passed)" in result.out


def test_a_project_that_is_one_of_pytests_own_dependencies_starts_green(tmp_path: Path) -> None:
    # A tree whose top-level package is named pluggy: pytest must run on its own
    # pluggy and hand the tree's to the starter. With the tree on PYTHONPATH from
    # the start, pytest itself imported the tree's and crashed ("cannot import
    # name 'HookimplMarker'"): a red start blamed on the project.
    repo = init_repo(
        tmp_path / "pluggy",
        {
            "pluggy/__init__.py": "def total(xs):\n    return sum(xs)\n",
            "tests/test_total.py": (
                "from pluggy import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
            ),
        },
    )
    result = cli(repo, "init")
    assert result.code == 0, result.err
    assert "the starter passes at this commit (1 names)" in result.out


def test_a_package_that_does_not_import_is_a_red_start_in_one_line(tmp_path: Path) -> None:
    # The names are read from the source; importing it fails (a config it reads at import).
    repo = init_repo(
        tmp_path / "calc",
        {
            "calc/__init__.py": (
                "import json\n\nSETTINGS = json.loads('{not json')\n\n\n"
                "def total(xs):\n    return sum(xs)\n"
            ),
            "tests/test_calc.py": "def test_nothing():\n    assert True\n",
        },
    )
    result = cli(repo, "init")
    assert result.code == 1, result.out + result.err
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(
        "patchjudge init: red start: eval/properties/test_public_api.py fails at this commit:"
    )
    assert "calc does not import (JSONDecodeError" in result.err
    assert "next steps" not in result.out  # nothing to commit yet


def test_a_name_the_source_binds_but_the_import_loses_is_a_red_start(tmp_path: Path) -> None:
    repo = flat_project(tmp_path / "calc")
    (repo / "calc/__init__.py").write_text(
        "def total(xs):\n    return sum(xs)\n\n\ndel globals()['total']\n"
    )
    # A suite that does not use the name, so it is green and the starter is what says so.
    (repo / "tests/test_calc.py").write_text("import calc\n\n\ndef test_calc():\n    assert calc\n")
    commit(repo, "a name only the source has")
    result = cli(repo, "init")
    assert result.code == 1, result.out + result.err
    assert "public names gone: calc.total" in result.err


@pytest.mark.parametrize(
    ("xml", "said"),
    [
        (b"<testsuites><testsuite><testcase name='t'/></testsuite></testsuites>", None),
        (
            b"<testsuite><testcase name='a'/><testcase name='b'>"
            b"<failure message='AssertionError: public names gone: m.x'>tb</failure>"
            b"</testcase></testsuite>",
            "b: public names gone: m.x",
        ),
        (
            b"<testsuite><testcase name='c'><error message='ImportError: no\nmodule'/>"
            b"</testcase></testsuite>",
            "c: ImportError: no module",
        ),
        (b"not xml", None),
    ],
)
def test_first_failure(xml: bytes, said: str | None) -> None:
    assert first_failure(xml) == said
