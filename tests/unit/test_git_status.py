"""`git status --porcelain -z` counted: what a dirty tree holds that the gate does not judge."""

from __future__ import annotations

import pytest

from patchjudge.git import count_status


@pytest.mark.parametrize(
    ("porcelain", "count"),
    [
        (b"", 0),
        (b" M src/a.py\0", 1),
        (b" M src/a.py\0?? notes.txt\0", 2),
        (b"R  new.py\0old.py\0", 1),  # a rename is one change; its source is the next field
        (b"RM new.py\0old.py\0 M b.py\0", 2),
        (b"C  copy.py\0orig.py\0?? x\0", 2),
        (b"D  gone.py\0A  added.py\0", 2),
        (b"?? dir with space/\0", 1),
    ],
)
def test_count_status(porcelain: bytes, count: int) -> None:
    assert count_status(porcelain) == count
