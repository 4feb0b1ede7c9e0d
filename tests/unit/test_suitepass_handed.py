"""The freeze lane takes pathfilter's suite pass without a tree of its own (issue 20)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from patchjudge import repeat
from patchjudge.lanes import suitepass
from patchjudge.workspace import Shared

SPEC = repeat.Spec(nodeids=(), count=1, conftest_roots=("tests",))
PASS = object()  # stands for a repeat.FirstPass: only passed through


def _run(shared: Shared | None) -> Any:
    return SimpleNamespace(shared=shared)


def test_the_one_pass_an_earlier_lane_made_comes_with_its_key() -> None:
    shared = Shared({("collection", "head", SPEC): "other", ("suite_pass", SPEC, ("tests",)): PASS})
    assert suitepass.earlier_pass(_run(shared)) == (SPEC, ("tests",), PASS)


def test_a_pass_made_in_this_process_is_found_too() -> None:
    # The gate's one process: pathfilter computed it through run.once, freeze asks after.
    shared = Shared()
    shared.get(("suite_pass", SPEC, ("tests",)), lambda: PASS)
    assert suitepass.earlier_pass(_run(shared)) == (SPEC, ("tests",), PASS)


def test_none_two_or_no_sharing_make_the_lane_build_its_tree() -> None:
    two = Shared(
        {("suite_pass", SPEC, ("tests",)): PASS, ("suite_pass", SPEC, ("tests", "more")): PASS}
    )
    assert suitepass.earlier_pass(_run(two)) is None
    assert suitepass.earlier_pass(_run(Shared({("collection", "head"): PASS}))) is None
    assert suitepass.earlier_pass(_run(None)) is None
