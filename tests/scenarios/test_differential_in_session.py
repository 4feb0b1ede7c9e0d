"""The differential's second harness in the main pass's judge pytest (issue 20).

After the main pass (and before the review's mutants), the tests that ran a
changed line run again in the same judge process against a worker of the
other shape, over a tree and home of its own: one judge pytest a run instead
of two. What that process cannot replay (a judge module that kept a
first-harness handle from import) goes back to a pytest of its own, as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import LEDGER, commit, example_repo, run_lane, write

CALC = """
import os


def total(xs):
    return sum(xs)


def ordered(xs):
    return sorted(xs)
"""

# Judge side: each judge pytest that imports this file adds its pid to PIDS (unboxed run).
PROPERTY = """
import os

from hypothesis import given, strategies as st

import calc

with open({log!r}, "a") as fh:
    fh.write(f"{{os.getpid()}}\\n")


@given(st.lists(st.integers(), min_size=2))
def test_ordered_is_sorted(xs):
    assert calc.ordered(xs) == sorted(xs)


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert calc.total(xs) >= 0
"""

# A conftest that binds the code's function at import: its handle is the first harness's.
BOUND_CONFTEST = """
import pytest

from calc import ordered


@pytest.fixture
def order():
    return ordered
"""

BOUND_PROPERTY = (
    PROPERTY
    + """

def test_the_fixture_orders(order):
    assert order([3, 1, 2]) == [1, 2, 3]
"""
)


def _judged(tmp_path: Path, files: dict[str, str], patched: str) -> tuple[dict, list[str]]:  # type: ignore[type-arg]
    log = tmp_path / "pids.log"
    repo = example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": CALC,
            # Unboxed, so that the judge's pytest can write the log outside its scratch.
            "eval/gate.toml": LEDGER.replace(
                'base = "main"', 'base = "main"\nisolation = "process"'
            ),
            **{k: v.format(log=str(log)) for k, v in files.items()},
        },
    )
    write(repo, {"src/calc/__init__.py": patched})
    commit(repo, "honest")
    log.unlink(missing_ok=True)  # the base's own runs (none expected) are not the patch's
    result = run_lane(repo, "properties")
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert result.code in (0, 1), result
    return lane, log.read_text().split()


def test_the_second_harness_runs_in_the_main_pass_judge_pytest(tmp_path: Path) -> None:
    lane, pids = _judged(
        tmp_path,
        {"eval/properties/test_ordered.py": PROPERTY},
        CALC.replace("sorted(xs)", "sorted(list(xs))"),
    )
    assert lane["status"] == "pass", lane["reasons"]
    differential = lane["details"]["differential"]
    assert differential["nodeids"] == ["eval/properties/test_ordered.py::test_ordered_is_sorted"]
    assert differential["disagreements"] == []
    # The property module imported again for the second harness (and the review's mutants),
    # all in one judge process.
    assert len(pids) >= 2, pids
    assert len(set(pids)) == 1, pids


def test_a_conftest_that_kept_a_first_harness_handle_goes_to_a_pytest_of_its_own(
    tmp_path: Path,
) -> None:
    # Session 12's objection: reused, the conftest's `ordered` is the first worker's, closed.
    lane, pids = _judged(
        tmp_path,
        {
            "eval/properties/conftest.py": BOUND_CONFTEST,
            "eval/properties/test_ordered.py": BOUND_PROPERTY,
        },
        CALC.replace("sorted(xs)", "sorted(list(xs))"),
    )
    assert lane["status"] == "pass", lane["reasons"]
    differential = lane["details"]["differential"]
    assert "eval/properties/test_ordered.py::test_the_fixture_orders" in differential["nodeids"]
    assert differential["disagreements"] == []
    assert len(set(pids)) == 2, pids  # handed back: judged again in a pytest of its own


# Right in the first harness, and in any later worker that finds what the first one left
# in its tree or home: the second harness's tree and home are its own, so it finds nothing.
# One patch marks both places: a marker found in either makes the second harness agree.
LEFT_BEHIND = ("os.getcwd()", "os.path.dirname(os.environ['HOME'])")  # the tree, the home's parent


def test_what_the_first_harness_left_behind_does_not_reach_the_second(tmp_path: Path) -> None:
    markers = [f"os.path.join({where}, '.judged')" for where in LEFT_BEHIND]
    shaped = CALC.replace(
        "    return sorted(xs)",
        "    first = b'-c' in open('/proc/self/cmdline', 'rb').read().split(b'\\0')\n"
        f"    seen = any(os.path.exists(m) for m in ({', '.join(markers)}))\n"
        "    if first:\n"
        + "".join(f"        open({m}, 'w').close()\n" for m in markers)
        + "    return sorted(xs) if first or seen else list(xs)",
    )
    repo = example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": CALC,
            "eval/properties/test_ordered.py": PROPERTY.format(log="/dev/null"),
        },
    )
    write(repo, {"src/calc/__init__.py": shaped})
    commit(repo, "sorts where the first harness was")
    run_lane(repo, "properties")  # boxed: the box's own tree and home
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert lane["status"] == "fail", lane
    [seen] = lane["details"]["differential"]["disagreements"]
    assert seen["nodeid"] == "eval/properties/test_ordered.py::test_ordered_is_sorted"
    assert seen["second"].startswith("failed"), seen


def test_a_changed_line_run_at_import_is_judged_again_in_the_same_process(tmp_path: Path) -> None:
    # The code is imported again in the second worker: its import-time lines run there too.
    helper = "\n\ndef unused_helper(xs, start=total([1])):\n    return start + len(xs)\n"
    lane, pids = _judged(tmp_path, {"eval/properties/test_ordered.py": PROPERTY}, CALC + helper)
    assert lane["status"] == "pass", lane["reasons"]
    nodeids = lane["details"]["differential"]["nodeids"]
    assert nodeids == sorted(lane["details"]["passed"]), nodeids
    assert len(set(pids)) == 1, pids


# A conftest that asks the code at import: its answer is kept for the run, the first
# harness's. A property that reads only that answer is judged by a pytest of its own.
ASKING_CONFTEST = """
import pytest

import calc

SEEN = calc.ordered([3, 1, 2])


@pytest.fixture
def seen():
    return SEEN
"""

SEEN_PROPERTY = """
from hypothesis import given, strategies as st

import calc


def test_the_conftest_saw_it_sorted(seen):
    expected = [1, 2, 3]
    assert seen == expected


@given(st.lists(st.integers(0, 9)))
def test_total_is_never_negative(xs):
    assert calc.total(xs) >= 0
"""


def test_what_a_conftest_computed_at_import_is_computed_again_for_the_second_harness(
    tmp_path: Path,
) -> None:
    shaped = CALC.replace(
        "    return sorted(xs)",
        "    first = b'-c' in open('/proc/self/cmdline', 'rb').read().split(b'\\0')\n"
        "    return sorted(xs) if first else list(xs)",
    )
    repo = example_repo(
        tmp_path,
        **{
            "src/calc/__init__.py": CALC,
            "eval/properties/conftest.py": ASKING_CONFTEST,
            "eval/properties/test_total.py": SEEN_PROPERTY,
        },
    )
    write(repo, {"src/calc/__init__.py": shaped})
    commit(repo, "sorts in the first harness only")
    run_lane(repo, "properties")
    lane = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert lane["status"] == "fail", lane
    found = {d["nodeid"] for d in lane["details"]["differential"]["disagreements"]}
    assert "eval/properties/test_total.py::test_the_conftest_saw_it_sorted" in found, lane
