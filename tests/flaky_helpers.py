"""Tests that fail deterministically in k of every N runs, for the freeze and flakes lanes.

The tested process runs in a sandbox that sees nothing but its scratch tree
(issue 10), so the counters live in that tree, beside the test module: they
count the runs of one lane, which reruns in the same tree. A counter is a
file of one byte per run, appended under flock: xdist workers share it, and
run r (0-based) fails iff r % N < k, so any N consecutive runs fail exactly
k times whatever the order. The counter code is inlined into each module.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

COUNTER = '''
import fcntl
import os


def next_run(path):
    """The 0-based index of this run of the counter at `path`."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        index = os.fstat(fd).st_size
        os.write(fd, b".")
        return index
    finally:
        os.close(fd)


def fails_now(path, fails, every):
    return next_run(path) % every < fails
'''


def counter_module() -> str:
    return textwrap.dedent(COUNTER).lstrip()


def _counters_in_tree(counters: Path) -> list[str]:
    """Source lines: COUNTERS, a directory of the tree beside the module, and the counter."""
    where = (
        f"os.path.join(os.path.dirname(os.path.abspath(__file__)), '.counters', {counters.name!r})"
    )
    return [
        f"COUNTERS = {where}",
        "os.makedirs(COUNTERS, exist_ok=True)",
        *counter_module().splitlines()[2:],  # the counter, less its own imports
        "",
    ]


def flaky_module(counters: Path, tests: dict[str, tuple[int, int]], kind: str = "function") -> str:
    """A test module whose tests fail k of every N runs: name -> (k, N).

    kind: function | class (a pytest class) | unittest (a unittest.TestCase)
    | param (each name parametrised over ids "a-1" and "b", each id its own counter).
    `counters` names the module's counter directory (its last part only).
    """
    lines = ["import fcntl", "import os", "import sys", "import unittest", "", "import pytest", ""]
    lines += [*_counters_in_tree(counters), ""]
    if kind == "unittest":
        lines.append("class TestFlaky(unittest.TestCase):")
    elif kind == "class":
        lines.append("class TestFlaky:")
    indent = "    " if kind in ("unittest", "class") else ""
    for name, (k, n) in tests.items():
        self_arg = "self" if indent else ""
        if kind == "param":
            lines.append('@pytest.mark.parametrize("x", ["a-1", "b"])')
            sig = "x"
            path = f"os.path.join(COUNTERS, {name!r} + x)"
        else:
            sig = self_arg
            path = f"os.path.join(COUNTERS, {name!r})"
        lines += [
            f"{indent}def {name}({sig}):",
            f"{indent}    assert not fails_now({path}, {k}, {n})",
            "",
        ]
    return "\n".join(lines) + "\n"


def code_flaky_module(counters: Path, name: str = "test_clock") -> str:
    """A test whose flakiness lives in the code under test (calc.clock_ok), not the test."""
    lines = ["import fcntl", "import os", "", "from calc import clock_ok", ""]
    lines += _counters_in_tree(counters)
    lines += [
        "",
        f"def {name}():",
        f"    assert clock_ok(next_run(os.path.join(COUNTERS, {name!r})))",
    ]
    return "\n".join(lines) + "\n"


def flaky_calc(fails: int, every: int) -> str:
    return textwrap.dedent(
        f"""\
        def total(xs):
            return sum(xs)


        def clock_ok(run_index):
            # races the clock in {fails} of every {every} runs
            return run_index % {every} >= {fails}
        """
    )


def freeze_row(
    nodeid: str,
    *,
    owner: str = "qa-rotation",
    created: str = "2026-11-24",
    expires: str = "2026-12-08",
    fail_count: int = 3,
    runs: int = 12,
    required: tuple[str, ...] = ("eval/properties/test_total.py::test_total_never_negative",),
    reason: str = "wall-clock assertion races the sandbox clock",
) -> str:
    props = ", ".join(f'"{p}"' for p in required)
    return textwrap.dedent(
        f"""\
        [[freeze]]
        nodeid = "{nodeid}"
        owner = "{owner}"
        reason = "{reason}"
        created = {created}
        expires = {expires}
        fail_count = {fail_count}
        runs = {runs}
        required_properties = [{props}]
        """
    )


def registry(*rows: str) -> str:
    return "# known flakes\n" + "\n".join(rows)
