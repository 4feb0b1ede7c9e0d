"""pytest-repeat's and xdist's node ids mapped back, counted and verified."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import junit, repeat, testrun
from patchjudge.repeat import Tally


def _o(
    nodeid: str,
    outcome: str = "passed",
    when: str = "call",
    raw: str | None = None,
    wasxfail: bool = False,
) -> testrun.Outcome:
    return testrun.Outcome(nodeid, when, outcome, raw, wasxfail, "", ())


KNOWN = {
    "t.py::test_plain",
    "t.py::test_p[a-1]",
    "t.py::test_p[b]",
    "t.py::test_e[]",
    "t.py::test_q[1-3]",  # a parametrised id that looks like a repeat id
    "t.py::TU::test_u",
    "t.py::K::test_m",
}


@pytest.mark.parametrize(
    ("reported", "repeated", "plain"),
    [
        ("t.py::test_plain[3-12]", True, "t.py::test_plain"),
        ("t.py::test_p[a-1-3-12]", True, "t.py::test_p[a-1]"),
        ("t.py::test_p[b-12-12]", True, "t.py::test_p[b]"),
        ("t.py::test_e[-1-12]", True, "t.py::test_e[]"),  # an empty parameter id
        ("t.py::K::test_m[1-2]", True, "t.py::K::test_m"),
        # unittest: pytest-repeat leaves the id alone
        ("t.py::TU::test_u", True, "t.py::TU::test_u"),
        # a repeat(1) marker keeps a parametrised id plain in a repeat pass
        ("t.py::test_q[1-3]", True, "t.py::test_q[1-3]"),
        ("t.py::test_q[1-3-2-12]", True, "t.py::test_q[1-3]"),
        # a plain pass never strips
        ("t.py::test_q[1-3]", False, "t.py::test_q[1-3]"),
        ("t.py::test_plain[3-12]", False, None),
        ("t.py::test_gone[1-12]", True, None),
        ("t.py::test_p[a-1-3]", True, None),
    ],
)
def test_plain_nodeid_table(reported: str, repeated: bool, plain: str | None) -> None:
    assert repeat.plain_nodeid(reported, KNOWN, repeated) == plain


_pid = st.text(st.sampled_from("ab1-2_."), max_size=8)


@given(
    st.text(st.sampled_from("abc_"), min_size=1, max_size=6),
    st.one_of(st.none(), _pid),
    st.integers(2, 40),
    st.data(),
)
def test_every_repetition_maps_back(
    name: str, params: str | None, count: int, data: st.DataObject
) -> None:
    plain = f"tests/test_x.py::test_{name}" + (f"[{params}]" if params is not None else "")
    step = data.draw(st.integers(1, count))
    # what pytest-repeat produces (pytest_repeat.make_progress_id, parametrised last)
    progress = f"{step}-{count}"
    reported = f"{plain[:-1]}-{progress}]" if params is not None else f"{plain}[{progress}]"
    assert repeat.plain_nodeid(reported, {plain}, repeated=True) == plain


def test_tally_counts_each_repetition_once_and_any_failed_phase() -> None:
    outcomes = [
        _o("t.py::test_p[a-1-1-3]", "passed", "setup"),
        _o("t.py::test_p[a-1-1-3]", "passed"),
        _o("t.py::test_p[a-1-1-3]", "failed", "teardown"),
        _o("t.py::test_p[a-1-2-3]"),
        _o("t.py::test_p[a-1-3-3]", "failed", "setup"),
        _o("t.py::TU::test_u", "failed"),
        _o("t.py::test_stranger[1-3]"),
    ]
    nodes, strangers = repeat.tally_pass(outcomes, KNOWN, repeated=True)
    assert nodes == {"t.py::test_p[a-1]": Tally(2, 3), "t.py::TU::test_u": Tally(1, 1)}
    assert strangers == ["t.py::test_stranger[1-3]"]


def test_cross_check_agrees_and_disagrees() -> None:
    outcomes = [_o("t.py::test_a[1-2]"), _o("t.py::test_a[2-2]", "failed")]
    same = [junit.Case("t", "test_a[1-2]", "passed"), junit.Case("t", "test_a[2-2]", "error")]
    assert repeat.cross_check(outcomes, same) == []
    flipped = [junit.Case("t", "test_a[1-2]", "passed"), junit.Case("t", "test_a[2-2]", "passed")]
    assert repeat.cross_check(outcomes, flipped) == [
        "JUnit and the channel disagree on t::test_a[2-2]: passed vs failed"
    ]
    assert repeat.cross_check(outcomes, same[:1]) == [
        "JUnit is missing a case the channel reported: t::test_a[2-2]"
    ]
    extra = [*same, junit.Case("t", "test_b", "passed")]
    assert repeat.cross_check(outcomes, extra) == [
        "JUnit has a case the channel never reported: t::test_b"
    ]


@pytest.mark.parametrize(
    ("setting", "runs", "cpus", "workers"),
    [
        ("auto", 12 * 10, 2, 0),
        ("auto", repeat.AUTO_XDIST_MIN_RUNS - 1, 8, 0),
        ("auto", repeat.AUTO_XDIST_MIN_RUNS, 2, 2),
        ("auto", 10**6, 1, 0),
        ("auto", 10**6, None, 0),
        ("0", 10**6, 8, 0),
        (3, 10, 1, 3),
    ],
)
def test_resolve_workers(setting: str | int, runs: int, cpus: int | None, workers: int) -> None:
    assert repeat.resolve_workers(setting, runs, cpus) == workers


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 5)), max_size=40), st.integers(1, 50))
def test_batches_keep_files_whole_and_lose_nothing(
    spec: list[tuple[int, int]], target: int
) -> None:
    nodeids = list(dict.fromkeys(f"f{f}.py::t{i}" for f, n in spec for i in range(n)))
    groups = repeat.by_file(nodeids)
    assert sorted(n for g in groups for n in g) == sorted(nodeids)
    assert all(len({n.split("::")[0] for n in g}) == 1 for g in groups)
    batches = []
    while groups:
        n = repeat.take(groups, target)
        assert n >= 1  # always progress, even when one file is bigger than the target
        batch = [x for g in groups[:n] for x in g]
        assert n == 1 or len(batch) <= target
        batches.append(batch)
        groups = groups[n:]
    assert sorted(n for b in batches for n in b) == sorted(nodeids)


@pytest.mark.parametrize(
    ("done", "seconds", "target"),
    [
        (0, 0.0, repeat.FIRST_BATCH),
        (50, 10.0, 300),  # 5 ids a second: 60 s is 300 ids
        (50, 600.0, 5),
        (1, 1000.0, 1),
    ],
)
def test_next_batch_takes_about_a_minute(done: int, seconds: float, target: int) -> None:
    assert repeat.next_target(done, seconds) == target


def test_add_sums_node_by_node() -> None:
    a = {"x": Tally(1, 12), "y": Tally(0, 12)}
    b = {"x": Tally(2, 12), "z": Tally(12, 12)}
    assert repeat.add(a, b) == {"x": Tally(3, 24), "y": Tally(0, 12), "z": Tally(12, 12)}


def test_pytests_own_xfail_conversion_is_not_tampering() -> None:
    run = testrun.TestRun(
        0,
        False,
        True,
        True,
        {},
        {},
        {},
        (
            _o("a", "skipped", raw="failed", wasxfail=True),
            _o("b", "failed", raw="passed"),
            _o("c", "passed", raw="failed"),
            _o("d", "skipped", raw="failed"),
        ),
        0,
    )
    assert [t.split(":")[1].strip().split(" ")[0] for t in run.tampering()] == ["c", "d"]


SUITE = """
import unittest
import pytest


@pytest.mark.parametrize("x", ["a-1", "b", ""])
def test_p(x):
    pass


def test_plain():
    pass


class TestK:
    def test_m(self):
        pass


class TU(unittest.TestCase):
    def test_u(self):
        pass


@pytest.mark.repeat(1)
def test_marked_once():
    pass


@pytest.mark.xfail(strict=True)
def test_xfails():
    assert 0


def test_fails():
    assert 0
"""


@pytest.mark.parametrize("workers", [0, 2])
def test_every_kind_of_node_id_runs_count_times(tmp_path: Path, workers: int) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_kinds.py").write_text(SUITE)
    (tree / "tests" / "test_other.py").write_text("def test_not_asked():\n    pass\n")
    spec = repeat.Spec((), 4, workers=workers, conftest_roots=("tests",))
    collected = repeat.collect(tree, ["tests"], spec, tmp_path / "collect", {})
    ids = tuple(n for n in collected.collected if "test_not_asked" not in n)
    assert len(ids) == 9
    said: list[str] = []
    spec = repeat.Spec(ids, 4, workers=workers, conftest_roots=("tests",))
    result = repeat.run(tree, spec, tmp_path / "runs", {}, progress=said.append)
    assert result.problems == ()
    assert dict(result.nodes) == {n: Tally(4 if n.endswith("test_fails") else 0, 4) for n in ids}
    # the unittest case and the repeat(1) test ran three further passes
    assert result.passes == 4
    assert any("did not repeat" in line for line in said)


def test_unittest_cases_repeat_in_the_same_process(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_units.py").write_text(
        "import unittest\n\n\n"
        "class TU(unittest.TestCase):\n"
        "    def setUp(self):\n"
        "        self.ready = True\n\n"
        "    def test_ok(self):\n"
        "        assert self.ready\n\n"
        "    def test_bad(self):\n"
        "        assert not self.ready\n"
    )
    ids = ("tests/test_units.py::TU::test_ok", "tests/test_units.py::TU::test_bad")
    spec = repeat.Spec(ids, 5, conftest_roots=("tests",))
    result = repeat.run(tree, spec, tmp_path / "runs", {})
    assert result.problems == ()
    assert dict(result.nodes) == {ids[0]: Tally(0, 5), ids[1]: Tally(5, 5)}
    assert result.passes == 1  # no further passes were needed


def test_a_long_run_goes_in_batches_of_whole_files_with_progress(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    for f in range(3):
        body = "".join(f"def test_{i}():\n    pass\n\n\n" for i in range(20))
        (tree / "tests" / f"test_f{f}.py").write_text(body)
    ids = tuple(f"tests/test_f{f}.py::test_{i}" for f in range(3) for i in range(20))
    said: list[str] = []
    result = repeat.run(tree, repeat.Spec(ids, 2), tmp_path / "runs", {}, progress=said.append)
    assert result.problems == ()
    assert dict(result.nodes) == dict.fromkeys(ids, Tally(0, 2))
    # the first batch: the whole files that fit in FIRST_BATCH (50), then the rest
    assert result.passes == 2
    assert said[0].startswith("40/60 node ids x2 in ")
    assert said[1].startswith("60/60 node ids x2 in ")


def _ran(*nodeids: str) -> list[testrun.Outcome]:
    return [testrun.Outcome(n, "call", "passed", "passed", False, "", ()) for n in nodeids]


def test_cross_check_mangles_each_node_id_once_not_each_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 20: three reports a test run; boltons x12 is 18,684 of them for 6,228 ids.
    seen: list[str] = []
    real = junit.junit_key
    monkeypatch.setattr(junit, "junit_key", lambda n: seen.append(n) or real(n))
    ids = ("t.py::test_a[1-2]", "t.py::test_a[2-2]")
    outcomes = [_o(n, "failed" if w == "call" and n == ids[1] else "passed", w)
                for n in ids for w in ("setup", "call", "teardown")]  # fmt: skip
    cases = [junit.Case("t", "test_a[1-2]", "passed"), junit.Case("t", "test_a[2-2]", "failed")]
    assert repeat.cross_check(outcomes, cases) == []
    assert sorted(seen) == sorted(ids)
    flipped = [cases[0], junit.Case("t", "test_a[2-2]", "passed")]
    assert repeat.cross_check(outcomes, flipped) == [
        "JUnit and the channel disagree on t::test_a[2-2]: passed vs failed"
    ]


@pytest.mark.parametrize(
    ("reported", "count", "plain"),
    [
        (("t.py::test_x[1-12]", "t.py::test_x[2-12]"), 12, ("t.py::test_x",)),
        (
            ("t.py::test_p[a-1-3-12]", "t.py::test_p[b-3-12]"),
            12,
            ("t.py::test_p[a-1]", "t.py::test_p[b]"),
        ),
        (
            ("t.py::TestU::test_u[3-12]",),
            12,
            ("t.py::TestU::test_u",),
        ),  # select_plugin's unittest ids
        (("t.py::test_m[1-3]",), 12, ("t.py::test_m",)),  # a repeat(3) marker's ids
        (("t.py::test_plain",), 12, ("t.py::test_plain",)),  # repeat(1): its own id
        (("t.py::test_p[1-2]",), 1, ("t.py::test_p[1-2]",)),  # not repeated: ids are the test's
    ],
)
def test_ran_ids_are_the_plain_ids_of_a_pass(
    reported: tuple[str, ...], count: int, plain: tuple[str, ...]
) -> None:
    assert repeat.ran_ids(_ran(*reported), count) == plain
