"""The suite's own schedule (issue 20): the long poles are collected first, so xdist starts
them first and the run does not end with one core alone on a minute-long test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHORT = "tests/unit/test_globs.py"
LONG = "tests/scenarios/test_demo.py"  # its one test is marked long


def collected(*paths: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_a_long_test_collected_last_is_scheduled_first_and_the_rest_keep_their_order() -> None:
    short = collected(SHORT)
    long = collected(LONG)
    assert len(short) > 1 and len(long) == 1, (short, long)
    assert collected(SHORT, LONG) == long + short
