"""issue 19: the version file setuptools_scm and hatch-vcs write, filled by the judge."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.versionfile import render, template, version_tuple

SCM = {"tool": {"setuptools_scm": {"version_file": "src/p/_version.py"}}}
HATCH = {"tool": {"hatch": {"build": {"hooks": {"vcs": {"version-file": "src/p/version.py"}}}}}}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.6.0", (1, 6, 0)),
        ("0.1.dev3+g1a2b3c4d5", (0, 1, "dev3", "g1a2b3c4d5")),
        ("2.3.1.post4+gabc", (2, 3, 1, "gabc")),  # past a tag (scm_version): post dropped
        ("1.0rc1", (1, 0)),
        ("weird", ("weird",)),
    ],
)
def test_version_tuple(version: str, expected: tuple[int | str, ...]) -> None:
    assert version_tuple(version) == expected


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=5), st.integers(0, 999))
def test_a_release_and_dev_round_trip(release: list[int], dev: int) -> None:
    text = ".".join(map(str, release))
    assert version_tuple(text) == tuple(release)
    assert version_tuple(f"{text}.dev{dev}") == (*release, f"dev{dev}")


@pytest.mark.parametrize(("doc", "path"), [(SCM, "src/p/_version.py"), (HATCH, "src/p/version.py")])
def test_the_default_template_binds_what_both_backends_write(doc: dict, path: str) -> None:  # type: ignore[type-arg]
    data = render(doc, path, "0.1.dev3+gabc")
    assert data is not None
    namespace: dict[str, object] = {}
    exec(compile(data, path, "exec"), namespace)
    assert namespace["__version__"] == namespace["version"] == "0.1.dev3+gabc"
    assert namespace["__version_tuple__"] == namespace["version_tuple"] == (0, 1, "dev3", "gabc")
    assert "commit_id" in namespace


def test_a_file_no_backend_declares_is_not_rendered() -> None:
    assert template(SCM, "src/p/other.py") is None
    assert render({}, "src/p/_version.py", "1.0") is None


def test_a_custom_template_is_filled_and_one_needing_more_is_left_to_the_backend() -> None:
    custom = {
        "tool": {"setuptools_scm": {"write_to": "v.py", "write_to_template": "V = {version!r}\n"}}
    }
    assert render(custom, "v.py", "1.2") == b"V = '1.2'\n"
    hatch = {"tool": {"hatch": {"build": {"hooks": {"vcs": {"version-file": "v.py",
             "template": "N = {scm_version.node!r}\n"}}}}}}  # fmt: skip
    assert render(hatch, "v.py", "1.2") is None


@pytest.mark.parametrize(
    "text",
    ["V = {version:>2000000000}\n", "V = {version.__class__}\n", "V = {version[0]}\n",
     "V = {version!a}\n", "V = {0}\n", "V = {version\n"],
)  # fmt: skip
def test_a_template_asking_more_than_the_version_is_left_to_the_boxed_backend(text: str) -> None:
    # The head's template is the patch's: the judge fills only the plain fields itself.
    doc = {"tool": {"setuptools_scm": {"write_to": "v.py", "write_to_template": text}}}
    assert render(doc, "v.py", "1.2") is None


@given(
    st.lists(st.integers(0, 999), min_size=1, max_size=4),
    st.sampled_from(["", "a1", "rc2", ".post3"]),
    st.one_of(st.none(), st.integers(0, 99)),
    st.one_of(st.none(), st.from_regex(r"g[0-9a-f]{7,9}", fullmatch=True)),
)
def test_the_tuple_is_setuptools_scms(
    release: list[int], middle: str, dev: int | None, local: str | None
) -> None:
    # setuptools_scm's own rule, through packaging (pytest's dependency here).
    from packaging.version import Version

    text = ".".join(map(str, release)) + middle
    text += "" if dev is None else f".dev{dev}"
    text += "" if local is None else f"+{local}"
    parsed = Version(text)
    expected = (*parsed.release, *([f"dev{parsed.dev}"] if parsed.dev is not None else []))
    assert version_tuple(text) == (*expected, *([parsed.local] if parsed.local else []))
