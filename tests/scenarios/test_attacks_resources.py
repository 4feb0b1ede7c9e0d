"""Attacks on resources: a hang with a swarm of children, a flood of output, endless collection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from patchjudge.git import no_git_env
from tests.attack_helpers import attack, fast_ledger
from tests.helpers import VISIBLE_TESTS

LIMIT = 5  # seconds: short enough for the suite, long enough for a loaded machine
# The sleep length of every child the swarm starts, this process's own: a run of the suite
# beside this one on the machine has swarms of its own, alive until their deadline.
MARKER = f"3600.{os.getpid()}"

# Not a real bomb: a bounded swarm of sleeping children, one of them in a
# session of its own (a daemon), then a hang. All of them must be gone after the gate.
SWARM = f"""
import subprocess, time

_children = []


def total(xs):
    if not _children:
        for _ in range(20):
            _children.append(subprocess.Popen(["sleep", "{MARKER}"]))
        # A daemon: its own session, out of reach of the process-group kill.
        _children.append(subprocess.Popen(["sleep", "{MARKER}"], start_new_session=True))
    time.sleep(3600)
"""

MEGABYTE = b"x" * (1 << 20)
FLOOD = """
import os

_done = []


def total(xs):
    if not _done:
        _done.append(1)
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            os.write(1, chunk)
            os.write(2, chunk)
    return -1
"""

# Endless, not busy: the deadline is the gate's clock either way, and a spinning loop in
# the box burned ~10 CPU-s of the run's cores (two collections) that no rusage counted.
ENDLESS_COLLECTION = "import time\n\nwhile True:\n    time.sleep(1)\n" + VISIBLE_TESTS


def _alive(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline.split(b"\0"):
            pids.append(int(proc.name))
    return pids


def test_swarm_of_children_dies_with_the_process_group(tmp_path: Path) -> None:
    # Also the hang test: the swarm's parent sleeps for an hour in the properties and in the
    # visible suite, and each ends at its deadline (a hang alone, with no children, is
    # test_gate.py::test_a_property_that_hangs_fails_within_timeout).
    judged = attack(
        tmp_path, {"src/calc/__init__.py": SWARM}, base={"eval/gate.toml": fast_ledger(LIMIT)}
    )
    assert judged.decision == "reject", judged.explain()
    assert judged.says(f"properties: timed out after {LIMIT} s"), judged.explain()
    assert _alive(MARKER) == []


DAEMON = f"""
import subprocess

subprocess.Popen(["sleep", "{MARKER}1"], start_new_session=True)


def total(xs):
    return sum(xs)
"""


def test_daemon_outside_the_process_group_is_killed_and_reported(tmp_path: Path) -> None:
    # Process-level isolation: detected and killed. In the sandbox it dies with
    # the box's pid namespace instead (test_attacks_sandbox.py).
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": DAEMON},
        base={"eval/gate.toml": fast_ledger(isolation="process")},
    )
    assert judged.decision == "reject", judged.explain()
    assert judged.says("process(es) escaped the test run's process group (killed)")
    assert _alive(f"{MARKER}1") == []


def test_endless_collection_is_a_timeout(tmp_path: Path) -> None:
    judged = attack(
        tmp_path,
        {"tests/test_calc.py": ENDLESS_COLLECTION},
        base={"eval/gate.toml": fast_ledger(LIMIT)},
    )
    assert judged.decision == "reject", judged.explain()
    assert judged.says(f"pathfilter: visible suite at head: timed out after {LIMIT} s")


# The gate in this process; its own peak resident set (children not counted) in MiB.
# VmHWM, not ru_maxrss: Linux keeps rusage across execve, so a process forked (or
# vforked) from a pytest worker reports the worker's peak as its own (299 MiB measured
# late in a full run, with the gate's own peak at ~40).
_OWN_PEAK = """
import re, sys
status = open("/proc/self/status").read()
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) // 1024, file=sys.stderr)
"""
_PEAK = "import sys\nfrom patchjudge.cli import main\ncode = main(sys.argv[1:])\n" + _OWN_PEAK


def test_flood_of_output_keeps_the_gate_small(tmp_path: Path) -> None:
    """200 MB printed by the code under test; the gate keeps a bounded tail of it."""
    from tests.attack_helpers import judged as judged_in
    from tests.helpers import Result, commit, example_repo, write

    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger(120)})
    write(repo, {"src/calc/__init__.py": FLOOD})
    commit(repo)
    argv = ["gate", "--base", "main", "--today", "2026-12-01"]
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_PEAK), *argv],
        cwd=repo, capture_output=True, text=True, env=no_git_env(__import__("os").environ),
        check=True, timeout=300,
    )  # fmt: skip
    judged = judged_in(repo, Result(0, out.stdout, out.stderr))
    assert judged.decision == "reject", judged.explain()
    assert judged.says("properties: property failed"), judged.explain()
    # The pytest child holds the captured output itself; the gate must not.
    peak_mib = int(out.stderr.strip().splitlines()[-1])
    report = json.loads((repo / ".patchjudge" / "properties.json").read_text())
    assert len(report["details"]["output_tail"]) <= 4000
    assert peak_mib < 150, peak_mib


def test_the_peak_probe_counts_the_gate_not_the_process_that_started_it() -> None:
    """A parent 200 MiB large: ru_maxrss reports that in its child, the probe does not."""
    parent = (
        "import subprocess, sys\n"
        "held = bytearray(200 << 20)\n"
        "held[::4096] = b'x' * len(held[::4096])\n"  # touched, so resident
        f"sys.exit(subprocess.run([sys.executable, '-c', {textwrap.dedent(_OWN_PEAK)!r}]).returncode)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", parent], capture_output=True, text=True, check=True, timeout=60
    )
    assert int(out.stderr.strip().splitlines()[-1]) < 150, out.stderr
