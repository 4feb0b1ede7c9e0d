"""The judge's hypothesis profile times nothing and explains nothing (issues 17, 20).

hypothesis' `deadline` and its `too_slow` health check answer how busy the
machine is, not what the code does: on a loaded CI runner, or out of process
where each draw of a library's objects is a round trip, they reject an honest
patch by the clock. The property below reads the profile it runs under, in
the judge's process, in process and out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import CALC, LEDGER, cli, commit, example_repo, write

PROFILE = """
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from calc import total


@settings(max_examples=3)
@given(st.integers(min_value=0, max_value=9))
def test_the_profile_times_nothing(x):
    assert total([x]) == x
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    # The explain phase's comments are cut from the reason; its tracer cost 8x.
    assert Phase.explain not in settings.default.phases and Phase.shrink in settings.default.phases
"""


@pytest.mark.parametrize("inside", [False, True], ids=["out of process", "in process"])
def test_the_judges_profile_has_no_deadline_and_no_too_slow_check(
    tmp_path: Path, inside: bool
) -> None:
    files = {"eval/properties/test_profile.py": PROFILE}
    if inside:
        files["eval/gate.toml"] = LEDGER.replace(
            "[properties]\n", '[properties]\nin_process = ["eval/properties/test_profile.py"]\n'
        )
    repo = example_repo(tmp_path, **files)
    write(repo, {"src/calc/__init__.py": CALC + "# a comment\n"})
    commit(repo, "a comment-only patch")
    result = cli(repo, "properties", "--base", "main")
    report = result.report(repo, "properties")
    assert result.code == 0, report["reasons"]
    assert report["details"]["in_process"] == (
        ["eval/properties/test_profile.py"] if inside else []
    )
