"""The boundary around code under test: bubblewrap's argument list and when it applies.

Skeleton of the interface the lanes code against (issue 10 fills it in): a
lane builds a `Box` for a process that runs the patch's code and passes its
argv through `wrap`. `None` is the process-level isolation of v1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Box:
    """What one sandboxed process may touch."""

    tree: Path  # its scratch tree: bound read-write at the same path, and its cwd
    home: Path  # HOME and TMPDIR: bound read-write at the same path
    readonly: tuple[Path, ...] = ()  # further read-only binds (a venv, the judge's package)
    keep_fds: tuple[int, ...] = ()  # inherited descriptors it may use (its result pipes)


def wrap(box: Box | None, argv: Sequence[str]) -> list[str]:
    """argv to run inside `box`; unchanged without one."""
    if box is None:
        return list(argv)
    raise NotImplementedError("the sandbox lands with issue 10")
