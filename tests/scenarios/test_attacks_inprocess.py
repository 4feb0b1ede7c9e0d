"""Attacks from inside the pytest process: caught where the judge's plugin can see them.

Code under test shares the process with pytest and the judge's plugin; what it
can rewrite there is caught by cross-checks (raw vs final outcome, exit status
vs reported outcomes, the hypothesis profile in force), not prevented. See
docs/threat-model.md for what is left.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack_helpers import Judged, attack, fast_ledger

# Rewrites every report pytest builds to a pass, below every hook wrapper.
REWRITE_REPORTS = """
import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call.__func__


def _forged(cls, item, call):
    report = _orig(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


_r.TestReport.from_item_and_call = classmethod(_forged)


def total(xs):
    return -1
"""

# Edits what the judge's own plugin sends on its private channel.
REWRITE_CHANNEL = """
import sys

_plugin = sys.modules.get("patchjudge.pytest_plugin")
if _plugin is not None:
    _emit = _plugin.emit

    def _forged(event, **fields):
        if event == "report":
            fields.update(outcome="passed", raw="passed", longrepr="", falsifying=[])
        _emit(event, **fields)

    _plugin.emit = _forged


def total(xs):
    return -1
"""

# Turns the judge's case count down to one example.
LAZY_HYPOTHESIS = """
from hypothesis import settings

settings.register_profile("lazy", max_examples=1, database=None)
settings.load_profile("lazy")


def total(xs):
    return sum(xs) if len(xs) < 5 else -1
"""

# Replaces how pytest runs a test function: no exception, so no raw failure either.
SKIP_RUNTEST = """
import _pytest.python as _p

_p.Function.runtest = lambda self: None


def total(xs):
    return -1
"""

CASES = {
    "test runner rewritten": (
        SKIP_RUNTEST,
        "properties: passed without pytest calling its test function: "
        "eval/properties/test_total.py::test_total_never_negative (runner rewritten)",
    ),
    "pytest reports rewritten": (
        REWRITE_REPORTS,
        "properties: outcome rewritten in-process: "
        "eval/properties/test_total.py::test_total_never_negative (call) was failed, "
        "reported passed",
    ),
    "judge channel rewritten": (
        REWRITE_CHANNEL,
        "properties: pytest exited 1 with no failing property to show for it",
    ),
    "hypothesis settings lowered": (
        LAZY_HYPOTHESIS,
        "properties: hypothesis max_examples is 1, the ledger says 20",
    ),
}


def oracle(judged: Judged) -> tuple[str, list[str]]:
    details = judged.result.report(judged.repo, "properties")["details"]
    return details["oracle"], details["in_process"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_process_rewrite_is_caught(tmp_path: Path, name: str) -> None:
    """A file the ledger keeps in process still has v1's cross-checks."""
    code, reason = CASES[name]
    ledger = fast_ledger().replace(
        "timeout_s = 30\n", 'timeout_s = 30\nin_process = ["eval/properties/test_total.py"]\n', 1
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": code}, base={"eval/gate.toml": ledger})
    assert judged.decision == "reject", judged.explain()
    assert judged.says(reason), judged.explain()
    assert oracle(judged) == ("in_process", ["eval/properties/test_total.py"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_process_the_rewrite_reaches_nothing(tmp_path: Path, name: str) -> None:
    """Out of process the same code shares no process with pytest: the property just fails."""
    code, _ = CASES[name]
    judged = attack(tmp_path, {"src/calc/__init__.py": code})
    assert judged.decision == "reject", judged.explain()
    assert judged.says(
        "properties: property failed: eval/properties/test_total.py::test_total_never_negative"
    ), judged.explain()
    # The properties' process never ran the code. (The visible suite runs in the
    # tested process, issue 19: the freeze lane may see a rewrite as v1 did.)
    assert not any("rewritten" in r for r in judged.lane("properties")["reasons"])
    assert oracle(judged) == ("out_of_process", [])
