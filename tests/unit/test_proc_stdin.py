"""A child that answers as it reads gets all its stdin (proc.run; red team, session 18).

`git check-attr --stdin` over the paths of a tree of a few thousand files,
which pathfilter runs whenever a patch touches a `.gitattributes`, hung
pathfilter for ever on main 2a6a2dc: the whole stdin was written before any
stdout was read, and both pipes filled.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
from patchjudge import proc
data = bytes(range(256)) * 8192  # 2 MiB: many times a pipe's buffer
result = proc.run(["cat"], stdin=data, output_cap=None)
assert result.returncode == 0 and result.stdout == data, (result.returncode, len(result.stdout))
print("whole")
"""


def test_a_child_that_echoes_a_large_stdin_as_it_reads_returns_all_of_it() -> None:
    # The bound only ends a deadlock (what main did); a pass never waits on it.
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout == "whole\n", done.stderr
