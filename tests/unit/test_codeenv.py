"""codeenv.from_answer: what of the code's venv a box binds and where its packages go."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge import codeenv
from patchjudge.errors import PatchjudgeError

VENV = {
    "prefixes": ["/work/.nox/code", "/usr", "/usr"],
    "site": ["/work/.nox/code/lib/python3.11/site-packages"] * 2,
    "scripts": "/work/.nox/code/bin",
    "version": [3, 11],
}


@pytest.mark.parametrize(
    ("answer", "binds", "site"),
    [
        (VENV, ("/work/.nox/code", "/usr"), ("/work/.nox/code/lib/python3.11/site-packages",)),
        # A prefix of "/" (some container images) would bind the whole machine.
        ({**VENV, "prefixes": ["/v", "/"]}, ("/v",), VENV["site"][:1]),
        ({**VENV, "prefixes": "garbled", "site": None}, (), ()),
    ],
)
def test_the_answer_read(answer: dict, binds: tuple[str, ...], site: tuple[str, ...]) -> None:  # type: ignore[type-arg]
    found = codeenv.from_answer("/work/.nox/code/bin/python", answer)
    assert found.python == "/work/.nox/code/bin/python"
    assert found.binds == tuple(map(Path, binds))
    assert found.site == tuple(map(Path, site))


@pytest.mark.parametrize("version", [[3, 10], [], "3.11", None])
def test_an_older_or_unknown_python_is_refused_naming_the_option(version: object) -> None:
    with pytest.raises(PatchjudgeError) as caught:
        codeenv.from_answer("/p/python", {**VENV, "version": version})
    assert caught.value.key == "--python"


def test_no_python_is_the_judges_own_interpreter() -> None:
    import sys

    assert codeenv.resolve(None).interpreter == sys.executable
    assert codeenv.resolve(None).binds == ()
