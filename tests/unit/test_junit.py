"""JUnit XML reading and pytest's node id -> (classname, name) mangling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.junitxml import mangle_test_address
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import junit
from patchjudge.errors import PatchjudgeError


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        ("tests/test_a.py::test_x", ("tests.test_a", "test_x")),
        ("tests/test_a.py::TestK::test_m[1-12]", ("tests.test_a.TestK", "test_m[1-12]")),
        ("tests/test_a.py::test_p[a/b.py-1-3]", ("tests.test_a", "test_p[a/b.py-1-3]")),
        ("test_top.py::test_y", ("test_top", "test_y")),
        ("a/b/test_c.py::T::U::test_z", ("a.b.test_c.T.U", "test_z")),
    ],
)
def test_junit_key_table(nodeid: str, key: tuple[str, str]) -> None:
    assert junit.junit_key(nodeid) == key


_part = st.text(st.sampled_from("abcxyz_019"), min_size=1, max_size=6)


@given(
    st.lists(_part, min_size=1, max_size=3),
    st.lists(_part, min_size=1, max_size=3),
    st.one_of(st.none(), st.text(st.sampled_from("ab1-:/.[]"), max_size=8)),
)
def test_junit_key_is_pytests_mangling(
    dirs: list[str], names: list[str], params: str | None
) -> None:
    nodeid = "/".join(dirs) + ".py::" + "::".join(names)
    if params is not None:
        nodeid += f"[{params}]"
    names_out = mangle_test_address(nodeid)
    assert junit.junit_key(nodeid) == (".".join(names_out[:-1]), names_out[-1])


def test_read_cases_from_a_real_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "test_mix.py").write_text(
        "import pytest\n"
        "@pytest.fixture\n"
        "def bad():\n"
        "    yield\n"
        "    raise RuntimeError('teardown')\n"
        "def test_ok(): pass\n"
        "def test_fails(): assert 0\n"
        "def test_fails_twice(bad): assert 0\n"
        "def test_skips(): pytest.skip('no')\n"
        "@pytest.mark.xfail(strict=True)\n"
        "def test_xfails(): assert 0\n"
    )
    xml = tmp_path / "out.xml"
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--junitxml",
            str(xml),
            "-o",
            "junit_family=xunit2",
            "test_mix.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=False,
    )
    cases = junit.read_cases(xml)
    got = [(c.name, c.outcome) for c in cases]
    assert got == [
        ("test_ok", "passed"),
        ("test_fails", "failed"),
        # pytest writes a second <testcase> for a teardown error after a failure
        ("test_fails_twice", "failed"),
        ("test_fails_twice", "error"),
        ("test_skips", "skipped"),
        ("test_xfails", "skipped"),
    ]
    assert {c.classname for c in cases} == {"test_mix"}
    failed = junit.failed_keys(cases)
    assert failed[("test_mix", "test_fails_twice")] is True
    assert failed[("test_mix", "test_ok")] is False
    assert failed[("test_mix", "test_skips")] is False


def test_unparsable_junit_is_an_error_naming_the_file(tmp_path: Path) -> None:
    xml = tmp_path / "broken.xml"
    xml.write_text("<testsuites><testcase name='x'>")
    with pytest.raises(PatchjudgeError) as exc:
        junit.read_cases(xml)
    assert "broken.xml" in exc.value.one_line()
