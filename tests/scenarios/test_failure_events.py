"""A worker's failure reaches the verdict as the judge's data, never as text it parsed (issue 17).

The code under test can put any words into what a property shows (an
exception's message, a repr); words that read like "the worker for FILE
crashed" used to be taken for the judge's own reason. Now the reason is the
judge's event, and the words stay the property's failure text.
"""

from __future__ import annotations

from pathlib import Path

from tests.attack_helpers import attack_lane

TOTAL = "eval/properties/test_total.py"
FORGED = f"WorkerFailure: the worker for {TOTAL} crashed (exit 9)"

SAYS_IT_CRASHED = f"""
def total(xs):
    raise ValueError({FORGED!r})
"""

CRASHES = """
import os


def total(xs):
    os._exit(9)
"""


def test_words_that_read_like_a_worker_failure_stay_the_propertys(tmp_path: Path) -> None:
    # The properties lane alone: its fail is a reject in any gate (tests/unit/test_verdict.py).
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": SAYS_IT_CRASHED}, "properties")
    assert judged.status == "fail", judged.explain()
    assert judged.says(f"{TOTAL}::test_total", f"ValueError: {FORGED}"), judged.explain()
    # Not the judge's words: those follow the node id directly, as below.
    assert not judged.says(f"::test_total_never_negative: the worker for {TOTAL}"), judged.explain()


def test_a_worker_that_crashes_is_named_by_the_judge(tmp_path: Path) -> None:
    # Honest look-alike: the worker does exit 9, and the reason says so in the same words.
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": CRASHES}, "properties")
    assert judged.status == "fail", judged.explain()
    assert judged.says(
        f"property failed: {TOTAL}::test_total_never_negative: the worker for {TOTAL} crashed"
        " (exit 9)"
    ), judged.explain()
