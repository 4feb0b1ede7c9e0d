"""codeenv.from_answer: what of the code's venv a box binds and where its packages go."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchjudge import codeenv
from patchjudge.errors import PatchjudgeError
from tests.helpers import bare_venv

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


def test_the_lane_runtime_a_pth_names_is_the_codes_site_read_never_run(tmp_path: Path) -> None:
    # issue 19, session 12: init's noxfile gives the code's venv the run's lane
    # runtime by a .pth (the judge's venv reaches the same one): what the code
    # imports from is its site too (the base collection's key, the flakes pins,
    # the guard's roots). The file is read, not run, and only a venv's
    # site-packages is taken from it.
    python, site = bare_venv(tmp_path / "code")
    _, runtime = bare_venv(tmp_path / "lane")
    ran = tmp_path / "ran"
    pth = site / codeenv.LANE_PTH
    pth.write_text(f"import site; site.addsitedir({str(runtime)!r})\n")
    assert codeenv.resolve(str(python)).site[-1] == runtime
    elsewhere = tmp_path / "not-a-venv" / "site-packages"
    elsewhere.mkdir(parents=True)
    for text in (
        f"import site; site.addsitedir({str(elsewhere)!r})\n",
        f"import site; site.addsitedir({str(runtime)!r}); open({str(ran)!r}, 'w')\n",
        f"{runtime}\n",
        "import site; site.addsitedir('lib/python3/site-packages')\n",
    ):
        pth.write_text(text)
        assert codeenv.resolve(str(python)).site == (site,), text
    assert not ran.exists()
