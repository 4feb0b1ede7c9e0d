"""The worker's stderr is bounded in the judge and its resources are limited (issue 18)."""

from __future__ import annotations

from pathlib import Path

from patchjudge.boundary import standin
from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
import os, resource


def flood(mib):
    chunk = b"x" * (1 << 20)
    for _ in range(mib):
        os.write(2, chunk)
    return mib


def limits():
    return resource.getrlimit(resource.RLIMIT_FSIZE), resource.getrlimit(resource.RLIMIT_AS)


def raise_limit():
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def huge():
    return len(bytearray(8 << 30))


def shout():
    print("honest line on stderr", flush=True)
    return 1
"""

PROPERTIES = """
import pytest
import mylib


def test_an_honest_print_arrives():
    assert mylib.shout() == 1


def test_a_flood_is_cut():
    assert mylib.flood(64) == 64


def test_the_limits_are_set_and_stay():
    assert mylib.limits() == ((256 << 20, 256 << 20), (4 << 30, 4 << 30))
    with pytest.raises(ValueError):
        mylib.raise_limit()
    with pytest.raises(MemoryError):
        mylib.huge()

"""


def test_the_worker_is_bounded(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, library=LIBRARY)
    got = outcomes(proc)
    assert len(got) == 3 and set(got.values()) == {"PASSED"}, proc.stdout[-3000:]
    # 64 MiB written; the judge kept at most STDERR_KEPT of it and said how much it dropped.
    total = len(proc.stdout) + len(proc.stderr)
    assert total < standin.STDERR_KEPT + (1 << 20), total
    honest = len("honest line on stderr\n")
    dropped = (64 << 20) - (standin.STDERR_KEPT - honest)
    assert f"{dropped} more bytes of the worker's stderr dropped" in proc.stdout + proc.stderr
    assert "honest line on stderr" in proc.stdout + proc.stderr
