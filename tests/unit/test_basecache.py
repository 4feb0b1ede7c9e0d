"""basecache: the key moves with everything the base's collection depends on (issue 20)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from patchjudge import basecache, codeenv, git, testrun

ENTRIES = (
    git.TreeEntry("100644", "blob", "a" * 40, "src/calc/__init__.py"),
    git.TreeEntry("100644", "blob", "b" * 40, "tests/test_calc.py"),
)
PLAN = testrun.Plan(tree=Path(), args=(), conftest_roots=("tests",), collect_only=True)
INTERPRETER = {"judge": "/venv/bin/python", "judge_version": "3.11.9", "code": ""}
BASE: dict[str, Any] = {
    "entries": ENTRIES,
    "ledger_sha256": "c" * 64,
    "plan": PLAN,
    "judge": "d" * 64,
    "interpreter": INTERPRETER,
    "environ": {"PATH": "/usr/bin", "LANG": "C.UTF-8"},
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entries", (ENTRIES[0], dataclasses.replace(ENTRIES[1], sha="e" * 40))),
        ("entries", (*ENTRIES, git.TreeEntry("100644", "blob", "f" * 40, "tests/conftest.py"))),
        ("entries", (ENTRIES[0], dataclasses.replace(ENTRIES[1], mode="100755"))),
        ("ledger_sha256", "0" * 64),
        ("plan", dataclasses.replace(PLAN, plugins=("xdist",))),
        ("plan", dataclasses.replace(PLAN, pythonpath=("src",))),
        ("plan", dataclasses.replace(PLAN, timeout_s=90)),
        ("plan", dataclasses.replace(PLAN, python="/code/bin/python")),
        ("judge", "1" * 64),
        ("interpreter", {**INTERPRETER, "judge_version": "3.11.10"}),
        ("interpreter", {**INTERPRETER, "judge": "/other/bin/python"}),
        ("interpreter", {**INTERPRETER, "code": "/code/bin/python"}),
        ("interpreter", {**INTERPRETER, "judge_site": "2" * 64}),
        ("environ", {"PATH": "/usr/local/bin:/usr/bin", "LANG": "C.UTF-8"}),
        ("environ", {"PATH": "/usr/bin", "LANG": "C.UTF-8", "TZ": "Europe/Paris"}),
    ],
)
def test_the_key_moves_with_what_the_collection_depends_on(field: str, value: Any) -> None:
    assert basecache.key(**{**BASE, field: value}) != basecache.key(**BASE)


def test_the_key_ignores_the_scratch_tree_and_what_the_tests_are_not_given() -> None:
    same = {
        **BASE,
        "plan": dataclasses.replace(PLAN, tree=Path("/tmp/tmpabcdefgh/tree")),
        "environ": {**BASE["environ"], "GITHUB_TOKEN": "x", "HOME": "/home/u"},
        "entries": tuple(reversed(ENTRIES)),
    }
    assert basecache.key(**same) == basecache.key(**BASE)


def _run(**changes: Any) -> testrun.TestRun:
    scratch = "/tmp/tmpabcdefgh"
    base = testrun.TestRun(
        exitstatus=2,
        timed_out=False,
        started=True,
        finished=True,
        collected={"tests/test_calc.py::test_two": "run", "tests/test_calc.py::test_x": "skip"},
        markers={"tests/test_calc.py::test_x": ("skip",)},
        collect_errors={"tests/test_bad.py": f"{scratch}/tree/tests/test_bad.py:1: SyntaxError"},
        outcomes=(),
        garbled=0,
        output=f"ERROR {scratch}/tree/tests/test_bad.py",
        shadowed=("tests/inspect.py",),
    )
    return dataclasses.replace(base, **changes)


def test_an_entry_gives_back_the_run_with_the_new_scratch() -> None:
    payload = basecache.encode(_run(), ("tests",), Path("/tmp/tmpabcdefgh"))
    assert payload is not None and b"tmpabcdefgh" not in payload
    found = basecache.decode(payload, Path("/tmp/tmpzyxwvuts"))
    assert found is not None
    run, paths = found
    assert paths == ("tests",)
    assert run == dataclasses.replace(
        _run(),
        collect_errors={
            "tests/test_bad.py": "/tmp/tmpzyxwvuts/tree/tests/test_bad.py:1: SyntaxError"
        },
        output="ERROR /tmp/tmpzyxwvuts/tree/tests/test_bad.py",
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"timed_out": True},
        {"started": False},
        {"finished": False},
        {"escaped": 1},
        {"garbled": 3},
        {"executed": {"t::x": {"a.py": (1,)}}},
        {"requests": {"next": 4}},
        {"outcomes": (testrun.Outcome("t::x", "call", "passed", "failed", False, "", ()),)},
    ],
)
def test_a_run_that_may_not_happen_again_is_not_kept(changes: dict[str, Any]) -> None:
    assert basecache.encode(_run(**changes), ("tests",), Path("/tmp/x")) is None


@pytest.mark.parametrize(
    "data", [None, b"", b"not json", b"{}", b'{"paths": [], "run": {"exitstatus": 0}}', b"\xff"]
)
def test_an_unreadable_payload_is_no_entry(data: bytes | None) -> None:
    assert basecache.decode(data, Path("/tmp/x")) is None


def test_the_interpreter_facts_name_the_codes_venv_only_under_python(tmp_path: Path) -> None:
    judge = basecache.interpreter(codeenv.CodeEnv())
    assert judge["code"] == "" and "code_real" not in judge
    site = tmp_path / "site"
    site.mkdir()
    (site / "pytest-8.3.4.dist-info").mkdir()
    python = tmp_path / "python"
    python.write_text("")
    code = codeenv.CodeEnv(python=str(python), site=(site,))
    before = basecache.interpreter(code)
    assert before["code"] == str(python)
    (site / "pytest-8.3.4.dist-info").rename(site / "pytest-8.4.0.dist-info")
    assert basecache.interpreter(code)["code_site"] != before["code_site"]


SPEC = {"count": 1, "conftest_roots": ("tests",), "pythonpath": (), "seed": 1, "python": None}
RAN: dict[str, Any] = {
    "entries": ENTRIES,
    "ledger_sha256": "c" * 64,
    "settings": SPEC,
    "nodeids": ("tests/test_calc.py::test_net",),
    "judge": "d" * 64,
    "interpreter": INTERPRETER,
    "environ": {"PATH": "/usr/bin", "LANG": "C.UTF-8"},
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entries", (ENTRIES[0], dataclasses.replace(ENTRIES[1], sha="e" * 40))),
        ("ledger_sha256", "0" * 64),
        ("settings", {**SPEC, "seed": 2}),
        ("settings", {**SPEC, "python": "/code/bin/python"}),
        ("settings", {**SPEC, "pythonpath": ("src",)}),
        ("nodeids", ("tests/test_calc.py::test_net", "tests/test_calc.py::test_two")),
        ("nodeids", ("tests/test_calc.py::test_two",)),
        ("judge", "1" * 64),
        ("interpreter", {**INTERPRETER, "judge_version": "3.11.10"}),
        ("interpreter", {**INTERPRETER, "code": "/code/bin/python"}),
        ("environ", {"PATH": "/usr/bin", "LANG": "C.UTF-8", "TZ": "Europe/Paris"}),
    ],
)
def test_the_base_run_key_moves_with_what_the_run_depends_on(field: str, value: Any) -> None:
    assert basecache.ran_key(**{**RAN, field: value}) != basecache.ran_key(**RAN)


def test_the_base_run_key_is_not_the_collections_and_ignores_the_ids_order() -> None:
    twice = {**RAN, "nodeids": ("b::y", "a::x", "b::y")}
    assert basecache.ran_key(**twice) == basecache.ran_key(**{**RAN, "nodeids": ("a::x", "b::y")})
    assert basecache.ran_key(**RAN) != basecache.key(**BASE)


def test_the_ids_that_ran_at_base_round_trip() -> None:
    payload = basecache.encode_ran({"t::b", "t::a"})
    assert basecache.decode_ran(payload) == {"t::a", "t::b"}
    assert basecache.decode_ran(basecache.encode_ran(())) == frozenset()


@pytest.mark.parametrize(
    "data", [None, b"", b"not json", b"{}", b'{"ran": "t::a"}', b'{"ran": [1]}', b"\xff"]
)
def test_an_unreadable_base_run_payload_is_no_entry(data: bytes | None) -> None:
    assert basecache.decode_ran(data) is None
